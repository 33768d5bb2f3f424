"""One list passed for several parameters of a launch.

A list bound in an arena has one device buffer. Passed for a parameter the kernel only reads
and for one it writes, that buffer would be bound read-only and writable in one dispatch, a
submission wgpu-native answers by aborting the process: ``gpu()`` refuses it first. The scenario
runs in a fresh interpreter so that a regression fails this test instead of killing the suite.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

SCRIPT = '''
import json
import numpy as np
from cthreads.gpu import GlobalIdx, Gpu, GpuArena, GpuInvalidArgument, gpu

@Gpu
def shift(n: int, x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        y[i] = x[i] + 1.0

@Gpu
def add(n: int, x: list[float], y: list[float], z: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        z[i] = x[i] + y[i]

@Gpu
def fill(n: int, x: list[float], y: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        x[i] = 2.0
        y[i] = 2.0

out = {}
a = [1.0, 2.0, 3.0]
with GpuArena() as arena:
    arena.bind(a=a)
    try:
        gpu(shift, 3, a, a)
        out["refused"] = None
    except GpuInvalidArgument as exc:
        out["refused"] = str(exc)
    arena.sync()
    out["after_refusal"] = list(a)
    z = [0.0] * 3
    gpu(add, 3, a, a, z).join()          # read-only twice: one buffer, allowed
    out["read_twice"] = z
    gpu(fill, 3, a, a).join()            # written twice: allowed
    arena.sync()
    out["written_twice"] = list(a)
b = [1.0, 2.0, 3.0]
gpu(shift, 3, b, b).join()               # not resident: each parameter gets its own upload
out["plain"] = b
print(json.dumps(out))
'''


def test_a_resident_list_read_and_written_in_one_launch(tmp_path):
    path = tmp_path / "aliasing.py"
    path.write_text(SCRIPT)
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    msg = out["refused"]
    assert msg is not None, "gpu() accepted a resident list bound read-only and writable"
    assert "parameters 'x' and 'y'" in msg and "'a'" in msg and "Pass a copy for 'x'" in msg
    assert out["after_refusal"] == [1.0, 2.0, 3.0]          # nothing ran, nothing changed
    assert out["read_twice"] == [2.0, 4.0, 6.0]
    assert out["written_twice"] == [2.0, 2.0, 2.0]
    expected = (np.array([1.0, 2.0, 3.0], np.float32) + np.float32(1)).tolist()
    assert out["plain"] == expected
