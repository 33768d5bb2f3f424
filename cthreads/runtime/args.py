"""List arguments, one handler per kind: what a launch, a reduction or an arena does with each.

A list argument is a flat Python list, a nested (N-D) Python list, a numpy array, a list bound
in a ``GpuArena`` (its resident slot), a numpy view of a bound array (``sharing.py``) or a
``GpuArray`` (``Device``: its ``device_array.DeviceSlot`` is bound like a resident slot). Each
kind has one ``ArgKind`` handler with the same small interface:

* ``check(value, param, where, slot)`` -> ``(slot, dims)``: the host checks against the
  kernel's parameter (raising the error that names it and the fix), the argument's resident
  slot (None: uploaded for this launch) and its shape;
* ``describe(value, dims)``: the argument in a message about its size;
* ``pack(value, elem, where, writable, ndim)``: its device bytes (``pack_any``: the element
  type too, for arenas, which declare none);
* ``writeback(target, view, elem)`` and ``elements(target)``: results written back in place,
  and the element count the readback compares with the launch's.

``kind_of(value, ndim)`` picks the handler by the value's type (one table lookup; a nested list
is a list of a parameter of more than one dimension, or one whose first element is a list);
``check_args`` checks a launch's arguments, a bound list first by its slot. A new kind (v3's
device arrays, vector, struct and complex arrays) is a new handler and a row of ``_BY_TYPE``.
Element-level checks and packing are ``convert.py``'s, shapes of nested lists ``nested.py``'s.
"""

from __future__ import annotations

import array
import sys

from ..codegen.types import DTYPE_ROWS, ELEM_TYPES
from ..codegen.types import elem as elem_type
from ..errors import GpuArgumentTypeError, GpuInvalidArgument
from . import convert, nested, parts, sharing
from .convert import is_ndarray
from .plan import ListArg

#: bytes per element of each element type (the element-type table's ``size``)
_SIZES = {name: row.size for name, row in ELEM_TYPES.items()}


class ArgKind:
    """The interface of a list-argument handler (see the module docstring)."""

    def check(self, value, param, where: str, slot=None) -> tuple:
        """(resident slot or None, dims) of ``value`` as the kernel's ``param``, checked."""
        raise NotImplementedError

    def check_container(self, value, elem: str, where: str, writable: bool = True,
                        ndim: int = 1, plain: str | None = None) -> None:
        """Raise unless ``value`` can be a ``list[elem]`` of ``ndim`` dimensions."""
        raise NotImplementedError

    def dims(self, value) -> tuple:
        """Its shape: (length,) for a flat list."""
        raise NotImplementedError

    def describe(self, value, dims) -> str:
        shape = "" if len(dims) == 1 else " x ".join(f"{d:,}" for d in dims) + " "
        return f"a {shape}{self.noun(value, dims)} of {nested.count(dims):,} elements"

    def noun(self, value, dims) -> str:
        return "list" if len(dims) == 1 else "nested list"

    def pack(self, value, elem: str, where: str, writable: bool = True, ndim: int = 1):
        """Its device bytes as ``elem`` values (the container checked again first)."""
        raise NotImplementedError

    def pack_any(self, value, where: str) -> tuple:
        """(element type, device bytes) of a value whose element type is not declared."""
        raise NotImplementedError

    def writeback(self, target, view, elem: str) -> None:
        """Write the device bytes ``view`` back into ``target``, in place."""
        raise NotImplementedError

    def elements(self, target) -> int:
        return len(target)

    def width(self, value, slot=None) -> tuple | None:
        """(element type, what it is for a message) when the value itself says what its
        elements are (an array's dtype, a resident slot's element type), else None: what a
        plain list[float] / list[int] parameter's width follows."""
        return None


