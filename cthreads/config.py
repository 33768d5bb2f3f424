"""The settings cthreads takes from environment variables, read and checked in one place.

``current()`` gives the ``Config`` of the process. The environment is parsed when first asked
and again only after one of the variables below changes, so a program or test that sets one
before the device starts (or before a kernel is first compiled for it) is obeyed, as it always
was. A value that is not accepted does not fail at import or for readers of other settings:
reading that field raises ``GpuInvalidArgument`` naming the variable, the value and what is
accepted, so the error surfaces where the setting is used (``check()`` raises for all of them
at once). Tests change settings with ``override(**fields)`` or by setting the variable; in
both cases readers that cache what they read (a kernel's compiled variants, the device's
queue) only see the change when they are made again.

This module imports nothing from cthreads but its errors: any layer may read it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
from collections.abc import Iterator, Mapping

from .errors import GpuInvalidArgument

WORKGROUP_SIZES = (32, 64, 128, 256, 512, 1024)
COARSEN_FACTORS = (1, 2, 4, 8)
DEVICE_COPIES = (1, 2, 3, 4, 5, 6, 7, 8)

#: field -> environment variable. cache_dir also follows XDG_CACHE_HOME and HOME.
VARIABLES = {
    "adapter": "CTHREADS_ADAPTER",
    "workgroup_size": "CTHREADS_WORKGROUP_SIZE",
    "coarsen": "CTHREADS_COARSEN",
    "vec": "CTHREADS_VEC",
    "batch": "CTHREADS_BATCH",
    "native_encoder": "CTHREADS_NATIVE_ENCODER",
    "device_memory": "CTHREADS_DEVICE_MEMORY",
    "cache_dir": "CTHREADS_CACHE_DIR",
    "hide_features": "CTHREADS_HIDE_FEATURES",
    "device_copies": "CTHREADS_DEVICE_COPIES",
    "full_traceback": "CTHREADS_FULL_TRACEBACK",
    "dump_wgsl": "CTHREADS_DUMP_WGSL",
    "axis_reduce": "CTHREADS_AXIS_REDUCE",
    "sort_form": "CTHREADS_SORT",
    "scan": "CTHREADS_SCAN",
    "check_form": "CTHREADS_CHECK_FORM",
    "launch_path": "CTHREADS_LAUNCH_PATH",
    "matmul_cpu": "CTHREADS_MATMUL_CPU",
    "reduce_form": "CTHREADS_REDUCE_FORM",
    "scratch": "CTHREADS_SCRATCH",
    "keep_fed": "CTHREADS_KEEP_FED",
    "index_form": "CTHREADS_INDEX_FORM",
}
_READ = (*VARIABLES.values(), "XDG_CACHE_HOME", "HOME")
#: fields no environment variable sets: measurement and test switches, changed only through
#: ``override`` (tests and bench probes), never a user's setting
OVERRIDE_ONLY = ("shader_bounds_checks", "trusted_shaders_on_cpu", "nd_tiles_on_cpu",
                 "binding_bytes")


class _Invalid:
    """What a field holds when its variable's value is not accepted."""

    __slots__ = ("message",)

    def __init__(self, message: str):
        self.message = message


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Config:
    """The settings; each field documents its variable. Reading a field whose variable holds
    a value that is not accepted raises ``GpuInvalidArgument``."""

    #: CTHREADS_ADAPTER: part of the adapter's name to pick (case-insensitive); "" picks the
    #: best-ranked adapter type
    adapter: str = ""
    #: CTHREADS_WORKGROUP_SIZE: the workgroup width of kernels that do not observe workgroups
    #: (one of WORKGROUP_SIZES), or None for the device's pick
    workgroup_size: int | None = None
    #: CTHREADS_COARSEN: indexes per invocation (one of COARSEN_FACTORS), or None for the
    #: runtime's pick by launch size and device
    coarsen: int | None = None
    #: CTHREADS_VEC (0 or 1): whether element-wise kernels may run their four-lane variant
    vec: bool = True
    #: CTHREADS_BATCH (0 or 1): whether launches not joined in between share a submission
    batch: bool = True
    #: CTHREADS_NATIVE_ENCODER (0 or 1): whether dispatches are encoded by direct wgpu-native
    #: calls rather than through wgpu-py's API
    native_encoder: bool = True
    #: CTHREADS_DEVICE_MEMORY: bytes of device memory cthreads may hold, or None for no limit
    device_memory: int | None = None
    #: CTHREADS_CACHE_DIR, else $XDG_CACHE_HOME/cthreads, else ~/.cache/cthreads
    cache_dir: str = ""
    #: CTHREADS_HIDE_FEATURES: comma-separated device features (e.g. "shader-f64") that
    #: cthreads acts as if the device lacked (to try the errors of devices without them)
    hide_features: tuple = ()
    #: CTHREADS_DEVICE_COPIES (1 to 8): ``devices()`` lists every Vulkan adapter this many
    #: times, each entry its own device (a test hook: several devices on one adapter, such as
    #: lavapipe in CI)
    device_copies: int = 1
    #: CTHREADS_FULL_TRACEBACK (0 or 1, default 0): whether a compile error keeps the
    #: compiler's own traceback (an internal compiler error then shows the failing pass as
    #: its cause); by default it is cut to the user's line
    full_traceback: bool = False
    #: (``override`` only) naga's bounds checks in the shader modules GPUs get; False only to
    #: measure what they cost (bench/probe_peers.py)
    shader_bounds_checks: bool = True
    #: (``override`` only) CPU drivers get the shader modules GPUs get, without naga's loop
    #: counter (backend/pipeline.py; the tests run that path on lavapipe)
    trusted_shaders_on_cpu: bool = False
    #: CTHREADS_DUMP_WGSL: a folder to write the WGSL of every variant of a kernel into as it
    #: is compiled for a device (one file per kernel, widths and variant), or "" for none
    dump_wgsl: str = ""
    #: CTHREADS_AXIS_REDUCE: the kernels of ``f.reduce(x, axis=...)`` (runtime/axis_reducer.py):
    #: "" (the default: the third round's on CPU drivers, the second's on GPUs), "r3" the
    #: third round's everywhere, "r2" the second round's (a workgroup per row on GPUs, no
    #: line4/rowsg), "old" the first round's (also strided axes in one pass on GPUs)
    axis_reduce: str = ""
    #: CTHREADS_SORT: the radix sort's form (runtime/sorter.py): "" (8-bit digits on GPUs,
    #: 4-bit on CPU drivers; sorted 32-bit keys mapped back), "old" (4-bit digits everywhere,
    #: keys gathered by index), "8bit" (8-bit everywhere, keys gathered by index) or "new"
    #: (8-bit everywhere, keys mapped back) or "onesweep" ("new" with one histogram a key word
    #: and one look-back dispatch a digit)
    sort_form: str = ""
    #: CTHREADS_SCAN: ``f.accumulate``'s form, "old" (the Hillis-Steele form), "new" (the
    #: fast reduce-then-scan form on every device), "lookback" (the one-pass look-back form
    #: where it applies, on every device; opt-in), or "" (the fast form on GPUs;
    #: ``runtime/scanner.py``)
    scan: str = ""
    #: CTHREADS_CHECK_FORM: how a bounds check that is not proven notes a failure:
    #: "branch" (a branch taken only on failure; the default) or "select" (three branch-free
    #: selects per access, the previous form; codegen/lists.py)
    check_form: str = "branch"
    #: CTHREADS_LAUNCH_PATH: "old" (a repeated resident launch builds its whole plan again),
    #: or "" (its bind group and entries are kept: ``runtime/ready.py``)
    launch_path: str = ""
    #: CTHREADS_MATMUL_CPU: "old" runs ``matmul`` on CPU drivers in the direct form of issue
    #: 26's first rounds; "" (the default) in the lanes form (runtime/matmul_runner.py)
    matmul_cpu: str = ""
    #: CTHREADS_INDEX_FORM: "old" reads an N-D list's row lengths from the uniform at each
    #: access; "" (the default) reads them once per invocation into private values
    #: (codegen/lists.py ``ListAccess.flat``: llvmpipe reloaded them in every loop trip)
    index_form: str = ""
    #: CTHREADS_REDUCE_FORM: whole-array ``f.reduce``'s form, "old" (a pass per level, each
    #: call's buffers from the pool), "new" (one pass finished by the last workgroup, its
    #: buffers cached per size: ``runtime/one_pass.py``) or "" (one pass on GPUs; on CPU
    #: drivers where it measured faster: ``reducer._one_pass_form``)
    reduce_form: str = ""
    #: CTHREADS_SCRATCH: "old" drops the scratch buffers of a library call whose work is
    #: still pending when it returns (the next call makes new ones), or "" (they go back to
    #: the pool at once; queue order protects them: runtime/reducer.py)
    scratch: str = ""
    #: CTHREADS_KEEP_FED: "old" submits each heavy dispatch on a GPU alone while at most one
    #: submission is in flight, or "" (they gather in the batch, 8 to 16 at a time:
    #: ``DeviceQueue.gather`` in backend/dispatch.py)
    keep_fed: str = ""
    #: (tests only, no variable) N-D launches on CPU drivers run the GPUs' workgroup tiles
    #: instead of rows along x (to run that form on lavapipe)
    nd_tiles_on_cpu: bool = False
    #: (tests only, no variable) the largest storage binding cthreads makes, in bytes, when
    #: lower than the device's limit; None: the device's max-storage-buffer-binding-size.
    #: Tests lower it to run arrays split across several bindings at small sizes.
    binding_bytes: int | None = None

    def __getattribute__(self, name: str):
        value = object.__getattribute__(self, name)
        if type(value) is _Invalid:
            raise GpuInvalidArgument(value.message)
        return value

    def problems(self) -> list[str]:
        """The messages of the fields whose value is not accepted (empty when all are)."""
        return [v.message for v in self._raw().values() if type(v) is _Invalid]

    def check(self) -> Config:
        """Raise ``GpuInvalidArgument`` listing every value not accepted; else return self."""
        problems = self.problems()
        if problems:
            raise GpuInvalidArgument("; ".join(problems))
        return self

    def replace(self, **fields) -> Config:
        """A copy with ``fields`` (Python values, checked as the environment's are) changed."""
        unknown = sorted(set(fields) - set(VARIABLES) - set(OVERRIDE_ONLY))
        if unknown:
            raise GpuInvalidArgument(
                f"unknown setting(s) {', '.join(unknown)}; the settings are "
                f"{', '.join((*VARIABLES, *OVERRIDE_ONLY))}")
        raw = self._raw()
        for name, value in fields.items():
            raw[name] = _check_value(name, value)
        return Config(**raw)

    def _raw(self) -> dict:
        return {f.name: object.__getattribute__(self, f.name) for f in dataclasses.fields(self)}

    def __eq__(self, other) -> bool:
        if not isinstance(other, Config):
            return NotImplemented
        mine, theirs = self._raw(), other._raw()
        return all(_same(mine[k], theirs[k]) for k in mine)

    __hash__ = None

    def __repr__(self) -> str:
        items = (f"{k}=<invalid: {v.message}>" if type(v) is _Invalid else f"{k}={v!r}"
                 for k, v in self._raw().items())
        return f"Config({', '.join(items)})"


