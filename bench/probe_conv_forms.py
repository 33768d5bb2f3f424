"""Issue 27, part 1: which hand-written WGSL form of conv1d / conv2d the driver runs fastest.

    python bench/probe_conv_forms.py [--small] [--only conv1d,conv2d] [--reps R] [--k K]
                                     [--no-sweep] [--out FILE]

``compute_bound.py``'s hand WGSL runs conv1d (8M points x 63 taps) and conv2d (4096^2, 5x5) at
0.71-0.74x CUDA's speed on the H200, as slow as our own kernels: the gap is what the Vulkan
driver makes of the WGSL. This probe writes the same two computations in several WGSL forms and
times each one beside the CUDA C of ``compute_kernels.py`` (CuPy ``RawKernel``, where
``import cupy`` works), on ``compute_bound.py``'s data (its ``Problem``: same sizes, same seed)
and with its timing (``compute_bound.measure``: k launches queued, one submit each, then
wgpu-native's blocking poll; best of ``reps`` samples after a warm-up, the forms alternating).
Every form's output is checked against numpy in float64 (``Problem.check``: the same error bound)
before anything is printed; a wrong one is ``FAIL`` and the probe exits 1.

The forms (``m`` taps; ``M`` is m written into the WGSL as a ``const``):

* ``base``: ``compute_kernels.wgsl`` (the row ``wgsl`` of compute_bound.py; loop to ``p.m``);
* ``loop_const``: the same loop to the const ``M`` (filter in storage);
* ``unroll_st``: the taps written out one by one (no loop), filter in storage;
* ``loop_uni`` / ``unroll_uni``: the filter in a ``var<uniform> array<vec4<f32>, K>``
  (16-byte stride: tap j is ``fu[j / 4][j % 4]``), loop to ``p.m`` / written out;
* ``wgf``: the filter copied into ``var<workgroup>`` memory first (one barrier), const loop;
* ``tile_st`` / ``tile_uni``: the input tile (1-D: workgroup + M - 1 values; 2-D: the outputs'
  rows and columns plus the M - 1 halo) staged in workgroup memory, then the taps read from it
  (filter in storage, const loop / filter uniform, written out);
* ``regs<R>``: R consecutive outputs per invocation (1-D; 2-D: R along x), the R + M - 1 inputs
  of each row loaded once into registers and shared, scalar loads, filter uniform, written out;
  ``vec<R>``: the same with ``vec4<f32>`` loads and stores (R a multiple of 4);
  ``vec<R>x<RY>`` (2-D): also RY rows of outputs per invocation, sharing the input rows;
  ``vec<R>_st``: the vec form with the filter in storage (what the uniform filter buys).

Phase 1 times every form at workgroup size 256 (2-D: 16x16), two ways: k launches with one
submit each (compute_bound's way; where a launch takes less device time than wgpu-py's host
work per submit, this is the host's floor) and "1-pass": the k dispatches in one compute pass of
one command buffer (the device's time, bar the encoding). Phase 2 (skipped with
``--no-sweep``) takes the two fastest forms of phase 1 (by the 1-pass time) and times them at workgroup sizes 64, 128,
256 (2-D: 16x16, 32x8, 64x4, 8x8), each both with naga's bounds checks (as cthreads makes its
modules on GPUs: wgpu-native's trusted creation, loop counter dropped) and without them
(``/nochk``: the floor of the WGSL itself, what the driver does with it unguarded). Printed per
form: ms per launch, GFLOP/s (2 per tap), the ratio to CUDA (CUDA's time / the form's: >= 0.9 is
the issue's target) and to ``base``; then the best form per kernel.

Sizes: compute_bound.py's (``--small``, the default on a CPU driver: its small sizes).
"""

from __future__ import annotations

import argparse
import os
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(BENCH))
sys.path.insert(0, BENCH)

import numpy as np  # noqa: E402

import compute_bound as CB  # noqa: E402
import compute_kernels as CK  # noqa: E402

XYZW = "xyzw"


class Form:
    """One shader: its WGSL, the names it binds (binding k: ``BINDINGS[name]``), the grid
    from the problem (``groups(prob) -> (gx, gy)``), what it needs (``need`` -> reason to skip
    or None)."""

    def __init__(self, name, wgsl, binds, groups, need=None):
        self.name, self.wgsl, self.binds, self.groups, self.need = name, wgsl, binds, groups, need


