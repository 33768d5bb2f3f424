"""The width types: ``float32``, ``float64``, ``int32``, ``int64`` and ``uint32``.

In annotations they pin a parameter, list or local to that numpy dtype, where plain ``float``
and ``int`` follow the launch's arrays (docs/language.md, "Types and widths"). Called as
functions (in kernels, device functions and plain Python) they convert as numpy's ``astype``
does on a finite in-range value: ``float32(x)`` rounds to the nearest float32, ``int32(x)``,
``int64(x)`` and ``uint32(x)`` truncate toward zero and wrap modulo 2**bits. As plain-Python
values they are Python floats and ints (subclasses), so ``simulate`` and plain calls compute
with them like numbers.
"""

from __future__ import annotations

import math
import struct

_F32 = struct.Struct("<f")


def _wrap(value, bits: int, signed: bool) -> int:
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot convert {value!r} to an integer")
        value = int(value)           # truncates toward zero, as int() does
    value = int(value) & ((1 << bits) - 1)
    if signed and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


class float32(float):
    """A float rounded to float32 (annotation: a float32 value, list or parameter)."""

    def __new__(cls, value=0.0):
        f = float(value)
        if math.isfinite(f) and abs(f) > 3.4028235677973366e38:   # rounds to inf in float32
            f = math.copysign(math.inf, f)
        return super().__new__(cls, _F32.unpack(_F32.pack(f))[0] if math.isfinite(f) else f)


class float64(float):
    """A float64 (Python's float) (annotation: a float64 value, list or parameter)."""


class int32(int):
    """An int wrapped to 32 bits, signed (annotation: an int32 value, list or parameter)."""

    def __new__(cls, value=0):
        return super().__new__(cls, _wrap(value, 32, True))


class int64(int):
    """An int wrapped to 64 bits, signed (annotation: an int64 value, list or parameter)."""

    def __new__(cls, value=0):
        return super().__new__(cls, _wrap(value, 64, True))


class uint32(int):
    """An int wrapped to 32 bits, unsigned (annotation: a uint32 value, list or parameter)."""

    def __new__(cls, value=0):
        return super().__new__(cls, _wrap(value, 32, False))


#: annotation object -> its name in the compiler's element-type table spelling
WIDTH_TYPES = {float32: "float32", float64: "float64", int32: "int32", int64: "int64",
               uint32: "uint32"}

__all__ = ["float32", "float64", "int32", "int64", "uint32", "WIDTH_TYPES"]
