"""Hermitian eigendecomposition: ``eigh``.

Eagerly: LAPACK syevd/heevd through ``numpy.linalg.eigh``, as JAX's CPU backend. Under
``jit``: the cyclic Jacobi method written with lax. Each round rotates ``n/2`` disjoint
index pairs at once (the round-robin "circle" ordering, so a round is a few whole-matrix
operations), ``n - 1`` rounds make a sweep, and sweeps repeat until the off-diagonal part is
below ``n * eps * ||A||_F`` (quadratic convergence: 5-10 sweeps). Jacobi is accurate (small
eigenvalues to high relative accuracy) but O(n^3) per sweep: a 100x100 float32 eigh took 0.6
ms with LAPACK, 12 ms compiled (about 7 sweeps; 0.5 s to compile). Eigenvectors are unique
up to sign (phase), which may differ between the two paths.
"""

from __future__ import annotations

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.avals import ShapedArray
from xjax._src.core.primitive import NONLINEAR, Primitive
from xjax._src.lax.ad_helpers import late_rule
from xjax._src.higher_order.linalg.common import (batch_leading, bcast, check_inexact,
                                                  check_lapack_dtype, conj, dtype, eye_like, full,
                                                  lower_via_lax, mH, matmul, real, real_dtype,
                                                  shape, symmetrize, take_last, take_rows, tril,
                                                  triu, where)
from xjax._src.lax.ad_rules import instantiate
from xjax._src.lax.convert import convert_element_type
from xjax._src.higher_order.linalg.common import mT
from xjax._src.lax.operands import to_operand
from xjax._src import lax
from xjax._src.higher_order import fori_loop, while_loop

_MAX_SWEEPS = 60


class EighImplementation:
    """Names of JAX's eigh algorithms; xjax accepts them and uses its own (see above)."""

    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


def _subset(subset_by_index, n):
    if subset_by_index is None:
        return 0, n
    lo, hi = subset_by_index
    return lo, hi