class FlatList(ArgKind):
    """A Python list of numbers or bools (``list[float]``, ``list[int]``, ...)."""

    def check(self, value, param, where: str, slot=None) -> tuple:
        if sharing.bound_lists:
            sharing.check_list_parts(value, where)     # a row of a bound nested list
        self.check_container(value, param.elem, where, param.written or param.atomic, 1,
                             param.plain)
        return None, (len(value),)

    def check_container(self, value, elem, where, writable=True, ndim=1, plain=None):
        if not value:
            raise GpuInvalidArgument(f"{where} is an empty list; the device needs at least one "
                                     "element per list")
        if isinstance(value[0], list):
            raise GpuArgumentTypeError(f"{where}[0] is a list, but the kernel declares a 1-D "
                                       f"list (list[{elem}]); annotate it list[list[{elem}]] or "
                                       "pass a flat list")

    def dims(self, value) -> tuple:
        return (len(value),)

    def pack(self, value, elem, where, writable=True, ndim=1):
        self.check_container(value, elem, where, writable, ndim)
        return convert.pack_list(value, elem, where)

    def pack_any(self, value, where):
        self.check_container(value, "float", where)
        first = value[0]
        if first.__class__ is bool:
            return "bool", convert.pack_list(value, "bool", where)
        if isinstance(first, int):
            try:
                packed = array.array(elem_type("int").code, value)
            except (TypeError, OverflowError):
                pass            # a float further on (or an int beyond 32 bits): try floats
            else:
                return "int", packed
        return "float", convert.pack_list(value, "float", where)

    def writeback(self, target, view, elem):
        convert.write_list(target, view, elem)


class NestedList(ArgKind):
    """A rectangular Python list of row lists (``list[list[float]]``, ...), flattened
    row-major for the device and written back into the same rows."""

    def check(self, value, param, where: str, slot=None) -> tuple:
        if sharing.bound_lists:
            sharing.check_list_parts(value, where)     # holds a row of a bound nested list
        self.check_container(value, param.elem, where, param.written or param.atomic,
                             param.ndim, param.plain)
        return None, nested.shape(value, param.ndim, where)

    def check_container(self, value, elem, where, writable=True, ndim=1, plain=None):
        if not value:
            raise GpuInvalidArgument(f"{where} is an empty list; the device needs at least one "
                                     "element per list")
        nested.shape(value, ndim, where)

    def dims(self, value) -> tuple:
        return nested.shape(value, nested.depth(value), "list")

    def pack(self, value, elem, where, writable=True, ndim=1):
        self.check_container(value, elem, where, writable, ndim)
        dims = nested.shape(value, ndim, where)
        try:
            return LIST.pack(nested.flatten(value, ndim), elem, where, writable)
        except GpuInvalidArgument as exc:
            raise type(exc)(nested.element_where(str(exc), where, dims)) from None

    def pack_any(self, value, where):
        ndim = nested.depth(value)
        dims = nested.shape(value, ndim, where)
        try:
            return LIST.pack_any(nested.flatten(value, ndim), where)
        except GpuInvalidArgument as exc:
            raise type(exc)(nested.element_where(str(exc), where, dims)) from None

    def writeback(self, target, view, elem):
        ndim = nested.depth(target)
        dims = nested.shape(target, ndim, "list")
        flat = [None] * nested.count(dims)
        LIST.writeback(flat, view, elem)
        nested.fill(target, flat, ndim)

    def elements(self, target) -> int:
        return nested.count(self.dims(target))


