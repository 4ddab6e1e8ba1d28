"""LU decomposition with partial pivoting (``lu``) and ``lu_pivots_to_permutation``.

``lu(a)`` gives ``lu`` (unit-lower ``L`` below the diagonal, ``U`` on and above), LAPACK's
0-based row ``pivots`` (row ``i`` was swapped with ``pivots[i]`` at step ``i``) and the
``permutation`` they make: ``a[..., permutation, :] == L @ U``.

Eagerly: LAPACK getrf through SciPy when present, else a blocked NumPy version of the same
algorithm. Under ``jit`` on the CPU: LAPACK getrf through an XLA FFI custom call (see
``_lu_lower``). Elsewhere under ``jit``: a right-looking blocked LU written with lax
(``_lu_blocked``): one loop over column blocks of fixed width, each block's panel factored
column by column, its row swaps applied to the rest, then one triangular solve and one
matmul update the trailing matrix. A 500x500 float32 LU (one thread) took 1.4 ms with
getrf, 22 ms compiled this way (0.7 s to compile; the per-column loop overhead dominates),
~30 ms with the NumPy fallback. A fully recursive version with static shapes ran as fast
but took 36 s to compile.
"""

from __future__ import annotations

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.avals import ShapedArray
from xjax._src.core.primitive import NONLINEAR, NOT_DIFFERENTIABLE, Primitive
from xjax._src.lax.ad_helpers import late_rule
from xjax._src.higher_order.linalg.common import (batch_leading, bcast, check_inexact,
                                                  check_lapack_dtype, constant, dtype, eye_like,
                                                  full, loop_index, lower_via_lax, matmul,
                                                  scipy_linalg, shape, slice_at, take_last,
                                                  take_rows, tril, triu, update_at, where)
from xjax._src.higher_order.linalg.triangular import triangular_solve
from xjax._src.core.ad_util import get_aval
from xjax._src.lowering.stablehlo import aval_type, dense_layout
from xjax._src.runtime import default_backend
from xjax._src.runtime.ffi import LU_TARGET
from xjax._src.runtime import ffi
from xjax._src.lax.ad_rules import Zero, instantiate, tangent_aval
from xjax._src.higher_order.linalg.common import per_matrix
from xjax._src.lax.operands import to_operand
from xjax._src import lax
from xjax._src.higher_order import fori_loop

# Width of the column blocks of the compiled LU (each factored one column at a time).
_PANEL = 32

# -- lu_pivots_to_permutation --


def _pivots_to_permutation_abstract_eval(pivots, *, permutation_size):
    if pivots.dtype != np.int32:
        raise TypeError("lu_pivots_to_permutation does not accept dtype "
                        f"{pivots.dtype.name} at position 0. Accepted dtypes at position 0 "
                        "are subtypes of int32.")
    if pivots.ndim < 1:
        raise ValueError("Argument to lu_pivots_to_permutation must have rank >= 1, got "
                         f"shape {pivots.shape}")
    if permutation_size < pivots.shape[-1]:
        raise ValueError(f"Output permutation size {permutation_size} has to exceed the "
                         "trailing dimension of the pivots. Got pivots size "
                         f"{pivots.shape[-1]}")
    return ShapedArray(pivots.shape[:-1] + (permutation_size,), np.dtype(np.int32))


def _pivots_to_permutation_impl(pivots, *, permutation_size):
    pivots = np.asarray(pivots)
    batch = pivots.shape[:-1]
    flat_piv = pivots.reshape(-1, pivots.shape[-1]).tolist()
    out = np.empty((len(flat_piv), permutation_size), np.int32)
    for b, piv in enumerate(flat_piv):  # Python swaps: ~50x faster than NumPy indexing here
        perm = list(range(permutation_size))
        for i, j in enumerate(piv):
            # Out-of-range pivots leave the permutation alone, as JAX's kernel does.
            if 0 <= j < permutation_size:
                perm[i], perm[j] = perm[j], perm[i]
        out[b] = perm
    return out.reshape(batch + (permutation_size,))


