"""The kernel compiler: a Python function -> ``KernelProgram`` (WGSL text plus its layout).

Pipeline: ``source`` (find and parse) -> ``checks`` (signature, declarations) -> ``scope``
(what names mean) -> ``frontend`` / ``exprs`` / ``access`` (typed IR, ``ir``; list elements,
shapes, atomics and device-function calls in ``access``) -> ``proofs`` (bounds checks that need
not run) -> ``uniform`` (barrier placement) -> ``layout`` + ``lists`` + ``wgsl`` (text; device
functions through ``function_wgsl``, entry points in ``entry``), ``vectorize`` (four-lane
variant). A compilation is for one ``types.Widths`` (what plain float and int mean: the launch
follows its arrays); N-D launches get their own entry forms, rendered on first use. Device
functions (``functions``) are translated after the kernel, one specialisation per choice of the
caller's lists. Tables: ``types`` (element types and promotion), ``builtins`` (callables,
operators, each call's WGSL), ``library`` (the WGSL helpers: ``library/*.wgsl``, among them
the float64 library), ``float_ops`` and ``f64math`` (how float32 and float64 operators use them),
``unsupported`` (constructs kernels lack). Every pass dispatches with
``visit.Visitor``. Needs no device and never imports wgpu.

May import: ``cthreads.errors``, ``cthreads.config``, ``cthreads.lang`` and ``cthreads.sync``
(the barrier names a kernel calls); never ``cthreads.backend``, ``cthreads.runtime`` or the
package root's user objects.
"""

from __future__ import annotations

import dataclasses

from .. import config
from ..errors import CThreadsGPUError, GpuKernelError
from . import ir, library, loop_entry, printing, tuple_types
from .float_ops import OVERRIDES
from .frontend import Progress, check_function, translate, translate_functions
from .function_wgsl import function_text, has_loops as has_function_loops
from .functions import FunctionSet, OpSource
from .layout import Layout
from .lists import ListAccess
from .split import part_bindings
from .program import KernelProgram, LoopRecord, SharedArray
from .source import SourceLoc
from .proofs import prove_in_range
from .vec_checks import share_checks
from .scope import build_scope
from .tuple_types import scalar_types, wgsl_type
from .types import NARROW, ListType, Widths, elem
from .vectorize import vectorize
from .entry import (END_PROBE_MARK, ENTRY_HEAD, ENTRY_POINT, ND_ENTRY_HEAD, ND_GRID_ENTRY,
                    ND_LOCAL, ND_SIZE, PROBE_END, PROBE_FN, WG, grid_entry)
from .wgsl import STATIC_LOOP_PASSES, Emitter, static_passes



def compile_kernel(fn, *, boundscheck: bool = True, widths: Widths = NARROW) -> KernelProgram:
    """Translate ``fn`` (a plain function) to a KernelProgram, plain float and int meaning
    ``widths``; raises located errors, and turns any unexpected failure into a GpuKernelError
    at the kernel line it happened on."""
    progress = Progress()
    try:
        try:
            return _compile(fn, boundscheck, progress, widths)
        except GpuKernelError as exc:
            if not getattr(exc, "width_dependent", False):
                raise
            program = _refused_at(fn, boundscheck, widths)
            if program is None:
                raise
            return program
    except CThreadsGPUError:
        raise
    except Exception as exc:
        raise _internal_error(fn, progress, exc) from exc


#: the widths tried when a literal does not fit the plain float or int of a compilation
_WIDER = (Widths("float64", "int"), Widths("float", "int64"), Widths("float64", "int64"))


def _refused_at(fn, boundscheck: bool, widths: Widths) -> KernelProgram | None:
    """The program at ``widths`` of a kernel in which a literal does not fit these widths'
    plain float or int (``x[i] * 1e200``), when it compiles at wider ones: it decorates, and
    its launches at ``widths`` raise the located error (``KernelProgram.refused``). None when
    no wider widths help (the error stands). Only widths a launch can choose are tried: plain
    float is float64 only in kernels with a plain ``list[float]`` parameter, int likewise."""
    plain = {t.elem for _, t in build_scope(fn, boundscheck).annotated
             if isinstance(t, ListType)}
    for other in _WIDER:
        if other == widths or (other.float != "float" and "float" not in plain) or \
                (other.int != "int" and "int" not in plain):
            continue
        try:
            _compile(fn, boundscheck, Progress(), other)
        except Exception:       # noqa: BLE001 - not valid there either
            continue
        progress = Progress(lenient=True)
        program = _compile(fn, boundscheck, progress, widths)
        if not progress.deferred:
            return program
        return dataclasses.replace(program, refused=progress.deferred[0])
    return None