class Array(ArgKind):
    """A C-contiguous numpy array of the parameter's dtype and dimensions, uploaded from its
    own memory and written back in place."""

    def check(self, value, param, where: str, slot=None) -> tuple:
        if sharing.bound_arrays:
            # a view of a bound array: its device copy, or an error (never stale data)
            slot = sharing.shared_slot(value, where)
            if slot is not None:
                return SHARED_VIEW.check(value, param, where, slot)
        self.check_container(value, param.elem, where, param.written or param.atomic,
                             param.ndim, param.plain)
        return None, self.dims(value)

    def check_container(self, value, elem, where, writable=True, ndim=1, plain=None):
        want = elem_type(elem).array_dtype
        if convert.dtype_name(value.dtype) != want:
            if plain is None:
                wants, decl = (want,), f"list[{elem}] ({want} arrays)"
            elif plain == elem:           # the 32-bit program: either width may be passed
                wants = convert.PLAIN_DTYPES[plain]
                decl = f"list[{plain}] ({' or '.join(wants)} arrays)"
            else:                         # a 64-bit launch: the other arrays chose the width
                wants = (want,)
                decl = (f"list[{plain}], {want} in this launch (as the other plain "
                        f"list[{plain}] arguments are)")
            raise GpuInvalidArgument(
                f"{where} is a numpy array of dtype {value.dtype}, but the kernel declares "
                f"{decl}: {convert.dtype_fix(value.dtype, wants)}; it is not converted "
                "silently because results are written back in place")
        if value.ndim != ndim:
            what = "a list" if ndim == 1 else f"a {ndim}-D list ({'list[' * ndim}...)"
            raise GpuInvalidArgument(
                f"{where} is a {value.ndim}-D numpy array, but the kernel declares {what}; "
                f"pass a {ndim}-D array" + (" (e.g. arr.ravel() of a C-contiguous array, then "
                                              "reshape)" if ndim == 1 else ""))
        if not value.flags.c_contiguous:
            raise GpuInvalidArgument(
                f"{where} is a non-contiguous numpy view; pass a C-contiguous array "
                "(np.ascontiguousarray(arr)) and read the results from that array")
        if writable and not value.flags.writeable:
            raise GpuInvalidArgument(
                f"{where} is a read-only numpy array but the kernel writes it; pass a writable "
                "array (arr.copy())")
        if value.size == 0:
            raise GpuInvalidArgument(f"{where} is an empty array; the device needs at least one "
                                     "element per list")

    def dims(self, value) -> tuple:
        return value.shape             # a tuple of ints already

    def noun(self, value, dims) -> str:
        return f"{value.dtype} array"

    def pack(self, value, elem, where, writable=True, ndim=1):
        self.check_container(value, elem, where, writable, ndim)
        row = elem_type(elem)
        if ndim > 1:
            value = value.reshape(-1)
        return value if row.array_dtype == row.host_dtype else value.astype(row.host_dtype)

    def pack_any(self, value, where):
        for row in ELEM_TYPES.values():
            if value.dtype.name == row.array_dtype:
                return row.name, self.pack(value, row.name, where, ndim=max(1, value.ndim))
        wants = ("float32", "float64", "int32", "int64", "uint32", "bool")
        raise GpuInvalidArgument(
            f"{where} is a numpy array of dtype {value.dtype}; a list holds "
            f"{', '.join(wants)} values: {convert.dtype_fix(value.dtype, wants)}; it is not "
            "converted silently because results are written back in place")

    def writeback(self, target, view, elem):
        np = convert._np()
        src = np.frombuffer(view, dtype=elem_type(elem).host_dtype, count=target.size)
        out = target if target.ndim == 1 else target.reshape(-1)
        if elem == "bool":
            np.not_equal(src, 0, out=out)
        else:
            np.copyto(out, src)

    def elements(self, target) -> int:
        return target.size

    def width(self, value, slot=None) -> tuple | None:
        name = convert.dtype_name(value.dtype)
        return DTYPE_ROWS.get(name), f"{'an' if name[0] in 'aeiou' else 'a'} {name} array"


class Resident(ArgKind):
    """A list or array bound in a ``GpuArena``: its slot's device buffer stands for it (the
    slot, ``residency.Slot``, checks it against the parameter)."""

    def check(self, value, param, where: str, slot=None) -> tuple:
        slot.check_for(param, value, where)
        return slot, slot.dims

    def width(self, value, slot=None) -> tuple | None:
        return slot.elem, f"an arena list of {elem_type(slot.elem).spelling}"


class SharedView(Array):
    """A numpy array covering exactly a bound array's memory (a reshape or ravel of it): the
    bound array's slot stands for it, once it passes the array checks."""

    def check(self, value, param, where: str, slot=None) -> tuple:
        self.check_container(value, param.elem, where, param.written or param.atomic,
                             param.ndim, param.plain)
        dims = self.dims(value)
        slot.check_view_for(param, where)
        return slot, dims


class DeviceArrayBase:
    """The base of ``cthreads.GpuArray`` (a root class): the handler table finds it by this
    class. ``_slot`` is its ``device_array.DeviceSlot``; ``shape`` and ``dtype`` as numpy's."""

    __slots__ = ()


