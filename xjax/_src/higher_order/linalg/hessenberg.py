"""Householder reductions written as lax programs (no primitives of their own, so every
transformation applies through the primitives they use): ``hessenberg`` (LAPACK gehrd's
packed output), ``tridiagonal`` (hetrd, lower), and the compositions ``symmetric_product``,
``cholesky_update``, ``tridiagonal_solve``. Eagerly they run one lax operation at a time
(slow for large matrices, exact semantics); under ``jit`` they compile like any program.
"""

from __future__ import annotations

import numpy as np

from xjax._src.higher_order.linalg.common import (bcast, conj, dtype, eye_like, full, loop_index,
                                                  matmul, mH, real, shape, tril, where, mT)
from xjax._src.higher_order.linalg.qr import _householder
from xjax._src.higher_order.linalg.triangular import cholesky
from xjax._src.lax.operands import to_operand
from xjax._src import lax
from xjax._src.higher_order import fori_loop, scan


def _reduce_to_hessenberg(a):
    """Householder reduction of (B, n, n) ``a``: returns the Hessenberg matrix (exact zeros
    below the subdiagonal), the reflectors (column j holds v_j, zero above row j+1, one at
    j+1), the taus (B, n-1) and ``Q`` with ``a = Q H Q^H``."""
    count, n, _ = shape(a)
    dt = dtype(a)
    rows = lax.broadcasted_iota(np.int32, (count, n), 1)
    rows3 = lax.broadcasted_iota(np.int32, (count, n, n), 1)
    cols3 = lax.broadcasted_iota(np.int32, (count, n, n), 2)
    zeros3 = full((count, n, n), 0, dt)

    def step(j, state):
        j = loop_index(j)
        h, vs, taus, q = state
        is_col = lax.eq(cols3, bcast(j, (count, n, n), ()))
        column = lax.reduce_sum(where(is_col, h, zeros3), (2,))
        v, tau, beta = _householder(column, lax.add(j, full((), 1, np.int32)), rows)
        v3_col = bcast(v, (count, n, n), (0, 1))
        v3_row = bcast(conj(v), (count, n, n), (0, 2))
        # H <- P^H H P with P = I - tau v v^H
        vh_h = lax.reduce_sum(lax.mul(bcast(conj(v), (count, n, n), (0, 1)), h), (1,))
        h = lax.sub(h, lax.mul(bcast(conj(tau), (count, n, n), (0,)),
                               lax.mul(v3_col, bcast(vh_h, (count, n, n), (0, 2)))))
        hv = lax.reduce_sum(lax.mul(h, bcast(v, (count, n, n), (0, 2))), (2,))
        h = lax.sub(h, lax.mul(bcast(tau, (count, n, n), (0,)),
                               lax.mul(bcast(hv, (count, n, n), (0, 1)), v3_row)))
        # the reduced column is exactly beta e_(j+1)
        below = lax.gt(rows3, bcast(lax.add(j, full((), 1, np.int32)), (count, n, n), ()))
        at = lax.eq(rows3, bcast(lax.add(j, full((), 1, np.int32)), (count, n, n), ()))
        h = where(is_col, where(at, bcast(beta, (count, n, n), (0,)),
                                where(below, zeros3, h)), h)
        qv = lax.reduce_sum(lax.mul(q, bcast(v, (count, n, n), (0, 2))), (2,))
        q = lax.sub(q, lax.mul(bcast(tau, (count, n, n), (0,)),
                               lax.mul(bcast(qv, (count, n, n), (0, 1)), v3_row)))
        vs = where(is_col, v3_col, vs)
        taus = where(lax.eq(lax.broadcasted_iota(np.int32, shape(taus), 1),
                            bcast(j, shape(taus), ())), bcast(tau, shape(taus), (0,)), taus)
        return h, vs, taus, q

    init = (a, zeros3, full((count, max(n - 1, 0)), 0, dt), eye_like(a))
    return fori_loop(0, max(n - 2, 0), step, init)


def _flat(a):
    batch = shape(a)[:-2]
    n = shape(a)[-1]
    count = int(np.prod(batch)) if batch else 1
    return lax.reshape(a, (count, n, n)), batch, n


def hessenberg_with_q(a):
    """(H, Q) with ``a = Q H Q^H``, H upper Hessenberg (used by ``scipy.linalg.hessenberg``)."""
    a = to_operand(a)
    x, batch, n = _flat(a)
    h, _, _, q = _reduce_to_hessenberg(x)
    return lax.reshape(h, batch + (n, n)), lax.reshape(q, batch + (n, n))


def hessenberg(a):
    """Reduce square matrices to upper Hessenberg form, in LAPACK gehrd's packed format.

    Returns
    -------
    a_out : array (..., n, n)
        The Hessenberg matrix on and above the subdiagonal; below it, the Householder
        vectors ``v_j[j+2:]`` (``v_j[j+1] = 1``).
    taus : array (..., n - 1)
        ``Q = prod_j (I - taus[j] v_j v_j^H)`` and ``a = Q H Q^H``.
    """
    a = to_operand(a)
    x, batch, n = _flat(a)
    h, vs, taus, _ = _reduce_to_hessenberg(x)
    rows = lax.broadcasted_iota(np.int32, shape(h), 1)
    cols = lax.broadcasted_iota(np.int32, shape(h), 2)
    packed = where(lax.gt(rows, lax.add(cols, full(shape(cols), 1, np.int32))), vs, h)
    return lax.reshape(packed, batch + (n, n)), lax.reshape(taus, batch + (max(n - 1, 0),))


