"""The compute entry point's text, shared by every generated shader and variant.

``grid_entry`` and ``ENTRY_HEAD`` are written by the compiler into a template;
``expand_steps`` and ``nd_grid_steps`` (called by ``program.KernelProgram.render``) fill in
the step loop of a variant. Plain text only: it imports nothing else of the compiler, so
``program`` can use it.
"""

from __future__ import annotations

WG = "{WORKGROUP_SIZE}"
ENTRY_POINT = "ct_main"

#: the compute entry point's first lines (every generated shader)
ENTRY_HEAD = [
    "",
    f"@compute @workgroup_size({WG})",
    f"fn {ENTRY_POINT}(@builtin(workgroup_id) ct_wid: vec3<u32>, "
    f"@builtin(num_workgroups) ct_nwg: vec3<u32>,",
    "        @builtin(local_invocation_id) ct_lid: vec3<u32>) {",
]


#: the N-D launch variant's entry point (``threads=(nx, ny[, nz])``): workgroups of
#: {WX} x {WY} x {WZ}. Where each axis's workgroup count fits the device's limit the dispatch
#: is the N-D grid itself (``ct_groups`` is 0); past it the dispatch counts workgroups flat
#: (``ct_groups``, 2-D past 65,535 as for 1-D kernels) and the uniform's per-axis group
#: counts turn the flat number back into a block of the N-D grid (three integer divisions per
#: invocation, a third of a stencil's time on an H200). Every index builtin reports each axis.
ND_ENTRY_HEAD = [
    "",
    "@compute @workgroup_size({WX}, {WY}, {WZ})",
    f"fn {ENTRY_POINT}(@builtin(workgroup_id) ct_wid: vec3<u32>, "
    f"@builtin(num_workgroups) ct_nwg: vec3<u32>,",
    "        @builtin(local_invocation_id) ct_lid: vec3<u32>) {",
    "    var ct_bx: u32 = ct_wid.x;",
    "    var ct_by: u32 = ct_wid.y;",
    "    var ct_bz: u32 = ct_wid.z;",
    "    if (ct_u.ct_groups != 0u) {",
    "        let ct_flat: u32 = ct_wid.y * ct_nwg.x + ct_wid.x;",
    "        if (ct_flat >= ct_u.ct_groups) { return; }",
    "        ct_bx = ct_flat % ct_u.ct_nd_gx;",
    "        ct_by = (ct_flat / ct_u.ct_nd_gx) % ct_u.ct_nd_gy;",
    "        ct_bz = ct_flat / (ct_u.ct_nd_gx * ct_u.ct_nd_gy);",
    "    }",
    "    let ct_gidx: i32 = i32(ct_bx * {WX}u + ct_lid.x);",
    "    let ct_gidy: i32 = i32(ct_by * {WY}u + ct_lid.y);",
    "    let ct_gidz: i32 = i32(ct_bz * {WZ}u + ct_lid.z);",
]
#: the N-D launch variant of kernels that do not observe workgroups: 1-D workgroups of
#: {WORKGROUP_SIZE} along x; workgroup number g (flat, as in 1-D) covers x block g % gx of the
#: rows (g / gx) * K .. + K-1 of the ny * nz rows (row r: y = r % ny, z = r / ny), one row per
#: step of {ND_STEPS} (K steps). The uniform's last fields hold gx, ny and the rows.
ND_GRID_ENTRY = ENTRY_HEAD + [
    "    let ct_flat: u32 = ct_wid.y * ct_nwg.x + ct_wid.x;",
    "    if (ct_flat >= ct_u.ct_groups) { return; }",
    "    let ct_x: i32 = i32((ct_flat % ct_u.ct_nd_gx) * {WORKGROUP_SIZE}u + ct_lid.x);",
    "    let ct_row0: u32 = (ct_flat / ct_u.ct_nd_gx) * {ND_K}u;",
    "    {ND_STEPS}",
    "}",
    "",
]


def nd_grid_steps(wgsl: str, rows: int, cpu: bool = False) -> str:
    """``ND_GRID_ENTRY``'s step line for ``rows`` rows per invocation: a plain call for one, a
    loop for more (``cpu``: the loop-reporting variant ends with a probe, as 1-D's)."""
    call = "ct_body(ct_x, i32(ct_r % ct_u.ct_nd_gy), i32(ct_r / ct_u.ct_nd_gy));"
    if rows == 1:
        text = f"let ct_r: u32 = ct_row0; if (ct_r < ct_u.ct_nd_gz) {{ {call} }}"
    else:
        text = (f"for (var ct_k: u32 = 0u; ct_k < {rows}u; ct_k++) {{ "
                f"let ct_r: u32 = ct_row0 + ct_k; if (ct_r >= ct_u.ct_nd_gz) {{ break; }} "
                f"{{ {call} }} }}")
        if cpu:
            text += "\n    " + PROBE_END
    return wgsl.replace("{ND_STEPS}", text).replace("{ND_K}", str(int(rows)))


