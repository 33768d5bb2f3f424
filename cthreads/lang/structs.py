"""``@Gpu.struct``: struct classes, their numpy layout, and struct arrays in plain Python.

A struct class declares its fields with annotations (``float``, ``int``, ``bool``, ``vec2..4``,
``ivec2..4`` or another struct class). Host side its objects are plain Python objects with
those fields (keyword or positional construction, class-level defaults, ``repr``, ``==``).

**Layout** (ours: numpy's default structured dtypes are packed, which a GPU cannot address
word by word). Every scalar occupies one *word* of the launch's float width: 4 bytes in
float32 layouts (``Particle.dtype``), 8 bytes in float64 ones (``Particle.dtype_for(
np.float64)``). ``float`` is float32 / float64, ``int`` int32 / int64, a vector field is a
subarray of its components, a nested struct its own dtype, and ``bool`` is numpy's one-byte bool
at the start of its word (the other bytes of that word are padding: a kernel that writes the
field writes them as zeros). So an element is a whole number of words and a kernel reads the
array as a flat list of words (``codegen/structs.py``); the caller's array is never copied.
"""

from __future__ import annotations

import numbers

from .vectors import VECTOR_TYPES, VecList, _Vec
from .widths import uint32

_SCALARS = ("float", "int", "bool", "uint32")


class StructField:
    """One field: ``kind`` is 'float' | 'int' | 'bool' | a vector class | a struct class."""
    __slots__ = ("name", "kind", "default")

    def __init__(self, name, kind, default):
        self.name, self.kind, self.default = name, kind, default


def _kind_of(cls_name: str, name: str, annotation):
    if annotation in (float, int, bool):
        return annotation.__name__
    if annotation is uint32:
        return "uint32"
    if isinstance(annotation, str) and annotation in _SCALARS:
        return annotation
    if isinstance(annotation, str) and annotation in VECTOR_TYPES:
        return VECTOR_TYPES[annotation]
    if isinstance(annotation, type) and (issubclass(annotation, _Vec) or is_struct(annotation)):
        return annotation
    raise TypeError(f"@Gpu.struct {cls_name}: field {name!r} has the annotation "
                    f"{getattr(annotation, '__name__', annotation)!r}; struct fields are float, "
                    "int, uint32, bool, vec2/vec3/vec4, ivec2/ivec3/ivec4 or another @Gpu.struct "
                    "class")


def is_struct(obj) -> bool:
    return isinstance(obj, type) and "_ct_fields" in obj.__dict__


def struct(cls):
    """The ``@Gpu.struct`` decorator: ``cls`` with its annotated fields (module docstring)."""
    import inspect
    hints = inspect.get_annotations(cls, eval_str=True)
    if not hints:
        raise TypeError(f"@Gpu.struct {cls.__name__} declares no fields (write 'pos: vec3' ...)")
    fields = tuple(StructField(name, _kind_of(cls.__name__, name, ann),
                               cls.__dict__.get(name, _MISSING)) for name, ann in hints.items())
    for f in fields:
        if f.name in cls.__dict__:
            delattr(cls, f.name)           # the class-level value is the default
    ns = {"_ct_fields": fields, "_ct_dtypes": {}, "__slots__": tuple(f.name for f in fields),
          "__init__": _init, "__repr__": _repr, "__eq__": _eq, "__hash__": None,
          "dtype_for": classmethod(_dtype_for), "fields": classmethod(_field_names),
          "__reduce__": _reduce}
    body = {k: v for k, v in cls.__dict__.items() if k not in ("__dict__", "__weakref__")}
    body.update(ns)
    out = _StructMeta(cls.__name__, cls.__bases__, body)
    out.__qualname__ = cls.__qualname__
    out.__module__ = cls.__module__
    type.__setattr__(out, "dtype", out.dtype_for("float32"))
    return out


class _StructMeta(type):
    """The type of struct classes: they pickle by reference where they can be imported, else
    by value (``_reduce_class``), so kernels defined in ``__main__`` travel with theirs."""