def _eigh_abstract_eval(x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    check_inexact("eigh", x.dtype)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError("Argument to symmetric eigendecomposition must have shape [..., n, "
                         f"n], got shape {x.shape}")
    n = x.shape[-1]
    lo, hi = _subset(subset_by_index, n)
    if not 0 <= lo <= hi <= n:
        raise ValueError(f"subset_by_index must satisfy 0 <= lo <= hi <= n, got "
                         f"{subset_by_index} for n = {n}")
    batch = x.shape[:-2]
    return [ShapedArray(batch + (n, hi - lo), x.dtype),
            ShapedArray(batch + (hi - lo,), real_dtype(x.dtype))]


def _eigh_impl(x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    check_lapack_dtype(x.dtype)
    x = np.asarray(x)
    n = x.shape[-1]
    lo, hi = _subset(subset_by_index, n)
    if x.size == 0:
        return [np.zeros(x.shape[:-1] + (hi - lo,), x.dtype),
                np.zeros(x.shape[:-2] + (hi - lo,), real_dtype(x.dtype))]
    w, v = np.linalg.eigh(x, UPLO="L" if lower else "U")
    return [v[..., lo:hi].astype(x.dtype, copy=False),
            w[..., lo:hi].astype(real_dtype(x.dtype), copy=False)]


# -- the compiled algorithm: parallel cyclic Jacobi --


def _circle_shift(size: int) -> np.ndarray:
    """The position permutation between consecutive rounds of the round-robin ordering in
    which positions (2i, 2i+1) are paired: ``new[p] = old[shift[p]]``."""
    h = size // 2
    shift = np.empty(size, np.int32)
    if h == 1:
        return np.arange(size, dtype=np.int32)
    shift[0] = 0
    shift[2] = 1
    for i in range(2, h):
        shift[2 * i] = 2 * (i - 1)
    for i in range(h - 1):
        shift[2 * i + 1] = 2 * (i + 1) + 1
    shift[2 * (h - 1) + 1] = 2 * (h - 1)
    return shift


def next_pairing(x, axis: int):
    """Reorder ``axis`` (of even length) from one round-robin round to the next, as
    ``x.take(_circle_shift(size), axis)``, with static slices and concatenations (cheaper
    than a gather): with evens E = x[0::2] and odds O = x[1::2], the new evens are
    (E[0], O[0], E[1], ..., E[h-2]) and the new odds (O[1], ..., O[h-1], E[h-1])."""
    size = shape(x)[axis]
    h = size // 2
    if h == 1:
        return x
    split = shape(x)[:axis] + (h, 2) + shape(x)[axis + 1:]
    x2 = lax.reshape(x, split)

    def part(parity, start, stop):
        piece = lax.slice_in_dim(lax.slice_in_dim(x2, parity, parity + 1, 1, axis + 1),
                                 start, stop, 1, axis)
        return piece
    evens = lax.concatenate([part(0, 0, 1), part(1, 0, 1), part(0, 1, h - 1)], axis) \
        if h > 2 else lax.concatenate([part(0, 0, 1), part(1, 0, 1)], axis)
    odds = lax.concatenate([part(1, 1, h), part(0, h - 1, h)], axis)
    return lax.reshape(lax.concatenate([evens, odds], axis + 1), shape(x))


def _hermitian_from_triangle(x, lower):
    """The Hermitian matrix whose lower (upper) triangle is ``x``'s."""
    if lower:
        part, strict = tril(x), tril(x, -1)
    else:
        part, strict = triu(x), triu(x, 1)
    full_matrix = lax.add(part, mH(strict))
    if dtypes.is_complex(dtype(x)):  # a Hermitian matrix has a real diagonal
        eye = eye_like(x)
        diagonal_real = convert_element_type(real(full_matrix), dtype(x))
        full_matrix = where(lax.ne(eye, lax.full_like(eye, 0)), diagonal_real, full_matrix)
    return full_matrix


def _pair_entries(a, size):
    """The diagonal entries ``a_pp``, ``a_qq`` and the coupling ``a_pq`` of the pairs
    (2i, 2i+1) of (B, size, size) matrices, each (B, size/2)."""
    count = shape(a)[0]
    rows = lax.broadcasted_iota(np.int32, (count, size, size), 1)
    cols = lax.broadcasted_iota(np.int32, (count, size, size), 2)
    zeros = lax.full_like(a, 0)
    diagonal = lax.reduce_sum(where(lax.eq(rows, cols), a, zeros), (2,))
    coupling_mask = lax.eq(cols, lax.add(rows, full(shape(rows), 1, np.int32)))
    coupling = lax.reduce_sum(where(coupling_mask, a, zeros), (2,))
    app = lax.slice(diagonal, (0, 0), (count, size), (1, 2))
    aqq = lax.slice(diagonal, (0, 1), (count, size), (1, 2))
    apq = lax.slice(coupling, (0, 0), (count, size), (1, 2))
    return real(app), real(aqq), apq


def _rotations(app, aqq, apq):
    """Per pair, ``c`` (real), ``s`` (real) and the phase ``e`` of ``a_pq`` such that
    ``J = [[c, s e], [-s conj(e), c]]`` makes ``J^H [[a_pp, a_pq], [conj(a_pq), a_qq]] J``
    diagonal (Golub and Van Loan's sym.schur2 on ``|a_pq|``); identity where a_pq = 0."""
    rdt = dtype(app)
    # complex: rotate by |a_pq| after a phase; real: the signed a_pq is its own "magnitude"
    magnitude = lax.abs(apq) if dtypes.is_complex(dtype(apq)) else apq
    zero = lax.eq(magnitude, full(shape(magnitude), 0, rdt))
    one = full(shape(magnitude), 1, rdt)
    safe = where(zero, one, magnitude)
    theta = lax.div(lax.sub(aqq, app), lax.mul(full(shape(safe), 2, rdt), safe))
    abs_theta = lax.abs(theta)
    big = lax.gt(abs_theta, full(shape(theta), 1e10, rdt))
    root = where(big, abs_theta, lax.sqrt(lax.add(one, lax.mul(theta, theta))))
    sign = where(lax.ge(theta, full(shape(theta), 0, rdt)), one, lax.neg(one))
    t = lax.div(sign, lax.add(abs_theta, root))
    c = lax.rsqrt(lax.add(one, lax.mul(t, t)))
    s = lax.mul(t, c)
    c = where(zero, one, c)
    s = where(zero, full(shape(s), 0, rdt), s)
    if dtypes.is_complex(dtype(apq)):
        phase = lax.div(apq, convert_element_type(safe, dtype(apq)))
        phase = where(zero, full(shape(phase), 1, dtype(apq)), phase)
    else:
        phase = None
    return c, s, phase


def rotate_columns(x, c, s, phase):
    """``x J`` for (B, R, size) ``x`` and the block-diagonal ``J`` whose 2x2 blocks
    ``[[c, s e], [-s conj(e), c]]`` act on the column pairs (2i, 2i+1)."""
    count, rows, size = shape(x)
    h = size // 2
    dt = dtype(x)
    cc, ss = convert_element_type(c, dt), convert_element_type(s, dt)
    s_e = lax.mul(ss, phase) if phase is not None else ss
    s_ce = lax.mul(ss, conj(phase)) if phase is not None else ss
    x4 = lax.reshape(x, (count, rows, h, 2))
    x0 = lax.squeeze(lax.slice_in_dim(x4, 0, 1, 1, 3), (3,))
    x1 = lax.squeeze(lax.slice_in_dim(x4, 1, 2, 1, 3), (3,))
    shape3 = (count, rows, h)

    def spread(p):
        return bcast(p, shape3, (0, 2))
    y0 = lax.sub(lax.mul(x0, spread(cc)), lax.mul(x1, spread(s_ce)))
    y1 = lax.add(lax.mul(x0, spread(s_e)), lax.mul(x1, spread(cc)))
    y = lax.concatenate([lax.expand_dims(y0, (3,)), lax.expand_dims(y1, (3,))], 3)
    return lax.reshape(y, (count, rows, size))


def rotate_rows(x, c, s, phase):
    """``J^H x`` for (B, size, C) ``x`` and the block-diagonal ``J`` of ``rotate_columns``
    (rows combined in place: no transposes)."""
    count, size, cols = shape(x)
    h = size // 2
    dt = dtype(x)
    cc, ss = convert_element_type(c, dt), convert_element_type(s, dt)
    # J^H = [[c, -s e], [s conj(e), c]] acting on the row pairs
    s_e = lax.mul(ss, phase) if phase is not None else ss
    s_ce = lax.mul(ss, conj(phase)) if phase is not None else ss
    x4 = lax.reshape(x, (count, h, 2, cols))
    x0 = lax.squeeze(lax.slice_in_dim(x4, 0, 1, 1, 2), (2,))
    x1 = lax.squeeze(lax.slice_in_dim(x4, 1, 2, 1, 2), (2,))
    shape3 = (count, h, cols)

    def spread(p):
        return bcast(p, shape3, (0, 1))
    y0 = lax.sub(lax.mul(x0, spread(cc)), lax.mul(x1, spread(s_e)))
    y1 = lax.add(lax.mul(x0, spread(s_ce)), lax.mul(x1, spread(cc)))
    y = lax.concatenate([lax.expand_dims(y0, (2,)), lax.expand_dims(y1, (2,))], 2)
    return lax.reshape(y, (count, size, cols))


def _rotate(a, v, c, s, phase):
    """``A <- J^H A J`` and ``V <- V J`` for the block-diagonal ``J`` of the pair rotations."""
    a = rotate_rows(rotate_columns(a, c, s, phase), c, s, phase)
    return a, rotate_columns(v, c, s, phase)


def _zero_couplings(a, size):
    """Set the just-annihilated entries a_pq, a_qp to exact zeros."""
    count = shape(a)[0]
    rows = lax.broadcasted_iota(np.int32, (count, size, size), 1)
    cols = lax.broadcasted_iota(np.int32, (count, size, size), 2)
    even = lax.eq(lax.rem(rows, full(shape(rows), 2, np.int32)), full(shape(rows), 0, np.int32))
    odd_row = lax.bitwise_not(even)
    upper = lax.bitwise_and(even, lax.eq(cols, lax.add(rows, full(shape(rows), 1, np.int32))))
    lower_ = lax.bitwise_and(odd_row, lax.eq(cols, lax.sub(rows, full(shape(rows), 1,
                                                                        np.int32))))
    return where(lax.bitwise_or(upper, lower_), lax.full_like(a, 0), a)


def _off_diagonal_ratio(a):
    """Per matrix, ||offdiag(A)||_F / ||A||_F (0 for a zero matrix)."""
    count, size, _ = shape(a)
    sq = real(lax.mul(a, conj(a)))
    rows = lax.broadcasted_iota(np.int32, shape(sq), 1)
    cols = lax.broadcasted_iota(np.int32, shape(sq), 2)
    off = lax.reduce_sum(where(lax.ne(rows, cols), sq, lax.full_like(sq, 0)), (1, 2))
    total = lax.reduce_sum(sq, (1, 2))
    safe = where(lax.eq(total, lax.full_like(total, 0)), lax.full_like(total, 1), total)
    return lax.sqrt(lax.div(off, safe))


def jacobi_eigh(a):
    """Eigenvalues (real, unsorted) and eigenvectors of Hermitian (B, n, n) matrices by
    parallel cyclic Jacobi. Returns (w, v)."""
    count, n, _ = shape(a)
    dt = dtype(a)
    size = n + (n % 2)  # odd n: one decoupled padding index, whose rotations are identities
    if size != n:
        a = lax.pad(a, lax.full((), 0, dt), ((0, 0, 0), (0, 1, 0), (0, 1, 0)))
    v = eye_like(a)
    positions = lax.broadcasted_iota(np.int32, (count, size), 1)
    # rounding leaves off-diagonal entries of size ~eps * ||A||, so ||offdiag||_F stalls near
    # eps * n * ||A||_F: ask for that (a stricter target would only spin to _MAX_SWEEPS)
    tol = float(np.finfo(real_dtype(dt)).eps) * max(n, 1)

    def one_round(_, state):
        a, v, perm = state
        app, aqq, apq = _pair_entries(a, size)
        c, s, phase = _rotations(app, aqq, apq)
        a, v = _rotate(a, v, c, s, phase)
        a = _zero_couplings(a, size)
        # move to the next round's pairing: rows and columns of A, columns of V
        a = next_pairing(next_pairing(a, 1), 2)
        v = next_pairing(v, 2)
        perm = next_pairing(perm, 1)
        return a, v, perm

    def sweep(state):
        a, v, perm, count_ = state
        a, v, perm = fori_loop(0, size - 1, one_round, (a, v, perm))
        return a, v, perm, lax.add(count_, lax.full((), 1, np.int32))

    def not_converged(state):
        a, _, _, count_ = state
        worst = lax.reduce_max(_off_diagonal_ratio(a), (0,))
        return lax.bitwise_and(lax.lt(count_, lax.full((), _MAX_SWEEPS, np.int32)),
                               lax.gt(worst, lax.full((), tol, dtype(worst))))

    a, v, perm, _ = while_loop(not_converged, sweep, (a, v, positions,
                                                       lax.full((), 0, np.int32)))
    # back to the original order: position p holds index perm[p]
    inverse = _inverse_permutation(perm)
    rows = lax.broadcasted_iota(np.int32, (count, size, size), 1)
    cols = lax.broadcasted_iota(np.int32, (count, size, size), 2)
    diagonal = real(lax.reduce_sum(where(lax.eq(rows, cols), a, lax.full_like(a, 0)), (2,)))
    w = take_last(diagonal, inverse)
    v = mT_(take_rows(mT_(v), inverse))  # columns back in index order
    if size != n:
        w = lax.slice(w, (0, 0), (count, n))
        v = lax.slice(v, (0, 0, 0), (count, n, n))
    return w, v


def mT_(x):
    return mT(x)


def _const(value):
    return to_operand(np.asarray(value))


def _inverse_permutation(perm):
    """The inverse of (B, n) permutations, by a sort of (perm, iota)."""
    iota = lax.broadcasted_iota(np.int32, shape(perm), 1)
    _, inverse = lax.sort_key_val(perm, iota, dimension=1)
    return inverse


def _eigh_algorithm(x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    batch = shape(x)[:-2]
    n = shape(x)[-1]
    count = int(np.prod(batch)) if batch else 1
    lo, hi = _subset(subset_by_index, n)
    if n == 0 or count == 0:
        return [lax.full(batch + (n, hi - lo), 0, dtype(x)),
                lax.full(batch + (hi - lo,), 0, real_dtype(dtype(x)))]
    a = _hermitian_from_triangle(lax.reshape(x, (count, n, n)), lower)
    w, v = jacobi_eigh(a)
    order = lax.sort_key_val(w, lax.broadcasted_iota(np.int32, shape(w), 1), dimension=1)
    w, idx = order
    v = mT_(take_rows(mT_(v), idx))
    w = lax.slice(w, (0, lo), (count, hi))
    v = lax.slice(v, (0, 0, lo), (count, n, hi))
    return [lax.reshape(v, batch + (n, hi - lo)), lax.reshape(w, batch + (hi - lo,))]


def _eigh_jvp(primals, tangents, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    # Non-degenerate perturbation theory (Giles 2008), as JAX's rule: w' = diag(V^H A' V),
    # V' = V (F * (V^H A' V)) with F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it.
    (a,), (a_dot,) = primals, tangents
    n = shape(a)[-1]
    if subset_by_index is not None and tuple(subset_by_index) != (0, n):
        raise NotImplementedError("Derivatives not defined for partial eigen decomposition.")
    v, w_real = eigh_p.bind(symmetrize(a), lower=lower, sort_eigenvalues=sort_eigenvalues,
                            subset_by_index=subset_by_index, algorithm=algorithm)
    a_dot = instantiate(a_dot)
    w = convert_element_type(w_real, dtype(a))
    nb = len(shape(a)) - 2
    square = shape(a)
    eye = eye_like(lax.full(square, 0, dtype(a)))
    diff = lax.sub(bcast(w, square, tuple(range(nb)) + (nb + 1,)),
                   bcast(w, square, tuple(range(nb)) + (nb,)))
    f = lax.sub(lax.integer_pow(lax.add(eye, diff), -1), eye)
    vh_adot_v = matmul(matmul(mH(v), a_dot), v)
    v_dot = matmul(v, lax.mul(f, vh_adot_v))
    w_dot = real(_diagonal(vh_adot_v))
    return [v, w_real], [v_dot, w_dot]


def _diagonal(x):
    eye = eye_like(x)
    return lax.reduce_sum(where(lax.ne(eye, lax.full_like(eye, 0)), x, lax.full_like(x, 0)),
                          (len(shape(x)) - 1,))


eigh_p = Primitive("eigh", abstract_eval=_eigh_abstract_eval, impl=_eigh_impl,
                   lower=lower_via_lax(_eigh_algorithm, "eigh", multiple_results=True),
                   jvp=_eigh_jvp, transpose=NONLINEAR, batch=late_rule(batch_leading, "eigh"),
                   multiple_results=True)


def eigh(x, *, lower: bool = True, symmetrize_input: bool = True, sort_eigenvalues: bool = True,
         subset_by_index=None, algorithm=None):
    """Eigendecomposition of Hermitian matrices: ``x = v @ diag(w) @ v^H``.

    Parameters
    ----------
    x : array (..., n, n)
    lower : bool
        Read the lower (else upper) triangle of ``x``.
    symmetrize_input : bool
        Use ``(x + x^H) / 2`` (JAX's default; it makes derivatives symmetric).
    sort_eigenvalues : bool
        Eigenvalues come in ascending order (xjax always sorts them).
    subset_by_index : (lo, hi), optional
        Only the eigenpairs ``lo <= i < hi`` of the ascending order.

    Returns
    -------
    v : array (..., n, k)
        Eigenvectors in columns.
    w : real array (..., k)

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> v, w = lax.linalg.eigh(jnp.array([[2., 1.], [1., 2.]]))
    >>> w
    Array([1., 3.], dtype=float32)
    """
    x = to_operand(x)
    if symmetrize_input:
        x = symmetrize(x)
    if subset_by_index is not None:
        subset_by_index = tuple(int(i) for i in subset_by_index)
    v, w = eigh_p.bind(x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues),
                       subset_by_index=subset_by_index, algorithm=algorithm)
    return v, w

