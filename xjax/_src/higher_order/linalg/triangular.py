"""``cholesky`` and ``triangular_solve``: lowered to XLA's own operations
(https://openxla.org/stablehlo/spec#cholesky, #triangular_solve); eagerly LAPACK's potrf
(NumPy) and trtrs (SciPy when present, else NumPy's general solver on the triangle)."""

from __future__ import annotations

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.avals import ShapedArray
from xjax._src.core.primitive import NONLINEAR, Primitive
from xjax._src.lax.ad_helpers import late_rule
from xjax._src.lax.ad_rules import jvp_by_parts, transpose_by_parts
from xjax._src.higher_order.linalg.common import (batch_leading, check_inexact, check_lapack_dtype,
                                                  check_matrix, dtype, eye_like, full, matmul,
                                                  real_dtype, scipy_linalg, shape, tril, triu)
from xjax._src.lax.naryop import Emitter
from xjax._src.lowering.stablehlo import aval_type, dense_layout, tensor_type
from xjax._src.runtime import default_backend, ffi
from xjax._src.runtime.ffi import TRSM_TARGET
from xjax._src.lax.ad_rules import Zero, instantiate
from xjax._src.lax.elementwise import mul, neg, sub
from xjax._src.higher_order.linalg.common import conj, mT, per_matrix, symmetrize
from xjax._src.lax.operands import to_operand
from xjax._src.lax.shape import expand_dims, squeeze

# -- cholesky --


def _cholesky_abstract_eval(x):
    check_inexact("cholesky", x.dtype)
    check_matrix("cholesky", x, square=True)
    return ShapedArray(x.shape, x.dtype)


def _cholesky_impl(x):
    """The lower Cholesky factor (zeros above); all NaN for a matrix that is not positive
    definite, as JAX's CPU kernel returns. Only the lower triangle of ``x`` is read."""
    check_lapack_dtype(x.dtype)
    x = np.asarray(x)
    try:
        return np.linalg.cholesky(x).astype(x.dtype, copy=False)
    except np.linalg.LinAlgError:
        pass
    out = np.empty_like(x)
    flat_in, flat_out = x.reshape((-1,) + x.shape[-2:]), out.reshape((-1,) + x.shape[-2:])
    for i in range(flat_in.shape[0]):
        try:
            flat_out[i] = np.linalg.cholesky(flat_in[i])
        except np.linalg.LinAlgError:
            flat_out[i] = np.nan
    return out


def _cholesky_lower(ctx, x):
    """stablehlo.cholesky, then JAX's CPU conventions: zeros above the diagonal, and all NaN
    for a matrix whose factor has a non-finite diagonal (not positive definite)."""
    aval = ctx.avals_in[0]
    check_lapack_dtype(aval.dtype)
    b = ctx.builder
    full_shape, n = aval.shape, aval.ndim
    e = Emitter(ctx, full_shape)
    factor = b.op1("stablehlo.cholesky", [x], aval_type(aval), {"lower": "true"})
    rows = e.op("stablehlo.iota", [], np.int32, {"iota_dimension": n - 2})
    cols = e.op("stablehlo.iota", [], np.int32, {"iota_dimension": n - 1})
    lower = e.compare(rows, cols, "GE", "SIGNED")
    diagonal = e.compare(rows, cols, "EQ", "SIGNED")
    factor = e.select(lower, factor, e.const(0, aval.dtype), aval.dtype)
    real = factor
    if dtypes.is_complex(aval.dtype):
        real = e.op("stablehlo.real", [factor], real_dtype(aval.dtype))
    on_diagonal = e.select(diagonal, real, e.const(1, real_dtype(aval.dtype)),
                           real_dtype(aval.dtype))
    finite = e.op("stablehlo.is_finite", [on_diagonal], np.bool_)
    batch_shape = full_shape[:-2]
    init = b.constant(np.asarray(True))
    scalar = tensor_type((), np.bool_)
    region = b.region([scalar, scalar], lambda fb, args: [
        fb.op1("stablehlo.and", list(args), scalar)])
    all_finite = b.op1("stablehlo.reduce", [finite, init], tensor_type(batch_shape, np.bool_),
                       {"dimensions": f"array<i64: {n - 2}, {n - 1}>"}, regions=[region])
    ok = b.op1("stablehlo.broadcast_in_dim", [all_finite], e.type(np.bool_),
               {"broadcast_dimensions": "array<i64" + (": " + ", ".join(
                   str(i) for i in range(n - 2)) if n > 2 else "") + ">"})
    return e.select(ok, factor, e.const(np.nan, aval.dtype), aval.dtype)