def _internal_error(fn, progress: Progress, exc: Exception) -> GpuKernelError:
    name = getattr(fn, "__name__", "<kernel>")
    message = (f"internal compiler error in kernel {name} ({type(exc).__name__}: {exc}); "
               f"please report it to the cthreads developers with the kernel's source")
    src = progress.src
    if src is None:
        code = getattr(fn, "__code__", None)
        return GpuKernelError(message, getattr(code, "co_filename", None),
                              getattr(code, "co_firstlineno", None))
    lineno = progress.lineno or src.firstlineno
    text = src.line_text(lineno)
    col = len(text) - len(text.lstrip())
    loc = SourceLoc(lineno, col, len(text.rstrip()))
    return GpuKernelError(f"{message}\n{src.format_location(loc)}", src.filename, lineno,
                          col + 1, text)


def _compile(fn, boundscheck: bool, progress: Progress, widths: Widths) -> KernelProgram:
    fe = translate(fn, boundscheck, progress, widths)
    kernel = share_checks(fe.kernel)     # list[vecN]: one check per element (vec_checks.py)
    checks = fe.checks
    progress.lineno = None          # past the translation: the def line until emission starts
    uses = kernel.uses
    # GridDim.x is ceil(n / 64) by the spec: a kernel that reads it keeps 64-wide groups too
    fixed = bool(uses & {"ThreadIdx", "BlockIdx", "BlockDim", "GridDim", "barrier", "shared"})
    # loops get a variant for CPU drivers that reports loops the driver ended early (wgsl.py),
    # through the status buffer; not loops of a few literal ranges, which cannot reach the end
    has_loops = any(isinstance(s, (ir.While, ir.ForRange)) for s in ir.walk_stmts(kernel.body))
    func_loops = any(has_function_loops(spec) for spec in kernel.functions)
    passes = static_passes(kernel.body) if has_loops and not func_loops else None
    # ... and loops with an early exit, whose entry values CPU drivers must not see
    early = any(isinstance(s, (ir.While, ir.ForRange)) and loop_entry.exits_early(s.body)
                for s in ir.walk_stmts(kernel.body))
    has_loops = func_loops or (has_loops and (passes is None or passes > STATIC_LOOP_PASSES
                                              or early))
    layout = Layout(kernel, bool(checks) or has_loops, fixed, fe.annotated)
    proofs = {} if "barrier" in kernel.uses else prove_in_range(kernel)
    always = frozenset(c for c, p in proofs.items() if p is None)
    template, line_map, workgroup_bytes, em = _render(fn, fe, kernel, layout, always, fixed,
                                                      progress)
    # ... unless a helper with a loop of its own (integer **) makes the bound uncertain
    has_loops = has_loops or (passes != 0 and _helper_loops(em))
    if has_loops and layout.status_binding is None:
        layout = Layout(kernel, True, fixed, fe.annotated)
    fast_requires = fast_conditions = ()
    if len(always) < len(proofs):
        lists_by_check = {c.id: (c.list_name, c.dim) for c in checks}
        fast_requires = tuple(sorted({(p, *lists_by_check[c]) for c, p in proofs.items()
                                      if isinstance(p, str)}))
        fast_conditions = tuple(sorted({cond for p in proofs.values()
                                        if isinstance(p, frozenset) for cond in p}))
    src = fe.src
    templates = _Templates(fn, fe, kernel, layout, always, frozenset(proofs), fixed, has_loops)
    templates.texts[("all", False, "flat")] = template
    vec_plan = None
    if not fixed and "float_atomic" not in uses and printing.USES not in uses:
        head = [f"// cthreads kernel {fn.__module__}.{fn.__qualname__} (four lanes per index "
                "step)"] + layout.uniform_decl()
        found = vectorize(kernel, layout, src, head, layout.written)
        if found is not None:
            vec_whole, vec_tail, vec_plan = found
            templates.texts[("all", False, "vec_whole")] = vec_whole
            templates.texts[("all", False, "vec_tail")] = vec_tail
    features = (("shader-float32-atomic",) if "float_atomic" in uses else ()) + \
        (("shader-int64-atomic-all-ops",) if "int64_atomic" in uses else ()) + \
        types_features(kernel) + printing.features(kernel)
    # the features the helpers' headers name (float64 helpers work on the bits as u64)
    features += tuple(f for name in em.helpers for f in library.get(name).features)
    features = tuple(sorted(set(features)))
    # pipeline constants the WGSL declares (every variant of the kernel the same ones: the
    # four-lane variant divides only where the scalar kernel does)
    overrides = tuple(sorted((OVERRIDES & em.helpers) |
                             ({"ct_fused_f32"} if vec_plan and vec_plan.divides else set())))
    return KernelProgram(
        name=fn.__name__,
        qualname=f"{fn.__module__}:{fn.__qualname__}",
        params=tuple(layout.params),
        uniform_size=layout.uniform_size,
        entry_point=ENTRY_POINT,
        fixed_workgroup_size=fixed,
        status_binding=layout.status_binding,
        checks=checks,
        line_map=line_map,
        filename=src.filename,
        firstlineno=src.firstlineno,
        workgroup_bytes=workgroup_bytes,
        needs_features=features,
        feature_sites=_feature_sites(fe, kernel),
        proven_checks=len(always),
        fast_requires=fast_requires,
        fast_conditions=fast_conditions,
        vec_guard=vec_plan.guard if vec_plan else None,
        vec_lists=vec_plan.lists if vec_plan else (),
        vec_width=vec_plan.width if vec_plan else 1,
        has_loops=has_loops,
        widths=widths.key,
        shapes=tuple(layout.shapes),
        nd_offset=layout.nd_offset,
        nd_uniform_size=layout.nd_uniform_size,
        barrier_lines=tuple(sorted({s.loc.lineno for s in ir.walk_stmts(kernel.body)
                                    if isinstance(s, ir.Barrier)})),
        shared_arrays=_shared_arrays(kernel, src),
        index_reads=_index_reads(kernel),
        overrides=overrides,
        print_sites=printing.sites(kernel),
        print_binding=layout.print_binding,
        refused=printing.breakpoint_error(progress),
        _templates=templates,
    )


