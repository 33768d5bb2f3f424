"""Issue 27 on lavapipe: is the 2-D-indexed kernels' gap to hand WGSL real? (matmul_2d,
conv2d, stencil9 at 0.64-0.80x in compute_bound.py, matmul_flat as the control.)

    python bench/probe_lavapipe_2d.py [--only matmul_2d,conv2d] [--rounds R] [--k K]
                                      [--no-text] [--variants]

Per kernel, in one process on the same data (compute_bound.py's ``Problem``), the forms run
INTERLEAVED: ``rounds`` rounds, each running every form once (k queued launches, then the
wait), the order rotating each round. Forms: ``checked`` / ``unchecked`` (ours, on
GpuArrays), ``wgsl`` (the hand WGSL of compute_kernels.py on a raw wgpu-py device), and
``text`` (the WGSL our codegen emitted for the checked kernel, as the device got it, run on
the same raw device as the hand WGSL: it separates what the shader costs from what our launch
path costs). ``--variants`` adds hand edits of the text (the experiments of the 2-D index
forms). Printed per form: the median ms per launch, the spread (25th-75th percentile), the
best, and per kernel the median over rounds of the paired ratio (hand WGSL's time / the form's
time in the same round: the speed relative to the hand WGSL, >= 0.9 is the target). Every
form's result is checked against numpy (compute_bound.py's checks) before it is printed.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time

if "--no-text" not in sys.argv and not os.environ.get("CTHREADS_DUMP_WGSL"):
    import tempfile  # the emitted WGSL is read back from the dump (set before cthreads loads)
    os.environ["CTHREADS_DUMP_WGSL"] = tempfile.mkdtemp(prefix="probe2d-")

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(BENCH))
sys.path.insert(0, BENCH)

import numpy as np  # noqa: E402

import compute_bound as CB  # noqa: E402
import compute_kernels as CK  # noqa: E402
from cthreads.gpu import device_name  # noqa: E402

KERNELS = ("matmul_flat", "matmul_2d", "conv2d", "stencil9")


def emitted_wgsl(name: str, threads) -> str:
    """The WGSL the checked kernel's launch compiled (read from CTHREADS_DUMP_WGSL's files)."""
    folder = os.environ.get("CTHREADS_DUMP_WGSL", "")
    names = sorted(f for f in os.listdir(folder) if f.startswith(f"compute_kernels.{name}."))
    if not names:
        raise RuntimeError(f"no dumped WGSL for {name} in {folder}")
    pick = [f for f in names if ".proven" in f] or names
    with open(os.path.join(folder, pick[0])) as f:
        return f.read()


def text_form(raw_forms, prob, text: str, k: int):
    """Our emitted WGSL on the raw device: the uniform filled from its struct's field names."""
    raw = raw_forms.raw
    text = re.sub(r"\bfn ct_main\(", "fn main(", text)
    if raw_forms.cpu:      # the pipeline constant as cthreads sets it there (fma rounds twice)
        text = text.replace("override ct_fused_f32: bool = true;",
                            "override ct_fused_f32: bool = false;")
    wg = int(re.search(r"@workgroup_size\((\d+)", text).group(1))
    w, h = prob.threads
    gx = -(-w // wg)
    groups = gx * h
    fields = re.search(r"struct CtUniforms \{(.*?)\}", text, re.S).group(1)
    scalars = dict(prob.scalars())
    lists = dict(prob.lists())
    words = []
    for fname, ftype in re.findall(r"(\w+): (\w+),", fields):
        if fname == "ct_groups":
            v = groups
        elif fname == "ct_nd_gx":
            v = gx
        elif fname in ("ct_nd_gy", "ct_nd_gz"):
            v = h
        elif fname.startswith("ct_n_"):
            lname, dim = fname[5:].rsplit("_", 1)
            lname = lname[5:] if lname.startswith("ct_v_") else lname   # renamed: out, ...
            v = lists[lname].shape[int(dim)]
        elif fname in scalars:
            v = scalars[fname]
        else:
            raise RuntimeError(f"uniform field {fname}: what to put there is not known")
        words.append(np.array([v], np.float32 if ftype == "f32" else
                              (np.int32 if ftype == "i32" else np.uint32)).view(np.uint32))
    params = np.concatenate(words + [np.zeros(4, np.uint32)])
    params = params[:max(4, -(-len(words) // 4) * 4)]
    pipe = raw.pipeline(text)
    bufs = {}
    for name, v in prob.lists():
        bufs[name] = raw.storage(v.nbytes)
        raw.upload(bufs[name], np.ascontiguousarray(v))
    status = raw.storage(16)
    raw.upload(status, np.zeros(4, np.uint32))
    extra = [status] if "ct_status" in text else []          # declared only where used
    bg = raw.bind_group(pipe, [raw.uniform(params.tobytes())] + list(bufs.values()) + extra)

    def sample():
        for _ in range(k):
            raw.dispatch(pipe, bg, groups, 1)
        raw.wait()

    def result():
        out = {}
        for name, v in prob.lists():
            if name in prob.out:
                stage = raw.staging(v.nbytes)
                out[name] = raw.read(bufs[name], stage, v.nbytes, v.dtype).reshape(v.shape)
        return out
    return sample, result


def variants(name: str, text: str) -> dict:
    """Hand edits of the emitted text: one change each (the experiments)."""
    out = {}
    # strides read once into lets at the top of the body, instead of at each access
    strides = sorted(set(re.findall(r"i32\(ct_u\.(ct_n_\w+)\)", text)))
    if strides:
        t = text
        for s in strides:
            t = t.replace(f"i32(ct_u.{s})", f"{s}_v")
        lets = "".join(f"    let {s}_v = i32(ct_u.{s});\n" for s in strides)
        t = t.replace("fn ct_body(ct_gidx: i32, ct_gidy: i32, ct_gidz: i32) {\n",
                      "fn ct_body(ct_gidx: i32, ct_gidy: i32, ct_gidz: i32) {\n" + lets, 1)
        out["text_let_strides"] = t
        t = text
        for s in strides:
            t = t.replace(f"i32(ct_u.{s})", f"{s}_v")
        sets = "".join(f"    {s}_v = i32(ct_u.{s});\n" for s in strides)
        decl = "".join(f"var<private> {s}_v: i32;\n" for s in strides)
        t = t.replace("fn ct_body(ct_gidx: i32, ct_gidy: i32, ct_gidz: i32) {\n",
                      decl + "fn ct_body(ct_gidx: i32, ct_gidy: i32, ct_gidz: i32) {\n" + sets, 1)
        out["text_private_strides"] = t
    # a literal / literal quotient folded (the stencil's 1.0 / 9.0, divided per invocation)
    t = text.replace("ct_enter_f(ct_div_f(ct_fid(1.0f), 9.0f))", "0.11111111f")
    if t != text:
        out["text_fold_div"] = t
    # u32 index arithmetic: a[u32(i)] where the index is proven non-negative
    t = re.sub(r"(\b[a-z]\w*)\[\(\((.*?)\)\)\]", lambda m: f"{m.group(1)}[u32(({m.group(2)}))]",
               text)
    if t != text:
        out["text_u32_index"] = t
    return out


def run(name: str, rounds: int, k: int | None, want_text: bool, want_var: bool, raw):
    size = CB.SIZES[name][0]
    kk = k or CB.LAUNCHES[name][0]
    prob = CB.Problem(name, size)
    forms = {"checked": CB.ours_form(prob, CK.CHECKED[name], kk),
             "unchecked": CB.ours_form(prob, CK.UNCHECKED[name], kk),
             "wgsl": raw.form(prob, kk)}
    for f in forms.values():
        f[0]()                                      # warm-up; also compiles (and dumps) ours
    texts = {}
    if want_text:
        texts["text"] = emitted_wgsl(name, prob.threads)
        if want_var:
            texts.update(variants(name, texts["text"]))
    for tname, t in texts.items():
        forms[tname] = text_form(raw, prob, t, kk)
        forms[tname][0]()
    names = list(forms)
    times = {n: [] for n in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for n in order:
            t0 = time.perf_counter()
            forms[n][0]()
            times[n].append((time.perf_counter() - t0) * 1e3 / kk)
    bad = {}
    for n in names:
        err = prob.check(forms[n][1]())
        if err:
            bad[n] = err
    return prob, kk, times, bad


def summary(name, prob, kk, times, bad) -> list:
    lines = [f"{name} ({prob.label}, k={kk}, {len(times['wgsl'])} rounds)"]
    hand = times["wgsl"]
    lines.append(f"  {'form':18s} {'median ms':>10s} {'p25-p75 ms':>16s} {'best ms':>9s} "
                 f"{'vs WGSL (paired median)':>24s} {'p25-p75':>12s}")
    for n, ts in times.items():
        if n in bad:
            lines.append(f"  {n:18s} FAIL: {bad[n]}")
            continue
        q = statistics.quantiles(ts, n=4)
        ratio = [hw / t for hw, t in zip(hand, ts)]
        rq = statistics.quantiles(ratio, n=4)
        lines.append(f"  {n:18s} {statistics.median(ts):10.2f} {q[0]:7.2f}-{q[2]:<8.2f} "
                     f"{min(ts):9.2f} {statistics.median(ratio):23.2f}x "
                     f"{rq[0]:5.2f}-{rq[2]:.2f}")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=",".join(KERNELS))
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--k", type=int, default=None)
    ap.add_argument("--no-text", action="store_true", help="leave out our WGSL on the raw device")
    ap.add_argument("--variants", action="store_true", help="add the hand edits of our WGSL")
    ap.add_argument("--out", help="also append the report to this file")
    args = ap.parse_args(argv)
    env = {k: v for k, v in os.environ.items() if k.startswith("CTHREADS_")}
    raw = CB.RawForms("auto")
    from raw_wgpu import Raw  # noqa: PLC0415
    raw.raw = Raw(features=("shader-f64",))      # our WGSL divides exactly in float64
    lines = [f"probe_lavapipe_2d on {device_name()}; hand WGSL modules: {raw.module}; "
             f"CTHREADS_*: {env}; load average at start: {os.getloadavg()[0]:.2f}"]
    print(lines[0], flush=True)
    for name in [w for w in args.only.split(",") if w]:
        t0 = time.perf_counter()
        got = run(name, args.rounds, args.k, not args.no_text, args.variants, raw)
        part = summary(name, *got)
        part[0] += f" [{time.perf_counter() - t0:.0f} s, load {os.getloadavg()[0]:.2f}]"
        print("\n".join(part), flush=True)
        lines += part
    if args.out:
        with open(args.out, "a") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
