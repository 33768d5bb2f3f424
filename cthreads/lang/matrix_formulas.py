"""The matrix formulas shared by the Python classes (``cthreads.lang.matrices``) and the
compiler (``codegen/matrix_calls.py``): written once over an arithmetic ``ops`` (``add sub mul
neg`` of two or one operands; ``keep(x)``: ``x``, which the compiler computes once into a local
since it is read several times), so the plain-Python run and the device evaluate the same
products and sums in the same order.

Entries are flat, row-major: ``a[r * n + c]``.
"""

from __future__ import annotations


def matmul(a, b, n: int, ops) -> list:
    """The ``n x n`` product ``a @ b``."""
    return [dot_seq([a[r * n + k] for k in range(n)], [b[k * n + c] for k in range(n)], ops)
            for r in range(n) for c in range(n)]


def mat_vec(a, v, n: int, ops) -> list:
    """``a @ v`` (v a column)."""
    return [dot_seq([a[r * n + k] for k in range(n)], v, ops) for r in range(n)]


def vec_mat(v, a, n: int, ops) -> list:
    """``v @ a`` (v a row)."""
    return [dot_seq(v, [a[k * n + c] for k in range(n)], ops) for c in range(n)]


def dot_seq(xs, ys, ops):
    total = None
    for x, y in zip(xs, ys):
        term = ops.mul(x, y)
        total = term if total is None else ops.add(total, term)
    return total


def transpose(a, n: int) -> list:
    return [a[c * n + r] for r in range(n) for c in range(n)]


def _minor2(ops, p, q, r, s):
    return ops.sub(ops.mul(p, q), ops.mul(r, s))


def adjugate_det(a, n: int, ops) -> tuple:
    """(the adjugate, flat, row-major; the determinant) of ``a``: ``inverse = adjugate / det``."""
    m = ops.mul
    if n == 2:
        a00, a01, a10, a11 = a
        return [a11, ops.neg(a01), ops.neg(a10), a00], _minor2(ops, a00, a11, a01, a10)
    if n == 3:
        a00, a01, a02, a10, a11, a12, a20, a21, a22 = a
        b = [_minor2(ops, a11, a22, a12, a21), _minor2(ops, a02, a21, a01, a22),
             _minor2(ops, a01, a12, a02, a11),
             _minor2(ops, a12, a20, a10, a22), _minor2(ops, a00, a22, a02, a20),
             _minor2(ops, a02, a10, a00, a12),
             _minor2(ops, a10, a21, a11, a20), _minor2(ops, a01, a20, a00, a21),
             _minor2(ops, a00, a11, a01, a10)]
        b[0], b[3], b[6] = ops.keep(b[0]), ops.keep(b[3]), ops.keep(b[6])
        det = ops.add(ops.add(m(a00, b[0]), m(a01, b[3])), m(a02, b[6]))
        return b, det
    (a00, a01, a02, a03, a10, a11, a12, a13,
     a20, a21, a22, a23, a30, a31, a32, a33) = a
    s0 = _minor2(ops, a00, a11, a10, a01)
    s1 = _minor2(ops, a00, a12, a10, a02)
    s2 = _minor2(ops, a00, a13, a10, a03)
    s3 = _minor2(ops, a01, a12, a11, a02)
    s4 = _minor2(ops, a01, a13, a11, a03)
    s5 = _minor2(ops, a02, a13, a12, a03)
    c5 = _minor2(ops, a22, a33, a32, a23)
    c4 = _minor2(ops, a21, a33, a31, a23)
    c3 = _minor2(ops, a21, a32, a31, a22)
    c2 = _minor2(ops, a20, a33, a30, a23)
    c1 = _minor2(ops, a20, a32, a30, a22)
    c0 = _minor2(ops, a20, a31, a30, a21)
    s0, s1, s2, s3, s4, s5 = (ops.keep(x) for x in (s0, s1, s2, s3, s4, s5))
    c0, c1, c2, c3, c4, c5 = (ops.keep(x) for x in (c0, c1, c2, c3, c4, c5))

    def comb(p, x, q, y, r, z):        # p*x - q*y + r*z
        return ops.add(ops.sub(m(p, x), m(q, y)), m(r, z))
    b = [comb(a11, c5, a12, c4, a13, c3), ops.neg(comb(a01, c5, a02, c4, a03, c3)),
         comb(a31, s5, a32, s4, a33, s3), ops.neg(comb(a21, s5, a22, s4, a23, s3)),
         ops.neg(comb(a10, c5, a12, c2, a13, c1)), comb(a00, c5, a02, c2, a03, c1),
         ops.neg(comb(a30, s5, a32, s2, a33, s1)), comb(a20, s5, a22, s2, a23, s1),
         comb(a10, c4, a11, c2, a13, c0), ops.neg(comb(a00, c4, a01, c2, a03, c0)),
         comb(a30, s4, a31, s2, a33, s0), ops.neg(comb(a20, s4, a21, s2, a23, s0)),
         ops.neg(comb(a10, c3, a11, c1, a12, c0)), comb(a00, c3, a01, c1, a02, c0),
         ops.neg(comb(a30, s3, a31, s1, a32, s0)), comb(a20, s3, a21, s1, a22, s0)]
    return b, _det4(ops, s0, s1, s2, s3, s4, s5, c0, c1, c2, c3, c4, c5)


def _det4(ops, s0, s1, s2, s3, s4, s5, c0, c1, c2, c3, c4, c5):
    m = ops.mul
    d = ops.sub(m(s0, c5), m(s1, c4))
    d = ops.add(d, m(s2, c3))
    d = ops.add(d, m(s3, c2))
    d = ops.sub(d, m(s4, c1))
    return ops.add(d, m(s5, c0))


def determinant(a, n: int, ops):
    return adjugate_det(a, n, ops)[1]