def _same(a, b) -> bool:
    if type(a) is _Invalid or type(b) is _Invalid:
        return type(a) is type(b) and a.message == b.message
    return a == b


# -- parsing -------------------------------------------------------------------------------------

def parse_bytes(text: str) -> int:
    """``"512M"``, ``"2G"``, ``"1048576"`` -> bytes (K, M, G, T: powers of 1024)."""
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    scale = 1
    if t and t[-1] in "KMGT":
        scale = 1 << (10 * ("KMGT".index(t[-1]) + 1))
        t = t[:-1]
    value = float(t)
    if not value >= 0:
        raise ValueError(text)
    return int(value * scale)


def _choice(var: str, text: str, accepted: tuple[int, ...]):
    try:
        value = int(text)
    except ValueError:
        value = None
    if value not in accepted:
        names = ", ".join(str(a) for a in accepted[:-1]) + f" or {accepted[-1]}"
        return _Invalid(f"{var}={text!r}: use {names}, or unset it")
    return value


def _word(var: str, text: str, accepted: tuple[str, ...]):
    if text in ("", *accepted):
        return text
    return _Invalid(f"{var}={text!r}: use {' or '.join(accepted)}, or unset it")


def _switch(var: str, text: str, default: bool = True):
    if text == "":
        return default
    if text in ("0", "1"):
        return text == "1"
    on, off = ("on, the default", "off") if default else ("on", "off, the default")
    return _Invalid(f"{var}={text!r}: use 0 ({off}) or 1 ({on}), or unset it")


