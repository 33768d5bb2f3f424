"""Long lists of floats packed into float32 or float64 device bytes by cffi's C loop.

``convert.pack`` hands a long list of floats here first. cffi reads each element with
``PyFloat_AsDouble``, as ``struct`` and ``array`` do (so the same elements are accepted: floats,
ints, bools, numpy numbers, anything with ``__float__``), and stores it with a C cast, faster
than any standard-library route (docs/performance.md, "The 1M-element list round trip").

Nothing is checked here: ``floats`` returns None where cffi refused an element, or where a
float32 result holds an infinity (a real one, or a finite value beyond float32's range that the
C cast turned into one). The caller then takes its checked path, which names the element, or
keeps the infinity.

cffi's loop reads the list's items without holding references to them. Floats, ints and the C
types (numpy numbers, ``Decimal``) convert without running Python code, so nothing can change
the list meanwhile; an element whose ``__float__`` or ``__index__`` is Python code could (itself,
or another thread while it runs). So the loop runs under a profile hook that stops it at the
first Python frame, before that code runs, and such a list takes the checked path too. A thread
that a profiler watches keeps to the checked path.

The memory is cffi's own; the buffer returned views it (no copy) and keeps it alive. Nothing here
imports wgpu. float32 lists are packed here only once the program has imported numpy, which looks
for the infinities; importing it for this would cost a first long list more than cffi saves it
(docs/performance.md, "Cold start in a fresh cache folder, and the 1M-element list round
trip").
"""

from __future__ import annotations

import sys
import threading

#: the C type of each element kind packed here
CTYPES = {"float": "float[]", "float64": "double[]"}
#: lists from this length on are packed here (below it ``struct`` is as fast and needs no numpy)
FROM = 1 << 15

_lock = threading.Lock()
_state: tuple | None = None          # (ffi, allocator), made on first use


class _PythonCode(Exception):
    """An element's conversion was about to run Python code."""


def _stop_at_python(frame, event, arg):
    if event == "call":
        raise _PythonCode


def _cffi():
    global _state
    if _state is None:
        with _lock:
            if _state is None:
                # cffi's C-level FFI: its allocator is a C function, so calling it under the
                # profile hook is no Python call (the ``cffi.FFI`` one is)
                import _cffi_backend  # noqa: PLC0415 - loaded already once a device exists
                ffi = _cffi_backend.FFI()
                # every element is written by the conversion, so the memory is not cleared first
                _state = (ffi, ffi.new_allocator(should_clear_after_alloc=False))
    return _state


def floats(values: list, elem: str):
    """The bytes of ``values`` as ``elem`` ('float': float32, 'float64'), a buffer viewing
    memory cffi filled; None when an element was refused or would run Python code, when a
    float32 came out infinite, or when numpy is not loaded for a float32 list."""
    np = sys.modules.get("numpy")
    if (np is None and elem == "float") or sys.getprofile() is not None:
        return None
    ffi, new = _cffi()
    sys.setprofile(_stop_at_python)
    try:
        cdata = new(CTYPES[elem], values)
    except Exception:       # noqa: BLE001 - the checked path raises the same thing, named
        return None
    finally:
        sys.setprofile(None)
    if elem == "float64":
        return ffi.buffer(cdata)
    out = np.frombuffer(ffi.buffer(cdata), dtype=np.float32)
    return None if np.isinf(out).any() else out