def _pivots_to_permutation_algorithm(pivots, *, permutation_size):
    lead_shape = shape(pivots)[:-1]
    perm_shape = lead_shape + (permutation_size,)
    positions = lax.broadcasted_iota(np.int32, perm_shape, len(perm_shape) - 1)

    def swap(i, perm):
        i = loop_index(i)
        j = lax.squeeze(slice_at(pivots, i, 1, len(lead_shape)),
                        (len(lead_shape),))
        ok = lax.bitwise_and(lax.ge(j, full(shape(j), 0, np.int32)),
                             lax.lt(j, full(shape(j), permutation_size, np.int32)))
        j = where(ok, j, bcast(i, shape(j), ()))
        at_i = take_last(perm, bcast(i, lead_shape + (1,), ()))
        at_j = take_last(perm, lax.expand_dims(j, (len(lead_shape),)))
        is_i = lax.eq(positions, bcast(i, perm_shape, ()))
        is_j = lax.eq(positions, bcast(j, perm_shape, tuple(range(len(lead_shape)))))
        full_i = bcast(lax.squeeze(at_i, (len(lead_shape),)), perm_shape,
                       tuple(range(len(lead_shape))))
        full_j = bcast(lax.squeeze(at_j, (len(lead_shape),)), perm_shape,
                       tuple(range(len(lead_shape))))
        return where(is_i, full_j, where(is_j, full_i, perm))

    return fori_loop(0, shape(pivots)[-1], swap, positions)


lu_pivots_to_permutation_p = Primitive(
    "lu_pivots_to_permutation", abstract_eval=_pivots_to_permutation_abstract_eval,
    impl=_pivots_to_permutation_impl,
    lower=lower_via_lax(_pivots_to_permutation_algorithm, "lu_pivots_to_permutation"),
    jvp=NOT_DIFFERENTIABLE, transpose=NONLINEAR,
    batch=late_rule(batch_leading, "lu_pivots_to_permutation"))


def lu_pivots_to_permutation(pivots, permutation_size: int):
    """The permutation made by applying LAPACK-style row swaps ``pivots`` (..., k) to
    ``range(permutation_size)``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.linalg.lu_pivots_to_permutation(jnp.array([2, 2, 2], jnp.int32), 3)
    Array([2, 0, 1], dtype=int32)
    """
    return lu_pivots_to_permutation_p.bind(to_operand(pivots),
                                           permutation_size=int(permutation_size))


# -- lu --


def _lu_abstract_eval(a):
    check_inexact("lu", a.dtype)
    if a.ndim < 2:
        raise TypeError(f"Input 0 to lu must have rank at least 2, but got shape={a.shape}")
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    return [ShapedArray(a.shape, a.dtype), ShapedArray(batch + (min(m, n),), np.dtype(np.int32)),
            ShapedArray(batch + (m,), np.dtype(np.int32))]


def _lu_impl(a):
    check_lapack_dtype(a.dtype)
    a = np.asarray(a)
    m, n = a.shape[-2:]
    scipy = scipy_linalg()
    kernel = _lu_scipy(scipy) if scipy is not None else lu_numpy
    if a.size == 0:
        lu = a.copy()
        pivots = np.zeros(a.shape[:-2] + (min(m, n),), np.int32)
    else:
        lu, pivots = per_matrix(kernel, [a], [2], 2)
    perm = _pivots_to_permutation_impl(pivots.astype(np.int32), permutation_size=m)
    return [lu.astype(a.dtype, copy=False), pivots.astype(np.int32), perm]


def _lu_scipy(scipy):
    def kernel(a):
        (getrf,) = scipy.get_lapack_funcs(("getrf",), (a,))
        lu, piv, _ = getrf(a, overwrite_a=False)
        return lu, piv
    return kernel