# binding numbers of every shader (each declares only the ones it uses: "auto" layouts)
BINDINGS = {"p": 0, "x": 1, "f": 2, "out": 3, "fu": 4}


def _decl(binds: dict) -> str:
    """``binds``: name -> WGSL type of the binding (uniform p / fu, storage x / f / out)."""
    lines = ["struct P { a: u32, b: u32, c: u32, d: u32 }"]
    for name, ty in binds.items():
        k = BINDINGS[name]
        space = "uniform" if name in ("p", "fu") else \
            ("storage, read_write" if name == "out" else "storage, read")
        lines.append(f"@group(0) @binding({k}) var<{space}> {name}: {ty};")
    return "\n".join(lines) + "\n"


def _tap(src: str, j: int) -> str:
    """The filter value j (a constant index) from ``src``: st (storage), uni, wgm."""
    return {"st": f"f[{j}u]", "uni": f"fu[{j // 4}u].{XYZW[j % 4]}", "wgm": f"fw[{j}u]"}[src]


def _tap_rt(src: str, j: str) -> str:
    return {"st": f"f[{j}]", "uni": f"fu[{j} / 4u][{j} % 4u]", "wgm": f"fw[{j}]"}[src]


def _filter_binds(src: str, taps: int) -> dict:
    if src == "uni":
        return {"fu": f"array<vec4<f32>, {-(-taps // 4)}>"}
    return {"f": "array<f32>"}


def _wgm_filter(taps: int, threads: int, lid: str) -> tuple[str, str]:
    """(declaration, copy + barrier) of the filter in workgroup memory."""
    return (f"var<workgroup> fw: array<f32, {taps}>;\n",
            f"    for (var k = {lid}; k < {taps}u; k += {threads}u) {{ fw[k] = f[k]; }}\n"
            "    workgroupBarrier();\n")


# -- conv1d ------------------------------------------------------------------------------------
# params: a = n, b = m, c = length of x (padded), d = 0; x, f, out as in compute_kernels.

ENTRY1 = ("@compute @workgroup_size({wg})\n"
          "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,"
          "\n        @builtin(local_invocation_index) lid: u32) {{\n"
          "    let grp = wid.y * nwg.x + wid.x;\n")


def conv1d_loop(m: int, wg: int, src: str, bound: str) -> str:
    """One output per invocation, a loop over the taps to ``bound`` (``p.b`` or ``M``)."""
    binds = {"p": "P", "x": "array<f32>", **_filter_binds(src, m), "out": "array<f32>"}
    head, copy = "", ""
    if src == "wgm":
        head, copy = _wgm_filter(m, wg, "lid")
    body = (f"    let i = grp * {wg}u + lid;\n{copy}"
            "    if (i >= p.a) { return; }\n"
            "    var acc = 0.0;\n"
            f"    for (var j = 0u; j < {bound}; j++) {{ acc += x[i + j] * {_tap_rt(src, 'j')}; }}\n"
            "    out[i] = acc;\n}\n")
    return _decl(binds) + f"const M = {m}u;\n" + head + ENTRY1.format(wg=wg) + body


def conv1d_unroll(m: int, wg: int, src: str) -> str:
    binds = {"p": "P", "x": "array<f32>", **_filter_binds(src, m), "out": "array<f32>"}
    taps = "".join(f"    acc += x[i + {j}u] * {_tap(src, j)};\n" for j in range(m))
    body = (f"    let i = grp * {wg}u + lid;\n"
            "    if (i >= p.a) { return; }\n"
            "    var acc = 0.0;\n" + taps + "    out[i] = acc;\n}\n")
    return _decl(binds) + ENTRY1.format(wg=wg) + body


def conv1d_tile(m: int, wg: int, src: str) -> str:
    binds = {"p": "P", "x": "array<f32>", **_filter_binds(src, m), "out": "array<f32>"}
    span = wg + m - 1
    if src == "uni":
        taps = "".join(f"        acc += tile[lid + {j}u] * {_tap(src, j)};\n" for j in range(m))
    else:
        taps = f"        for (var j = 0u; j < {m}u; j++) {{ acc += tile[lid + j] * f[j]; }}\n"
    body = (f"    let base = grp * {wg}u;\n"
            f"    for (var k = lid; k < {span}u; k += {wg}u) {{\n"
            "        let gi = base + k;\n"
            "        if (gi < p.c) { tile[k] = x[gi]; }\n"
            "    }\n"
            "    workgroupBarrier();\n"
            "    let i = base + lid;\n"
            "    if (i < p.a) {\n"
            "        var acc = 0.0;\n" + taps + "        out[i] = acc;\n    }\n}\n")
    return (_decl(binds) + f"var<workgroup> tile: array<f32, {span}>;\n" + ENTRY1.format(wg=wg)
            + body)


