"""Kernels pickle: module-level ones by reference, ones from ``__main__`` or ``exec`` by value
(source, captured constants, the device functions they call); the unpickled kernel launches in
another process (pickle, cloudpickle, multiprocessing spawn / forkserver / fork). Jobs and
arenas refuse with a TypeError."""

from __future__ import annotations

import multiprocessing
import pickle
import textwrap

import cloudpickle
import numpy as np
import pytest

from cthreads.gpu import VulkanInitFailed, GpuArena, gpu
from tests.conftest import run_python
from tests.device import scale_kernels
from tests.device.scale_kernels import axpy, run_in_worker

SOURCE = textwrap.dedent('''
    import numpy as np

    from cthreads.gpu import Gpu, GlobalIdx, float32

    OFFSET = 0.5
    x = np.arange(100_000.0)    # a large global named like a parameter: never sent along


    @Gpu.func
    def triple(v: float) -> float:
        return v * 3.0


    @Gpu(boundscheck=True)
    def main_kernel(x: list[float32], y: list[float32]) -> None:
        i = GlobalIdx.x
        if i < len(x):
            y[i] = triple(x[i]) + OFFSET


    @Gpu
    def reads_past_the_end(x: list[float], y: list[float]) -> None:
        i = GlobalIdx.x
        if i < len(y):
            y[i] = x[i + 5]
''')


def _main_kernels(tmp_path):
    """Kernels as a script defines them: module ``__main__``, source in a file that is then
    deleted (so the source must travel in the pickle)."""
    path = tmp_path / "script.py"
    path.write_text(SOURCE)
    namespace = {"__name__": "__main__"}
    exec(compile(SOURCE, str(path), "exec"), namespace)  # noqa: S102
    return namespace, path


def _expected(n):
    return (np.arange(n, dtype=np.float32) * 3 + 0.5).tolist()


def test_module_level_kernels_pickle_by_reference(device_name):
    data = pickle.dumps(axpy)
    assert b"tests.device.scale_kernels" in data and b"GlobalIdx" not in data
    assert pickle.loads(data) is axpy
    assert pickle.loads(pickle.dumps(scale_kernels.twice)) is scale_kernels.twice
    assert cloudpickle.loads(cloudpickle.dumps(axpy)) is axpy


@pytest.mark.parametrize("dumps", [pickle.dumps, cloudpickle.dumps], ids=["pickle", "cloudpickle"])
def test_main_kernel_travels_by_value_and_runs_in_another_process(tmp_path, dumps, device_name):
    namespace, path = _main_kernels(tmp_path)
    kernel = namespace["main_kernel"]
    x = np.arange(10, dtype=np.float32)
    y = np.zeros_like(x)
    gpu(kernel, x, y).join()                     # compiled and run here first: nothing of it
    data = dumps(kernel)                         # (pipelines) travels
    assert b"triple" in data and b"OFFSET" in data and b"wgpu" not in data
    assert len(data) < 8000          # the source and constants only
    path.unlink()
    blob = tmp_path / "kernel.pickle"
    blob.write_bytes(data)
    out = run_python(textwrap.dedent(f'''
        import pickle
        import numpy as np
        from cthreads.gpu import gpu
        kernel = pickle.loads(open({str(blob)!r}, "rb").read())
        x = np.arange(1000, dtype=np.float32)
        y = np.zeros_like(x)
        gpu(kernel, x, y).join()
        print(y.tolist())
        print(pickle.loads(pickle.dumps(kernel)) is kernel)
    '''))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[-2] == str(_expected(1000))
    assert lines[-1] == "True"      # received again: the same kernel (its pipelines kept)


def test_unpickled_kernel_reports_errors_at_the_users_line(tmp_path, device_name):
    namespace, path = _main_kernels(tmp_path)
    blob = tmp_path / "bad.pickle"
    blob.write_bytes(pickle.dumps(namespace["reads_past_the_end"]))
    line = SOURCE.splitlines().index("        y[i] = x[i + 5]") + 1
    path.unlink()
    out = run_python(textwrap.dedent(f'''
        import pickle
        import numpy as np
        from cthreads.gpu import gpu, GpuIndexError
        kernel = pickle.loads(open({str(blob)!r}, "rb").read())
        x = np.arange(8, dtype=np.float32)
        y = np.full(8, -1.0, dtype=np.float32)
        try:
            gpu(kernel, x, y).join()
        except GpuIndexError as exc:
            print(exc)
        print(y.tolist())
    '''))
    assert out.returncode == 0, out.stderr
    assert f'File "<pickled {path}>", line {line}, in reads_past_the_end' in out.stdout
    assert "y[i] = x[i + 5]" in out.stdout
    assert out.stdout.splitlines()[-1] == str([-1.0] * 8)      # nothing written back


@pytest.mark.parametrize("method", ["spawn", "forkserver", "fork"])
def test_multiprocessing_runs_pickled_kernels(tmp_path, method, device_name):
    namespace, _ = _main_kernels(tmp_path)
    ctx = multiprocessing.get_context(method)
    with ctx.Pool(1) as pool:
        try:
            by_value = pool.apply(run_in_worker, (namespace["main_kernel"], 300))
        except VulkanInitFailed as exc:
            # some drivers (NVIDIA's) refuse any device in a process forked from one whose
            # device was up: ours says so and how to start workers instead (lavapipe works)
            assert method == "fork" and "llvmpipe" not in device_name, exc
            assert "'spawn' or 'forkserver'" in str(exc)
            return
        by_reference = pool.apply(run_in_worker, (scale_kernels.scaled_twice, 300))
    assert by_value == _expected(300)
    assert by_reference == (np.arange(300, dtype=np.float32) * 6).tolist()


def test_jobs_and_arenas_refuse_to_pickle(device_name):
    x = np.ones(4, np.float32)
    y = np.zeros(4, np.float32)
    job = gpu(axpy, 1.0, x, y, 4)
    with pytest.raises(TypeError, match="cannot pickle a GpuJob.*Join it where it was launched"):
        pickle.dumps(job)
    job.join()
    np.testing.assert_array_equal(y, np.ones(4))
    with GpuArena() as arena:
        arena.bind(x=x)
        with pytest.raises(TypeError, match="cannot pickle a GpuArena.*bind them in a GpuArena "
                                            "created in the receiving process"):
            cloudpickle.dumps(arena)