def tridiagonal(a, *, lower: bool = True):
    """Reduce Hermitian matrices (their lower triangle) to real symmetric tridiagonal form,
    as LAPACK hetrd with ``uplo='L'``: returns ``(a_out, d, e, taus)`` with the reflectors
    below the subdiagonal of ``a_out``, the diagonal ``d`` and subdiagonal ``e``."""
    if not lower:
        raise NotImplementedError("tridiagonal(lower=False) (hetrd's upper storage) is not "
                                  "implemented in xjax; pass lower=True")
    a = to_operand(a)
    x, batch, n = _flat(a)
    hermitian = lax.add(tril(x), mH(tril(x, -1)))
    h, vs, taus, _ = _reduce_to_hessenberg(hermitian)
    rows = lax.broadcasted_iota(np.int32, shape(h), 1)
    cols = lax.broadcasted_iota(np.int32, shape(h), 2)
    packed = where(lax.gt(rows, lax.add(cols, full(shape(cols), 1, np.int32))), vs,
                   where(lax.ge(rows, cols), h, x))
    d = real(_band(h, 0))
    e = real(_band(h, -1))
    return (lax.reshape(packed, batch + (n, n)), lax.reshape(d, batch + (n,)),
            lax.reshape(e, batch + (max(n - 1, 0),)), lax.reshape(taus, batch + (max(n - 1, 0),)))


def _band(x, k: int):
    """The diagonal ``k`` (0: main, -1: subdiagonal) of (B, n, n) ``x`` as (B, n - |k|)."""
    count, n, _ = shape(x)
    rows = lax.broadcasted_iota(np.int32, shape(x), 1)
    cols = lax.broadcasted_iota(np.int32, shape(x), 2)
    on = lax.eq(lax.sub(cols, rows), full(shape(rows), k, np.int32))
    picked = lax.reduce_sum(where(on, x, lax.full_like(x, 0)), (2 if k <= 0 else 1,))
    start = -k if k < 0 else 0
    return lax.slice(picked, (0, start), (count, start + n - abs(k)))


def symmetric_product(a_matrix, c_matrix, *, alpha=1.0, beta=0.0,
                      symmetrize_output: bool = False):
    """``alpha * a @ a^T + beta * c`` (BLAS syrk's operation; with ``symmetrize_output`` the
    result is made exactly symmetric)."""
    a, c = to_operand(a_matrix), to_operand(c_matrix)
    dt = dtype(a)
    out = lax.add(lax.mul(full((), alpha, dt), matmul(a, mT(a))),
                  lax.mul(full((), beta, dt), c))
    if symmetrize_output:
        out = lax.div(lax.add(out, mT(out)), full((), 2, dt))
        out = tril(out)
        out = lax.add(out, mT(tril(out, -1)))
    return out


def cholesky_update(r_matrix, w_vector):
    """The upper Cholesky factor of ``r^H r + w w^H`` given the upper factor ``r``.

    Computed by refactoring the updated matrix (O(n^3), differentiable), where JAX applies
    O(n^2) Givens rotations; the results agree to rounding.
    """
    r, w = to_operand(r_matrix), to_operand(w_vector)
    nb = len(shape(w)) - 1
    outer = matmul(lax.expand_dims(w, (nb + 1,)), lax.expand_dims(conj(w), (nb,)))
    updated = lax.add(matmul(mH(r), r), outer)
    return mH(cholesky(updated, symmetrize_input=False))


def tridiagonal_solve(dl, d, du, b):
    """Solve tridiagonal systems: ``dl`` (sub-diagonal, ``dl[..., 0] = 0``), ``d`` and ``du``
    (super-diagonal, ``du[..., -1] = 0``) (..., m), ``b`` (..., m, n). Thomas' algorithm (no
    pivoting, as JAX's gtsv-free CPU path and cuSPARSE's), written with ``lax.scan``."""
    dl, d, du, b = (to_operand(x) for x in (dl, d, du, b))
    m = shape(d)[-1]
    nb = len(shape(d)) - 1
    if shape(b)[-2] != m or shape(dl)[-1] != m or shape(du)[-1] != m:
        raise ValueError("tridiagonal_solve: dl, d and du must have the trailing dimension "
                         f"of b's rows, got {shape(dl)}, {shape(d)}, {shape(du)} and "
                         f"{shape(b)}")

    def front(x):  # move the length-m axis to the front for scanning
        return lax.transpose(x, (nb,) + tuple(range(nb)) + tuple(range(nb + 1, len(shape(x)))))

    def back(x):
        n = len(shape(x))
        return lax.transpose(x, tuple(range(1, nb + 1)) + (0,) + tuple(range(nb + 1, n)))

    dl_t, d_t, du_t, b_t = front(dl), front(d), front(du), front(b)
    c0 = lax.full(shape(d_t)[1:], 0, dtype(d))
    y0 = lax.full(shape(b_t)[1:], 0, dtype(b))

    def forward(carry, row):
        c_prev, y_prev = carry
        sub, diag, u, rhs = row
        denom = lax.sub(diag, lax.mul(sub, c_prev))
        c = lax.div(u, denom)
        expand = bcast(denom, shape(rhs), tuple(range(nb)))
        y = lax.div(lax.sub(rhs, lax.mul(bcast(sub, shape(rhs), tuple(range(nb))), y_prev)),
                    expand)
        return (c, y), (c, y)

    _, (cs, ys) = scan(forward, (c0, y0), (dl_t, d_t, du_t, b_t))

    def backward(x_next, row):
        c, y = row
        x = lax.sub(y, lax.mul(bcast(c, shape(y), tuple(range(nb))), x_next))
        return x, x

    _, xs = scan(backward, lax.full(shape(b_t)[1:], 0, dtype(b)), (cs, ys), reverse=True)
    return back(xs)