def _shared_arrays(kernel: ir.Kernel, src) -> tuple:
    """The kernel's shared() declarations with their lines (top-level statements of the body,
    scope.py checked them)."""
    refs = {ref.pyname: ref for ref in kernel.lists if ref.shared_size is not None}
    out = []
    for stmt in src.tree.body:
        name = getattr(getattr(stmt, "target", None), "id", None)
        if stmt.__class__.__name__ == "AnnAssign" and name in refs:
            ref = refs.pop(name)
            out.append(SharedArray(name, ref.elem, ref.shared_size // max(ref.vec, 1),
                                   src.abs_line(stmt.lineno),
                                   src.abs_line(stmt.end_lineno or stmt.lineno), ref.vec,
                                   getattr(ref.struct, "cls", None)))
    return tuple(out)


def _index_reads(kernel: ir.Kernel) -> tuple:
    """The (builtin, axis) pairs of the index builtins read by the kernel and the device
    functions it calls, sorted (``KernelProgram.index_reads``)."""
    found = {(e.name, e.axis) for body in ir.all_bodies(kernel)
             for e in ir.walk_stmt_exprs(body) if isinstance(e, ir.Special)}
    return tuple(sorted(found))


class _Templates:
    """A program's variant templates (``KernelProgram._templates``), rendered on first use by
    (checks, loop_report, form): the text before ``KernelProgram.render`` writes in the entry
    point's step count and workgroup size."""

    def __init__(self, fn, fe, kernel, layout, always, proven, fixed, has_loops):
        self.args = (fn, fe, kernel, layout)
        self.always, self.proven, self.fixed, self.has_loops = always, proven, fixed, has_loops
        self.texts: dict = {}
        self._loops = None

    def template(self, checks: str, loop_report: bool, form: str, split: tuple = ()) -> str:
        key = (checks, loop_report, form, split) if split else (checks, loop_report, form)
        text = self.texts.get(key)
        if text is None:
            text, em = self._render(checks, loop_report, form, split)
            if loop_report and form == "flat" and self._loops is None:
                self._loops = self._records(em)
            self.texts[key] = text
        return text

    def _render(self, checks: str, loop_report: bool, form: str, split: tuple = ()):
        """(text, emitter) of one template; an unexpected failure becomes the located
        internal compiler error that ``compile_kernel`` gives."""
        fn, fe, kernel, layout = self.args
        skip = self.proven if checks == "proven" else self.always
        nd = {"nd_grid": "grid", "nd_tile": "tile"}.get(form, False)
        progress = Progress()
        progress.src = fe.src
        try:
            parts = part_bindings([p.name for p in layout.params if p.is_list], split,
                                  layout.print_binding is not None) if split else None
            text, _, _, em = _render(fn, fe, kernel, layout, skip,
                                     nd == "tile" if nd else self.fixed, progress,
                                     cpu=loop_report, nd=nd, split=parts)
        except CThreadsGPUError:
            raise
        except Exception as exc:
            raise _internal_error(fn, progress, exc) from exc
        return text, em

    def _records(self, em) -> tuple:
        fn, fe, kernel, layout = self.args
        return tuple(em.loops) + _function_loops(kernel, len(em.loops))

    def loops(self) -> tuple:
        """The ``LoopRecord``s of the loop-reporting variants (rendering the first of them)."""
        if self._loops is None:
            self.template("all", True, "flat")
        return self._loops