def _reduce_class(cls):
    import importlib
    try:
        found = importlib.import_module(cls.__module__)
        for part in cls.__qualname__.split("."):
            found = getattr(found, part)
    except Exception:   # noqa: BLE001 - not importable: by value
        found = None
    if found is cls and cls.__module__ != "__main__":
        return cls.__qualname__               # a global reference, as for any class
    spec = tuple((f.name, f.kind, f.default is not _MISSING,
                  None if f.default is _MISSING else f.default) for f in cls._ct_fields)
    return _rebuild_class, (cls.__name__, cls.__qualname__, cls.__module__, spec)


_REBUILT: dict = {}


def _rebuild_class(name, qualname, module, spec):
    """A struct class from its pickled definition (the same class for the same definition)."""
    key = (module, qualname, repr(spec))
    hit = _REBUILT.get(key)
    if hit is None:
        body = {"__annotations__": {n: kind for n, kind, _, _ in spec}, "__module__": module,
                "__qualname__": qualname}
        body.update({n: default for n, _, has, default in spec if has})
        hit = _REBUILT[key] = struct(type(name, (), body))
    return hit


import copyreg  # noqa: E402 - next to what it registers

copyreg.pickle(_StructMeta, _reduce_class)


class _Missing:
    def __repr__(self):
        return "<missing>"


_MISSING = _Missing()


def _field_names(cls) -> tuple:
    return tuple(f.name for f in cls._ct_fields)


def _convert(cls_name: str, f: StructField, value):
    kind = f.kind
    if kind == "float":
        if not isinstance(value, numbers.Real) or isinstance(value, bool):
            raise TypeError(f"{cls_name}.{f.name} is a float, not {type(value).__name__}")
        return float(value)
    if kind == "int":
        if not isinstance(value, numbers.Integral) or isinstance(value, bool):
            raise TypeError(f"{cls_name}.{f.name} is an int, not {type(value).__name__}")
        return int(value)
    if kind == "bool":
        return bool(value)
    if kind == "uint32":
        if not isinstance(value, numbers.Integral) or isinstance(value, bool):
            raise TypeError(f"{cls_name}.{f.name} is a uint32, not {type(value).__name__}")
        return uint32(int(value))            # wrapped modulo 2**32, as the device stores it
    if is_struct(kind):
        if not isinstance(value, kind):
            raise TypeError(f"{cls_name}.{f.name} is a {kind.__name__}, not "
                            f"{type(value).__name__}")
        return value
    return kind(value) if isinstance(value, _Vec) else kind(*value)      # a copy


def _init(self, *args, **kwargs):
    cls = type(self)
    fields = cls._ct_fields
    if len(args) > len(fields):
        raise TypeError(f"{cls.__name__}() takes at most {len(fields)} positional arguments "
                        f"({', '.join(cls.fields())}), got {len(args)}")
    if len(args) == 1 and not kwargs and (type(args[0]) is cls or (
            isinstance(args[0], StructRef) and args[0]._ct_cls is cls)):
        args = tuple(_copy(getattr(args[0], f.name)) for f in fields)     # a copy
    values = dict(zip((f.name for f in fields), args))
    for name, value in kwargs.items():
        if name not in cls.fields():
            raise TypeError(f"{cls.__name__}() has no field {name!r}; its fields are "
                            f"{', '.join(cls.fields())}")
        if name in values:
            raise TypeError(f"{cls.__name__}() got field {name!r} twice")
        values[name] = value
    for f in fields:
        if f.name not in values:
            if f.default is _MISSING:
                raise TypeError(f"{cls.__name__}() missing field {f.name!r} (and it has no "
                                "default)")
            values[f.name] = f.default
        object.__setattr__(self, f.name, _convert(cls.__name__, f, values[f.name]))


def _repr(self) -> str:
    return f"{type(self).__name__}(" + ", ".join(
        f"{f.name}={getattr(self, f.name)!r}" for f in self._ct_fields) + ")"


def _plainly(value):
    if isinstance(value, _Vec):
        return tuple(value)
    if is_struct(type(value)) or isinstance(value, StructRef):
        return tuple(_plainly(getattr(value, f.name)) for f in value._ct_fields)
    return value


