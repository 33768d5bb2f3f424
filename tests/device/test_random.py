"""Random(seed, stream) on the device against the plain-Python class (cthreads.lang.random):
bit-identical integers and floats (float32 launches: the 24-bit value; float64: the 53-bit
one), uniform / normal within rounding, device functions advancing the caller's stream, N-D
launches, simulate(), prepare(), GpuArray output, wide int64 ranges."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cthreads.gpu import (GlobalIdx, Gpu, Random, float32, float64, gpu, int64, prepare,
                          to_device, uint32, vec3, zeros)
from cthreads.lang.random import streams_random


@Gpu
def draws(n: int, seed: int, f: list[float], u: list[float], z: list[float],
          k: list[int], m: list[int]) -> None:
    i: int = GlobalIdx.x
    if i >= n:
        return
    rng: Random = Random(seed, i)
    f[i] = rng.random()
    u[i] = rng.uniform(-2.0, 3.0)
    z[i] = rng.normal(1.0, sigma=0.5)
    k[i] = rng.randint(-3, 3) * 1000 + rng.randrange(7)
    m[i] = rng.randrange(-2000000000, 2000000000)


def _reference(n, seed, wide):
    out = {name: [] for name in "fuzkm"}
    for i in range(n):
        r = Random(seed, i)
        out["f"].append(r.random() if wide else r.random32())
        out["u"].append(-2.0 + 5.0 * (r.random() if wide else r.random32()))
        out["z"].append(r.normal(1.0, 0.5) if wide else r.normal32(1.0, 0.5))
        out["k"].append(r.randint(-3, 3) * 1000 + r.randrange(7))
        out["m"].append(r.randrange(-2000000000, 2000000000))
    return out


@pytest.mark.parametrize("fdt,idt", [(np.float32, np.int32), (np.float64, np.int64)])
def test_device_equals_plain_python(fdt, idt):
    n, seed = 2000, -123456789
    f, u, z = (np.zeros(n, fdt) for _ in range(3))
    k, m = np.zeros(n, idt), np.zeros(n, idt)
    gpu(draws, n, seed, f, u, z, k, m, threads=n).join()
    ref = _reference(n, seed, fdt == np.float64)
    assert np.array_equal(f, np.array(ref["f"], fdt))              # bit for bit
    assert np.array_equal(k, ref["k"]) and np.array_equal(m, ref["m"])
    tol = 1e-6 if fdt == np.float32 else 1e-14
    np.testing.assert_allclose(u, ref["u"], rtol=tol, atol=tol)
    np.testing.assert_allclose(z, ref["z"], rtol=0, atol=20 * tol)
    assert f.min() >= 0.0 and f.max() < 1.0 and len(set(f.tolist())) > n * 0.99


def test_simulate_equals_the_device():
    n, seed = 300, 5
    dev = [np.zeros(n, np.float64) for _ in range(3)] + [np.zeros(n, np.int64)
                                                         for _ in range(2)]
    sim = [a.copy() for a in dev]
    gpu(draws, n, seed, *dev, threads=n).join()
    draws.simulate(n, seed, *sim, threads=n)
    assert np.array_equal(dev[0], sim[0]) and np.array_equal(dev[3], sim[3])
    assert np.array_equal(dev[4], sim[4])
    np.testing.assert_allclose(dev[2], sim[2], rtol=0, atol=1e-13)


def test_simulate_of_a_float32_launch_draws_the_float32_forms():
    """simulate() of a float32 launch takes random()/uniform()/normal() at float32 width, as
    the device does (one word, one word, two words): the same values and the same stream
    positions; plain calls outside simulate keep Python's doubles."""
    n, seed = 300, 11
    dev = [np.zeros(n, np.float32) for _ in range(3)] + [np.zeros(n, np.int32)
                                                         for _ in range(2)]
    sim = [a.copy() for a in dev]
    gpu(draws, n, seed, *dev, threads=n).join()
    draws.simulate(n, seed, *sim, threads=n)
    for j in (0, 3, 4):                          # random, the ints after: bit for bit
        assert np.array_equal(dev[j], sim[j]), j
    # uniform: float32 a + (b - a) * r, the same on lavapipe; a driver may fuse it into one FMA
    # (NVIDIA's does): then it differs by the product's rounding, under an ulp of b - a = 5
    np.testing.assert_allclose(dev[1], sim[1], rtol=0, atol=5 * float(np.finfo(np.float32).eps))
    np.testing.assert_allclose(dev[2], sim[2], rtol=0, atol=2e-5)   # float32 log, cos
    assert Random(seed, 0).random() == float(streams_random(seed, [0], 1)[0, 0])