class Device(ArgKind):
    """A ``GpuArray`` of the parameter's dtype and dimensions: its device buffer is bound, never
    copied; nothing is downloaded at join (``GpuArray.numpy()`` does)."""

    def check(self, value, param, where: str, slot=None) -> tuple:
        slot = value._slot
        slot.check_live(where)
        self.check_container(value, param.elem, where, param.written or param.atomic,
                             param.ndim, param.plain)
        if slot.offset:                # a view: bound from its offset, if the device can
            slot.check_offset(value, where)
        slot.checked = True        # a repeat of the launch may take it (relaunch.py)
        return slot, value.shape

    def check_container(self, value, elem, where, writable=True, ndim=1, plain=None):
        want = elem_type(elem).array_dtype
        have = value.dtype.name
        if have != want:
            if plain is None:
                decl, wants = f"list[{elem}] ({want} arrays)", (want,)
            elif plain == elem:
                wants = convert.PLAIN_DTYPES[plain]
                decl = f"list[{plain}] ({' or '.join(wants)} arrays)"
            else:
                wants = (want,)
                decl = (f"list[{plain}], {want} in this launch (as the other plain "
                        f"list[{plain}] arguments are)")
            raise GpuInvalidArgument(
                f"{where} is a GpuArray of shape {value.shape} and dtype {have}, but the "
                f"kernel declares {decl}: pass a GpuArray of dtype {' or '.join(wants)} "
                f"(to_device(arr.numpy().astype(np.{wants[0]}))); it is not converted "
                "silently because the kernel's writes land in it")
        if value.ndim != ndim:
            what = "a list" if ndim == 1 else f"a {ndim}-D list ({'list[' * ndim}...)"
            raise GpuInvalidArgument(
                f"{where} is a {value.ndim}-D GpuArray of shape {value.shape}, but the kernel "
                f"declares {what}; pass a {ndim}-D GpuArray (a view of this one, no copy: "
                "d.reshape(...) or d.ravel())")
        if value.size == 0:
            raise GpuInvalidArgument(
                f"{where} is an empty GpuArray of shape {value.shape}; the device needs at "
                "least one element per list")

    def dims(self, value) -> tuple:
        return value.shape

    def noun(self, value, dims) -> str:
        return f"{value.dtype} GpuArray"

    def pack(self, value, elem, where, writable=True, ndim=1):
        self.pack_any(value, where)

    def pack_any(self, value, where):
        raise GpuInvalidArgument(
            f"{where} is a GpuArray of shape {value.shape} and dtype {value.dtype}: its data "
            "already lives on the device, so it is not bound in an arena or packed; pass it "
            "to the launch as it is (or d.numpy() for a host copy)")

    def elements(self, target) -> int:
        return target.size

    def width(self, value, slot=None) -> tuple | None:
        name = value.dtype.name
        return DTYPE_ROWS.get(name), f"a {name} GpuArray"


class Other(ArgKind):
    """Anything else: refused, naming what a list parameter takes (each method raises)."""

    def check(self, value, param, where: str, slot=None) -> tuple:
        self.check_container(value, param.elem, where, ndim=param.ndim)
        raise AssertionError("check_container raises")

    def check_container(self, value, elem, where, writable=True, ndim=1, plain=None):
        decl = "list[" * ndim + elem + "]" * ndim
        raise GpuArgumentTypeError(
            f"{where} expects a {decl} (or a {ndim}-D numpy array), got "
            f"{convert._type_name(value)}; pass a list (e.g. list(values))")

    def pack(self, value, elem, where, writable=True, ndim=1):
        self.check_container(value, elem, where, writable, ndim)

    def pack_any(self, value, where):
        raise GpuArgumentTypeError(
            f"{where} expects a list of floats, ints or bools (or a 1-D numpy array), got "
            f"{convert._type_name(value)}; pass a list (e.g. list(values))")


LIST, NESTED, ARRAY, RESIDENT, SHARED_VIEW, DEVICE, OTHER = (
    FlatList(), NestedList(), Array(), Resident(), SharedView(), Device(), Other())

#: value class -> its handler (subclasses are found once by ``_kind_by_mro`` and added)
_BY_TYPE: dict = {list: LIST}


def _kind_by_mro(cls):
    np = sys.modules.get("numpy")
    if np is not None and issubclass(cls, np.ndarray):
        kind = ARRAY
    elif issubclass(cls, list):
        kind = LIST
    elif issubclass(cls, DeviceArrayBase):
        kind = DEVICE
    else:
        return OTHER                 # not kept: the table holds list and array types only
    _BY_TYPE[cls] = kind
    return kind


