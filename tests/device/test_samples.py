"""The shared sample kernels (examples/samples.py) and the demo that runs one of them.

saxpy is exercised throughout the device tests (tests/device/kernels.py re-exports it); here the
Mandelbrot kernel is checked against its numpy reference, against fixed pixels whose counts
follow from the definition, and the demo script runs end to end at a small size.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from cthreads.gpu import gpu
from examples.samples import mandelbrot, mandelbrot_numpy

DEMO = Path(__file__).resolve().parents[2] / "demo" / "mandelbrot.py"


@pytest.mark.parametrize("width, height, max_iter", [(96, 64, 60), (200, 150, 200), (7, 5, 3)])
def test_mandelbrot_matches_numpy(device_name, width, height, max_iter):
    n = width * height
    counts = [-1] * (n + 9)                  # past n: left alone
    gpu(mandelbrot, n, width, height, max_iter, counts).join()
    assert counts[n:] == [-1] * 9
    got = np.array(counts[:n])
    ref = mandelbrot_numpy(width, height, max_iter)
    assert got.min() >= 1 and got.max() <= max_iter
    # the driver may re-associate float expressions: a few boundary pixels may differ
    assert np.mean(got == ref) >= 0.99, np.flatnonzero(got != ref)[:10]
    # pixel 0 is c = -2.2 - 1.2i: |c| > 2 after the first iteration
    assert got[0] == ref[0] == 1


def test_mandelbrot_inside_and_outside_the_set(device_name):
    # width 30, height 24: pixel (22, 12) is c = -2.2 + 3.0*22/30 + (-1.2 + 2.4*12/24)i = 0
    # (inside: every iteration), pixel (29, 0) is c = 0.7 - 1.2i (|c|^2 = 1.93, then
    # z = c^2 + c = -0.25 - 2.88i escapes: 2 iterations)
    width, height, max_iter = 30, 24, 50
    counts = [0] * (width * height)
    gpu(mandelbrot, width * height, width, height, max_iter, counts).join()
    assert counts[12 * width + 22] == max_iter
    assert counts[29] == 2
    sim = [0] * (width * height)
    mandelbrot.simulate(width * height, width, height, max_iter, sim)
    assert sim[12 * width + 22] == max_iter and sim[29] == 2


def test_the_demo_renders_and_agrees_with_numpy(device_name, tmp_path, monkeypatch, capsys):
    spec = importlib.util.spec_from_file_location("demo_mandelbrot", DEMO)
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    monkeypatch.chdir(tmp_path)
    assert demo.main(["64", "48", "40"]) == 0
    out = capsys.readouterr().out
    assert "image: 64x48, 40 iterations -> mandelbrot.png" in out
    png = (tmp_path / "mandelbrot.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and png[12:16] == b"IHDR"
    assert int.from_bytes(png[16:20], "big") == 64 and int.from_bytes(png[20:24], "big") == 48