def _memory(var: str, text: str):
    if not text:
        return None
    try:
        return parse_bytes(text)
    except ValueError:
        return _Invalid(f"{var}={text!r}: give a size in bytes, such as 1073741824, 512M or 2G, "
                        "or unset it")


def from_environ(environ: Mapping[str, str] = os.environ) -> Config:
    """The Config that ``environ`` describes (never raises; see ``Config``)."""
    def text(field: str) -> str:
        return environ.get(VARIABLES[field], "").strip()

    def optional_choice(field, accepted):
        return _choice(VARIABLES[field], text(field), accepted) if text(field) else None

    cache = text("cache_dir")
    if not cache:
        home = environ.get("HOME", "").strip() or os.path.expanduser("~")
        base = environ.get("XDG_CACHE_HOME", "").strip() or os.path.join(home, ".cache")
        cache = os.path.join(base, "cthreads")
    return Config(
        adapter=text("adapter"),
        workgroup_size=optional_choice("workgroup_size", WORKGROUP_SIZES),
        coarsen=optional_choice("coarsen", COARSEN_FACTORS),
        vec=_switch(VARIABLES["vec"], text("vec")),
        batch=_switch(VARIABLES["batch"], text("batch")),
        native_encoder=_switch(VARIABLES["native_encoder"], text("native_encoder")),
        device_memory=_memory(VARIABLES["device_memory"], text("device_memory")),
        cache_dir=cache,
        hide_features=tuple(f.strip() for f in text("hide_features").split(",") if f.strip()),
        device_copies=_choice(VARIABLES["device_copies"], text("device_copies"),
                              DEVICE_COPIES) if text("device_copies") else 1,
        full_traceback=_switch(VARIABLES["full_traceback"], text("full_traceback"), False),
        dump_wgsl=text("dump_wgsl"),
        axis_reduce=text("axis_reduce").lower()
        if text("axis_reduce").lower() in ("", "old", "r2", "r3")
        else _Invalid(f"CTHREADS_AXIS_REDUCE={text('axis_reduce')!r}: use old, r2 or r3, or unset "
                      "it"),
        sort_form=_sort_form(text("sort_form")),
        scan=_word(VARIABLES["scan"], text("scan").lower(),
                   ("old", "new", "lookback")),
        check_form=_word(VARIABLES["check_form"], text("check_form").lower(),
                         CHECK_FORMS) or "branch",
        launch_path=_word(VARIABLES["launch_path"], text("launch_path").lower(), ("old",)),
        matmul_cpu=_word(VARIABLES["matmul_cpu"], text("matmul_cpu").lower(), ("old",)),
        index_form=_word(VARIABLES["index_form"], text("index_form").lower(), ("old",)),
        reduce_form=_word(VARIABLES["reduce_form"], text("reduce_form").lower(), ("old", "new")),
        scratch=_word(VARIABLES["scratch"], text("scratch").lower(), ("old",)),
        keep_fed=_word(VARIABLES["keep_fed"], text("keep_fed").lower(), ("old",)),
    )


