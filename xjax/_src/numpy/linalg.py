"""``xjax.numpy.linalg``: NumPy's linear algebra on ``xjax.lax.linalg``.

Solvers go through the LU decomposition and triangular solves (so their derivatives follow
from those primitives' rules, as JAX's do); determinants through LU; norms of matrices,
ranks, pseudo-inverses and least squares through the SVD. Functions take leading batch
dimensions, as NumPy's do.

>>> import xjax.numpy as jnp
>>> jnp.linalg.solve(jnp.array([[2., 0.], [0., 4.]]), jnp.array([2., 2.]))
Array([1. , 0.5], dtype=float32)
"""

from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from xjax._src.higher_order.linalg import api as lax_linalg
from xjax._src import lax
from xjax._src.core import dtypes
from xjax._src.numpy._promotion import (aval_of, canonicalize_axis, check_arraylike,
                                        promote_dtypes_inexact, to_jax, is_jax_array)

__all__ = ["cholesky", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals",
           "eigvalsh", "inv", "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank",
           "matrix_transpose", "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve",
           "svd", "svdvals", "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot",
           "vector_norm", "EighResult", "QRResult", "SlogdetResult", "SVDResult"]


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class QRResult(NamedTuple):
    Q: object
    R: object


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


def _jnp():
    import xjax._src.numpy as jnp  # numpy imports this module
    return jnp


def _shape(x) -> tuple:
    return tuple(aval_of(x).shape) if is_jax_array(x) else np.shape(x)


def _inexact(name: str, *args):
    check_arraylike(name, *args)
    return promote_dtypes_inexact(*args)


def _check_square(name: str, a, message=None) -> None:
    shape = _shape(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(message or f"Argument to {name} must have shape [..., n, n], got "
                         f"{shape}.")


def _mT(x):
    return _jnp().swapaxes(x, -1, -2)


def _mH(x):
    return _jnp().conj(_mT(x))


def _diag(x):
    return _jnp().diagonal(x, axis1=-2, axis2=-1)


# -- decompositions --


def cholesky(a, *, upper: bool = False, symmetrize_input: bool = True):
    """Cholesky factor of Hermitian positive-definite matrices (NaN where not positive
    definite): lower ``L`` with ``a = L @ L^H``, or upper ``U = L^H`` with ``upper=True``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.linalg.cholesky(jnp.array([[4., 2.], [2., 5.]]))
    Array([[2., 0.],
           [1., 2.]], dtype=float32)
    """
    (a,) = _inexact("jnp.linalg.cholesky", a)
    factor = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return _mH(factor) if upper else factor


def qr(a, mode: str = "reduced"):
    """QR decomposition: ``QRResult(Q, R)`` for modes 'reduced' and 'complete', ``R`` alone for
    mode 'r' ('raw' is not implemented)."""
    (a,) = _inexact("jnp.linalg.qr", a)
    if mode == "raw":
        raise NotImplementedError("jnp.linalg.qr(mode='raw') (LAPACK's packed reflectors) is "
                                  "not implemented in xjax")
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    q, r = lax_linalg.qr(a, full_matrices=(mode == "complete"))
    return r if mode == "r" else QRResult(q, r)


def eigh(a, UPLO=None, symmetrize_input: bool = True):
    """Eigendecomposition of Hermitian matrices: ``EighResult(eigenvalues, eigenvectors)``,
    eigenvalues ascending, eigenvectors in columns.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.linalg.eigh(jnp.array([[2., 1.], [1., 2.]])).eigenvalues
    Array([1., 3.], dtype=float32)
    """
    (a,) = _inexact("jnp.linalg.eigh", a)
    if UPLO is None or UPLO == "L":
        lower = True
    elif UPLO == "U":
        lower = False
    else:
        raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a, UPLO="L", *, symmetrize_input: bool = True):
    """Eigenvalues of Hermitian matrices, ascending."""
    return eigh(a, UPLO, symmetrize_input).eigenvalues