#: the device feature that atomics on each element type need beyond the type's own
ATOMIC_FEATURES = {"int64": "shader-int64-atomic-all-ops"}


def _feature_sites(fe, kernel: ir.Kernel) -> tuple:
    """(feature, located source text) of the first use of each feature that only some devices
    of a type's width offer (64-bit atomics), so that a launch on a device without it can
    point at the line."""
    sites: dict = {}
    srcs = [fe.src] + [spec.src for spec in kernel.functions]
    for src, body in zip(srcs, ir.all_bodies(kernel)):
        for e in ir.walk_stmt_exprs(body):
            feature = ATOMIC_FEATURES.get(e.ty if e.lst.struct is not None else e.lst.elem) \
                if isinstance(e, ir.Atomic) else None          # a struct's int64 words too
            if feature is not None and feature not in sites:
                sites[feature] = src.format_location(e.loc)
    return tuple(sites.items())


def types_features(kernel: ir.Kernel) -> tuple:
    """The device features the element types of the kernel and its functions need."""
    types = {local.ty for local in kernel.locals} | {ref.elem for ref in kernel.lists}
    for body in ir.all_bodies(kernel):
        types.update(e.ty for e in ir.walk_stmt_exprs(body))
    for spec in kernel.functions:
        types.update(local.ty for local in spec.body.locals)
    types.discard("none")
    types = {t for ty in types for t in scalar_types(ty)}     # tuples: their members
    return tuple(sorted({elem(t).feature for t in types if elem(t).feature}))