def register_kind(cls, kind: ArgKind) -> None:
    """``kind`` handles arguments of class ``cls`` (a handler defined in another module:
    ``vector_rows.py``)."""
    _BY_TYPE[cls] = kind


def kind_of(value, ndim: int | None = None) -> ArgKind:
    """The handler of a list argument ``value`` that is not resident: for a Python list, the
    nested-list one when ``ndim`` (the parameter's dimensions) is above 1, or (``ndim`` None)
    when its first element is a list."""
    kind = _BY_TYPE.get(value.__class__) or _kind_by_mro(value.__class__)
    if kind is LIST and (ndim > 1 if ndim is not None else nested.is_nested(value)):
        return NESTED
    return kind


# -- what the rest of the runtime calls ------------------------------------------------------

def check_container(value, elem: str, where: str, writable: bool = True,
                    ndim: int = 1, plain: str | None = None) -> None:
    """Raise unless ``value`` is a non-empty list or a matching numpy array of ``ndim``
    dimensions (a rectangular nested list for ``ndim`` > 1). ``writable``: results will be
    written back into it (read-only arrays are refused then). ``plain``: 'float' / 'int' for
    a plain list[float] / list[int] parameter, which takes arrays of either width."""
    kind_of(value, ndim).check_container(value, elem, where, writable, ndim, plain)


def pack(value, elem: str, where: str, writable: bool = True, ndim: int = 1):
    """The device bytes of a list or array argument (checked first; an N-D argument packs
    row-major). A bool among the numbers of a list[int] or list[float] packs as its number."""
    return kind_of(value, ndim).pack(value, elem, where, writable, ndim)


def pack_any(value, where: str) -> tuple:
    """(element kind, device bytes) of a list or array whose kind is not declared (arenas):
    lists of bools are 'bool', lists of ints 'int' (usable as floats until a kernel first uses
    them), anything with a float 'float'; arrays by their dtype."""
    return kind_of(value).pack_any(value, where)


def writeback(target, view, elem: str) -> None:
    """Write device bytes back into the caller's list or array, in place (an N-D array through
    its flat view, a nested list into its rows)."""
    kind_of(target).writeback(target, view, elem)


def describe(value, dims) -> str:
    """A list or array argument of shape ``dims`` for a message about its size: 'a 5,000 x
    4,000 float64 array of 20,000,000 elements', 'a list of 70,000 elements'."""
    return kind_of(value, len(dims)).describe(value, dims)


def dims(value) -> tuple:
    """The shape of a list or array: an N-D array's or nested list's, else (length,)."""
    return kind_of(value).dims(value)


def elements(target) -> int:
    """Elements of a list, nested list or array."""
    return kind_of(target).elements(target)


def width_of(value) -> tuple | None:
    """``ArgKind.width`` of a list argument: a numpy array by its dtype, else a resident list
    by its slot."""
    kind = _BY_TYPE.get(value.__class__) or _kind_by_mro(value.__class__)
    if kind is ARRAY or kind is DEVICE:
        return kind.width(value)
    slot = sharing.lookup(value)
    return None if slot is None else RESIDENT.width(value, slot)


# -- a launch's arguments ------------------------------------------------------------------------

def check_args(program, args: tuple, wheres: tuple) -> tuple[list, list, int]:
    """(scalar values, ``ListArg``s, n) of a launch, every argument checked on the host
    (``wheres``: each parameter's "<kernel>() parameter 'x'" text)."""
    scalars = []
    lists = []
    n_value = None
    count_at = program.count_param
    check_scalar = convert.check_scalar
    lookup = sharing.lookup
    for k, (p, value) in enumerate(zip(program.params, args)):
        where = wheres[k]
        if not p.is_list:
            v = check_scalar(value, p.elem, where)
            scalars.append(v)
            if k == count_at:
                n_value = v
            continue
        slot = lookup(value)
        kind = RESIDENT if slot is not None else \
            _BY_TYPE.get(value.__class__) or _kind_by_mro(value.__class__)
        if kind is LIST and p.ndim > 1:
            kind = NESTED
        slot, shape = kind.check(value, p, where, slot)
        arg = ListArg(p, value, slot, None, _SIZES[p.elem] * nested.count(shape))
        arg.dims = shape
        arg.kind = kind
        lists.append(arg)
    if program.shapes:                 # the N-D lists' shapes ride in the uniform
        by_name = {a.param.name: a.dims for a in lists}
        scalars += [by_name[name][d] for name, d, _ in program.shapes]
    n = n_value if n_value is not None else max((len(a.value) // (a.param.vec if a.param.ndim
                                                                  == 1 and a.param.vec else 1)
                                                 for a in lists), default=1)
    if sum(a.slot is not None for a in lists) > 1:
        check_resident_aliases(program.name, lists)
    return scalars, lists, n