def eig(a):
    """Eigenvalues and right eigenvectors of general square matrices (complex; CPU, outside
    ``jit``): ``(w, v)`` with ``a @ v = v * w``."""
    (a,) = _inexact("jnp.linalg.eig", a)
    w, v = lax_linalg.eig(a, compute_left_eigenvectors=False)
    return w, v


def eigvals(a):
    """Eigenvalues of general square matrices (complex; CPU, outside ``jit``)."""
    (a,) = _inexact("jnp.linalg.eigvals", a)
    return lax_linalg.eig(a, compute_left_eigenvectors=False,
                          compute_right_eigenvectors=False)[0]


def svd(a, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index=None):
    """Singular value decomposition ``a = U @ diag(S) @ Vh`` (singular values descending):
    ``SVDResult(U, S, Vh)``, or ``S`` alone when ``compute_uv`` is False. With
    ``hermitian=True`` it comes from the eigendecomposition.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.linalg.svd(jnp.array([[3., 0.], [0., -4.]]), compute_uv=False)
    Array([4., 3.], dtype=float32)
    """
    (a,) = _inexact("jnp.linalg.svd", a)
    if hermitian:
        return _svd_hermitian(a, compute_uv, subset_by_index)
    out = lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv,
                         subset_by_index=subset_by_index)
    return SVDResult(*out) if compute_uv else out


def _svd_hermitian(a, compute_uv, subset_by_index):
    jnp = _jnp()
    v, w = lax_linalg.eigh(a, subset_by_index=subset_by_index)
    s = jnp.abs(w)
    last = len(_shape(s)) - 1
    if not compute_uv:
        return lax.rev(lax.sort(s, dimension=last), (last,))
    idx = lax.broadcasted_iota(np.int32, _shape(s), last)
    s, idx, sign = lax.sort((s, idx, jnp.sign(w)), dimension=last, num_keys=1)
    s, idx, sign = (lax.rev(t, (last,)) for t in (s, idx, sign))
    u = jnp.take_along_axis(v, idx[..., None, :], axis=-1)
    vh = _mH(u * sign[..., None, :].astype(u.dtype))
    return SVDResult(u, s, vh)


def svdvals(x):
    """Singular values, descending."""
    return svd(x, compute_uv=False)


# -- determinants, solvers, inverses --


def _lu_parity_sign(pivots, dtype):
    """(-1) ** (number of row swaps) of an LU decomposition."""
    jnp = _jnp()
    k = _shape(pivots)[-1]
    swaps = jnp.sum(pivots != jnp.arange(k, dtype=pivots.dtype), axis=-1)
    return jnp.where(swaps % 2 == 1, -1, 1).astype(dtype)


def det(a):
    """Determinant: the explicit products for 2x2 and 3x3 matrices, else
    ``sign * exp(logabsdet)`` of :func:`slogdet` (through LU), as JAX computes it.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.linalg.det(jnp.array([[1., 2.], [3., 4.]]))
    Array(-2., dtype=float32)
    """
    jnp = _jnp()
    (a,) = _inexact("jnp.linalg.det", a)
    shape = _shape(a)
    _check_square("_det()", a, f"Argument to _det() must have shape [..., n, n], got {shape}")
    n = shape[-1]
    if n == 2:
        return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]
    if n == 3:  # the rule of Sarrus
        return (a[..., 0, 0] * a[..., 1, 1] * a[..., 2, 2] +
                a[..., 0, 1] * a[..., 1, 2] * a[..., 2, 0] +
                a[..., 0, 2] * a[..., 1, 0] * a[..., 2, 1] -
                a[..., 0, 2] * a[..., 1, 1] * a[..., 2, 0] -
                a[..., 0, 0] * a[..., 1, 2] * a[..., 2, 1] -
                a[..., 0, 1] * a[..., 1, 0] * a[..., 2, 2])
    sign, logdet = slogdet(a)
    return sign * jnp.exp(logdet).astype(aval_of(sign).dtype)