def _render(fn, fe, kernel, layout, skip: frozenset, fixed: bool, progress: Progress,
            cpu: bool = False, nd: bool = False, split: dict | None = None):
    """(WGSL template, WGSL line -> Python line map, workgroup bytes, the emitter), without the
    bounds checks in ``skip``; ``cpu``: the variant that reports loops the driver ended;
    ``nd``: the N-D launch variant (its body is the entry point, as for ``fixed`` kernels);
    ``split``: the lists split across bindings (``split.part_bindings``), or None."""
    # a variant whose checks are all proven away does not declare the status buffer (the
    # runtime still binds it; an unused binding is valid, an unused declaration slowed the
    # kernel: see docs/performance.md, "Shader shape")
    checked = any(c.id not in skip for c in fe.checks)
    status = layout.status_binding if checked or cpu else None
    lists = ListAccess(kernel, layout.written, layout.bindings, status, skip, split)
    lists.hoist = config.current().index_form != "old"
    em = Emitter(kernel, fe.src, lists, progress, loopcheck=cpu)
    em.report = checked
    em.nd = nd
    fixed = fixed or nd
    _emit_main(em, kernel)
    function_blocks = []
    for spec in kernel.functions:
        text, used = function_text(spec, lists, em.specs, progress, nd, cpu)
        for name in sorted(used):
            em.helper(name)
        function_blocks.append(text)
    # when a helper has a loop of its own (integer **), the CPU variant ends with a probe
    # (entry.PROBE_FN), and kernels whose body is the entry point also probe at each return
    end_probe = cpu and _helper_loops(em)
    keep = [k for k, text in enumerate(em.lines)
            if text.strip() != PROBE_END or (end_probe and fixed)]
    em.lines = [em.lines[k] for k in keep]
    em.pylines = [em.pylines[k] for k in keep]
    stride_decls, stride_sets = lists.stride_lines()     # set before the body's first line
    em.lines = ["    " + t for t in stride_sets] + em.lines
    em.pylines = [0] * len(stride_sets) + em.pylines
    head = [f"// cthreads kernel {fn.__module__}.{fn.__qualname__}"]
    head += layout.uniform_decl(nd) + lists.declarations() + stride_decls
    if layout.print_binding is not None:
        head += printing.declarations(layout.print_binding)
    helper_blocks = tuple_types.declarations(kernel.functions)
    helper_blocks += [library.get(name).text for name in sorted(em.helpers)]
    helper_blocks += lists.helper_text()
    helper_blocks += function_blocks
    if any(library.get(name).needs_zero for name in em.helpers):
        # a zero the driver's compiler cannot see, set at the entry (loop_entry.ENTRY_LINE):
        # a uniform's bit alone is folded by lavapipe (which inlines uniforms' values: float64
        # x / (x - x) gave 0.0), a dispatch size's alone by NVIDIA's driver
        em.helper(loop_entry.OPAQUE)
        opaque = library.get(loop_entry.OPAQUE).text
        if opaque not in helper_blocks:
            helper_blocks.insert(0, opaque)
        helper_blocks.append("fn ct_zero() -> u32 { return ct_opq; }")
    if cpu:
        count = "ct_groups" if fixed else "ct_threads"
        helper_blocks.append(PROBE_FN.replace("{count}", count)
                             + ("\n" + END_PROBE_MARK if end_probe else ""))
    tail = ["    ct_report();"] if lists.reports else []
    if end_probe and fixed:
        tail.append("    " + PROBE_END)
    lines, pylines = [], []

    def add(texts, pyls=None):
        lines.extend(texts)
        pylines.extend(pyls if pyls is not None else [0] * len(texts))

    add(head)
    for block in helper_blocks:
        add([""] + block.split("\n"))
    if nd == "grid":
        # an N-D kernel that does not observe workgroups: its body is a function of the three
        # indexes, run along x by 1-D workgroups, several rows per invocation
        add(["", "fn ct_body(ct_gidx: i32, ct_gidy: i32, ct_gidz: i32) {"])
        add(em.lines + tail + ["}"], em.pylines + [0] * (len(tail) + 1))
        add(ND_GRID_ENTRY)
    elif nd:
        add(ND_ENTRY_HEAD + ["    " + text for text in lists.zero_shared(ND_SIZE, ND_LOCAL)])
        add(em.lines + tail + ["}", ""], em.pylines + [0] * (len(tail) + 2))
    elif fixed:
        add(ENTRY_HEAD + [
            "    let ct_flat: u32 = ct_wid.y * ct_nwg.x + ct_wid.x;",
            "    if (ct_flat >= ct_u.ct_groups) { return; }",
            f"    let ct_gidx: i32 = i32(ct_flat * {WG}u + ct_lid.x);",
        ] + ["    " + text for text in lists.zero_shared(WG)])
        add(em.lines + tail + ["}", ""], em.pylines + [0] * (len(tail) + 2))
    else:
        # A kernel that only sees GlobalIdx.x: its body is a function of the index, run for
        # every index below ct_threads (n rounded up to 64, as the spec's 64-wide grid has).
        # Each invocation runs it for one or more indexes one grid apart, which keeps accesses
        # coalesced and gives each invocation more loads in flight (runtime/variants.py picks it).
        add(["", "fn ct_body(ct_gidx: i32) {"])
        add(em.lines + tail + ["}"], em.pylines + [0] * (len(tail) + 1))
        add(grid_entry("ct_body", "i32(ct_g)"))
    if loop_entry.OPAQUE in em.helpers:
        loop_entry.add_entry_line(lines, pylines, "ct_groups" if fixed else "ct_threads")
    line_map = {k + 1: py for k, py in enumerate(pylines) if py}
    return "\n".join(lines), line_map, lists.workgroup_bytes(), em


