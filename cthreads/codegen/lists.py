"""List and shared-array access: declarations, loads, stores, atomics and bounds checks.

With bounds checks on, every access not proven safe (``proofs.py``) goes through a small
per-list helper: one unsigned compare against the length, noted branch-free in private
variables; an out-of-range write or atomic is skipped. When the invocation ends
(``ct_report``), a noted failure stores its check id + 1, the index (as i32 bits) and the
length into the status buffer (words 0, 1, 2; the first invocation to report wins), as
``program.py`` describes.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import config
from . import ir
from .builtins import ATOMIC_WGSL
from .split import SplitList
from .struct_atomics import struct_atomic_word
from .types import elem


@dataclass(frozen=True)
class ListView:
    ref: ir.ListRef
    written: bool
    binding: int | None          # storage binding for parameters, None for shared arrays

    @property
    def shared_size(self):
        return self.ref.shared_size

    @property
    def ident(self):
        return self.ref.ident


class ListAccess:
    def __init__(self, kernel: ir.Kernel, written: set, bindings: dict, status_binding,
                 skip: frozenset = frozenset(), split: dict | None = None):
        self.views = {}
        for ref in kernel.lists:
            self.views[ref.pyname] = ListView(ref, ref.pyname in written,
                                              bindings.get(ref.pyname))
        self.refs = list(self.views.values())
        # lists split across bindings in this variant (codegen/split.py): ident -> SplitList
        self.split = {} if not split else {
            v.ident: SplitList(v.ident, *split[name]) for name, v in self.views.items()
            if name in split}
        self.status_binding = status_binding
        self.skip = skip                       # check ids proven unnecessary (proofs.py)
        self.helpers: dict[str, str] = {}      # name -> WGSL text, emitted sorted
        # N-D row lengths read once per invocation (``hoist``, set by the kernel's emitter):
        # private name -> the uniform field; the emitter declares and sets them (``strides``)
        self.hoist = False
        self.strides: dict[str, str] = {}

    # -- declarations ----------------------------------------------------------------------
    def elem_type(self, ref: ir.ListRef) -> str:
        t = _atom(ref).storage
        return f"atomic<{t}>" if ref.atomic else t

    def declarations(self) -> list[str]:
        out = []
        for v in self.refs:
            if v.shared_size is None:
                access = "read_write" if v.written else "read"
                out.append(f"@group(0) @binding({v.binding}) var<storage, {access}> {v.ident}: "
                           f"array<{self.elem_type(v.ref)}>;")
                if v.ident in self.split:
                    out += self.split[v.ident].declarations(access, self.elem_type(v.ref))
        if self.status_binding is not None:
            out.append(f"@group(0) @binding({self.status_binding}) var<storage, read_write> "
                       f"ct_status: array<atomic<u32>, 4>;")
        for v in self.refs:
            if v.shared_size is not None:
                out.append(f"var<workgroup> {v.ident}: array<{self.elem_type(v.ref)}, "
                           f"{v.shared_size}>;")
        return out

    def zero_shared(self, wg: str, lid: str = "ct_lid.x") -> list[str]:
        """Prologue lines that zero every shared array (Python's shared(n) is all zeros; the
        driver may not zero workgroup memory), then a barrier. ``wg``: invocations per
        workgroup; ``lid``: this invocation's number among them."""
        out = []
        for v in self.refs:
            if v.shared_size is None:
                continue
            zero = _atom(v.ref).storage_zero
            store = (f"atomicStore(&{v.ident}[ct_k], {zero})" if v.ref.atomic
                     else f"{v.ident}[ct_k] = {zero}")
            step = wg if wg.endswith(")") else f"{wg}u"
            out.append(f"for (var ct_k: u32 = {lid}; ct_k < {v.shared_size}u; "
                       f"ct_k = ct_k + {step}) {{ {store}; }}")
        if out:
            out.append("workgroupBarrier();")
        return out

    def workgroup_bytes(self) -> int:
        return sum(elem(v.ref.elem).size * v.shared_size for v in self.refs
                   if v.shared_size is not None)

    # -- raw access ------------------------------------------------------------------------
    def length(self, ref: ir.ListRef, dim: int = 0) -> str:
        if ref.shared_size is not None:
            return f"{ref.shared_size}i"
        return f"i32({self._ulen(ref, dim)})"

    def _ulen(self, ref, dim: int = 0) -> str:
        if ref.shared_size is not None:
            return f"{ref.shared_size}u"
        if ref.ndim > 1:
            return f"ct_u.{shape_field(ref.ident, dim)}"
        if ref.ident in self.split:
            return self.split[ref.ident].length()
        return f"arrayLength(&{ref.ident})"

    def flat(self, ref, idxs: list) -> str:
        """The element number of ``ref[i, j, ...]`` (row-major) from i32 index texts."""
        text = idxs[0]
        for d, idx in enumerate(idxs[1:], start=1):
            text = f"(({text}) * {self._stride(ref, d)} + ({idx}))"
        return text

    def _stride(self, ref, d: int) -> str:
        """Dimension ``d``'s length as an i32 factor of the flat index: a private value set
        once per invocation where ``hoist`` (llvmpipe reloaded a uniform field in every loop
        trip: bench/probe_lavapipe_2d.py), else the uniform field read at the access."""
        size = self._ulen(ref, d)
        if not self.hoist or ref.shared_size is not None or not size.startswith("ct_u."):
            return f"i32({size})"
        name = f"ct_s_{ref.ident}_{d}"
        self.strides[name] = size
        return name

    def stride_lines(self) -> tuple[list[str], list[str]]:
        """(module declarations, the body's first lines) of the hoisted row lengths."""
        names = sorted(self.strides)
        return ([f"var<private> {n}: i32;" for n in names],
                [f"{n} = i32({self.strides[n]});" for n in names])

    def _raw_load(self, ref, idx) -> str:
        if ref.ident in self.split:
            return self.split[ref.ident].load(self, ref, idx)
        return self.load_at(ref.ident, ref, idx)

    def _raw_store(self, ref, idx, value) -> str:
        if ref.ident in self.split:
            return self.split[ref.ident].store(self, ref, idx, value)
        return self.store_at(ref.ident, ref, idx, value)

    def _raw_atomic(self, ref, op, idx, args) -> str:
        if ref.ident in self.split:
            return self.split[ref.ident].atomic(self, ref, op, idx, args)
        return self.atomic_at(ref.ident, ref, op, idx, args)

    # the access of element ``idx`` of buffer ``ident`` (the list's, or a part of a split one)
    @staticmethod
    def load_at(ident: str, ref, idx) -> str:
        if ref.atomic and struct_atomic_word(ref):      # a struct's words (struct_atomics)
            return f"bitcast<{elem(ref.elem).wgsl}>(atomicLoad(&{ident}[{idx}]))"
        if ref.atomic:
            return f"atomicLoad(&{ident}[{idx}])"
        return elem(ref.elem).load.format(f"{ident}[{idx}]")

    @staticmethod
    def store_at(ident: str, ref, idx, value) -> str:
        if ref.atomic and struct_atomic_word(ref):
            return f"atomicStore(&{ident}[{idx}], bitcast<{_atom(ref).wgsl}>({value}))"
        if ref.atomic:
            return f"atomicStore(&{ident}[{idx}], {value})"
        return f"{ident}[{idx}] = {elem(ref.elem).store.format(value)}"

    def atomic_at(self, ident: str, ref, op, idx, args) -> str:
        if op == "compare_exchange":
            name = f"ct_cas_{ident}"
            if name not in self.helpers:
                t = _atom(ref).storage
                self.helpers[name] = (
                    f"fn {name}(ct_i: i32, ct_e: {t}, ct_v: {t}) -> {t} {{\n"
                    f"    loop {{\n"
                    f"        let ct_r = atomicCompareExchangeWeak(&{ident}[ct_i], ct_e, ct_v);\n"
                    f"        if (ct_r.exchanged || ct_r.old_value != ct_e) {{ return ct_r.old_value; }}\n"
                    f"    }}\n"
                    f"    return ct_e;\n}}")
            return f"{name}({idx}, {args[0]}, {args[1]})"
        return f"{ATOMIC_WGSL[op]}(&{ident}[{idx}], {args[0]})"

    # -- checked access --------------------------------------------------------------------
    # A failed check is noted in private variables (branch-free selects) and reported once,
    # when the invocation ends (``flush``): an atomic failure path inside every access helper
    # kept llvmpipe from vectorising and slowed memory-bound kernels badly (docs/performance.md,
    # "Shader shape"). Reads use
    # the index as it is (wgpu keeps every access inside the buffer; after a failure nothing
    # is written back, so the value read never reaches the caller); writes and atomics are
    # skipped.
    def _note(self):
        if "ct_note" not in self.helpers:
            self.helpers["ct_note"] = (
                "var<private> ct_bad: u32;\n"
                "var<private> ct_bad_i: i32;\n"
                "var<private> ct_bad_n: u32;\n\n" + NOTE_FORMS[config.current().check_form])
            self.helpers["ct_report"] = (
                "fn ct_report() {\n"
                "    if (ct_bad == 0u || atomicLoad(&ct_status[0]) != 0u) { return; }\n"
                "    loop {\n"
                "        let r = atomicCompareExchangeWeak(&ct_status[0], 0u, ct_bad);\n"
                "        if (r.exchanged) {\n"
                "            atomicStore(&ct_status[1], bitcast<u32>(ct_bad_i));\n"
                "            atomicStore(&ct_status[2], ct_bad_n);\n"
                "            return;\n"
                "        }\n"
                "        if (r.old_value != 0u) { return; }\n"
                "    }\n}")

    @property
    def reports(self) -> bool:
        """True when the emitted code notes failures (then every exit calls ct_report)."""
        return "ct_note" in self.helpers

    def _nd_checked(self, ref, checks) -> bool:
        return any(c is not None and c not in self.skip for c in checks)

    def _nd_helper(self, kind: str, ref, n: int, params: str, ret: str, body: list) -> str:
        """The name of an N-D access helper (made once): ``kind`` 'ld', 'st' or 'at_<op>'."""
        name = f"ct_{kind}{n}_{ref.ident}"
        if name not in self.helpers:
            self._note()
            idx = ", ".join(f"ct_i{d}: i32" for d in range(n))
            cks = ", ".join(f"ct_c{d}: u32" for d in range(n))
            lines = [f"fn {name}({idx}{params}, {cks}){ret} {{", "    var ct_bad_here = false;"]
            for d in range(n):
                size = self._ulen(ref, d)
                lines += [f"    let ct_b{d} = bitcast<u32>(ct_i{d}) >= {size};",
                          f"    ct_note(ct_b{d}, ct_c{d}, ct_i{d}, {size});",
                          f"    ct_bad_here = ct_bad_here || ct_b{d};"]
            flat = self.flat(ref, [f"ct_i{d}" for d in range(n)])
            lines += [f"    let ct_f = {flat};"] + ["    " + b for b in body] + ["}"]
            self.helpers[name] = "\n".join(lines)
        return name

    def _nd_load(self, ref, idxs, checks) -> str:
        if not self._nd_checked(ref, checks):
            return self._raw_load(ref, self.flat(ref, idxs))
        name = self._nd_helper("ld", ref, len(idxs), "", f" -> {elem(ref.elem).wgsl}",
                               [f"return {self._raw_load(ref, 'ct_f')};"])
        return f"{name}({', '.join(idxs)}, {_ids(checks)})"

    def _nd_store(self, ref, idxs, value, checks) -> str:
        if not self._nd_checked(ref, checks):
            return self._raw_store(ref, self.flat(ref, idxs), value)
        t = elem(ref.elem).wgsl
        name = self._nd_helper("st", ref, len(idxs), f", ct_v: {t}", "",
                               [f"if (!ct_bad_here) {{ {self._raw_store(ref, 'ct_f', 'ct_v')}; }}"])
        return f"{name}({', '.join(idxs)}, {value}, {_ids(checks)})"

    def _nd_atomic(self, ref, op, idxs, args, checks) -> str:
        if not self._nd_checked(ref, checks):
            return self._raw_atomic(ref, op, self.flat(ref, idxs), args)
        t = _atom(ref).storage
        params = "".join(f", ct_a{k}: {t}" for k in range(len(args)))
        inner = self._raw_atomic(ref, op, "ct_f", [f"ct_a{k}" for k in range(len(args))])
        name = self._nd_helper(f"at_{op}_", ref, len(idxs), params, f" -> {t}",
                               [f"if (ct_bad_here) {{ return {_atom(ref).zero}; }}",
                                f"return {inner};"])
        return f"{name}({', '.join(idxs)}, {', '.join(args)}, {_ids(checks)})"

    def load(self, ref, idx: str, check, more=(), more_checks=()) -> str:
        if more:
            return self._nd_load(ref, [idx, *more], [check, *more_checks])
        if check is None or check in self.skip:
            return self._raw_load(ref, idx)
        name = f"ct_ld_{ref.ident}"
        if name not in self.helpers:
            self._note()
            n = self._ulen(ref)
            self.helpers[name] = (
                f"fn {name}(ct_i: i32, ct_c: u32) -> {elem(ref.elem).wgsl} {{\n"
                f"    ct_note(bitcast<u32>(ct_i) >= {n}, ct_c, ct_i, {n});\n"
                f"    return {self._raw_load(ref, 'ct_i')};\n}}")
        return f"{name}({idx}, {check + 1}u)"

    def store(self, ref, idx: str, value: str, check, more=(), more_checks=()) -> str:
        if more:
            return self._nd_store(ref, [idx, *more], value, [check, *more_checks])
        if check is None or check in self.skip:
            return self._raw_store(ref, idx, value)
        name = f"ct_st_{ref.ident}"
        if name not in self.helpers:
            self._note()
            n = self._ulen(ref)
            self.helpers[name] = (
                f"fn {name}(ct_i: i32, ct_v: {elem(ref.elem).wgsl}, ct_c: u32) {{\n"
                f"    let ct_bad_here = bitcast<u32>(ct_i) >= {n};\n"
                f"    ct_note(ct_bad_here, ct_c, ct_i, {n});\n"
                f"    if (!ct_bad_here) {{ {self._raw_store(ref, 'ct_i', 'ct_v')}; }}\n}}")
        return f"{name}({idx}, {value}, {check + 1}u)"

    def atomic(self, ref, op, idx: str, args: list, check, more=(), more_checks=()) -> str:
        if more:
            return self._nd_atomic(ref, op, [idx, *more], args, [check, *more_checks])
        if check is None or check in self.skip:
            return self._raw_atomic(ref, op, idx, args)
        name = f"ct_at_{op}_{ref.ident}"
        t = _atom(ref).storage
        if name not in self.helpers:
            self._note()
            n = self._ulen(ref)
            params = "".join(f", ct_a{k}: {t}" for k in range(len(args)))
            inner = self._raw_atomic(ref, op, "ct_i", [f"ct_a{k}" for k in range(len(args))])
            self.helpers[name] = (
                f"fn {name}(ct_i: i32{params}, ct_c: u32) -> {t} {{\n"
                f"    let ct_bad_here = bitcast<u32>(ct_i) >= {n};\n"
                f"    ct_note(ct_bad_here, ct_c, ct_i, {n});\n"
                f"    if (ct_bad_here) {{ return {_atom(ref).zero}; }}\n"
                f"    return {inner};\n}}")
        return f"{name}({idx}, {', '.join(args)}, {check + 1}u)"

    def component(self, idx: str, ty: str, n: int, check) -> str:
        """A run-time vector component index (``ir.ComponentIndex``, ``idx`` of int type
        ``ty``) as an i32: negative counts from the end; checked, an index outside -n .. n-1
        is noted (reported as written; an int64 or uint32 one beyond the i32 range as the
        nearest i32, and it never comes back in range)."""
        row = elem(ty)
        suffix = {"int": "", "int64": "_l", "uint32": "_u"}[row.name]
        first = {"int": "let ct_i = ct_k;",
                 "int64": "let ct_i = select(i32(ct_k), select(-2147483647i - 1i, 2147483647i, "
                          "ct_k > 0li), ct_k < -2147483647li - 1li || ct_k > 2147483647li);",
                 "uint32": "let ct_i = select(i32(ct_k), 2147483647i, ct_k > 2147483647u);"}[
                     row.name]
        checked = check is not None and check not in self.skip
        name = f"ct_comp{'_ck' if checked else ''}{suffix}"
        if name not in self.helpers:
            lines = [f"fn {name}(ct_k: {row.wgsl}, ct_n: i32"
                     f"{', ct_c: u32' if checked else ''}) -> i32 {{", "    " + first,
                     "    let ct_j = select(ct_i, ct_i + ct_n, ct_i < 0);"]
            if checked:
                # a failed index goes on as 0: the access it feeds stays in range, so its
                # own check does not note a second failure over this one
                self._note()
                lines += ["    let ct_bad_here = bitcast<u32>(ct_j) >= u32(ct_n);",
                          "    ct_note(ct_bad_here, ct_c, ct_i, u32(ct_n));",
                          "    return select(ct_j, 0i, ct_bad_here);", "}"]
            else:
                lines += ["    return ct_j;", "}"]
            self.helpers[name] = "\n".join(lines)
        return f"{name}({idx}, {n}i{f', {check + 1}u' if checked else ''})"

    def shape_fields(self) -> list:
        """(ident, dimension) of the uniform fields that hold the N-D lists' shapes."""
        return [(v.ident, d) for v in self.refs if v.ref.ndim > 1 for d in range(v.ref.ndim)]

    def helper_text(self) -> list[str]:
        order = sorted(self.helpers, key=lambda k: (k not in ("ct_note", "ct_report"), k))
        return [self.helpers[k] for k in order]