def _cholesky_jvp(primals, tangents):
    # L' = L phi(L^-1 A' L^-H), phi: the lower triangle with the diagonal halved
    # (Murray 2016, https://arxiv.org/abs/1602.07527), as JAX's rule.
    (x,), (x_dot,) = primals, tangents
    factor = cholesky_p.bind(x)
    if type(x_dot) is Zero:
        return factor, x_dot
    x_dot = instantiate(x_dot)
    right = triangular_solve(factor, x_dot, left_side=False, lower=True, transpose_a=True,
                             conjugate_a=True)
    inner = triangular_solve(factor, right, left_side=True, lower=True)
    halves = eye_like(inner)
    weights = full(shape(inner), 1, dtype(inner))
    weights = sub(weights, mul(halves, full((), 0.5, dtype(inner))))
    return factor, matmul(factor, mul(tril(inner), weights))


cholesky_p = Primitive("cholesky", abstract_eval=_cholesky_abstract_eval, impl=_cholesky_impl,
                       lower=_cholesky_lower, jvp=_cholesky_jvp, transpose=NONLINEAR,
                       batch=late_rule(batch_leading, "cholesky"))


def cholesky(x, *, symmetrize_input: bool = True):
    """Cholesky factor ``L`` (lower triangular, ``L @ L^H = x``) of Hermitian positive
    definite matrices; NaN where ``x`` is not positive definite.

    Parameters
    ----------
    x : array (..., n, n)
    symmetrize_input : bool
        Use ``(x + x^H) / 2``, which makes the derivative symmetric (JAX's default).
    """
    x = to_operand(x)
    if symmetrize_input:
        x = symmetrize(x)
    return tril(cholesky_p.bind(x))


# -- triangular_solve --


def _triangular_solve_abstract_eval(a, b, *, left_side, lower, transpose_a, conjugate_a,
                                    unit_diagonal):
    check_inexact("triangular_solve", a.dtype, 0)
    check_inexact("triangular_solve", b.dtype, 1)
    if a.dtype != b.dtype:
        raise TypeError("lax.triangular_solve requires arguments to have the same dtypes, "
                        f"got {a.dtype.name}, {b.dtype.name}.")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError("The first input to triangular_solve must be a square matrix. Got "
                         f"shape {a.shape}.")
    if b.ndim < 2:
        raise ValueError("The second input to triangular_solve must have rank at least 2. "
                         f"Got shape {b.shape}.")
    common = b.shape[-2] if left_side else b.shape[-1]
    if a.shape[-1] != common:
        raise ValueError("Incompatible shapes for arguments to triangular_solve: "
                         f"{a.shape} and {b.shape}.")
    if a.shape[:-2] != b.shape[:-2]:
        raise ValueError("Incompatible batch shapes for arguments to triangular_solve: "
                         f"{a.shape} and {b.shape}.")
    return ShapedArray(b.shape, b.dtype)


def _effective_matrix(a, lower, transpose_a, conjugate_a, unit_diagonal):
    """The matrix the solve uses: one triangle of ``a`` (unit diagonal if asked), then
    conjugated and/or transposed."""
    m = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        idx = np.arange(a.shape[-1])
        m[..., idx, idx] = 1
    if conjugate_a:
        m = np.conj(m)
    if transpose_a:
        m = np.swapaxes(m, -1, -2)
    return m


def _triangular_solve_impl(a, b, *, left_side, lower, transpose_a, conjugate_a,
                           unit_diagonal):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype in (np.float16, dtypes.bfloat16):  # XLA solves these in float32
        return _triangular_solve_impl(a.astype(np.float32), b.astype(np.float32),
                                      left_side=left_side, lower=lower,
                                      transpose_a=transpose_a, conjugate_a=conjugate_a,
                                      unit_diagonal=unit_diagonal).astype(b.dtype)
    if not left_side:  # X op(A) = B  <=>  op(A)^T X^T = B^T
        out = _triangular_solve_impl(a, np.swapaxes(b, -1, -2), left_side=True, lower=lower,
                                     transpose_a=not transpose_a, conjugate_a=conjugate_a,
                                     unit_diagonal=unit_diagonal)
        return np.ascontiguousarray(np.swapaxes(out, -1, -2))
    if a.size == 0 or b.size == 0:
        return np.zeros(b.shape, b.dtype)
    scipy = scipy_linalg()
    if scipy is not None:
        trans = (2 if conjugate_a else 1) if transpose_a else 0
        a_used = np.conj(a) if conjugate_a and not transpose_a else a

        def kernel(m, rhs):
            try:
                return (scipy.solve_triangular(m, rhs, trans=trans, lower=lower,
                                               unit_diagonal=unit_diagonal, check_finite=False),)
            except np.linalg.LinAlgError:  # a zero on the diagonal: divide through, as trsm
                # (m is already conjugated when conjugate_a comes without transpose_a)
                effective = _effective_matrix(m, lower, transpose_a,
                                              conjugate_a and transpose_a, unit_diagonal)
                return (_substitution(effective, rhs, lower != transpose_a),)
        (out,) = _per_matrix_pairs(kernel, a_used, b)
        return out.astype(b.dtype, copy=False)
    m = _effective_matrix(a, lower, transpose_a, conjugate_a, unit_diagonal)
    with np.errstate(all="ignore"):
        try:
            return np.linalg.solve(m, b).astype(b.dtype, copy=False)
        except np.linalg.LinAlgError:  # a zero on the diagonal: divide through as trtrs does
            return _substitution(m, b, lower != transpose_a).astype(b.dtype, copy=False)


