"""Python lists of complex numbers as ``list[complex]`` arguments: packed into complex64 /
complex128 device bytes (numpy's layout: real, imag) and written back in place as Python
complex values. Every element must be a number (complex, float, int, or a numpy number; a
string is refused, not parsed); in a complex64 launch each part must be within float32's range.
"""

from __future__ import annotations

import math
import numbers

from ..codegen.types import elem as elem_type
from ..errors import GpuInvalidArgument

#: float32's largest finite value
F32_MAX = 3.4028234663852886e38


def pack(value: list, elem: str, where: str, np):
    """The device bytes of a flat list of complex numbers as ``elem`` values."""
    for k, v in enumerate(value):
        if not isinstance(v, numbers.Number):
            raise GpuInvalidArgument(f"{where}[{k}] is {type(v).__name__} {v!r}; every element "
                                     f"of a list[complex] must be a number (complex, float or "
                                     "int)")
    out = np.asarray(value, dtype=np.complex128)
    if elem == "complex":
        parts = out.view(np.float64)
        big = (np.abs(parts) > F32_MAX) & np.isfinite(parts)
        if big.any():
            k = int(np.flatnonzero(big)[0]) // 2
            raise GpuInvalidArgument(f"{where}[{k}] = {value[k]!r} has a part beyond float32's "
                                     f"range (±{F32_MAX:.4g}); the device computes in complex64 "
                                     "here: pass smaller values, or complex128 arrays to "
                                     "compute in complex128")
        out = out.astype(np.complex64)
    return out


def write(target: list, view, elem: str, np) -> None:
    """Write the device bytes back into the caller's flat list, in place."""
    host = elem_type(elem).host_dtype
    target[:] = np.frombuffer(view, dtype=host, count=len(target)).tolist()


__all__ = ["pack", "write"]