#: ``ct_note`` by CTHREADS_CHECK_FORM (config.py): both keep the last failure of the
#: invocation (what ``ct_report`` publishes, so the report is the same). "select": three
#: branch-free selects per access (chosen for llvmpipe's vectoriser, whose memory-bound kernels
#: are now mostly proven); "branch": a branch taken only on failure, so a loop's accesses cost
#: one compare each and carry no private values from trip to trip (docs/performance.md).
NOTE_FORMS = {
    "select": ("fn ct_note(bad: bool, c: u32, i: i32, n: u32) {\n"
               "    ct_bad = select(ct_bad, c, bad);\n"
               "    ct_bad_i = select(ct_bad_i, i, bad);\n"
               "    ct_bad_n = select(ct_bad_n, n, bad);\n}"),
    "branch": ("fn ct_note(bad: bool, c: u32, i: i32, n: u32) {\n"
               "    if (bad) {\n"
               "        ct_bad = c;\n"
               "        ct_bad_i = i;\n"
               "        ct_bad_n = n;\n"
               "    }\n}"),
}


def _atom(ref):
    """The element row of ``ref``'s atomics: its own, or the int words of a struct list
    used atomically (``struct_atomics.py``)."""
    word = struct_atomic_word(ref)
    return elem(word if word else ref.elem)


def shape_field(ident: str, dim: int) -> str:
    """The uniform field holding dimension ``dim`` of the N-D list ``ident``."""
    return f"ct_n_{ident}_{dim}"


def _ids(checks) -> str:
    """Check ids (+1, as the status words hold them) of an N-D access; 0u for none."""
    return ", ".join(f"{c + 1}u" if c is not None else "0u" for c in checks)