#: an N-D workgroup's invocations, numbered flat (zeroing shared arrays) and counted
ND_LOCAL = "(ct_lid.x + {WX}u * (ct_lid.y + {WY}u * ct_lid.z))"
ND_SIZE = "({WX}u * {WY}u * {WZ}u)"


def grid_entry(body_fn: str, arg: str) -> list[str]:
    """The entry point of a kernel that only sees GlobalIdx.x: ``body_fn`` runs for every index
    step below ``ct_u.ct_threads``, some per invocation, one grid apart (``arg`` turns the
    u32 step ``ct_g`` into the function's argument). ``expand_steps`` writes the loop."""
    return ENTRY_HEAD + [
        f"    let ct_first: u32 = (ct_wid.y * ct_nwg.x + ct_wid.x) * {WG}u + ct_lid.x;",
        f"    {{STEPS}} {body_fn}({arg});",
        "}",
        "",
    ]


def expand_steps(wgsl: str, coarsen: int, cpu: bool = False) -> str:
    """``grid_entry``'s step line for ``coarsen`` steps per invocation: a loop, or for one step
    a plain call (llvmpipe compiles the one-trip loop form more slowly: docs/performance.md,
    "Shader shape"). ``cpu``: the variant
    that reports loops a CPU driver ended early (``program.LoopRecord``) ends with a probe when
    the step loop, or a helper's loop, may be the one the driver ends (``PROBE_FN``); every
    invocation reaches it (the step loop breaks rather than returns)."""
    lines = []
    for line in wgsl.split("\n"):
        if not line.startswith("    {STEPS} "):
            lines.append(line)
            continue
        call = line[len("    {STEPS} "):]
        if coarsen == 1:
            lines += ["    let ct_g: u32 = ct_first;",
                      f"    if (ct_g < ct_u.ct_threads) {{ {call} }}"]
        elif not cpu:
            lines += [f"    let ct_stride: u32 = ct_nwg.x * ct_nwg.y * {WG}u;",
                      f"    for (var ct_k: u32 = 0u; ct_k < {coarsen}u; ct_k++) {{",
                      "        let ct_g: u32 = ct_first + ct_k * ct_stride;",
                      "        if (ct_g >= ct_u.ct_threads) { return; }",
                      f"        {call}",
                      "    }"]
        else:
            lines += [f"    let ct_stride: u32 = ct_nwg.x * ct_nwg.y * {WG}u;",
                      f"    for (var ct_k: u32 = 0u; ct_k < {coarsen}u; ct_k++) {{",
                      "        let ct_g: u32 = ct_first + ct_k * ct_stride;",
                      "        if (ct_g >= ct_u.ct_threads) { break; }",
                      f"        {call}",
                      "    }"]
        if cpu and (coarsen > 1 or END_PROBE_MARK in wgsl):
            lines.append("    " + PROBE_END)
    return "\n".join(lines)


#: The CPU variant's loop check. llvmpipe counts the loop passes of an invocation and ends any
#: loop once they reach 65,535 (docs/language.md). The probe is a loop that needs two passes:
#: if the budget is spent (to its last pass), the driver ends it after one, and the probe sets
#: ``bit`` in status word 3 (``program.py``). Its trip count is 2 at run time but unknown to the
#: compiler (a uniform's bit 31, which is 0), so no compiler can unroll it or decide its
#: outcome. (A flag set where a loop ends by itself does not work: the shader compiler knows
#: that loops end only that way and folds the flag to true.) A probe follows each outermost
#: loop of the kernel (its bit names that loop) and, where the step loop or a helper's loop
#: (integer ``**``) may be the one ended, the invocation (``PROBE_END``, bit 0). ``{count}``:
#: the uniform's first field.
PROBE_FN = """fn ct_loop_probe(bit: u32) {
    let two = 2u + (ct_u.{count} >> 31u);
    var n: u32 = 0u;
    loop {
        n = n + 1u;
        if (n >= two) { break; }
    }
    if (n < 2u) { atomicOr(&ct_status[3], bit); }
}"""
PROBE_END = "ct_loop_probe(1u);"
END_PROBE_MARK = "// the invocation ends with a loop probe"