SORT_FORMS = ("", "old", "8bit", "new", "onesweep")
CHECK_FORMS = ("branch", "select")


def _sort_form(text: str):
    if text.lower() in SORT_FORMS:
        return text.lower()
    return _Invalid(f"CTHREADS_SORT={text!r}: use old (4-bit digits), 8bit (8-bit digits, "
                    "sorted keys gathered by index), new (8-bit digits, sorted keys mapped "
                    "back) or onesweep (new with onesweep passes), or unset it (new on GPUs, "
                    "4-bit on CPU drivers)")


def _check_value(name: str, value):
    """A value given to ``override``/``replace``, checked like the environment's."""
    var = VARIABLES.get(name, "no variable: override only")
    if name == "binding_bytes":
        ok = value is None or (type(value) is int and value >= 256 and value % 256 == 0)
        accepted = "None or a number of bytes >= 256, a multiple of 256"
    elif name in ("vec", "batch", "native_encoder", "full_traceback", *OVERRIDE_ONLY):
        ok = isinstance(value, bool)
        accepted = "True or False"
    elif name == "workgroup_size":
        ok = value is None or (type(value) is int and value in WORKGROUP_SIZES)
        accepted = f"None or one of {WORKGROUP_SIZES}"
    elif name == "coarsen":
        ok = value is None or (type(value) is int and value in COARSEN_FACTORS)
        accepted = f"None or one of {COARSEN_FACTORS}"
    elif name == "device_memory":
        ok = value is None or (type(value) is int and value >= 0)
        accepted = "None or a number of bytes >= 0"
    elif name == "device_copies":
        ok = type(value) is int and value in DEVICE_COPIES
        accepted = "an int from 1 to 8"
    elif name == "sort_form":
        ok = value in SORT_FORMS
        accepted = "'', 'old', '8bit', 'new' or 'onesweep'"
    elif name == "launch_path":
        ok = value in ("", "old")
        accepted = "'' or 'old'"
    elif name == "scan":
        ok = value in ("", "old", "new", "lookback")
        accepted = "'', 'old', 'new' or 'lookback'"
    elif name == "check_form":
        ok = value in CHECK_FORMS
        accepted = "'branch' or 'select'"
    elif name in ("matmul_cpu", "scratch", "keep_fed", "index_form"):
        ok = value in ("", "old")
        accepted = "'' or 'old'"
    elif name == "hide_features":
        ok = isinstance(value, tuple) and all(isinstance(v, str) for v in value)
        accepted = "a tuple of feature names"
    else:
        ok = isinstance(value, str)
        accepted = "a str"
    if not ok:
        raise GpuInvalidArgument(f"{name}={value!r} (the setting of {var}): use {accepted}")
    return value


