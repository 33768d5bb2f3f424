"""A forked child starts without the parent's device.

A forked child inherits the parent's wgpu-native state, but none of the driver's threads (and,
on GPUs, shares the parent's driver connection): the first wait on the inherited device hangs,
and releasing an inherited object could free the parent's memory. So the child forgets it all
without one call into wgpu: every inherited wgpu object is disarmed (its handle cleared, so
collecting it calls nothing), wgpu's global instance is dropped, and the modules that keep
device state forget it (their ``on_fork_child`` hooks); the first use in the child creates a new
instance and device of its own.
"""

from __future__ import annotations

import os

_hooks: list = []
_forked = False
_forsaken: list = []       # the parent's state, kept (never released) in a forked child


def on_fork_child(hook) -> None:
    """Register a callable run, without arguments, in every forked child (in the order
    registered): it must forget the parent's device state without calling into wgpu."""
    _hooks.append(hook)


def forked() -> bool:
    """Whether this process is a forked child whose parent had wgpu in use."""
    return _forked


def forsake(*objects) -> None:
    """Keep the parent's ``objects`` alive, never released, in the child."""
    _forsaken.extend(objects)


def disarm_inherited_wgpu_objects() -> None:
    """Clear the handle of every inherited wgpu object and drop wgpu's global instance (in a
    forked child whose parent had imported wgpu); marks the process as forked."""
    global _forked
    _forked = True
    import gc  # noqa: PLC0415 - only in a forked child

    try:
        from wgpu.backends.wgpu_native import _api, _helpers  # noqa: PLC0415
    except Exception:  # pragma: no cover - wgpu was imported, so this is there
        return
    kinds = (_api.GPUObjectBase, _api.GPUAdapter)
    for obj in gc.get_objects():
        if isinstance(obj, kinds):
            try:
                obj._internal = None
            except Exception:  # pragma: no cover
                pass
    _forsaken.append(_helpers._the_instance)
    _helpers._the_instance = None


def _after_fork_in_child() -> None:
    for hook in list(_hooks):
        try:
            hook()
        except Exception:  # pragma: no cover - the child must start clean regardless
            pass


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
