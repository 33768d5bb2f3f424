"""WGSL helpers that give float32 operators Python's exact meaning on every driver.

* ``/`` correctly rounded, ``%``, ``//`` and ``math.fmod`` exact (for quotients below 2^24),
  with Python's signs of zero: the driver's quotient corrected with its exact residual. Where
  the device's fma rounds once (GPU drivers) the residual is one fma; where it may round
  twice (Vulkan allows it; lavapipe's does) it comes from Dekker's exact product, or, on
  devices with ``shader-f64``, the fma-free helpers compute in float64 (their ``f64`` forms,
  put in by ``device_form`` when the runtime makes a pipeline). The choice between the fma and the
  fma-free forms is the pipeline constant ``ct_fused_f32`` (``OVERRIDES``), set per device.
* ``**`` with IEEE ``pow``'s special cases (zeros, infinities, NaN, +-1).
* float-to-int conversions that saturate at the int's limits (``FLOAT_TO_INT``).

The helpers themselves are WGSL files of the library (``library/float_ops.wgsl``, and
``library/helpers.wgsl`` for ``ct_isnan``, ``ct_copysign`` ...); this module says which the
emitter uses. ``ct_zero()`` is the zero each kernel defines from its uniform block, unknown to
the driver's compiler.
"""

from __future__ import annotations

from . import library
from .types import ELEM_TYPES

#: (float type, int type) -> the library helper converting with saturation (the rows' to_int)
FLOAT_TO_INT = {(row.name, ty): helper for row in ELEM_TYPES.values() for ty, helper in row.to_int}

#: the helpers that declare a pipeline-overridable constant (WGSL ``override``), which the
#: runtime sets per device when it makes the pipeline: ``ct_fused_f32``, whether the device's
#: float32 fma rounds once (``backend.DeviceContext.fma_rounds_once``)
OVERRIDES = frozenset({"ct_fused_f32"})

#: The fma-free float32 helpers have a form computed in float64 (``library/float_ops_f64.wgsl``,
#: ``// form: f64``), for devices with ``shader-f64`` whose fma rounds twice (CPU drivers, where
#: float64 is as fast as float32): a float64 quotient of float32 values rounded to float32 is
#: the correctly rounded float32 quotient (53 >= 2 * 24 + 2 bits), and for |trunc(a / b)| < 2^24
#: the float64 ``a - q * b`` is exact (q * b has at most 48 bits, and the remainder fits 24 bits
#: of b's last place), as is trunc of the float64 quotient (a / b is at least 2^-48 relative
#: from an integer it is not).
F64_FORM = "f64"


def device_form(wgsl: str, f64: bool) -> str:
    """The WGSL for a device: with ``f64`` (a device with ``shader-f64`` whose fma rounds
    twice), the float64 forms of the fma-free float32 helpers the text contains; else the
    text itself."""
    if not f64:
        return wgsl
    for name, rec in library.forms(F64_FORM).items():
        wgsl = wgsl.replace(library.get(name).text, rec.text)
    return wgsl
