"""The two encoders of a batch -- ``NativeEncoder.encode_batch`` (direct wgpu-native calls) and
``public_encoder.submit_public`` (wgpu-py's API, the fallback and ``CTHREADS_NATIVE_ENCODER=0``)
-- write the same command sequence for the same recorded batch. Both are driven here with
recording stand-ins for wgpu, so the check needs no device; the device results of both paths
are compared in tests/device/test_batching.py (the subprocess scenarios, ids public-api*)."""

from __future__ import annotations

import types

import pytest

from cthreads.backend.native.encoder import NativeEncoder
from cthreads.backend.public_encoder import submit_public


class Obj:
    """A wgpu object: its name stands for it in both logs (``_internal`` is the native handle)."""

    def __init__(self, name):
        self.name = name
        self._internal = self

    def __repr__(self):
        return self.name


def _name(x):
    return x.name if isinstance(x, Obj) else x


class NativeLib:
    """Records the wgpu-native calls encode_batch makes, in the public log's words."""

    def __init__(self, log):
        self.log = log

    def __getattr__(self, fn):
        words = {"wgpuComputePassEncoderSetPipeline": "set_pipeline",
                 "wgpuComputePassEncoderSetBindGroup": "set_bind_group",
                 "wgpuComputePassEncoderDispatchWorkgroups": "dispatch",
                 "wgpuCommandEncoderBeginComputePass": "begin",
                 "wgpuComputePassEncoderEnd": "end",
                 "wgpuCommandEncoderCopyBufferToBuffer": "copy",
                 "wgpuCommandEncoderFinish": "finish"}

        def call(*args):
            if fn == "wgpuDeviceCreateCommandEncoder":
                return "enc"
            if fn.endswith("Release"):
                return None
            word = words[fn]
            if word == "begin":
                self.log.append(("begin",))
                return "pass"
            if word == "set_bind_group":
                self.log.append((word, args[1], _name(args[2])))
            elif word == "finish":
                self.log.append((word,))
            else:
                self.log.append((word, *map(_name, args[1:])))
            return "cb" if word == "finish" else None
        return call


def native_log(dispatches, copies, staged):
    log = []
    enc = object.__new__(NativeEncoder)
    enc._lib, enc._null, enc._device = NativeLib(log), None, "device"
    enc.encode_batch(dispatches, copies, staged)
    return log


def public_log(dispatches, copies, staged):
    log = []

    class Pass:
        def set_pipeline(self, p):
            log.append(("set_pipeline", _name(p)))

        def set_bind_group(self, index, g):
            log.append(("set_bind_group", index, _name(g)))

        def dispatch_workgroups(self, x, y, z):
            log.append(("dispatch", x, y, z))

        def end(self):
            log.append(("end",))

    class Encoder:
        def begin_compute_pass(self):
            log.append(("begin",))
            return Pass()

        def copy_buffer_to_buffer(self, *args):
            log.append(("copy", *map(_name, args)))

        def finish(self):
            log.append(("finish",))
            return "cb"

    device = types.SimpleNamespace(create_command_encoder=Encoder)
    queue = types.SimpleNamespace(submit=lambda cbs: log.append(("submitted",)))
    ctx = types.SimpleNamespace(device=device, queue=queue, lost=None)
    submit_public(ctx, dispatches, copies, staged)
    assert log.pop() == ("submitted",)
    return log


P1, P2, G1, G2, U, S, R, STAGING = (Obj(n) for n in ("p1", "p2", "g1", "g2", "u", "s", "r",
                                                      "staged"))
READBACK = ((R, 0, S, 0, 64),)
BATCHES = {
    "one": [(P1, G1, (1, 1, 1), None, ())],
    "same pipeline twice": [(P1, G1, (4, 1, 1), None, ()), (P1, G1, (4, 1, 1), None, ())],
    "alternating": [(P1, G1, (1, 1, 1), None, ()), (P2, G1, (2, 1, 1), None, ()),
                    (P1, G2, (3, 2, 1), None, ())],
    "staged scalars": [(P1, G1, (1, 1, 1), None, ()), (P1, G1, (1, 1, 1), (0, U, 16), ()),
                       (P1, G1, (1, 1, 1), (16, U, 16), ())],
    "readback in the middle": [(P1, G1, (1, 1, 1), None, READBACK),
                               (P1, G1, (1, 1, 1), (0, U, 16), READBACK),
                               (P2, G2, (8, 8, 1), None, ())],
    "empty": [],
}


@pytest.mark.parametrize("copies", [(), ((S, 0, R, 8, 32),)], ids=["no copies", "copies"])
@pytest.mark.parametrize("name", list(BATCHES))
def test_both_encoders_write_the_same_commands(name, copies):
    dispatches = BATCHES[name]
    native = native_log(dispatches, copies, STAGING)
    public = public_log(dispatches, copies, STAGING)
    assert native == public
    assert native[-1] == ("finish",)
    assert sum(1 for c in native if c[0] == "dispatch") == len(dispatches)
    assert sum(1 for c in native if c[0] == "begin") == sum(1 for c in native if c[0] == "end")
