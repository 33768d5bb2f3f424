"""The WGSL library (cthreads/codegen/library/*.wgsl): every helper's header lines say what its
text needs (computed here from the text, never in production), every call row names the
helpers its WGSL calls, the float64 polynomials are the exact Taylor coefficients, and the
library is read on first use only, once."""

from __future__ import annotations

import re
import subprocess
import sys
from fractions import Fraction
from math import factorial
from pathlib import Path

import pytest

from cthreads.codegen import library
from cthreads.codegen.builtins import CALLS, MATH, TO_INT
from cthreads.codegen.f64math import F64_OPS
from cthreads.codegen.float_ops import FLOAT_TO_INT, OVERRIDES
from cthreads.codegen.wgsl import HELPER_OP, IDENTITY, INDEX_HELPER, INT_ABS, OPAQUE, WIDEN

ROOT = Path(__file__).resolve().parents[2]
NAMES = set(library.helpers())
RECORDS = list(library.helpers().values()) + list(library.forms("f64").values())
_LOOP = re.compile(r"\bloop\s*\{|\bfor\s*\(|\bwhile\b")


def referenced(text: str, own: str) -> set:
    """The library helpers and shader names a WGSL text uses (other than ``own``)."""
    words = set(re.findall(r"\bct_[a-z0-9_]+\b", text))
    return (words & (NAMES | library.SHADER_NAMES)) - {own}


def needed_features(text: str) -> set:
    out = set()
    if re.search(r"\bf64\b|\dlf\b", text):
        out.add("shader-f64")
    if re.search(r"\b[ui]64\b|\d(li|lu)\b", text):
        out.add("shader-int64")
    return out


@pytest.mark.parametrize("rec", RECORDS, ids=lambda r: f"{r.source}:{r.name}{r.form and '@'}")
def test_every_header_says_what_the_text_needs(rec):
    assert re.search(rf"^(fn {rec.name}\(|var<private> {rec.name}:|override {rec.name}:)",
                     rec.text, re.M), f"{rec.name} is not declared in its text"
    assert len(set(rec.requires)) == len(rec.requires)
    assert set(rec.requires) == referenced(rec.text, rec.name), rec.name
    assert rec.loops == bool(_LOOP.search(rec.text)), rec.name
    assert set(rec.features) == needed_features(rec.text), rec.name
    assert rec.text == rec.text.strip() and "// helper:" not in rec.text


def test_every_form_replaces_a_helper_of_the_same_signature():
    forms = library.forms("f64")
    assert set(forms) == {"ct_div_exact_f", "ct_fmodq_exact_f"}
    for name, rec in forms.items():
        base = library.get(name)
        assert rec.text.split("{")[0] == base.text.split("{")[0]      # the same signature
        assert not rec.loops


def test_every_call_row_names_the_helpers_its_wgsl_calls():
    for name, row in CALLS.items():
        for ty, form in (("float", row.f32), ("float64", row.f64)):
            if form is None:
                continue
            called = set(re.findall(r"\b(ct_[a-z0-9_]+)\(", form.template))
            assert set(form.helpers) == called, (name, ty)
            assert called <= NAMES, (name, ty)
            form.template.format(*["a"] * max(row.nargs))
            if ty in row.lanewise:
                assert not form.helpers, (name, ty)      # lane-wise: WGSL's own functions
    assert set(MATH) <= set(CALLS)
    assert all(row.f32 is not None for row in MATH.values())
    assert all(row.f64 is not None for row in MATH.values())      # every math name, float64 too
    assert set(TO_INT) <= set(CALLS)


def test_every_helper_the_emitter_names_is_in_the_library():
    named = set(HELPER_OP.values()) | set(IDENTITY.values()) | set(OPAQUE.values()) | \
        set(INDEX_HELPER.values()) | set(WIDEN.values()) | set(INT_ABS.values()) | \
        set(FLOAT_TO_INT.values()) | set(F64_OPS.values()) | OVERRIDES
    assert named <= NAMES, named - NAMES
    for rec in library.closure(sorted(named)):
        assert set(rec.deps) <= NAMES


def test_closure_puts_dependencies_first():
    order = [rec.name for rec in library.closure(["ct_div4"])]
    assert order[-1] == "ct_div4" and len(order) == len(set(order))
    for k, name in enumerate(order):
        assert set(library.get(name).deps) <= set(order[:k])


def test_the_parser_reads_headers_prose_and_text():
    text = ("// a file's own comment\n\n// helper: ct_a\n// requires: ct_b, ct_zero\n"
            "// features: shader-f64\n// loops\n// prose: not a header\n"
            "fn ct_a() -> f64 {\n    // inside\n    loop { break; }\n    return ct_b();\n}\n\n\n"
            "// helper: ct_b\nfn ct_b() -> f64 { return f64(ct_zero()); }\n")
    a, b = library.parse(text, "x.wgsl")
    assert (a.name, a.requires, a.features, a.loops, a.deps, a.needs_zero) == \
        ("ct_a", ("ct_b", "ct_zero"), ("shader-f64",), True, ("ct_b",), True)
    assert a.text.startswith("fn ct_a()") and a.text.endswith("return ct_b();\n}")
    assert (b.requires, b.loops, b.source) == ((), False, "x.wgsl")
    with pytest.raises(KeyError):
        library.get("ct_no_such_helper")