def _eq(self, other):
    if type(other) is not type(self) and not (isinstance(other, StructRef) and
                                               other._ct_cls is type(self)):
        return NotImplemented
    return _plainly(self) == _plainly(other)


def _reduce(self):
    return (_rebuild, (type(self), tuple(getattr(self, f.name) for f in self._ct_fields)))


def _rebuild(cls, values):
    return cls(*values)


# ------------------------------------------------------------------------------ layout
def _word_dtypes(width: str):
    import numpy as np
    if width in ("float64", np.float64) or getattr(width, "__name__", "") == "float64" or \
            str(width) == "float64":
        return {"float": np.dtype(np.float64), "int": np.dtype(np.int64), "size": 8}
    if str(width) in ("float32", "float") or width is np.float32:
        return {"float": np.dtype(np.float32), "int": np.dtype(np.int32), "size": 4}
    try:
        if np.dtype(width) == np.float64:
            return _word_dtypes("float64")
        if np.dtype(width) == np.float32:
            return _word_dtypes("float32")
    except TypeError:
        pass
    raise TypeError(f"dtype_for() takes np.float32 or np.float64, got {width!r}")


def _dtype_for(cls, width="float32"):
    """The numpy structured dtype of this struct's array elements at ``width`` (np.float32
    or np.float64): one word per scalar (module docstring)."""
    import numpy as np
    words = _word_dtypes(width)
    key = words["size"]
    hit = cls._ct_dtypes.get(key)
    if hit is not None:
        return hit
    names, formats, offsets, offset = [], [], [], 0
    for f in cls._ct_fields:
        names.append(f.name)
        offsets.append(offset)
        if f.kind in ("float", "int"):
            formats.append(words[f.kind])
            offset += key
        elif f.kind in ("bool", "uint32"):       # at the start of its word
            formats.append(np.dtype(np.bool_ if f.kind == "bool" else np.uint32))
            offset += key
        elif is_struct(f.kind):
            sub = f.kind.dtype_for("float64" if key == 8 else "float32")
            formats.append(sub)
            offset += sub.itemsize
        else:
            elem = words["float" if f.kind._KIND == "f" else "int"]
            formats.append((elem, (f.kind._N,)))
            offset += key * f.kind._N
    dt = np.dtype({"names": names, "formats": formats, "offsets": offsets, "itemsize": offset})
    cls._ct_dtypes[key] = dt
    return dt


def leaf_words(cls, prefix=()) -> list:
    """``(path, kind)`` per word of an element, in order: ``(('pos', 0), 'float')`` ...;
    kind 'float' | 'int' | 'bool'."""
    out = []
    for f in cls._ct_fields:
        if f.kind in _SCALARS:
            out.append((prefix + (f.name,), f.kind))
        elif is_struct(f.kind):
            out.extend(leaf_words(f.kind, prefix + (f.name,)))
        else:
            kind = "float" if f.kind._KIND == "f" else "int"
            out.extend((prefix + (f.name, k), kind) for k in range(f.kind._N))
    return out