def lu_numpy(a, block: int = 64):
    """LAPACK's getrf for one matrix in NumPy: right-looking blocked LU with partial pivoting
    (row swaps applied to whole rows). Returns (lu, pivots)."""
    a = np.array(a, copy=True)
    m, n = a.shape
    k = min(m, n)
    pivots = np.zeros(k, np.int32)
    with np.errstate(all="ignore"):
        for j0 in range(0, k, block):
            j1 = min(j0 + block, k)
            for j in range(j0, j1):
                column = a[j:, j]
                if np.iscomplexobj(column):  # BLAS i?amax: |Re| + |Im|
                    column = np.abs(column.real) + np.abs(column.imag)
                p = j + int(np.argmax(np.abs(column)))
                pivots[j] = p
                if p != j:
                    a[[j, p], :] = a[[p, j], :]
                if a[j, j] != 0:
                    a[j + 1:, j] /= a[j, j]
                a[j + 1:, j + 1:j1] -= np.outer(a[j + 1:, j], a[j, j + 1:j1])
            if j1 < n:
                unit_lower = np.tril(a[j0:j1, j0:j1], -1) + np.eye(j1 - j0, dtype=a.dtype)
                a[j0:j1, j1:] = np.linalg.solve(unit_lower, a[j0:j1, j1:])
                a[j1:, j1:] -= a[j1:, j0:j1] @ a[j0:j1, j1:]
    return a, pivots


# -- the compiled algorithm --


def _lu_algorithm(a):
    batch = shape(a)[:-2]
    m, n = shape(a)[-2:]
    count = int(np.prod(batch)) if batch else 1
    x = lax.reshape(a, (count, m, n))
    if m == 0 or n == 0:
        lu, pivots = x, lax.full((count, 0), 0, np.int32)
        perm = lax.broadcasted_iota(np.int32, (count, m), 1)
    else:
        lu, pivots, perm = _lu_blocked(x)
    return [lax.reshape(lu, batch + (m, n)),
            lax.reshape(pivots, batch + (min(m, n),)),
            lax.reshape(perm, batch + (m,))]