# ------------------------------------------------------------------ the float64 constants
def _lit(value) -> str:
    return float(value).hex() + "lf"


def _horner(var: str, coefs) -> str:
    """``c0 + var*(c1 + var*(c2 + ...))`` as nested fma calls, each coefficient the double
    nearest the exact fraction."""
    expr = _lit(coefs[-1])
    for c in reversed(coefs[:-1]):
        expr = f"fma({var}, {expr}, {_lit(c)})"
    return expr


POLYNOMIALS = {
    # e^r - 1 = r + r^2 * P(r): 1/2! .. 1/14!
    "ct_expm1_poly_d": _horner("r", [Fraction(1, factorial(n)) for n in range(2, 15)]),
    # 2 atanh(s) = 2s + 2s^3/3 + s^5 * Q(s^2): 2/5, 2/7, ... 2/27
    "ct_log_core_d": _horner("z", [Fraction(2, 2 * k + 1) for k in range(2, 14)]),
    # sin r = r + r^3 * S(r^2): -1/3!, 1/5!, ... -1/19!
    "ct_sin_k_d": _horner("z", [Fraction((-1) ** k, factorial(2 * k + 1)) for k in range(1, 10)]),
    # cos r = 1 - r^2/2 + r^4 * C(r^2): 1/4!, -1/6!, ... 1/20!
    "ct_cos_k_d": _horner("z", [Fraction((-1) ** k, factorial(2 * k)) for k in range(2, 11)]),
    # atan t = t + t^3 * A(t^2): -1/3, 1/5, ... 1/45
    "ct_atan_k_d": _horner("z", [Fraction((-1) ** k, 2 * k + 1) for k in range(1, 23)]),
    # asin s = s + s^3 * A(s^2): (2n)! / (4^n n!^2 (2n + 1)), n = 1 .. 26
    "ct_asin_k_d": _horner("z", [Fraction(factorial(2 * n), 4 ** n * factorial(n) ** 2 * (2 * n + 1))
                                 for n in range(1, 27)]),
    # sinh r = r + r^3 * SH(r^2): 1/3!, ... 1/21!
    "ct_sinh_d": _horner("z", [Fraction(1, factorial(2 * k + 1)) for k in range(1, 11)]),
    # cosh r = 1 + r^2 * CH(r^2): 1/2!, ... 1/22!
    "ct_cosh_d": _horner("z", [Fraction(1, factorial(2 * k)) for k in range(1, 12)]),
}


@pytest.mark.parametrize("name", sorted(POLYNOMIALS))
def test_the_float64_polynomials_are_the_exact_coefficients(name):
    assert POLYNOMIALS[name] in library.get(name).text


def test_pi_and_the_degree_factors_are_pythons_doubles():
    import math
    assert _lit(math.pi) in library.get("ct_atan2_d").text
    assert _lit(math.pi / 2) in library.get("ct_asin_d").text
    assert CALLS["degrees"].f64.template == f"({{0}} * {_lit(180 / math.pi)})"
    assert CALLS["radians"].f64.template == f"({{0}} * {_lit(math.pi / 180)})"


# ------------------------------------------------------------------ loading
def test_the_library_is_read_on_first_use_only(tmp_path):
    code = ("import cthreads.gpu\nfrom cthreads.codegen import library\n"
            "assert library._load.cache_info().currsize == 0, 'read at import'\n"
            "from cthreads.gpu import Gpu, GlobalIdx\n"
            "def k(n: int, x: list[float]) -> None:\n"
            "    i = GlobalIdx.x\n"
            "    if i < n:\n"
            "        x[i] = x[i] % 3.0\n"
            "Gpu(k).program\n"
            "info = library._load.cache_info()\n"
            "assert info.currsize == 1 and info.misses == 1, info\n"
            "assert not library._load().f64_read, 'float64 library read for a float32 kernel'\n"
            "from cthreads.gpu import float64\n"
            "def d(n: int, x: list[float64]) -> None:\n"
            "    i = GlobalIdx.x\n"
            "    if i < n:\n"
            "        x[i] = x[i] % 3.0\n"
            "Gpu(d).program\n"
            "assert library._load().f64_read and library._load.cache_info().misses == 1\n")
    script = tmp_path / "first_use.py"
    script.write_text(code)
    out = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]


def test_the_library_folder_is_in_the_package():
    assert library.FOLDER == ROOT / "cthreads" / "codegen" / "library"
    assert {p.name for p in library.FOLDER.glob("*.wgsl")} >= {"helpers.wgsl", "f64_trig.wgsl"}