# -- the process's settings ----------------------------------------------------------------------

_lock = threading.Lock()
_cached: tuple[tuple, Config] | None = None     # (the variables' values, their Config)
_overrides: list[Config] = []


def _snapshot() -> tuple:
    return tuple(os.environ.get(name) for name in _READ)


def current() -> Config:
    """The settings in force: the innermost ``override``, else the environment's."""
    if _overrides:
        return _overrides[-1]
    global _cached
    snap = _snapshot()
    cached = _cached
    if cached is None or cached[0] != snap:
        with _lock:
            cached = _cached = (snap, from_environ())
    return cached[1]


def overriding() -> bool:
    """True inside an ``override`` block (cheap: the override-only fields, such as
    ``binding_bytes``, can differ from their defaults only then)."""
    return bool(_overrides)


def reload() -> Config:
    """Read the environment again (what ``current()`` gives outside ``override``)."""
    global _cached
    with _lock:
        _cached = (_snapshot(), from_environ())
    return _cached[1]


@contextlib.contextmanager
def override(**fields) -> Iterator[Config]:
    """Within the block, ``current()`` is the settings in force with ``fields`` changed (for
    tests; process-wide, not per thread). Values are checked as the environment's are."""
    config = current().replace(**fields)
    with _lock:
        _overrides.append(config)
    try:
        yield config
    finally:
        with _lock:
            del _overrides[next(i for i, c in enumerate(_overrides) if c is config)]