def slogdet(a, *, method=None):
    """Sign (a unit complex number for complex ``a``) and natural log of the absolute value of
    the determinant: ``SlogdetResult(sign, logabsdet)``; (0, -inf) for singular matrices."""
    jnp = _jnp()
    (a,) = _inexact("jnp.linalg.slogdet", a)
    if method not in (None, "lu"):
        raise NotImplementedError(f"slogdet method {method!r} is not implemented in xjax "
                                  "(only 'lu')")
    _check_square("slogdet", a)
    dtype = aval_of(a).dtype
    real = np.dtype(dtypes.finfo(dtype).dtype)
    if _shape(a)[-1] == 0:
        return SlogdetResult(jnp.ones(_shape(a)[:-2], dtype), jnp.zeros(_shape(a)[:-2], real))
    lu, pivots, _ = lax_linalg.lu(a)
    diagonal = _diag(lu)
    magnitude = jnp.abs(diagonal)
    singular = jnp.any(diagonal == 0, axis=-1)
    unit = diagonal / jnp.where(magnitude == 0, 1, magnitude).astype(dtype)
    sign = _lu_parity_sign(pivots, dtype) * jnp.prod(unit, axis=-1)
    logdet = jnp.sum(jnp.log(magnitude), axis=-1)
    sign = jnp.where(singular, jnp.zeros((), dtype), sign)
    logdet = jnp.where(singular, jnp.array(-np.inf, real), logdet)
    return SlogdetResult(sign, logdet.astype(real))


def lu_solve_matrix(lu, perm, b, trans: int = 0):
    """Solve ``a x = b`` (``trans`` 0), ``a^T x = b`` (1) or ``a^H x = b`` (2) for matrices
    ``b`` (..., n, k) from ``a``'s LU decomposition (``a[perm] = L U``)."""
    jnp = _jnp()
    if trans == 0:
        x = jnp.take_along_axis(b, perm[..., :, None], axis=-2)
        x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
        return lax_linalg.triangular_solve(lu, x, left_side=True, lower=False)
    conj = trans == 2
    x = lax_linalg.triangular_solve(lu, b, left_side=True, lower=False, transpose_a=True,
                                    conjugate_a=conj)
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, transpose_a=True,
                                    conjugate_a=conj, unit_diagonal=True)
    return jnp.take_along_axis(x, _inverse_perm(perm)[..., :, None], axis=-2)


def _inverse_perm(perm):
    last = len(_shape(perm)) - 1
    _, inverse = lax.sort_key_val(perm, lax.broadcasted_iota(np.int32, _shape(perm), last),
                                  dimension=last)
    return inverse


def solve(a, b):
    """Solve ``a @ x = b`` for square ``a`` (..., n, n); ``b`` is a vector (n,) or matrices
    (..., n, k), batch dims broadcasting (NumPy 2's rule).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.linalg.solve(jnp.array([[2., 1.], [0., 4.]]), jnp.array([3., 4.]))
    Array([1., 1.], dtype=float32)
    """
    jnp = _jnp()
    a, b = _inexact("jnp.linalg.solve", a, b)
    a_shape, b_shape = _shape(a), _shape(b)
    _check_square("solve", a, f"Argument to solve must have shape [..., n, n], got "
                  f"{a_shape}.")
    n = a_shape[-1]
    if len(b_shape) == 1:
        if b_shape[0] != n:
            raise ValueError(f"inconsistent size for core dimension 'm': {b_shape[0]} vs {n} "
                             "on vectorized function with excluded=frozenset() and "
                             "signature='(m,m),(m)->(m)'")
        x = solve(a, jnp.broadcast_to(b[:, None], a_shape[:-2] + (n, 1)))
        return x[..., 0]
    if len(a_shape) == len(b_shape) + 1:
        raise ValueError(f"Invalid shapes for solve: {a_shape}, {b_shape}. Prior to JAX "
                         "v0.5.0, this would have been treated as a batched 1-dimensional "
                         "solve. To recover this behavior, use solve(a, b[..., None])."
                         "squeeze(-1).")
    if b_shape[-2] != n:
        raise ValueError(f"inconsistent size for core dimension 'm': {b_shape[-2]} vs {n} on "
                         "vectorized function with excluded=frozenset() and "
                         "signature='(m,m),(m,n)->(m,n)'")
    batch = np.broadcast_shapes(a_shape[:-2], b_shape[:-2])
    a = jnp.broadcast_to(a, batch + a_shape[-2:])
    b = jnp.broadcast_to(b, batch + b_shape[-2:])
    lu, _, perm = lax_linalg.lu(a)
    return lu_solve_matrix(lu, perm, b)