# ---------------------------------------------------------------- arrays in plain Python
class StructRef:
    """Element ``i`` of a struct array in plain Python: reads and writes its fields in place
    (a vector field is a vector viewing the record's components)."""
    __slots__ = ("_ct_cls", "_ct_rec")

    def __init__(self, cls, record):
        object.__setattr__(self, "_ct_cls", cls)
        object.__setattr__(self, "_ct_rec", record)

    @property
    def _ct_fields(self):
        return self._ct_cls._ct_fields

    def _field(self, name) -> StructField:
        for f in self._ct_cls._ct_fields:
            if f.name == name:
                return f
        raise AttributeError(f"{self._ct_cls.__name__} has no field {name!r}; its fields are "
                             f"{', '.join(self._ct_cls.fields())}")

    def __getattr__(self, name):
        f = self._field(name)
        value = self._ct_rec[name]
        if f.kind == "float":
            return float(value)
        if f.kind in ("int", "uint32"):
            return int(value) if f.kind == "int" else uint32(int(value))
        if f.kind == "bool":
            return bool(value)
        if is_struct(f.kind):
            return StructRef(f.kind, value)
        return f.kind._view(value)

    def __setattr__(self, name, value):
        f = self._field(name)
        value = _convert(self._ct_cls.__name__, f, value)
        if is_struct(f.kind):
            ref = StructRef(f.kind, self._ct_rec[name])
            for sub in f.kind._ct_fields:
                setattr(ref, sub.name, getattr(value, sub.name))
            return
        self._ct_rec[name] = list(value) if isinstance(value, _Vec) else value

    def __getitem__(self, name):
        """``p[i]["count"]``: field ``count`` (``atomic_add(p[i], "count", 1)`` names it so)."""
        if not isinstance(name, str):
            raise TypeError(f"a {self._ct_cls.__name__} element is indexed by a field name, "
                            f"not {type(name).__name__}")
        return self.__getattr__(name)

    def __setitem__(self, name, value):
        if not isinstance(name, str):
            raise TypeError(f"a {self._ct_cls.__name__} element is indexed by a field name, "
                            f"not {type(name).__name__}")
        self.__setattr__(name, value)

    def copy(self):
        """The element as a struct object (a copy)."""
        return self._ct_cls(*(_copy(getattr(self, f.name)) for f in self._ct_fields))

    def __eq__(self, other):
        return _eq(self.copy(), other) if not isinstance(other, StructRef) else \
            _plainly(self) == _plainly(other)

    __hash__ = None

    def __repr__(self) -> str:
        return repr(self.copy())


def _copy(value):
    if isinstance(value, _Vec):
        return type(value)(value)
    if isinstance(value, StructRef):
        return value.copy()
    return value


class StructList:
    """A numpy structured array of a struct's dtype seen as a list of ``StructRef``s."""
    __slots__ = ("array", "cls")

    def __init__(self, array, cls):
        self.array, self.cls = array, cls

    def __len__(self) -> int:
        return len(self.array)

    @property
    def shape(self) -> tuple:
        return self.array.shape

    def __getitem__(self, index):
        rec = self.array[index]          # a record of a structured array views its memory
        if getattr(rec, "shape", ()) != ():
            return StructList(rec, self.cls)
        return StructRef(self.cls, rec)

    def __setitem__(self, index, value):
        if not isinstance(value, (self.cls, StructRef)):
            raise TypeError(f"a list[{self.cls.__name__}] element takes a "
                            f"{self.cls.__name__}, not {type(value).__name__}")
        ref = self[index]
        for f in self.cls._ct_fields:
            setattr(ref, f.name, _copy(getattr(value, f.name)))

    def __iter__(self):
        return (self[i] for i in range(len(self)))


def _struct_list_depth(annotation):
    depth = 0
    while getattr(annotation, "__origin__", None) is list and getattr(annotation, "__args__", ()):
        annotation, depth = annotation.__args__[0], depth + 1
    if depth and is_struct(annotation):
        return depth, annotation
    return None


def struct_list_params(fn) -> tuple:
    """The ``(position, depth, class)`` of ``fn``'s ``list[Struct]`` parameters."""
    import inspect
    try:
        hints = inspect.get_annotations(fn, eval_str=True)
        names = list(inspect.signature(fn).parameters)
    except Exception:   # noqa: BLE001 - an annotation the plain run need not understand
        return ()
    out = []
    for pos, name in enumerate(names):
        found = _struct_list_depth(hints.get(name))
        if found is not None:
            out.append((pos, *found))
    return tuple(out)


def plain_args(params: tuple, args: tuple) -> tuple:
    """``args`` with each structured numpy array passed for a ``list[Struct]`` parameter seen
    as a ``StructList``."""
    if not params:
        return args
    args = list(args)
    for pos, depth, cls in params:
        a = args[pos] if pos < len(args) else None
        if getattr(getattr(a, "dtype", None), "names", None) and a.ndim == depth:
            args[pos] = StructList(a, cls)
    return tuple(args)


__all__ = ["struct", "is_struct", "leaf_words", "StructList", "StructRef", "VecList"]