def _helper_loops(em: Emitter) -> bool:
    """True when a helper or device function the emitted code calls has a loop of its own."""
    return any(library.get(name).loops for name in em.helpers) or any(
        has_function_loops(spec) for spec in em.specs.values())


def _function_loops(kernel: ir.Kernel, first: int) -> tuple:
    """Records of the outermost loops of the device functions (for the CPU drivers' loop
    message; no probe of their own follows them, the kernel's probes cover them)."""
    out = []
    for spec in kernel.functions:
        for s in _outermost_loops(spec.body.body):
            out.append(LoopRecord(first + len(out), s.loc.lineno,
                                  spec.src.source_of(s.loc.lineno), spec.src.filename,
                                  spec.src.name))
    return tuple(out)


def _outermost_loops(stmts):
    for s in stmts:
        if isinstance(s, (ir.While, ir.ForRange)):
            yield s
        else:
            for body in s.bodies():
                yield from _outermost_loops(body)


def compile_operation(func, widths: Widths = NARROW) -> "OpSource":
    """The WGSL of a device function of two ``T`` parameters returning ``T`` (a binary
    operation for reductions) and of everything it calls, plain float and int meaning
    ``widths``; ``TypeError`` for other functions."""
    sig = func.signature
    types = [t for _, t in sig.params]
    if len(types) != 2 or not isinstance(types[0], str) or types[0] != types[1] or \
            sig.returns != types[0]:
        raise TypeError(f"{func.name}.reduce() needs a device function of two parameters of "
                        f"one scalar type returning that type, e.g. 'def add(a: float, b: "
                        f"float) -> float'; {func.name} is {func.describe()}")
    progress = Progress()
    functions = FunctionSet()
    root = functions.request(func, ())
    specs = translate_functions([(root, func.src.tree, func.src)], functions, True, progress,
                                [], widths)
    if any(printing.USES in spec.uses for spec in specs):
        raise TypeError(f"{func.name}.reduce(): the operation calls print(), which reductions "
                        "do not run; print from a kernel that calls the function")
    hidden = [name for spec in specs for name in spec.uses
              if name in ("GlobalIdx", "ThreadIdx", "BlockIdx", "BlockDim", "GridDim")]
    if hidden:
        raise TypeError(f"{func.name}.reduce(): the operation reads {hidden[0]}; a reduction's "
                        "operation must depend on its two arguments only")
    dummy = ir.Kernel(func.name, (), (), (), (), (), frozenset(), specs)
    lists = ListAccess(dummy, set(), {}, None)
    table = {spec.ident: spec for spec in specs}
    blocks, used = [], set()
    for spec in specs:
        # loops with an early exit hide their entry values behind ct_opq, which the
        # reduction shader sets on CPU drivers only (a zero GPUs' compilers fold away)
        text, names = function_text(spec, lists, table, progress, cpu=True)
        blocks.append(text)
        used |= names
    em = Emitter(dummy, func.src, lists, progress, specs=table)
    for name in sorted(used):
        em.helper(name)
    helpers = tuple_types.declarations(specs)
    helpers += [library.get(name).text for name in sorted(em.helpers)]
    features = ("shader-float32-atomic",) if any("float_atomic" in s.uses for s in specs) else ()
    features += tuple(elem(t).feature for t in {widths.concrete(types[0])}
                      if elem(t).feature)
    loops = any(has_function_loops(spec) for spec in specs) or \
        any(library.get(name).loops for name in em.helpers)
    return OpSource(root.ident, widths.concrete(types[0]), "\n\n".join(helpers + blocks),
                    features, tuple(sorted(OVERRIDES & em.helpers)), loops,
                    loop_entry.OPAQUE in em.helpers)


def _emit_main(em: Emitter, kernel: ir.Kernel):
    if printing.prints(kernel):
        em.line(printing.start_line(em.nd))
    for local in kernel.locals:
        t = wgsl_type(local.ty)
        if local.param:
            init = elem(local.ty).from_uniform.format(f"ct_u.{local.ident}")
            em.line(f"var {local.ident}: {t} = {init};")
        else:
            em.line(f"var {local.ident}: {t};")
    if em.flag_mode:
        em.line("var ct_live: bool = true;")
        em.block(list(kernel.body), "region")
    else:
        em.block(list(kernel.body), "plain")


__all__ = ["compile_kernel", "compile_operation", "check_function", "KernelProgram", "OpSource"]