def _per_matrix_pairs(kernel, a, b):
    return per_matrix(kernel, [a, b], [2, 2], 1)


def _substitution(m, b, lower: bool):
    """Forward/back substitution, one row at a time (singular triangles give inf/NaN as
    LAPACK's trsm does)."""
    n = m.shape[-1]
    x = np.zeros(np.broadcast_shapes(m.shape[:-2], b.shape[:-2]) + b.shape[-2:],
                 np.result_type(m, b))
    order = range(n) if lower else range(n - 1, -1, -1)
    for i in order:
        acc = b[..., i, :] - np.einsum("...j,...jk->...k", m[..., i, :], x)
        x[..., i, :] = acc / m[..., i, i][..., None]
    return x


_TRANSPOSE_ATTR = {(False, False): "NO_TRANSPOSE", (True, False): "TRANSPOSE",
                   (True, True): "ADJOINT", (False, True): "NO_TRANSPOSE"}


def _blas_trsm_lower(ctx, a, b, *, left_side, lower, transpose_a, conjugate_a,
                     unit_diagonal):
    """BLAS ?trsm through the xjax_blas_trsm FFI custom call on the CPU (JAX calls LAPACK's
    trsm there too; XLA's own expansion took 0.4 ms for a 500x500 solve of one column, BLAS
    well under 0.1 ms), or None where it does not apply."""
    aval, b_aval = ctx.avals_in
    complex_a = dtypes.is_complex(aval.dtype)
    if (conjugate_a and not transpose_a and complex_a) or 0 in b_aval.shape or \
            len(aval.shape) != len(b_aval.shape):
        return None
    from xjax._src.higher_order.linalg.lu import _LAPACK_DTYPES  # lu imports this module
    if aval.dtype not in _LAPACK_DTYPES:
        return None
    if default_backend() != "cpu" or TRSM_TARGET not in ffi.ffi_targets("cpu"):
        return None
    rank = len(aval.shape)
    layout = dense_layout([rank - 2, rank - 1, *range(rank - 3, -1, -1)])
    trans = 0 if not transpose_a else 2 if conjugate_a and complex_a else 1
    config = (f"{{left = {int(bool(left_side))} : i64, lower = {int(bool(lower))} : i64, "
              f"trans = {trans} : i64, unit = {int(bool(unit_diagonal))} : i64}}")
    attrs = {"call_target_name": f'"{TRSM_TARGET}"', "api_version": "4 : i32",
             "backend_config": config, "operand_layouts": f"[{layout}, {layout}]",
             "result_layouts": f"[{layout}]"}
    return ctx.builder.op1("stablehlo.custom_call", [a, b], aval_type(ctx.avals_out[0]), attrs)


def _triangular_solve_lower(ctx, a, b, *, left_side, lower, transpose_a, conjugate_a,
                            unit_diagonal):
    blas = _blas_trsm_lower(ctx, a, b, left_side=left_side, lower=lower,
                            transpose_a=transpose_a, conjugate_a=conjugate_a,
                            unit_diagonal=unit_diagonal)
    if blas is not None:
        return blas
    aval = ctx.avals_in[0]
    builder = ctx.builder
    if conjugate_a and not transpose_a and dtypes.is_complex(aval.dtype):
        a = _conj(builder, a, aval)  # XLA's attribute has no plain conjugate
    attrs = {"left_side": str(bool(left_side)).lower(), "lower": str(bool(lower)).lower(),
             "unit_diagonal": str(bool(unit_diagonal)).lower(),
             "transpose_a": f"#stablehlo<transpose {_TRANSPOSE_ATTR[transpose_a, conjugate_a]}>"}
    out_aval = ctx.avals_out[0]
    if ctx.module.platform == "gpu" and aval.dtype == np.float16:
        # XLA's GPU backend solves with cuBLAS, which has no float16 solve ("Invalid type
        # for triangular solve"): solve in float32 and round once.
        wide = [builder.op1("stablehlo.convert", [v], aval_type(av.update(dtype=np.float32)))
                for v, av in ((a, aval), (b, ctx.avals_in[1]))]
        x = builder.op1("stablehlo.triangular_solve", wide,
                        aval_type(out_aval.update(dtype=np.float32)), attrs)
        return builder.op1("stablehlo.convert", [x], aval_type(out_aval))
    return builder.op1("stablehlo.triangular_solve", [a, b], aval_type(out_aval), attrs)


