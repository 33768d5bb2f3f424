"""examples/mandelbrot_dask.py: the tiled image on a 2-worker LocalCluster (two devices on the
one lavapipe adapter), against numpy; and the script run as __main__ (its kernel pickled by
value to the workers)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from examples.samples import mandelbrot_numpy
from examples import mandelbrot_dask
from tests.conftest import run_python

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mandelbrot_dask.py"


def test_image_on_two_workers_matches_numpy(monkeypatch, device_name):
    monkeypatch.setenv("CTHREADS_DEVICE_COPIES", "2")
    r = mandelbrot_dask.main(160, 120, 64, workers=2, tile_rows=10, quiet=True)
    reference = mandelbrot_numpy(160, 120, 64).reshape(120, 160)   # recomputed here
    assert r["image"].shape == (120, 160) and r["image"].dtype == np.int32
    differ = np.count_nonzero(r["image"] != reference)
    assert differ <= r["image"].size // 200          # a few boundary pixels at most
    assert r["image"].max() == 64 and r["image"].min() >= 1
    assert [(name, index) for name, index, _ in r["workers"]] == [(0, 0), (1, 1)]


def test_script_runs_as_main():
    out = run_python(f"import runpy, sys; sys.argv = ['x', '96', '64', '32', '1']; "
                     f"runpy.run_path({str(EXAMPLE)!r}, run_name='__main__')", timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "96 x 64, 32 iterations, 1 worker(s)" in out.stdout
    assert "worker 0: device 0" in out.stdout