def _lu_blocked(a):
    """Right-looking blocked LU of (B, m, n) in one loop over column blocks of fixed width,
    so the program (and its compile time: ~1 s) does not grow with the matrix. The matrix
    is zero-padded to a whole number of blocks; each block's panel is factored column by
    column (an inner loop), its row swaps applied to the other columns, ``U12`` found by a
    unit-lower triangular solve and the trailing matrix updated by one masked matmul."""
    count, m, n = shape(a)
    dt = dtype(a)
    k = min(m, n)
    nb = min(_PANEL, k)
    blocks = -(-k // nb)
    size_k = blocks * nb
    rows_p, cols_p = max(m, size_k), max(n, size_k)
    x = lax.pad(a, constant(0, dt), ((0, 0, 0), (0, rows_p - m, 0), (0, cols_p - n, 0)))
    row_ids = lax.broadcasted_iota(np.int32, (count, rows_p, cols_p), 1)
    col_ids = lax.broadcasted_iota(np.int32, (count, rows_p, cols_p), 2)

    def block(b, state):
        b = loop_index(b)
        x, pivots, perm = state
        j0 = lax.mul(b, constant(nb, np.int32))
        panel = slice_at(x, j0, nb, 2)
        panel, pivots, block_perm = _factor_panel(panel, j0, k, pivots)
        x = update_at(take_rows(x, block_perm), panel, j0, 2)
        perm = take_last(perm, block_perm)
        end = bcast(lax.add(j0, constant(nb, np.int32)), shape(x), ())
        # U12 = L11^-1 A12 for the block's rows (those below k are padding)
        l11 = slice_at(panel, j0, nb, 1)
        a12 = slice_at(x, j0, nb, 1)
        u12 = triangular_solve(l11, a12, left_side=True, lower=True, unit_diagonal=True)
        u_rows = lax.add(lax.broadcasted_iota(np.int32, shape(u12), 1),
                         bcast(j0, shape(u12), ()))
        u_cols = lax.broadcasted_iota(np.int32, shape(u12), 2)
        u_end = bcast(lax.add(j0, constant(nb, np.int32)), shape(u12), ())
        keep = lax.bitwise_and(lax.lt(u_rows, full(shape(u12), k, np.int32)),
                               lax.ge(u_cols, u_end))
        u12 = where(keep, u12, full(shape(u12), 0, dt))
        x = update_at(x, where(keep, u12, a12), j0, 1)
        # trailing update of rows and columns past the block
        l21 = where(lax.ge(lax.broadcasted_iota(np.int32, shape(panel), 1),
                           bcast(lax.add(j0, constant(nb, np.int32)), shape(panel), ())),
                    panel, full(shape(panel), 0, dt))
        trailing = lax.bitwise_and(lax.ge(row_ids, end), lax.ge(col_ids, end))
        x = where(trailing, lax.sub(x, matmul(l21, u12)), x)
        return x, pivots, perm

    init = (x, full((count, size_k), 0, np.int32),
            lax.broadcasted_iota(np.int32, (count, rows_p), 1))
    x, pivots, perm = fori_loop(0, blocks, block, init)
    return (lax.slice(x, (0, 0, 0), (count, m, n)), lax.slice_in_dim(pivots, 0, k, 1, 1),
            lax.slice_in_dim(perm, 0, m, 1, 1))


def _pivot_magnitude(x):
    """BLAS i?amax's measure: |x| for reals, |Re x| + |Im x| for complex numbers."""
    if dtypes.is_complex(dtype(x)):
        return lax.add(lax.abs(lax.real(x)), lax.abs(lax.imag(x)))
    return lax.abs(x)


def _factor_panel(panel, j0, k, pivots):
    """Unblocked LU of the panel (B, rows, nb) whose first column is column ``j0``: steps
    ``j = j0 + c`` below ``k`` pivot among rows ``>= j``, swap rows of the panel, scale the
    column and update the panel's columns to the right. Returns the panel, the pivots and
    the block's row permutation. Rows and columns are picked with masks and sums rather than
    dynamic slices or gathers: each loop step is then a few fused kernels (about 4x faster
    on the CPU than the sliced form)."""
    count, rows, nb = shape(panel)
    dt = dtype(panel)
    shape3 = (count, rows, nb)
    row_ids = lax.broadcasted_iota(np.int32, (count, rows), 1)
    row_ids3 = lax.broadcasted_iota(np.int32, shape3, 1)
    col_ids3 = lax.broadcasted_iota(np.int32, shape3, 2)
    piv_ids = lax.broadcasted_iota(np.int32, shape(pivots), 1)
    zeros3 = full(shape3, 0, dt)

    def pick(mask, values, axis):
        """The entries of ``values`` where ``mask`` holds, summed over ``axis`` (one per
        slice: an exact selection)."""
        return lax.reduce_sum(where(mask, values, zeros3), (axis,))

    def step(c, state):
        c = loop_index(c)
        p, pivots, block_perm = state
        j = lax.add(j0, c)
        active = bcast(lax.lt(j, constant(k, np.int32)), (count,), ())
        j_b = bcast(j, shape3, ())
        col = pick(lax.eq(col_ids3, bcast(c, shape3, ())), p, 2)
        magnitude = _pivot_magnitude(col)
        candidates = where(lax.ge(row_ids, bcast(j, (count, rows), ())), magnitude,
                           full(shape(magnitude), -1, dtype(magnitude)))
        piv = where(active, lax.argmax(candidates, 1, np.int32), bcast(j, (count,), ()))
        is_j = lax.eq(row_ids3, j_b)
        is_p = lax.eq(row_ids3, bcast(piv, shape3, (0,)))
        row_j = bcast(pick(is_j, p, 1), shape3, (0, 2))
        row_p = bcast(pick(is_p, p, 1), shape3, (0, 2))
        p = where(is_j, row_p, where(is_p, row_j, p))
        is_j2 = lax.eq(row_ids, bcast(j, (count, rows), ()))
        is_p2 = lax.eq(row_ids, bcast(piv, (count, rows), (0,)))
        zero_rows = full((count, rows), 0, np.int32)
        perm_j = bcast(lax.reduce_sum(where(is_j2, block_perm, zero_rows), (1,)),
                       (count, rows), (0,))
        perm_p = bcast(lax.reduce_sum(where(is_p2, block_perm, zero_rows), (1,)),
                       (count, rows), (0,))
        block_perm = where(is_j2, perm_p, where(is_p2, perm_j, block_perm))
        pivots = where(lax.eq(piv_ids, bcast(j, shape(pivots), ())),
                       bcast(piv, shape(pivots), (0,)), pivots)
        # scale below the pivot (not by a zero pivot, as getrf) and update to the right
        is_c = lax.eq(col_ids3, bcast(c, shape3, ()))
        pivot_row = pick(is_j, p, 1)  # (count, nb): the pivot row after the swap
        pivot = lax.reduce_sum(where(lax.eq(lax.broadcasted_iota(np.int32, (count, nb), 1),
                                            bcast(c, (count, nb), ())),
                                     pivot_row, full((count, nb), 0, dt)), (1,))
        pivot = where(lax.eq(pivot, full(shape(pivot), 0, dt)), full(shape(pivot), 1, dt),
                      pivot)
        col = pick(is_c, p, 2)
        below = lax.bitwise_and(lax.gt(row_ids3, j_b), bcast(active, shape3, (0,)))
        lcol = lax.div(bcast(col, shape3, (0, 1)), bcast(pivot, shape3, (0,)))
        urow = bcast(pivot_row, shape3, (0, 2))
        right = lax.gt(col_ids3, bcast(c, shape3, ()))
        updated = lax.sub(p, lax.mul(lcol, urow))
        p = where(below, where(is_c, lcol, where(right, updated, p)), p)
        return p, pivots, block_perm

    init = (panel, pivots, row_ids)
    return fori_loop(0, nb, step, init)


# -- derivative --


def _lu_jvp(primals, tangents):
    # P A = L U  =>  L^-1 P A' U^-1 = L^-1 L' + U' U^-1: split its strictly lower part (L's)
    # from its upper part (U's); non-square factors are padded to square with identity
    # blocks (de Hoog, Anderssen and Lukas), as JAX's rule.
    (a,), (a_dot,) = primals, tangents
    lu, pivots, perm = lu_p.bind(a)
    zero_int = [Zero(tangent_aval(get_aval(pivots))), Zero(tangent_aval(get_aval(perm)))]
    if type(a_dot) is Zero:
        return [lu, pivots, perm], [Zero(tangent_aval(get_aval(lu)))] + zero_int
    a_dot = instantiate(a_dot)
    m, n = shape(a)[-2:]
    k = min(m, n)
    nb = len(shape(a)) - 2
    no_pad = [(0, 0, 0)] * nb
    zero = constant(0, dtype(a))
    x = take_rows(a_dot, perm)
    l_part = lax.pad(tril(lax.slice_in_dim(lu, 0, k, 1, nb + 1), -1), zero,
                     no_pad + [(0, 0, 0), (0, m - k, 0)])
    lower = lax.add(l_part, eye_like(l_part))
    u_part = lax.pad(triu(lax.slice_in_dim(lu, 0, k, 1, nb)), zero,
                     no_pad + [(0, n - k, 0), (0, 0, 0)])
    upper = u_part
    if n > k:  # identity in the bottom-right (n - k) block
        below_k = lax.ge(lax.broadcasted_iota(np.int32, shape(u_part), nb),
                         full(shape(u_part), k, np.int32))
        upper = lax.add(u_part, where(below_k, eye_like(u_part), lax.full_like(u_part, 0)))
    la = triangular_solve(lower, x, left_side=True, lower=True, unit_diagonal=True)
    lau = triangular_solve(upper, la, left_side=False, lower=False)
    lu_dot = lax.add(matmul(lower, tril(lau, -1)), matmul(triu(lau), upper))
    return [lu, pivots, perm], [lu_dot] + zero_int


# -- lowering: LAPACK through an XLA FFI custom call on the CPU, else the lax algorithm --
#
# Measured on this 2-core machine, float32 500x500, OPENBLAS_NUM_THREADS=1 (the machine was
# loaded, and multithreaded OpenBLAS then stalls at random for 100+ ms in every library),
# medians of 40: jit(lu) with LAPACK sgetrf from NumPy's bundled OpenBLAS called from C by
# the xjax_lapack_getrf FFI handler 1.22 ms; SciPy's lu_factor 1.14 ms; jit(lu) as a Python
# pure_callback to SciPy 1.33 ms; JAX's jit(lu) 1.44 ms; the lax algorithm above 27 ms.
# jit(solve) 2.33 ms against JAX's 2.15 ms and NumPy's 2.10 ms; with triangular_solve also on
# BLAS (trsm, linalg_triangular.py) 1.6-2.0 ms against JAX's 2.2-2.4 ms. The Python callback is
# nearly as fast, but needs SciPy (only a test extra here) and the GIL; the C handler needs
# neither. So under jit on the CPU we call LAPACK from C (xjax/runtime/_pjrt_ffi.c), and
# keep the lax algorithm for other platforms, for dtypes LAPACK lacks, and when NumPy's
# OpenBLAS is not found (a NumPy built against another BLAS).

_LAPACK_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.complex64,
                                                 np.complex128))