def _conj(builder, x, aval):
    """Complex conjugate as XLA's frontends write it: complex(real(x), -imag(x))."""
    real_type = tensor_type(aval.shape, real_dtype(aval.dtype))
    re = builder.op1("stablehlo.real", [x], real_type)
    im = builder.op1("stablehlo.imag", [x], real_type)
    neg = builder.op1("stablehlo.negate", [im], real_type)
    return builder.op1("stablehlo.complex", [re, neg], aval_type(aval))


def _triangular_solve_jvp_a(a_dot, ans, a, b, *, left_side, lower, transpose_a, conjugate_a,
                            unit_diagonal):
    # op(A) X = B  =>  op(A') X + op(A) X' = 0  =>  X' = -op(A)^-1 op(A') X (left side), and
    # X' = -X op(A') op(A)^-1 (right side). The solve and the product are ordered to keep
    # the cheaper shapes, as JAX's rule does.
    k = 1 if unit_diagonal else 0
    a_dot = tril(a_dot, -k) if lower else triu(a_dot, k)
    a_dot = neg(a_dot)
    if transpose_a:
        a_dot = mT(a_dot)
    if conjugate_a:
        a_dot = conj(a_dot)

    def solve(rhs):
        return triangular_solve(a, rhs, left_side=left_side, lower=lower,
                                transpose_a=transpose_a, conjugate_a=conjugate_a,
                                unit_diagonal=unit_diagonal)
    m, n = shape(b)[-2:]
    if left_side:
        return solve(matmul(a_dot, ans)) if m > n else matmul(solve(a_dot), ans)
    return solve(matmul(ans, a_dot)) if m < n else matmul(ans, solve(a_dot))


def _triangular_solve_jvp_b(b_dot, ans, a, b, **params):
    return triangular_solve_p.bind(a, b_dot, **params)


def _triangular_solve_transpose_b(ct, a, b, *, left_side, lower, transpose_a, conjugate_a,
                                  unit_diagonal):
    # The transpose (not the adjoint) of op(A)^-1 is (op(A)^T)^-1: flip transpose_a only.
    return triangular_solve_p.bind(a, instantiate(ct), left_side=left_side, lower=lower,
                                   transpose_a=not transpose_a, conjugate_a=conjugate_a,
                                   unit_diagonal=unit_diagonal)


triangular_solve_p = Primitive(
    "triangular_solve", abstract_eval=_triangular_solve_abstract_eval,
    impl=_triangular_solve_impl, lower=_triangular_solve_lower,
    jvp=late_rule(lambda p: jvp_by_parts(p, _triangular_solve_jvp_a, _triangular_solve_jvp_b),
                  "triangular_solve"),
    transpose=transpose_by_parts(None, _triangular_solve_transpose_b),
    batch=late_rule(batch_leading, "triangular_solve"))


def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False):
    """Solve ``op(a) @ x = b`` (``left_side``) or ``x @ op(a) = b`` for triangular ``a``.

    Parameters
    ----------
    a : array (..., m, m)
        Only its lower (``lower``) or upper triangle is read; with ``unit_diagonal`` its
        diagonal is taken as ones.
    b : array (..., m, n) if ``left_side`` else (..., n, m)
    transpose_a, conjugate_a : bool
        ``op(a)`` is ``a``, ``a^T``, ``conj(a)`` or ``a^H``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.linalg.triangular_solve(jnp.array([[2., 0.], [1., 1.]]), jnp.array([[2.], [3.]]),
    ...                             left_side=True, lower=True)
    Array([[1.],
           [2.]], dtype=float32)
    """
    a, b = to_operand(a), to_operand(b)
    if len(b.shape) == len(a.shape) - 1:  # a vector right-hand side, as JAX accepts
        axis = len(b.shape) if left_side else len(b.shape) - 1
        out = triangular_solve(a, expand_dims(b, (axis,)), left_side=left_side, lower=lower,
                               transpose_a=transpose_a, conjugate_a=conjugate_a,
                               unit_diagonal=unit_diagonal)
        return squeeze(out, (axis,))
    return triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                   transpose_a=bool(transpose_a),
                                   conjugate_a=bool(conjugate_a),
                                   unit_diagonal=bool(unit_diagonal))
