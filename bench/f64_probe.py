"""What a device does with float64: division rounding, fused multiply-adds, and the exact steps
the float64 library (cthreads/codegen/library/f64_*.wgsl) builds on. Prints one line per question.

    python bench/f64_probe.py

Each question runs on random operands and counts results that differ from the answer exact
arithmetic (Python's ``fractions``) or numpy gives.
"""

from __future__ import annotations

import os
import sys
from fractions import Fraction

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from cthreads.codegen.f64math import helper_text          # noqa: E402
from tests.device.wgsl_runner import run_f64               # noqa: E402


def _exact_fma(a, b, c) -> float:
    return float(Fraction(a) * Fraction(b) + Fraction(c))


def main() -> int:
    rng = np.random.default_rng(5)
    n = 20000
    a = rng.standard_normal(n) * 2.0 ** rng.integers(-30, 30, n)
    b = rng.standard_normal(n) * 2.0 ** rng.integers(-30, 30, n)
    c = rng.standard_normal(n) * 2.0 ** rng.integers(-30, 30, n)
    lines = []

    q = run_f64("", "a0 / a1", a, b)
    lines.append(f"x / y correctly rounded: {int((q != a / b).sum())} of {n} differ from numpy")
    r = run_f64("", "fma(a0, a1, a2)", a, b, -a * b)
    exact = np.array([_exact_fma(x, y, z) for x, y, z in zip(a[:500], b[:500], (-a * b)[:500])])
    lines.append(f"fma(a, b, -(a*b)) is the exact error: {int((r[:500] != exact).sum())} of 500 "
                 "differ (0: fused)")
    s = run_f64("", "a0 * a1 + a2", a, b, c)
    sep = a * b + c
    fused = np.array([_exact_fma(x, y, z) for x, y, z in zip(a[:500], b[:500], c[:500])])
    lines.append(f"a*b + c: {int((s != sep).sum())} of {n} differ from separate roundings; "
                 f"{int((s[:500] == fused).sum())} of 500 equal the fused result")
    h = run_f64(helper_text(["ct_hide_d"]), "ct_hide_d(a0 * a1) + a2", a, b, c)
    lines.append(f"ct_hide_d(a*b) + c: {int((h != sep).sum())} of {n} differ from separate "
                 "roundings")
    p = a * b
    e = run_f64(helper_text(["ct_mul_err_d"]), "ct_mul_err_d(a0, a1, a2)", a, b, p)
    exact_e = np.array([float(Fraction(x) * Fraction(y) - Fraction(z))
                        for x, y, z in zip(a[:2000], b[:2000], p[:2000])])
    lines.append(f"ct_mul_err_d exact: {int((e[:2000] != exact_e).sum())} of 2000 differ")
    d = run_f64(helper_text(["ct_div_d"]), "ct_div_d(a0, a1)", a, b)
    lines.append(f"ct_div_d correctly rounded: {int((d != a / b).sum())} of {n} differ")
    w = run_f64("", "sqrt(a0)", np.abs(a))
    lines.append(f"sqrt correctly rounded: {int((w != np.sqrt(np.abs(a))).sum())} of {n} differ")
    sub = run_f64("", "a0 * a1", np.full(8, 2.0 ** -1000), np.full(8, 2.0 ** -60))
    lines.append(f"subnormal product 2^-1060 kept: {bool((sub == 2.0 ** -1060).all())}")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