def _block(rows: int, cols: int, ry: int, rx: int, m: int, src: str, load, store,
           one_d: bool) -> str:
    """Register blocking: ry x rx outputs from ``rows`` x ``cols`` inputs (rows = ry + m - 1 or
    1-D: 1, cols = rx + m - 1), each input loaded once: ``load(r) -> (lines, [names])``,
    ``store(oy, names) -> lines`` (the rx accumulators of output row oy)."""
    lines, vals = [], []
    for r in range(rows):
        text, names = load(r)
        lines.append(text)
        vals.append(names)
    for oy in range(ry):
        accs = [f"a{oy}_{ox}" for ox in range(rx)]
        for ox in range(rx):
            terms = []
            if one_d:
                terms = [f"{vals[0][ox + j]} * {_tap(src, j)}" for j in range(m)]
            else:
                for dy in range(m):
                    for dx in range(m):
                        terms.append(f"{vals[oy + dy][ox + dx]} * {_tap(src, dy * m + dx)}")
            # the same order of additions as the loop forms: one tap after another
            lines.append(f"    var {accs[ox]} = 0.0;\n" +
                         "".join(f"    {accs[ox]} += {t};\n" for t in terms))
        lines.append(store(oy, accs))
    return "".join(lines)


def conv1d_regs(m: int, wg: int, rx: int, vec: bool, src: str = "uni") -> str:
    """rx consecutive outputs per invocation, the rx + m - 1 inputs loaded once."""
    cols = rx + m - 1
    vt = "array<vec4<f32>>" if vec else "array<f32>"
    binds = {"p": "P", "x": vt, **_filter_binds(src, m), "out": vt}

    def load(r):
        if vec:
            nq = -(-cols // 4)
            text = "".join(f"    let v{q} = x[i0 / 4u + {q}u];\n" for q in range(nq))
            return text, [f"v{c // 4}.{XYZW[c % 4]}" for c in range(cols)]
        text = "".join(f"    let e{c} = x[i0 + {c}u];\n" for c in range(cols))
        return text, [f"e{c}" for c in range(cols)]

    def store(oy, accs):
        if vec:
            return "".join(f"    out[i0 / 4u + {q}u] = "
                           f"vec4<f32>({', '.join(accs[4 * q:4 * q + 4])});\n"
                           for q in range(rx // 4))
        return "".join(f"    out[i0 + {ox}u] = {a};\n" for ox, a in enumerate(accs))
    body = (f"    let i0 = (grp * {wg}u + lid) * {rx}u;\n"
            "    if (i0 >= p.a) { return; }\n"
            + _block(1, cols, 1, rx, m, src, load, store, True) + "}\n")
    return _decl(binds) + ENTRY1.format(wg=wg) + body


def conv1d_forms(prob, wg: int, base_wg: int) -> list:
    n, m = prob.size["n"], prob.size["m"]
    g1 = lambda r: (lambda raw: raw.groups(-(-n // r), wg))  # noqa: E731
    need = lambda r: None if n % r == 0 else f"n % {r} != 0"  # noqa: E731
    forms = [Form("base", CK.wgsl("conv1d", (base_wg, 1)), ("p", "x", "f", "out"),
                  lambda raw: (-(-n // base_wg), 1),
                  None if -(-n // base_wg) <= 65535 else "too many workgroups along x"),
             Form("loop_const", conv1d_loop(m, wg, "st", "M"), ("p", "x", "f", "out"), g1(1)),
             Form("unroll_st", conv1d_unroll(m, wg, "st"), ("p", "x", "f", "out"), g1(1)),
             Form("loop_uni", conv1d_loop(m, wg, "uni", "p.b"), ("p", "x", "fu", "out"), g1(1)),
             Form("unroll_uni", conv1d_unroll(m, wg, "uni"), ("p", "x", "fu", "out"), g1(1)),
             Form("wgf", conv1d_loop(m, wg, "wgm", "M"), ("p", "x", "f", "out"), g1(1)),
             Form("tile_st", conv1d_tile(m, wg, "st"), ("p", "x", "f", "out"), g1(1)),
             Form("tile_uni", conv1d_tile(m, wg, "uni"), ("p", "x", "fu", "out"), g1(1))]
    for r in (2, 4):
        forms.append(Form(f"regs{r}", conv1d_regs(m, wg, r, False), ("p", "x", "fu", "out"),
                          g1(r), need(r)))
    for r in (4, 8, 16):
        forms.append(Form(f"vec{r}", conv1d_regs(m, wg, r, True), ("p", "x", "fu", "out"),
                          g1(r), need(r)))
    forms.append(Form("vec4_st", conv1d_regs(m, wg, 4, True, "st"), ("p", "x", "f", "out"),
                      g1(4), need(4)))
    return forms


# -- conv2d ------------------------------------------------------------------------------------
# params: a = w, b = h, c = m, d = iw (= w + m - 1); img (as x), f (m*m, row-major), out.

ENTRY2 = ("@compute @workgroup_size({wx}, {wy})\n"
          "fn main(@builtin(global_invocation_id) g: vec3<u32>,"
          " @builtin(local_invocation_id) l: vec3<u32>,\n"
          "        @builtin(local_invocation_index) lid: u32,"
          " @builtin(workgroup_id) wid: vec3<u32>) {{\n"
          "    let w = p.a; let h = p.b; let iw = p.d;\n")


def conv2d_loop(m: int, wg: tuple, src: str, bound: str) -> str:
    binds = {"p": "P", "x": "array<f32>", **_filter_binds(src, m * m), "out": "array<f32>"}
    head, copy = "", ""
    if src == "wgm":
        head, copy = _wgm_filter(m * m, wg[0] * wg[1], "lid")
    tap = _tap_rt(src, "(dy * " + bound + " + dx)")
    body = (copy + "    let px = g.x; let py = g.y;\n"
            "    if (px >= w || py >= h) { return; }\n"
            "    var acc = 0.0;\n"
            f"    for (var dy = 0u; dy < {bound}; dy++) {{\n"
            f"        for (var dx = 0u; dx < {bound}; dx++) {{\n"
            f"            acc += x[(py + dy) * iw + px + dx] * {tap};\n"
            "        }\n    }\n"
            "    out[py * w + px] = acc;\n}\n")
    return _decl(binds) + f"const M = {m}u;\n" + head + ENTRY2.format(wx=wg[0], wy=wg[1]) + body


def conv2d_unroll(m: int, wg: tuple, src: str) -> str:
    binds = {"p": "P", "x": "array<f32>", **_filter_binds(src, m * m), "out": "array<f32>"}
    taps = "".join(f"    acc += x[(py + {dy}u) * iw + px + {dx}u] * {_tap(src, dy * m + dx)};\n"
                   for dy in range(m) for dx in range(m))
    body = ("    let px = g.x; let py = g.y;\n"
            "    if (px >= w || py >= h) { return; }\n"
            "    var acc = 0.0;\n" + taps + "    out[py * w + px] = acc;\n}\n")
    return _decl(binds) + ENTRY2.format(wx=wg[0], wy=wg[1]) + body


def conv2d_tile(m: int, wg: tuple, src: str) -> str:
    binds = {"p": "P", "x": "array<f32>", **_filter_binds(src, m * m), "out": "array<f32>"}
    tw, th = wg[0] + m - 1, wg[1] + m - 1
    if src == "uni":
        taps = "".join(f"        acc += tile[(l.y + {dy}u) * {tw}u + l.x + {dx}u] * "
                       f"{_tap(src, dy * m + dx)};\n" for dy in range(m) for dx in range(m))
    else:
        taps = (f"        for (var dy = 0u; dy < {m}u; dy++) {{\n"
                f"            for (var dx = 0u; dx < {m}u; dx++) {{\n"
                f"                acc += tile[(l.y + dy) * {tw}u + l.x + dx] * f[dy * {m}u + dx];\n"
                "            }\n        }\n")
    body = (f"    let bx = wid.x * {wg[0]}u; let by = wid.y * {wg[1]}u; let ih = h + {m - 1}u;\n"
            f"    for (var k = lid; k < {tw * th}u; k += {wg[0] * wg[1]}u) {{\n"
            f"        let ty = by + k / {tw}u; let tx = bx + k % {tw}u;\n"
            "        if (ty < ih && tx < iw) { tile[k] = x[ty * iw + tx]; }\n"
            "    }\n"
            "    workgroupBarrier();\n"
            "    let px = g.x; let py = g.y;\n"
            "    if (px < w && py < h) {\n"
            "        var acc = 0.0;\n" + taps + "        out[py * w + px] = acc;\n    }\n}\n")
    return (_decl(binds) + f"var<workgroup> tile: array<f32, {tw * th}>;\n"
            + ENTRY2.format(wx=wg[0], wy=wg[1]) + body)


def conv2d_regs(m: int, wg: tuple, rx: int, ry: int, vec: bool, src: str = "uni") -> str:
    """ry x rx outputs per invocation (rx along x), each input row segment loaded once."""
    cols, rows = rx + m - 1, ry + m - 1
    vt = "array<vec4<f32>>" if vec else "array<f32>"
    binds = {"p": "P", "x": vt, **_filter_binds(src, m * m), "out": vt}

    def load(r):
        if vec:
            nq = -(-cols // 4)
            text = (f"    let r{r} = ((py0 + {r}u) * iw + px0) / 4u;\n" +
                    "".join(f"    let v{r}_{q} = x[r{r} + {q}u];\n" for q in range(nq)))
            return text, [f"v{r}_{c // 4}.{XYZW[c % 4]}" for c in range(cols)]
        text = (f"    let r{r} = (py0 + {r}u) * iw + px0;\n" +
                "".join(f"    let e{r}_{c} = x[r{r} + {c}u];\n" for c in range(cols)))
        return text, [f"e{r}_{c}" for c in range(cols)]

    def store(oy, accs):
        if vec:
            return "".join(f"    out[((py0 + {oy}u) * w + px0) / 4u + {q}u] = "
                           f"vec4<f32>({', '.join(accs[4 * q:4 * q + 4])});\n"
                           for q in range(rx // 4))
        return "".join(f"    out[(py0 + {oy}u) * w + px0 + {ox}u] = {a};\n"
                       for ox, a in enumerate(accs))
    body = (f"    let px0 = g.x * {rx}u; let py0 = g.y * {ry}u;\n"
            "    if (px0 >= w || py0 >= h) { return; }\n"
            + _block(rows, cols, ry, rx, m, src, load, store, False) + "}\n")
    return _decl(binds) + ENTRY2.format(wx=wg[0], wy=wg[1]) + body


def conv2d_forms(prob, wg: tuple, base_wg: tuple) -> list:
    w, h, m = prob.size["w"], prob.size["h"], prob.size["m"]
    iw = w + m - 1
    g2 = lambda rx, ry: (lambda raw: (-(-w // (wg[0] * rx)), -(-h // (wg[1] * ry))))  # noqa: E731

    def need(rx, ry, vec):
        if w % rx or h % ry:
            return f"w % {rx} or h % {ry} != 0"
        return f"w + m - 1 = {iw} not a multiple of 4" if vec and (iw % 4 or w % 4) else None
    b = ("p", "x", "f", "out")
    u = ("p", "x", "fu", "out")
    forms = [Form("base", CK.wgsl("conv2d", base_wg), b,
                  lambda raw: (-(-w // base_wg[0]), -(-h // base_wg[1]))),
             Form("loop_const", conv2d_loop(m, wg, "st", "M"), b, g2(1, 1)),
             Form("unroll_st", conv2d_unroll(m, wg, "st"), b, g2(1, 1)),
             Form("loop_uni", conv2d_loop(m, wg, "uni", "p.c"), u, g2(1, 1)),
             Form("unroll_uni", conv2d_unroll(m, wg, "uni"), u, g2(1, 1)),
             Form("wgf", conv2d_loop(m, wg, "wgm", "M"), b, g2(1, 1)),
             Form("tile_st", conv2d_tile(m, wg, "st"), b, g2(1, 1)),
             Form("tile_uni", conv2d_tile(m, wg, "uni"), u, g2(1, 1))]
    for r in (2, 4):
        forms.append(Form(f"regs{r}", conv2d_regs(m, wg, r, 1, False), u, g2(r, 1),
                          need(r, 1, False)))
    for rx, ry in ((4, 1), (8, 1), (4, 2), (4, 4), (8, 2)):
        name = f"vec{rx}" + (f"x{ry}" if ry > 1 else "")
        forms.append(Form(name, conv2d_regs(m, wg, rx, ry, True), u, g2(rx, ry),
                          need(rx, ry, True)))
    forms.append(Form("vec4_st", conv2d_regs(m, wg, 4, 1, True, "st"), b, g2(4, 1),
                      need(4, 1, True)))
    return forms


# -- running -----------------------------------------------------------------------------------

class Device:
    """The hand WGSL's device (``compute_bound.RawForms``: modules made as there) and the
    problem's buffers, shared by every form; each form writes its own output buffer."""

    def __init__(self, module: str):
        self.rf = CB.RawForms(module)
        self.raw = self.rf.raw
        self._nochk: dict = {}
        try:
            from wgpu.backends.wgpu_native import _api  # noqa: PLC0415
            self.trusted_entry = hasattr(_api.libf, "wgpuDeviceCreateShaderModuleTrusted")
        except ImportError:
            self.trusted_entry = False

    def pipeline(self, text: str, checks: bool):
        if checks:
            return self.rf.pipeline(text)
        if text not in self._nochk:
            from cthreads.backend.pipeline import _shader_module  # noqa: PLC0415
            module = _shader_module(self.raw.device, text, "main", bounds_checks=False)
            self._nochk[text] = self.raw.device.create_compute_pipeline(
                layout="auto", compute={"module": module, "entry_point": "main"})
        return self._nochk[text]

    def load(self, prob) -> None:
        raw, named = self.raw, dict(prob.args)
        if prob.name == "conv1d":
            x, f, n, m = named["x"], named["f"], prob.size["n"], prob.size["m"]
            params = [n, m, 0, 0]
        else:
            x, f, m = named["img"].reshape(-1), named["f"].reshape(-1), prob.size["m"]
            params = [prob.size["w"], prob.size["h"], m, prob.size["w"] + m - 1]
        # padded with zeros: the vec4 views and the register blocks read up to 12 past the end
        xp = np.zeros(-(-(x.size + 16) // 4) * 4, np.float32)
        xp[:x.size] = x
        if prob.name == "conv1d":
            params[2] = xp.size
        fp = np.zeros(-(-f.size // 4) * 4, np.float32)
        fp[:f.size] = f
        self.out_like = named["out"]
        self.bufs = {"p": raw.uniform(np.array(params, np.uint32).tobytes()),
                     "fu": raw.uniform(fp.tobytes())}
        for name, arr in (("x", xp), ("f", f)):
            self.bufs[name] = raw.storage(arr.nbytes)
            raw.upload(self.bufs[name], np.ascontiguousarray(arr))

    def form(self, form: Form, k: int, checks: bool, one_pass: bool = False):
        """(sample, result) as compute_bound's: k launches, one submit each (``one_pass``:
        the k dispatches in one compute pass of one command buffer, one submit: no host
        cost per launch but the encoding), then the blocking poll."""
        raw = self.raw
        pipe = self.pipeline(form.wgsl, checks)
        out = raw.storage(self.out_like.nbytes)           # new buffers are zeros
        bufs = dict(self.bufs, out=out)
        entries = sorted((BINDINGS[n], bufs[n]) for n in form.binds)
        bg = raw.device.create_bind_group(
            layout=pipe.get_bind_group_layout(0),
            entries=[{"binding": kb, "resource": {"buffer": b, "offset": 0, "size": b.size}}
                     for kb, b in entries])
        gx, gy = form.groups(raw)
        if gx > raw.max_groups or gy > raw.max_groups:
            raise ValueError(f"{gx} x {gy} workgroups: past the device's limit")
        like = self.out_like

        def sample():
            for _ in range(k):
                raw.dispatch(pipe, bg, gx, gy)
            raw.wait()

        def sample_pass():
            enc = raw.device.create_command_encoder()
            cp = enc.begin_compute_pass()
            for _ in range(k):
                cp.set_pipeline(pipe)
                cp.set_bind_group(0, bg)
                cp.dispatch_workgroups(gx, gy, 1)
            cp.end()
            raw.queue.submit([enc.finish()])
            raw.wait()

        def result():
            stage = raw.staging(like.nbytes)
            return {"out": raw.read(out, stage, like.nbytes, like.dtype).reshape(like.shape)}
        return (sample_pass if one_pass else sample), result


PASS = " |pass"      # the one-pass twin of a label


def run_batch(prob, dev: Device, forms: list, k: int, reps: int, cuda) -> tuple[dict, dict]:
    """(label -> ms per launch or 'FAIL: ...', label -> reason skipped): ``forms`` are
    (label, Form, checks) triples, each timed both ways (label, label + PASS) with
    ``compute_bound.measure`` (which checks every result against numpy)."""
    makers, skipped = {}, {}
    for label, form, checks in forms:
        if form.need:
            skipped[label] = form.need
            continue
        makers[label] = (lambda fm=form, c=checks: dev.form(fm, k, c))
        makers[label + PASS] = (lambda fm=form, c=checks: dev.form(fm, k, c, True))
    if cuda is not None:
        cp, module = cuda
        makers["cuda"] = lambda: CB.cupy_form(cp, module, prob, k)
    got = CB.measure(prob, makers, reps)
    return {n: (v * 1e3 / k if isinstance(v, float) else v) for n, v in got.items()}, skipped


def _f(v) -> float | None:
    return v if isinstance(v, float) else None


def lines_for(kernel: str, prob, ms: dict, skipped: dict, title: str) -> list:
    work = prob.work[0]
    cuda, base = _f(ms.get("cuda")), _f(ms.get("base"))
    out = [f"{kernel} {prob.label}: {title}",
           f"  {'form':<20} {'ms/launch':>9} {'GFLOP/s':>8} {'vs CUDA':>7} {'vs base':>7}"
           f"   {'1-pass ms':>9} {'vs CUDA':>7}"]
    for name, v in ms.items():
        if name.endswith(PASS):
            continue
        row = [f"  {name:<20}"]
        for col, val in enumerate((v, ms.get(name + PASS))):
            if isinstance(val, str):
                if col == 0 or val != v:        # a FAIL said once when both ways failed alike
                    row.append(val if col == 0 else f"  1-pass {val}")
                continue
            if val is None:
                continue
            rc = f"{cuda / val:.2f}x" if cuda else "-"
            rb = f"{base / val:.2f}x" if base else "-"
            row.append(f"{val:>9.4f} {work / (val / 1e3) / 1e9:>8.1f} {rc:>7} {rb:>7}" if col == 0
                       else f"  {val:>9.4f} {rc:>7}")
        out.append(" ".join(row))
    for name, why in skipped.items():
        out.append(f"  {name:<20} skipped: {why}")
    return out


def probe(kernel: str, small: bool, reps: int, k: int | None, sweep: bool, dev: Device,
          cuda, say) -> tuple[bool, list]:
    """Runs one kernel's phases; (all results right, the best lines)."""
    size = CB.SIZES[kernel][0 if small else 1]
    kk = k or CB.LAUNCHES[kernel][0 if small else 1]
    prob = CB.Problem(kernel, size)
    dev.load(prob)
    one_d = kernel == "conv1d"
    base_wg = (64 if dev.rf.cpu else 256) if one_d else ((64, 1) if dev.rf.cpu else (16, 16))
    make = conv1d_forms if one_d else conv2d_forms
    wg0 = 256 if one_d else (16, 16)
    forms = make(prob, wg0, base_wg)
    ms, skipped = run_batch(prob, dev, [(f.name, f, True) for f in forms], kk, reps, cuda)
    ok = not any(isinstance(v, str) for v in ms.values())
    say(lines_for(kernel, prob, ms, skipped,
                  f"phase 1, workgroup {wg0}, naga bounds checks kept ({dev.rf.module}), "
                  f"{kk} launches per sample (one submit each; 1-pass: all in one compute "
                  f"pass), best of {reps}"))
    batches = [ms]
    timed = {n: v for n, v in ms.items() if _f(v) and n != "cuda" and not n.endswith(PASS)}
    if sweep and timed:
        # by the one-pass time (the device's; queued submits may all sit at the host's floor)
        dev_ms = {n: _f(ms.get(n + PASS)) or v for n, v in timed.items()}
        top = sorted((n for n in timed if n != "base"), key=dev_ms.get)[:2]
        sizes = (64, 128, 256) if one_d else ((16, 16), (32, 8), (64, 4), (8, 8))
        base = next(f for f in forms if f.name == "base")
        batch = [] if base.need else [("base", base, True)]      # the same-batch reference
        for wg in sizes:
            by_name = {f.name: f for f in make(prob, wg, base_wg)}
            for name in top:
                for checks in (True, False):
                    label = f"{name}@{wg if one_d else 'x'.join(map(str, wg))}" + \
                        ("" if checks else "/nochk")
                    batch.append((label, by_name[name], checks))
        ms2, skipped2 = run_batch(prob, dev, batch, kk, reps, cuda)
        ok = ok and not any(isinstance(v, str) for v in ms2.values())
        say(lines_for(kernel, prob, ms2, skipped2,
                      f"phase 2, the two fastest of phase 1 ({', '.join(top)}) at workgroup "
                      "sizes, with naga's bounds checks and without (/nochk)"))
        batches.append(ms2)
    bests = []
    for way, pick in (("queued submits", lambda n: not n.endswith(PASS)),
                      ("one pass", lambda n: n.endswith(PASS))):
        cands = []          # (speed vs the batch's CUDA or base, label, ms, vs CUDA, vs base)
        for b in batches:
            cuda, base = _f(b.get("cuda")), _f(b.get("base"))
            base = _f(b.get("base" + PASS)) if way == "one pass" else base
            for n, v in b.items():
                if _f(v) and n != "cuda" and pick(n):
                    rc, rb = (cuda / v if cuda else None), (base / v if base else None)
                    cands.append((rc if cuda else rb or 0.0, n.replace(PASS, ""), v, rc, rb))
        if cands:
            _, n, v, rc, rb = max(cands)
            bests.append(f"  best {kernel} ({way}): {n} {v:.4f} ms"
                         + (f", {rc:.2f}x CUDA" if rc else "")
                         + (f", {rb:.2f}x base" if rb else ""))
    return ok, bests


def _is_cpu_driver(name: str) -> bool:
    return any(s in name.lower() for s in ("llvmpipe", "lavapipe", "swiftshader"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help="lavapipe sizes (the default there)")
    ap.add_argument("--only", default="conv1d,conv2d")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--k", type=int, default=None, help="launches per sample")
    ap.add_argument("--no-sweep", action="store_true", help="skip phase 2")
    ap.add_argument("--wgsl-module", choices=("auto", "public", "trusted"), default="auto")
    ap.add_argument("--show", help="print the WGSL of this form (phase 1's workgroup) and exit")
    ap.add_argument("--out", help="also append the report to this file")
    args = ap.parse_args(argv)
    dev = Device(args.wgsl_module)
    name = dev.raw.info["device"]
    small = args.small or _is_cpu_driver(name)
    kernels = [w for w in args.only.split(",") if w]
    if any(w not in ("conv1d", "conv2d") for w in kernels):
        raise SystemExit("--only: conv1d and/or conv2d")
    if args.show:
        for kernel in kernels:
            prob = CB.Problem(kernel, CB.SIZES[kernel][0 if small else 1])
            forms = conv1d_forms(prob, 256, 256) if kernel == "conv1d" else \
                conv2d_forms(prob, (16, 16), (16, 16))
            for f in forms:
                if f.name == args.show:
                    print(f"// {kernel} {f.name}\n{f.wgsl}")
        return 0
    cp, why = CB._cupy()
    cuda = (cp, cp.RawModule(code=CK.CUDA_SOURCE)) if cp is not None else None
    report: list = []

    def say(lines):
        print("\n".join(lines), flush=True)
        report.extend(lines)
    say([f"conv forms on {name} ({'small' if small else 'default'} sizes); CUDA: "
         f"{'CuPy RawKernel (compute_kernels.CUDA_SOURCE)' if cuda else why}; "
         "vs CUDA / vs base: their time / the form's (speed; the target is >= 0.9x CUDA)"
         + ("" if dev.trusted_entry else "; NOTE: no trusted shader creation in this wgpu "
            "build: /nochk forms keep naga's checks")])
    all_ok, bests = True, []
    for kernel in kernels:
        ok, lines = probe(kernel, small, args.reps, args.k, not args.no_sweep, dev, cuda, say)
        all_ok, bests = all_ok and ok, bests + lines
        if cp is not None:
            cp.get_default_memory_pool().free_all_blocks()
    say(bests + ([] if all_ok else ["  SOME FORMS FAILED (wrong result or set-up): see above"]))
    if args.out:
        with open(args.out, "a") as f:
            f.write("\n".join(report) + "\n")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