_lu_lower_lax = lower_via_lax(_lu_algorithm, "lu", multiple_results=True)


def _lapack_lu_available(aval) -> bool:
    if aval.dtype not in _LAPACK_DTYPES or 0 in aval.shape:
        return False
    return default_backend() == "cpu" and LU_TARGET in ffi.ffi_targets("cpu")


def _lu_lower(ctx, a):
    (aval,) = ctx.avals_in
    if not _lapack_lu_available(aval):
        return _lu_lower_lax(ctx, a)
    rank = len(aval.shape)
    # LAPACK's column-major matrices, batch dims outermost; XLA transposes for us.
    matrix = dense_layout([rank - 2, rank - 1, *range(rank - 3, -1, -1)])
    vector = dense_layout(list(range(rank - 2, -1, -1)))
    attrs = {"call_target_name": f'"{LU_TARGET}"', "api_version": "4 : i32",
             "backend_config": "{}", "operand_layouts": f"[{matrix}]",
             "result_layouts": f"[{matrix}, {vector}, {vector}]"}
    return ctx.builder.op("stablehlo.custom_call", [a],
                          [aval_type(o) for o in ctx.avals_out], attrs)


lu_p = Primitive("lu", abstract_eval=_lu_abstract_eval, impl=_lu_impl,
                 lower=_lu_lower,
                 jvp=_lu_jvp, transpose=NONLINEAR, batch=late_rule(batch_leading, "lu"),
                 multiple_results=True)


def lu(x):
    """LU decomposition with partial pivoting of (batches of) matrices.

    Returns
    -------
    lu : array (..., m, n)
        ``L`` (unit diagonal, not stored) below the diagonal and ``U`` on and above it.
    pivots : int32 array (..., min(m, n))
        Row ``i`` was swapped with row ``pivots[i]`` at step ``i``.
    permutation : int32 array (..., m)
        ``x[..., permutation, :] == L @ U``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lu, pivots, perm = lax.linalg.lu(jnp.array([[1., 2.], [3., 4.]]))
    >>> perm
    Array([1, 0], dtype=int32)
    """
    lu_, pivots, perm = lu_p.bind(to_operand(x))
    return lu_, pivots, perm