def inv(a):
    """Inverse of square matrices (through LU; inf/NaN where singular, as JAX).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.linalg.inv(jnp.array([[2., 0.], [0., 4.]]))
    Array([[0.5 , 0.  ],
           [0.  , 0.25]], dtype=float32)
    """
    jnp = _jnp()
    (a,) = _inexact("jnp.linalg.inv", a)
    shape = _shape(a)
    _check_square("inv", a)
    eye = jnp.broadcast_to(jnp.eye(shape[-1], dtype=aval_of(a).dtype), shape)
    return solve(a, eye)


def matrix_power(a, n: int):
    """``a`` to the integer power ``n`` (by repeated squaring; the inverse for ``n < 0``)."""
    jnp = _jnp()
    check_arraylike("jnp.linalg.matrix_power", a)
    a = to_jax(a)
    shape = _shape(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise TypeError(f"{len(shape)}-dimensional array given. Array must be at least "
                        "two-dimensional" if len(shape) < 2 else
                        "Last 2 dimensions of the array must be square")
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError(f"exponent must be an integer, got {n}") from err
    if n == 0:
        return jnp.broadcast_to(jnp.eye(shape[-1], dtype=aval_of(a).dtype), shape)
    if n < 0:
        a = inv(a)
        n = -n
    result = None
    power = a
    while n:
        if n & 1:
            result = power if result is None else jnp.matmul(result, power)
        n >>= 1
        if n:
            power = jnp.matmul(power, power)
    return result


def lstsq(a, b, rcond=None, *, numpy_resid: bool = False):
    """Least-squares solution of ``a @ x = b`` through the SVD: ``(x, residuals, rank, s)``.
    Singular values below ``rcond * s[0]`` (default ``eps * max(m, n)``) count as zero.
    Residuals are always returned (NumPy's empty cases only with ``numpy_resid``)."""
    jnp = _jnp()
    a, b = _inexact("jnp.linalg.lstsq", a, b)
    if _shape(a)[0] != _shape(b)[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    b_ndim = len(_shape(b))
    if b_ndim == 1:
        b = b[:, None]
    if len(_shape(a)) != 2:
        raise TypeError(f"{len(_shape(a))}-dimensional array given. Array must be "
                        "two-dimensional")
    if len(_shape(b)) != 2:
        raise TypeError(f"{len(_shape(b))}-dimensional array given. Array must be one or "
                        "two-dimensional")
    m, n = _shape(a)
    dtype = aval_of(a).dtype
    real = np.dtype(dtypes.finfo(dtype).dtype)
    eps = float(dtypes.finfo(dtype).eps)
    if m == 0 or n == 0:
        s = jnp.zeros((0,), real)
        rank = jnp.array(0, np.int32)
        x = jnp.zeros((n, _shape(b)[1]), dtype)
    else:
        rcond = eps * max(m, n) if rcond is None else jnp.where(jnp.asarray(rcond) < 0, eps,
                                                                rcond)
        u, s, vt = lax_linalg.svd(a, full_matrices=False)
        keep = s >= jnp.asarray(rcond, real) * s[0]
        rank = jnp.sum(keep).astype(np.int32)
        safe = jnp.where(keep, s, 1).astype(dtype)
        s_inv = jnp.where(keep, 1 / safe, 0)[:, None]
        x = jnp.matmul(_mH(vt), s_inv * jnp.matmul(_mH(u), b))
    if numpy_resid and (m <= n or bool(rank < n)):  # rank must be concrete, as in JAX
        resid = jnp.zeros((0,), real)
    else:
        resid = norm(b - jnp.matmul(a, x), axis=0) ** 2
    if b_ndim == 1:
        x = x.ravel()
    return x, resid, rank, s


def pinv(a, rtol=None, hermitian: bool = False):
    """Moore-Penrose pseudo-inverse through the SVD; singular values at most
    ``rtol * s_max`` (default ``10 * max(m, n) * eps``) count as zero."""
    jnp = _jnp()
    check_arraylike("jnp.linalg.pinv", a)
    (arr,) = promote_dtypes_inexact(a)
    m, n = _shape(arr)[-2:]
    dtype = aval_of(arr).dtype
    if m == 0 or n == 0:
        return jnp.zeros(_shape(arr)[:-2] + (n, m), dtype)
    arr = jnp.conj(arr)
    if rtol is None:
        rtol = 10.0 * max(m, n) * float(dtypes.finfo(dtype).eps)
    rtol = jnp.asarray(rtol)
    u, s, vh = svd(arr, full_matrices=False, hermitian=hermitian)
    rtol = jnp.expand_dims(rtol[..., None], tuple(range(len(_shape(s)) - len(_shape(rtol)) - 1)))
    cutoff = rtol * s[..., 0:1]
    s = jnp.where(s > cutoff, s, np.inf).astype(dtype)
    return jnp.matmul(_mT(vh), _mT(u) / s[..., None]).astype(dtype)


def matrix_rank(M, rtol=None, *, tol=None):
    """Number of singular values above ``rtol`` (default ``s_max * max(m, n) * eps``)."""
    jnp = _jnp()
    (M,) = _inexact("jnp.linalg.matrix_rank", M)
    if tol is not None:
        rtol = tol
    if len(_shape(M)) < 2:
        return jnp.any(M != 0).astype(np.int32)
    s = svd(M, full_matrices=False, compute_uv=False)
    if rtol is None:
        threshold = s.max(-1) * max(_shape(M)[-2:]) * float(dtypes.finfo(aval_of(s).dtype).eps)
    else:
        threshold = jnp.asarray(rtol)
    return jnp.sum(s > jnp.expand_dims(threshold, -1) if len(_shape(threshold)) else
                   s > threshold, axis=-1).astype(np.int32)


def tensorinv(a, ind: int = 2):
    """Inverse of ``a`` seen as a matrix from its first ``ind`` axes to the rest."""
    jnp = _jnp()
    (a,) = _inexact("jnp.linalg.tensorinv", a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer; got {ind=}")
    shape = _shape(a)
    left, right = shape[:ind], shape[ind:]
    rows, cols = int(np.prod(left)), int(np.prod(right))
    if rows != cols:
        raise ValueError(f"tensorinv: a.shape={shape}, ind={ind}: the product of the first "
                         "ind dimensions must equal the product of the rest")
    return jnp.reshape(inv(jnp.reshape(a, (rows, cols))), right + left)


def tensorsolve(a, b, axes=None):
    """Solve the tensor equation ``tensordot(a, x, x.ndim) = b`` for ``x``."""
    jnp = _jnp()
    a, b = _inexact("jnp.linalg.tensorsolve", a, b)
    a_ndim, b_ndim = len(_shape(a)), len(_shape(b))
    if axes is not None:
        order = [k for k in range(a_ndim) if k not in [ax % a_ndim for ax in axes]]
        order += [ax % a_ndim for ax in axes]
        a = jnp.transpose(a, order)
    out_shape = _shape(a)[b_ndim:]
    size = int(np.prod(out_shape))
    if int(np.prod(_shape(a))) != size * size:
        raise ValueError("tensorsolve: a.shape must satisfy prod(a.shape[b.ndim:]) == "
                         f"prod(a.shape[:b.ndim]); got a.shape={_shape(a)}, b.ndim={b_ndim}")
    x = solve(jnp.reshape(a, (size, size)), jnp.ravel(b))
    return jnp.reshape(x, out_shape)


# -- norms and condition numbers --


def _abs_sq(x):
    jnp = _jnp()
    return jnp.real(x * jnp.conj(x))


def _vector_norm(x, ord, axis, keepdims):
    jnp = _jnp()
    if ord is None or ord == 2:
        return jnp.sqrt(jnp.sum(_abs_sq(x), axis=axis, keepdims=keepdims))
    if isinstance(ord, str):
        raise ValueError(f"Invalid order '{ord}' for vector norm.")
    magnitude = jnp.abs(x)
    if ord == np.inf:
        return jnp.max(magnitude, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return jnp.min(magnitude, axis=axis, keepdims=keepdims)
    if ord == 0:
        return jnp.sum(x != 0, axis=axis, keepdims=keepdims).astype(magnitude.dtype)
    if ord == 1:
        return jnp.sum(magnitude, axis=axis, keepdims=keepdims)
    p = jnp.asarray(ord, magnitude.dtype)
    return jnp.sum(magnitude ** p, axis=axis, keepdims=keepdims) ** (1 / p)


def _matrix_norm(x, ord, axes, keepdims):
    jnp = _jnp()
    row, col = axes
    if ord is None or ord == "fro":
        return jnp.sqrt(jnp.sum(_abs_sq(x), axis=axes, keepdims=keepdims))
    if ord in (1, -1, np.inf, -np.inf):
        reduce = jnp.max if ord in (1, np.inf) else jnp.min
        if ord in (1, -1):  # max over columns of the column sums
            inner, outer = row, col
        else:
            inner, outer = col, row
        sums = jnp.sum(jnp.abs(x), axis=inner, keepdims=True)
        out = reduce(sums, axis=outer, keepdims=True)
        return out if keepdims else jnp.squeeze(out, axis=axes)
    if ord in (2, -2, "nuc"):
        moved = jnp.moveaxis(x, axes, (-2, -1))
        s = svd(moved, compute_uv=False)
        out = {2: lambda: s[..., 0], -2: lambda: s[..., -1],
               "nuc": lambda: jnp.sum(s, axis=-1)}[ord]()
        if keepdims:
            out = jnp.expand_dims(out, tuple(sorted(axes)))
        return out
    raise ValueError(f"Invalid order '{ord}' for matrix norm.")


def norm(x, ord=None, axis=None, keepdims: bool = False):
    """Vector or matrix norm, as NumPy's ``linalg.norm``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.linalg.norm(jnp.array([3., 4.]))
    Array(5., dtype=float32)
    """
    jnp = _jnp()
    (x,) = _inexact("jnp.linalg.norm", x)
    ndim = len(_shape(x))
    if axis is None:
        if ord is None:
            out = jnp.sqrt(jnp.sum(_abs_sq(x)))
            return jnp.reshape(out, (1,) * ndim) if keepdims else out
        if ndim == 1:
            axis = (0,)
        elif ndim == 2:
            axis = (0, 1)
        else:
            raise ValueError("Improper number of dimensions to norm.")
    elif isinstance(axis, int):
        axis = (axis,)
    axis = tuple(canonicalize_axis(a, ndim) for a in axis)
    if len(axis) == 1:
        return _vector_norm(x, ord, axis, keepdims)
    if len(axis) == 2:
        return _matrix_norm(x, ord, axis, keepdims)
    raise ValueError(f"Improper number of axes for norm: axis={axis}. Pass one axis to "
                     "compute a vector-norm, or two axes to compute a matrix-norm.")


def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2):
    """Vector norm over ``axis`` (all axes, flattened, by default)."""
    jnp = _jnp()
    (x,) = _inexact("jnp.linalg.vector_norm", x)
    if axis is None:
        out = norm(jnp.ravel(x), ord=ord)
        return jnp.reshape(out, (1,) * len(_shape(x))) if keepdims else out
    return norm(x, ord=ord, axis=axis, keepdims=keepdims)


def matrix_norm(x, /, *, keepdims: bool = False, ord="fro"):
    """Matrix norm of the last two axes."""
    return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


def cond(x, p=None):
    """Condition number in the norm ``p`` (the ratio of extreme singular values by default);
    inf for singular matrices."""
    jnp = _jnp()
    (x,) = _inexact("jnp.linalg.cond", x)
    if len(_shape(x)) < 2:
        raise ValueError(f"jnp.linalg.cond: input must be at least 2D, got {_shape(x)}")
    if p is None or p == 2:
        s = svd(x, compute_uv=False)
        r = s[..., 0] / s[..., -1]
    elif p == -2:
        s = svd(x, compute_uv=False)
        r = s[..., -1] / s[..., 0]
    else:
        _check_square("cond", x)
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    # NaN from a singular matrix (not from NaN entries) means an infinite condition number
    return jnp.where(jnp.isnan(r) & ~jnp.any(jnp.isnan(x), axis=(-2, -1)), np.inf, r)


# -- products and the Array API names --


def multi_dot(arrays, *, precision=None):
    """Product of a chain of matrices, multiplied in the cheapest order (the first and last
    may be vectors)."""
    jnp = _jnp()
    arrays = [to_jax(a) for a in arrays]
    if len(arrays) < 2:
        raise ValueError(f"multi_dot requires at least two arrays; got len(arrays)="
                         f"{len(arrays)}")
    first_vector = len(_shape(arrays[0])) == 1
    last_vector = len(_shape(arrays[-1])) == 1
    if first_vector:
        arrays[0] = arrays[0][None, :]
    if last_vector:
        arrays[-1] = arrays[-1][:, None]
    for i, a in enumerate(arrays):
        if len(_shape(a)) != 2:
            raise ValueError(f"multi_dot: array {i} must be two-dimensional, got shape "
                             f"{_shape(a)}")
    dims = [_shape(a)[0] for a in arrays] + [_shape(arrays[-1])[1]]
    order = _chain_order(dims)

    def product(i, j):
        if i == j:
            return arrays[i]
        k = order[i][j]
        return jnp.matmul(product(i, k), product(k + 1, j), precision=precision)

    out = product(0, len(arrays) - 1)
    if first_vector:
        out = out[0]
    if last_vector:
        out = out[..., 0]
    return out


def _chain_order(dims):
    """The split points of the cheapest parenthesization of a matrix chain (dynamic
    programming on multiply-add counts)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def cross(x1, x2, /, *, axis: int = -1):
    """Cross product of 3-vectors along ``axis`` (the Array API's ``linalg.cross``)."""
    jnp = _jnp()
    check_arraylike("jnp.linalg.cross", x1, x2)
    x1, x2 = to_jax(x1), to_jax(x2)
    if _shape(x1)[axis] != 3 or _shape(x2)[axis] != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but "
                         f"they have x1.shape[axis]={_shape(x1)[axis]} and "
                         f"x2.shape[axis]={_shape(x2)[axis]}")
    return jnp.cross(x1, x2, axis=axis)


def diagonal(x, /, *, offset: int = 0):
    """Diagonals of the last two axes."""
    return _jnp().diagonal(x, offset=offset, axis1=-2, axis2=-1)


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    """Matrix product (``jnp.matmul``)."""
    return _jnp().matmul(x1, x2, precision=precision,
                         preferred_element_type=preferred_element_type)


def matrix_transpose(x, /):
    """Swap the last two axes."""
    check_arraylike("jnp.linalg.matrix_transpose", x)
    ndim = len(_shape(x))
    if ndim < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got "
                         f"ndim={ndim}")
    return _mT(to_jax(x))


def outer(x1, x2, /):
    """Outer product of two vectors."""
    check_arraylike("jnp.linalg.outer", x1, x2)
    x1, x2 = to_jax(x1), to_jax(x2)
    if len(_shape(x1)) != 1 or len(_shape(x2)) != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are "
                         f"x1.ndim={len(_shape(x1))} and x2.ndim={len(_shape(x2))}")
    return _jnp().outer(x1, x2)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None,
              out_sharding=None):
    """``jnp.tensordot``."""
    return _jnp().tensordot(x1, x2, axes=axes, precision=precision,
                            preferred_element_type=preferred_element_type,
                            out_sharding=out_sharding)


def trace(x, /, *, offset: int = 0, dtype=None):
    """Sum of the diagonals of the last two axes."""
    return _jnp().trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def vecdot(x1, x2, /, *, axis: int = -1, precision=None, preferred_element_type=None):
    """Dot product of vectors along ``axis`` (conjugating ``x1``)."""
    return _jnp().vecdot(x1, x2, axis=axis, precision=precision,
                         preferred_element_type=preferred_element_type)