@Gpu.func
def walk(rng: Random, steps: int) -> float:
    x: float = 0.0
    for _ in range(steps):
        if rng.random() < 0.5:
            x -= 1.0
        else:
            x += 1.0
    return x


@Gpu.func
def record(rng: Random, out: list[int], i: int) -> None:
    out[i] = rng.randint(0, 99)


@Gpu
def walkers(n: int, seed: int, pos: list[float], tag: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        rng = Random(seed, i)
        pos[i] = walk(rng, 7) + walk(rng, 3) * 100.0
        record(rng, tag, i)                  # continues the stream the walks advanced


@pytest.mark.parametrize("fdt,idt", [(np.float32, np.int32), (np.float64, np.int64)])
def test_device_functions_advance_the_callers_stream(fdt, idt):
    n, seed = 500, 77
    pos, tag = np.zeros(n, fdt), np.zeros(n, idt)
    gpu(walkers, n, seed, pos, tag, threads=n).join()
    sim_pos, sim_tag = np.zeros(n, fdt), np.zeros(n, idt)
    walkers.simulate(n, seed, sim_pos, sim_tag, threads=n)
    # the walks compare draws with 0.5: the 24-bit and 53-bit values agree on that
    assert np.array_equal(pos, sim_pos) and np.array_equal(tag, sim_tag)
    r = Random(seed, 3)
    draw = r.random if fdt == np.float64 else r.random32     # 2 words a draw, or 1
    steps = [(-1.0 if draw() < 0.5 else 1.0) for _ in range(10)]
    assert pos[3] == sum(steps[:7]) + 100.0 * sum(steps[7:])
    assert tag[3] == r.randint(0, 99)


@Gpu
def fill_2d(w: int, h: int, seed: int, out: list[list[float]]) -> None:
    x: int = GlobalIdx.x
    y: int = GlobalIdx.y
    if x < w and y < h:
        rng = Random(seed, y * w + x)
        out[y, x] = rng.random()


def test_nd_launch_and_gpuarray_output():
    w, h, seed = 37, 11, 2024
    want = streams_random(seed, np.arange(w * h), 1, bits=24).reshape(h, w)
    out = np.zeros((h, w), np.float32)
    gpu(fill_2d, w, h, seed, out, threads=(w, h)).join()
    assert np.array_equal(out, want.astype(np.float32))
    dev = zeros((h, w), np.float32)
    gpu(fill_2d, w, h, seed, dev, threads=(w, h)).join()
    assert np.array_equal(dev.numpy(), want.astype(np.float32))
    wide = to_device(np.zeros((h, w), np.float64))
    gpu(fill_2d, w, h, seed, wide, threads=(w, h)).join()
    assert np.array_equal(wide.numpy(), streams_random(seed, np.arange(w * h), 1).reshape(h, w))


@Gpu
def wide_ints(n: int, seed: int, lo: int, hi: int, out: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        rng = Random(seed, i)
        out[i] = rng.randint(lo, hi)


@pytest.mark.parametrize("lo,hi", [(-2 ** 63, 2 ** 63 - 1), (0, 2 ** 40), (-5, 2 ** 32 - 6),
                                   (7, 7)])
def test_int64_ranges(lo, hi):
    n, seed = 400, 9
    out = np.zeros(n, np.int64)
    gpu(wide_ints, n, seed, np.int64(lo), np.int64(hi), out, threads=n).join()
    assert out.tolist() == [Random(seed, i).randint(lo, hi) for i in range(n)]


def test_int32_full_range_and_seed_words():
    n = 200
    out = np.zeros(n, np.int32)
    gpu(wide_ints, n, -1, -2 ** 31, 2 ** 31 - 1, out, threads=n).join()
    assert out.tolist() == [Random(-1, i).randint(-2 ** 31, 2 ** 31 - 1) for i in range(n)]


def test_prepare_then_launch():
    prepare()
    f = np.zeros(10, np.float32)
    z = [np.zeros(10, np.float32) for _ in range(2)]
    k = [np.zeros(10, np.int32) for _ in range(2)]
    gpu(draws, 10, 1, f, *z, *k, threads=10).join()
    assert np.array_equal(f, [Random(1, i).random32() for i in range(10)])


def test_monte_carlo_pi_example():
    from examples import monte_carlo_pi
    threads, per, seed = 512, 64, 11
    r = monte_carlo_pi.main(threads, per, seed)
    u = streams_random(seed, np.arange(threads), 2 * per, bits=24).astype(np.float32)
    x, y = u[:, 0::2], u[:, 1::2]                  # draws 2k and 2k + 1 of each thread
    want = (x * x + y * y < np.float32(1.0)).sum(axis=1)
    # the device may fuse x*x + y*y into one rounding: a point on the circle's edge may flip
    assert np.abs(r["counts"] - want).sum() <= 2
    assert r["points"] == threads * per
    assert abs(r["estimate"] - math.pi) < 5 * r["error"]
    assert r["error"] == pytest.approx(4 * math.sqrt(np.pi / 4 * (1 - np.pi / 4) /
                                                     (threads * per)), rel=0.05)


def test_the_16_bit_multiply_high_form_without_int64():
    """Devices without shader-int64 compute Philox's multiply-high from 16-bit halves (the
    text the compiler writes); devices with it get the 64-bit product (rng.device_form). Both
    give the same numbers: run the 16-bit form with the feature hidden."""
    code = (
        "import numpy as np\n"
        "from cthreads.gpu import gpu\n"
        "from cthreads.lang.random import Random\n"
        "from tests.device.test_random import fill_2d\n"
        "out = np.zeros((4, 50), np.float32)\n"
        "gpu(fill_2d, 50, 4, -7, out, threads=(50, 4)).join()\n"
        "want = [[Random(-7, y * 50 + x).random32() for x in range(50)] for y in range(4)]\n"
        "assert np.array_equal(out, np.array(want, np.float32)), 'differs'\n"
        "print('ok')\n")
    from tests.conftest import run_python
    from pathlib import Path
    root = str(Path(__file__).resolve().parents[2])
    done = run_python(code, {"CTHREADS_HIDE_FEATURES": "shader-int64", "PYTHONPATH": root})
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_device_form_swaps_only_the_multiply_high():
    from cthreads.codegen.rng import device_form
    text = fill_2d.program.wgsl()
    assert "u64(a) * u64(b)" not in text and "fn ct_mulhi32(" in text
    wide = device_form(text, True)
    assert "u64(a) * u64(b)" in wide and device_form(text, False) == text
    assert wide.replace(" ", "").count("fnct_mulhi32(") == 1


def test_the_multiply_high_form_is_selectable(monkeypatch):
    """CTHREADS_RNG_MULHI=halves keeps the 16-bit form on a device with shader-int64 (for
    measurements), int64 (the default) swaps in the 64-bit product; other values are refused
    with the fix; the 16-bit form run through a fresh process gives the same numbers."""
    from cthreads.codegen import rng
    text = fill_2d.program.wgsl()
    for value, wide in (("halves", False), ("int64", True), ("", True)):
        monkeypatch.setenv(rng.MULHI_ENV, value)
        rng.mulhi_choice.cache_clear()
        assert ("u64(a) * u64(b)" in rng.device_form(text, True)) == wide, value
    monkeypatch.setenv(rng.MULHI_ENV, "fast")
    rng.mulhi_choice.cache_clear()
    with pytest.raises(ValueError, match="CTHREADS_RNG_MULHI=halves"):
        rng.device_form(text, True)
    monkeypatch.delenv(rng.MULHI_ENV)
    rng.mulhi_choice.cache_clear()
    code = (
        "import numpy as np\n"
        "from cthreads.gpu import gpu\n"
        "from cthreads.lang.random import Random\n"
        "from tests.device.test_random import four_per_thread\n"
        "out = np.zeros(40, np.float32)\n"
        "gpu(four_per_thread, 10, 3, out, threads=10).join()\n"
        "r = [Random(3, i) for i in range(10)]\n"
        "want = [r[i // 4].random32() for i in range(40)]\n"
        "assert np.array_equal(out, np.array(want, np.float32)), 'differs'\n"
        "print('ok')\n")
    from tests.conftest import run_python
    from pathlib import Path
    root = str(Path(__file__).resolve().parents[2])
    done = run_python(code, {rng.MULHI_ENV: "halves", "PYTHONPATH": root})
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


@Gpu
def four_per_thread(m: int, seed: int, out: list[float]) -> None:
    i: int = GlobalIdx.x
    if i < m:
        rng = Random(seed, i)
        out[4 * i] = rng.random()
        out[4 * i + 1] = rng.random()
        out[4 * i + 2] = rng.random()
        out[4 * i + 3] = rng.random()


@Gpu
def mixed_widths(m: int, seed: int, f: list[float], z: list[float], d: list[float64],
                 k: list[int64]) -> None:
    i: int = GlobalIdx.x
    if i < m:
        rng = Random(seed, i)
        for j in range(3):
            f[3 * i + j] = rng.random()
            z[3 * i + j] = rng.normal()
            if j == 1:
                k[3 * i + j] = rng.randint(0, 2 ** 40)
            else:
                k[3 * i + j] = rng.randint(-5, 5)
        d[i] = float64(rng.random())


def test_four_draws_make_one_block_and_the_refill_is_a_branch_on_the_counter():
    """Four float32 random() draws of a thread come from one block: the refill is an 'if' on
    the word counter, which a driver folds in straight-line code; the values are the stream's
    words in order."""
    text = four_per_thread.program.wgsl()
    assert text.count("if ((ct_rrng_n & 3u) == 0u)") == 4
    assert "var ct_rrng_c3: u32;" in text
    out = np.zeros(4 * 50, np.float32)
    gpu(four_per_thread, 50, -9, out, threads=50).join()
    for i in range(50):
        r = Random(-9, i)
        w = r.block(0)
        assert list(out[4 * i:4 * i + 4]) == [np.float32((x >> 8) / 2 ** 24) for x in w]


def test_multi_word_draws_skip_to_their_alignment_on_the_device():
    """Mixed draws (1-word random, 2-word normal, 1- or 2-word randint) take the same words
    on the device as in plain Python, also in a loop the driver need not unroll."""
    m, seed = 64, 21
    f, z = np.zeros(3 * m, np.float32), np.zeros(3 * m, np.float32)
    d, k = np.zeros(m, np.float64), np.zeros(3 * m, np.int64)
    gpu(mixed_widths, m, seed, f, z, d, k, threads=m).join()
    sf, sz, sd, sk = (a.copy() * 0 for a in (f, z, d, k))
    mixed_widths.simulate(m, seed, sf, sz, sd, sk, threads=m)
    assert np.array_equal(f, sf) and np.array_equal(k, sk) and np.array_equal(d, sd)
    np.testing.assert_allclose(z, sz, rtol=0, atol=2e-5)
    r = Random(seed, 5)
    want = []
    for j in range(3):
        want.append((r.random32(), r.normal32(), r.randint(0, 2 ** 40) if j == 1 else
                     r.randint(-5, 5)))
    assert [(f[15 + j], k[15 + j]) for j in range(3)] == [(np.float32(a), c)
                                                          for a, _, c in want]
    assert d[5] == np.float32(r.random32())


def test_a_pickled_kernel_with_random_runs_in_another_process(tmp_path):
    """A kernel from ``__main__`` (pickled by value, with its device function taking a
    Random) launches after unpickling, drawing the same numbers."""
    import pickle
    import subprocess
    import sys
    from pathlib import Path
    script = tmp_path / "kern.py"
    script.write_text(
        "import cloudpickle, sys\n"
        "from cthreads.gpu import Gpu, GlobalIdx, Random\n\n"
        "@Gpu.func\n"
        "def draw(rng: Random) -> float:\n"
        "    return rng.random()\n\n"
        "@Gpu\n"
        "def k(n: int, out: list[float]) -> None:\n"
        "    i: int = GlobalIdx.x\n"
        "    if i < n:\n"
        "        rng = Random(3, i)\n"
        "        out[i] = draw(rng) * 2.0 + rng.random()\n\n"
        "open(sys.argv[1], 'wb').write(cloudpickle.dumps(k))\n")
    root = str(Path(__file__).resolve().parents[2])
    pkl = tmp_path / "k.pkl"
    subprocess.run([sys.executable, str(script), str(pkl)], check=True, timeout=120,
                   env={**__import__("os").environ, "PYTHONPATH": root})
    kernel = pickle.loads(pkl.read_bytes())
    out = np.zeros(6, np.float32)
    gpu(kernel, 6, out).join()
    want = []
    for i in range(6):
        r = Random(3, i)
        want.append(np.float32(r.random32()) * np.float32(2.0) + np.float32(r.random32()))
    assert np.array_equal(out, np.array(want, np.float32))


@Gpu.func
def digit(rng: Random) -> int:
    return rng.randint(0, 9)


@Gpu.func
def digits(rng: Random, k: int) -> int:
    s: int = 0
    for _ in range(k):
        s = s * 10 + digit(rng)               # a Random passed on: the same stream
    return s


@Gpu.func
def direction(rng: Random) -> vec3:
    return vec3(rng.normal(), rng.normal(), rng.normal())


@Gpu
def nested(n: int, out: list[int], v: list[vec3]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        rng = Random(5, i)
        out[i] = digits(rng, 3) + digit(rng) * 1000
        v[i] = direction(rng)


def test_nested_device_functions_and_a_vector_result():
    n = 64
    out, v = np.zeros(n, np.int64), np.zeros((n, 3), np.float64)
    gpu(nested, n, out, v).join()
    want_out, want_v = [], []
    for i in range(n):
        r = Random(5, i)
        d = [r.randint(0, 9) for _ in range(4)]
        want_out.append(d[0] * 100 + d[1] * 10 + d[2] + d[3] * 1000)
        want_v.append([r.normal() for _ in range(3)])
    assert out.tolist() == want_out
    np.testing.assert_allclose(v, want_v, rtol=0, atol=1e-13)


@Gpu
def typed_seeds(n: int, seed: int64, base: uint32, out: list[float32]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        rng = Random(seed, base + uint32(i))
        out[i] = rng.random()


def test_int64_seeds_and_uint32_streams_take_their_words():
    n, seed, base = 40, -(2 ** 62) - 12345, 2 ** 32 - 20        # streams wrap past 2**32
    out = np.zeros(n, np.float32)
    gpu(typed_seeds, n, seed, base, out).join()
    want = [Random(seed, (base + i) % 2 ** 32).random32() for i in range(n)]
    assert out.tolist() == want


def test_monte_carlo_pi_runs_as_a_script():
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, str(root / "examples" / "monte_carlo_pi.py"), "256",
                           "32", "5"], capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "pi ~ 3.1" in done.stdout and "+- 0.0" in done.stdout and "8192 points" in done.stdout


@Gpu(boundscheck=False)
def draws_unchecked(n: int, seed: int, f: list[float], k: list[int]) -> None:
    i: int = GlobalIdx.x
    if i < n:
        rng = Random(seed, i)
        f[i] = rng.random()
        k[i] = rng.randint(-10, 10)


def test_bounds_checks_off():
    n = 100
    f, k = np.zeros(n, np.float32), np.zeros(n, np.int32)
    gpu(draws_unchecked, n, 4, f, k).join()
    for i in range(n):
        r = Random(4, i)
        assert (f[i], k[i]) == (r.random32(), r.randint(-10, 10))