#: id(program) -> (program, the "<kernel>() parameter 'x'" text of each parameter)
_WHERES: dict = {}


def wheres(program) -> tuple:
    """Each parameter's name for messages, made once per program (a launch checks every
    argument, and most launches raise nothing)."""
    hit = _WHERES.get(id(program))
    if hit is None or hit[0] is not program:
        hit = _WHERES[id(program)] = (program, tuple(
            f"{program.name}() parameter {p.name!r}" for p in program.params))
    return hit[1]


def check_resident_aliases(name: str, lists: list) -> None:
    """One resident list passed for a parameter the kernel only reads and for one it writes:
    one device buffer cannot be bound read-only and writable in one dispatch (wgpu-native
    aborts the process on that submission), so refuse it here."""
    by_slot: dict[int, list] = {}
    for a in lists:
        if a.slot is not None:        # GpuArray views of one array: its slot's buffer
            by_slot.setdefault(id(getattr(a.slot, "base", None) or a.slot), []).append(a)
    for group in by_slot.values():
        written = [a for a in group if a.param.written or a.param.atomic]
        read = [a for a in group if not (a.param.written or a.param.atomic)]
        if written and read and group[0].slot.target is None:      # a GpuArray
            r, w = read[0], written[0]
            what = "the same GpuArray is" if r.value is w.value else (
                f"views of one GpuArray (shapes {r.value.shape} and {w.value.shape}, sharing "
                "its buffer) are")
            raise GpuInvalidArgument(
                f"{name}() parameters {r.param.name!r} and {w.param.name!r}: {what} passed "
                f"for {r.param.name!r}, which the kernel only reads, and for "
                f"{w.param.name!r}, which it writes; one device buffer cannot be both in one "
                f"launch. Pass a copy for {r.param.name!r} (d.copy())")
        written = [a.param.name for a in written]
        read = [a.param.name for a in read]
        if written and read:
            raise GpuInvalidArgument(
                f"{name}() parameters {read[0]!r} and {written[0]!r}: the same list, bound in "
                f"an arena as {group[0].slot.name!r}, is passed for {read[0]!r}, which the "
                f"kernel only reads, and for {written[0]!r}, which it writes; one device "
                "buffer cannot be both in one launch. Pass a copy for "
                f"{read[0]!r} (list(x) or x.copy()), or bind that copy in the arena too")


def pack_lists(name: str, pool, lists: list) -> None:
    """The device bytes of every list that is not resident (sizes checked first: past the
    device ``pool``'s storage-binding limit a list is uploaded in parts, ``parts.py``)."""
    limit = None
    for a in lists:
        if a.slot is None:
            if limit is None:
                limit = pool.binding_bytes()
            if a.nbytes > limit:
                size = _SIZES[a.param.elem]
                count = a.nbytes // size
                parts.check_count(count, f"{name}() parameter {a.param.name!r}", a.dims)
                a.part_elems = parts.part_elems_for(count, size, limit)
    for a in lists:
        if a.slot is None:
            p = a.param
            a.data = a.kind.pack(a.value, p.elem, f"{name}() parameter {p.name!r}",
                                 p.written or p.atomic, p.ndim)


__all__ = ["ArgKind", "DeviceArrayBase", "check_args", "check_container", "describe", "dims", "elements",
           "is_ndarray", "kind_of", "pack", "pack_any", "pack_lists", "wheres", "width_of",
           "writeback"]
