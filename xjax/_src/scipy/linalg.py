"""``xjax.scipy.linalg``: SciPy's linear algebra on ``xjax.lax.linalg`` (JAX's
``jax.scipy.linalg``). Arguments SciPy uses to manage memory or checks (``overwrite_a``,
``check_finite``, ``lwork``, ...) are accepted and ignored, as in JAX.

>>> import xjax.numpy as jnp
>>> import xjax.scipy.linalg as jsl
>>> jsl.solve_triangular(jnp.array([[2., 0.], [1., 1.]]), jnp.array([2., 3.]), lower=True)
Array([1., 2.], dtype=float32)
"""

from __future__ import annotations

import math
import operator

import numpy as np

from xjax._src.higher_order.linalg import api as lax_linalg
from xjax._src import higher_order as control_flow, lax
from xjax._src.core import dtypes
from xjax._src.numpy._promotion import aval_of, check_arraylike, promote_dtypes_inexact, to_jax
from xjax._src.scipy._linalg_schur import funm, rsf2csf, schur, sqrtm  # noqa: F401  (Schur-based)
from xjax._src.higher_order.linalg.hessenberg import hessenberg_with_q
from xjax._src.numpy._promotion import is_jax_array, promote_dtypes
import xjax._src.numpy as jnp
import xjax._src.numpy.linalg as linalg

__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "companion",
           "convolution_matrix", "det", "dft", "eigh", "eigh_tridiagonal", "expm",
           "expm_frechet", "fiedler", "fiedler_companion", "funm", "hadamard", "hankel",
           "helmert", "hessenberg", "hilbert", "inv", "invhilbert", "invpascal", "leslie", "lu",
           "lu_factor", "lu_solve", "pascal", "polar", "qr", "qr_multiply", "rsf2csf", "schur",
           "solve", "solve_sylvester", "solve_triangular", "sqrtm", "svd", "toeplitz"]


def _jnp():
    return jnp


def _linalg():
    return linalg


def _shape(x) -> tuple:
    return tuple(aval_of(x).shape) if is_jax_array(x) else np.shape(x)


def _inexact(name, *args):
    check_arraylike(name, *args)
    return promote_dtypes_inexact(*args)


def _mH(x):
    jnp = _jnp()
    return jnp.conj(jnp.swapaxes(x, -1, -2))


# -- Cholesky --


def cholesky(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """Cholesky factor: upper ``U`` with ``a = U^H U`` (default), or lower ``L``."""
    (a,) = _inexact("jax.scipy.linalg.cholesky", a)
    factor = lax_linalg.cholesky(a)
    return factor if lower else _mH(factor)


def cho_factor(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """``(c, lower)`` for :func:`cho_solve`: the Cholesky factor (zeros in the other
    triangle) and which triangle it is."""
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b, overwrite_b: bool = False, check_finite: bool = True):
    """Solve ``a x = b`` given ``cho_factor(a)``."""
    c, lower = c_and_lower
    c, b = _inexact("jax.scipy.linalg.cho_solve", c, b)
    _check_solve_shapes(c, b)
    # a = L L^H (lower) or U^H U: solve with the factor and with its conjugate transpose
    b = lax_linalg.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=not lower,
                                    conjugate_a=not lower)
    return lax_linalg.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=lower,
                                       conjugate_a=lower)


def _check_solve_shapes(a, b):
    a_shape, b_shape = _shape(a), _shape(b)
    if not (len(a_shape) >= 2 and a_shape[-1] == a_shape[-2] and len(b_shape) >= 1):
        raise ValueError("The arguments to solve must have shapes a=[..., m, m] and b=[..., m, "
                         f"k] or b=[..., m]; got a={a_shape} and b={b_shape}")
    rows = b_shape[-1] if len(b_shape) == len(a_shape) - 1 else b_shape[-2]
    if rows != a_shape[-1]:
        raise ValueError("The arguments to solve must have shapes a=[..., m, m] and b=[..., m, "
                         f"k] or b=[..., m]; got a={a_shape} and b={b_shape}")


# -- triangular and general solves --


def solve_triangular(a, b, trans=0, lower: bool = False, unit_diagonal: bool = False,
                     overwrite_b: bool = False, debug=None, check_finite: bool = True):
    """Solve ``op(a) x = b`` for triangular ``a``; ``trans`` 0/'N', 1/'T' or 2/'C' picks
    ``op``. ``b`` may be a vector."""
    a, b = _inexact("jax.scipy.linalg.solve_triangular", a, b)
    codes = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False),
             2: (True, True), "C": (True, True)}
    if trans not in codes:
        raise ValueError(f"Invalid 'trans' value {trans}")
    transpose_a, conjugate_a = codes[trans]
    return lax_linalg.triangular_solve(a, b, left_side=True, lower=lower,
                                       transpose_a=transpose_a, conjugate_a=conjugate_a,
                                       unit_diagonal=unit_diagonal)


def solve(a, b, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          debug: bool = False, check_finite: bool = True, assume_a: str = "gen"):
    """Solve ``a x = b``; ``assume_a='pos'`` uses the Cholesky factorization, the other kinds
    ('gen', 'sym', 'her') the LU one."""
    valid = {"gen", "sym", "her", "pos"}
    if assume_a not in valid:
        raise ValueError(f"Expected assume_a to be one of {valid}; got {assume_a!r}")
    a, b = _inexact("jax.scipy.linalg.solve", a, b)
    if assume_a != "pos":
        if len(_shape(b)) == len(_shape(a)) - 1 and len(_shape(b)) > 1:
            return _linalg().solve(a, b[..., None])[..., 0]
        return _linalg().solve(a, b)
    _check_solve_shapes(a, b)
    return cho_solve(cho_factor(a, lower=lower), b)


def det(a, overwrite_a: bool = False, check_finite: bool = True):
    """Determinant."""
    return _linalg().det(a)


def inv(a, overwrite_a: bool = False, check_finite: bool = True):
    """Matrix inverse."""
    return _linalg().inv(a)


# -- LU --


def lu_factor(a, overwrite_a: bool = False, check_finite: bool = True):
    """``(lu, piv)``: the packed LU factors and LAPACK's 0-based pivots."""
    (a,) = _inexact("jax.scipy.linalg.lu_factor", a)
    lu_, pivots, _ = lax_linalg.lu(a)
    return lu_, pivots


def lu_solve(lu_and_piv, b, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True):
    """Solve ``a x = b`` (``trans`` 0), ``a^T x = b`` (1) or ``a^H x = b`` (2) given
    ``lu_factor(a)``."""
    jnp = _jnp()
    lu_, pivots = lu_and_piv
    lu_, b = _inexact("jax.scipy.linalg.lu_solve", lu_, b)
    pivots = jnp.asarray(pivots).astype(np.int32)
    m = _shape(lu_)[-1]
    perm = lax_linalg.lu_pivots_to_permutation(pivots, m)
    if trans not in (0, 1, 2):
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    vector = len(_shape(b)) == len(_shape(lu_)) - 1 or len(_shape(b)) == 1
    if vector:
        b = b[..., None]
    batch = np.broadcast_shapes(_shape(lu_)[:-2], _shape(b)[:-2])
    lu_ = jnp.broadcast_to(lu_, batch + _shape(lu_)[-2:])
    perm = jnp.broadcast_to(perm, batch + _shape(perm)[-1:])
    b = jnp.broadcast_to(b, batch + _shape(b)[-2:])
    x = _linalg().lu_solve_matrix(lu_, perm, b, trans)
    return x[..., 0] if vector else x


def lu(a, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """``(p, l, u)`` with ``a = p @ l @ u`` (permutation matrix ``p``, unit-lower ``l``,
    upper ``u``); ``(p @ l, u)`` with ``permute_l``."""
    jnp = _jnp()
    (a,) = _inexact("jax.scipy.linalg.lu", a)
    lu_, _, perm = lax_linalg.lu(a)
    m, n = _shape(a)[-2:]
    k = min(m, n)
    dtype = aval_of(a).dtype
    p = (perm[..., None, :] == jnp.arange(m, dtype=perm.dtype)[:, None]).astype(dtype)
    lower = jnp.tril(lu_[..., :, :k], -1) + jnp.eye(m, k, dtype=dtype)
    upper = jnp.triu(lu_[..., :k, :])
    if permute_l:
        return jnp.matmul(p, lower), upper
    return p, lower, upper


# -- QR, SVD, eigenvalues --


def qr(a, overwrite_a: bool = False, lwork=None, mode: str = "full", pivoting: bool = False,
       check_finite: bool = True):
    """QR decomposition: ``(q, r)`` for modes 'full' and 'economic', ``(r,)`` for 'r'; with
    ``pivoting``, also the column permutation ``p`` (``a[:, p] = q @ r``)."""
    if mode == "raw":
        raise NotImplementedError("jax.scipy.linalg.qr(mode='raw') is not implemented in xjax")
    if mode not in ("full", "economic", "r"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    (a,) = _inexact("jax.scipy.linalg.qr", a)
    q, r, *p = lax_linalg.qr(a, pivoting=pivoting, full_matrices=(mode != "economic"))
    if mode == "r":
        return (r, *p)
    return (q, r, *p)


def qr_multiply(a, c, mode: str = "right", pivoting: bool = False, conjugate: bool = False,
                overwrite_a: bool = False, overwrite_c: bool = False):
    """``(c @ q, r)`` (mode 'right') or ``(q @ c, r)`` ('left') with the economic QR of
    ``a``; ``conjugate`` uses ``conj(q)``; ``pivoting`` appends the permutation."""
    jnp = _jnp()
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'left' or 'right', got {mode!r}")
    a, c = _inexact("jax.scipy.linalg.qr_multiply", a, c)
    q, r, *p = lax_linalg.qr(a, pivoting=pivoting, full_matrices=False)
    if conjugate:
        q = jnp.conj(q)
    product = jnp.matmul(c, q) if mode == "right" else jnp.matmul(q, c)
    return (product, r, *p)


def svd(a, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd"):
    """Singular value decomposition: ``(u, s, vh)``, or ``s`` alone."""
    (a,) = _inexact("jax.scipy.linalg.svd", a)
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def eigh(a, b=None, lower: bool = True, eigvals_only: bool = False, overwrite_a: bool = False,
         overwrite_b: bool = False, turbo: bool = True, eigvals=None, type: int = 1,  # noqa: A002
         check_finite: bool = True):
    """Eigendecomposition of Hermitian matrices: ``(w, v)``, or ``w`` alone."""
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    (a,) = _inexact("jax.scipy.linalg.eigh", a)
    v, w = lax_linalg.eigh(a, lower=lower)
    return w if eigvals_only else (w, v)


def eigh_tridiagonal(d, e, *, eigvals_only: bool = False, select: str = "a",
                     select_range=None, tol=None, key=None):
    """Eigenvalues (and vectors) of the real symmetric tridiagonal matrix with diagonal ``d``
    and off-diagonal ``e`` (through ``eigh`` of the assembled matrix)."""
    jnp = _jnp()
    d, e = _inexact("jax.scipy.linalg.eigh_tridiagonal", d, e)
    n = _shape(d)[-1]
    if select == "a":
        subset = None
    elif select == "i":
        lo, hi = select_range
        subset = (int(lo), int(hi) + 1)
    else:
        raise NotImplementedError(f"eigh_tridiagonal(select={select!r}) is not implemented "
                                  "in xjax ('a' and 'i' are)")
    if dtypes.is_complex(aval_of(d).dtype):
        raise NotImplementedError("eigh_tridiagonal of complex inputs is not implemented")
    t = jnp.diag(d) + jnp.diag(e, -1) + jnp.diag(e, 1) if n > 1 else jnp.diag(d)
    v, w = lax_linalg.eigh(t, subset_by_index=subset)
    return w if eigvals_only else (w, v)


def hessenberg(a, *, calc_q: bool = False, overwrite_a: bool = False,
               check_finite: bool = True):
    """Hessenberg form ``h`` of a square matrix (``a = q h q^H``): ``h``, or ``(h, q)``."""
    (a,) = _inexact("jax.scipy.linalg.hessenberg", a)
    h, q = hessenberg_with_q(a)
    return (h, q) if calc_q else h


# -- matrix functions --

# Padé coefficients of degree 7 and 13 for exp, and the largest norms for which they are
# accurate in float32 / float64 (Higham 2005, "The scaling and squaring method for the
# matrix exponential revisited", table 2.3).
_PADE7 = (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.)
_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
           129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
           40840800., 960960., 16380., 182., 1.)
_THETA7 = 3.925724783138660
_THETA13 = 5.371920351148152


def _pade(a, coefficients):
    """The numerator P and denominator Q = P(-A) of the Padé approximant of exp(A)."""
    jnp = _jnp()
    n = _shape(a)[-1]
    eye = jnp.broadcast_to(jnp.eye(n, dtype=aval_of(a).dtype), _shape(a))
    powers = [eye, None]
    a2 = jnp.matmul(a, a)
    powers = [eye, a2]
    degree = len(coefficients) - 1
    while 2 * (len(powers) - 1) < degree - 1:
        powers.append(jnp.matmul(powers[-1], a2))
    even = sum(coefficients[2 * i] * powers[i] for i in range(len(powers))
               if 2 * i <= degree)
    odd_inner = sum(coefficients[2 * i + 1] * powers[i] for i in range(len(powers))
                    if 2 * i + 1 <= degree)
    odd = jnp.matmul(a, odd_inner)
    return even + odd, even - odd


def expm(A, *, upper_triangular: bool = False, max_squarings: int = 16):
    """Matrix exponential by scaling and squaring with a Padé approximant (degree 7 in
    float32, 13 in float64), written with xjax.numpy so ``jit``, ``vmap`` and ``grad``
    apply.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> import xjax.scipy.linalg as jsl
    >>> jsl.expm(jnp.zeros((2, 2)))
    Array([[1., 0.],
           [0., 1.]], dtype=float32)
    """
    jnp = _jnp()
    (a,) = _inexact("jax.scipy.linalg.expm", A)
    shape = _shape(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={shape}")
    double = aval_of(a).dtype in (np.float64, np.complex128)
    coefficients, theta = (_PADE13, _THETA13) if double else (_PADE7, _THETA7)
    # the number of squarings is piecewise constant in A: no derivative flows through it
    norm1 = lax.stop_gradient(jnp.max(jnp.sum(jnp.abs(a), axis=-2), axis=-1))
    squarings = jnp.maximum(0, jnp.floor(jnp.log2(norm1 / theta)) + 1)
    squarings = jnp.where(jnp.isfinite(squarings), squarings, 0)
    squarings = jnp.minimum(squarings, max_squarings).astype(aval_of(norm1).dtype)
    scale = (2.0 ** squarings).astype(aval_of(a).dtype)
    p, q = _pade(a / scale[..., None, None], coefficients)
    r = _linalg().solve(q, p)

    def square(i, r):
        return jnp.where((i < squarings)[..., None, None], jnp.matmul(r, r), r)

    out = control_flow.fori_loop(0, max_squarings, square, r)
    # NaN/inf inputs give NaN, as JAX's
    return jnp.where(jnp.isfinite(norm1)[..., None, None], out, np.nan)


def expm_frechet(A, E, *, method=None, compute_expm: bool = True):
    """Fréchet derivative of the matrix exponential at ``A`` in the direction ``E`` (the top
    right block of ``expm([[A, E], [0, A]])``): ``(expm(A), L)`` or ``L``."""
    jnp = _jnp()
    if method is not None and method != "SPS":
        raise ValueError(f"only method='SPS' is supported, got {method!r}")
    a, e = _inexact("jax.scipy.linalg.expm_frechet", A, E)
    shape = _shape(a)
    if len(shape) != 2 or shape[0] != shape[1] or _shape(e) != shape:
        raise ValueError("expected A and E to be square matrices of one shape, got "
                         f"{shape} and {_shape(e)}")
    n = shape[0]
    zero = jnp.zeros_like(a)
    big = jnp.concatenate([jnp.concatenate([a, e], axis=1),
                           jnp.concatenate([zero, a], axis=1)], axis=0)
    full = expm(big)
    frechet = full[:n, n:]
    return (full[:n, :n], frechet) if compute_expm else frechet


def polar(a, side: str = "right", *, method: str = "qdwh", eps=None, max_iterations=None):
    """Polar decomposition ``a = u p`` (side 'right') or ``a = p u`` ('left'), ``u`` unitary
    and ``p`` Hermitian positive semi-definite; computed through the SVD (for both
    methods)."""
    jnp = _jnp()
    if side not in ("right", "left"):
        raise ValueError(f"side={side!r} is not a valid side")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"Unknown polar decomposition method {method}.")
    (a,) = _inexact("jax.scipy.linalg.polar", a)
    u_svd, s, vh = lax_linalg.svd(a, full_matrices=False)
    unitary = jnp.matmul(u_svd, vh)
    s = s.astype(aval_of(a).dtype)
    if side == "right":
        p = jnp.matmul(_mH(vh) * s[..., None, :], vh)
    else:
        p = jnp.matmul(u_svd * s[..., None, :], _mH(u_svd))
    return unitary, p


def solve_sylvester(A, B, C, *, method: str = "schur", tol: float = 1e-8):
    """Solve ``A X + X B = C`` as one linear system in ``vec(X)`` (Kronecker form: O(n^3
    m^3), fine for small matrices; JAX uses the Bartels-Stewart algorithm on Schur forms)."""
    jnp = _jnp()
    a, b, c = _inexact("jax.scipy.linalg.solve_sylvester", A, B, C)
    n, m = _shape(a)[-1], _shape(b)[-1]
    if _shape(c) != (n, m):
        raise ValueError(f"C must have shape ({n}, {m}), got {_shape(c)}")
    dtype = aval_of(a).dtype
    # row-major vec: (A X)_ij = sum_k A_ik X_kj -> kron(A, I); (X B)_ij -> kron(I, B^T)
    system = jnp.kron(a, jnp.eye(m, dtype=dtype)) + jnp.kron(jnp.eye(n, dtype=dtype), b.T)
    return jnp.reshape(_linalg().solve(system, jnp.ravel(c)), (n, m))


# -- special matrices --


def block_diag(*arrs):
    """Block-diagonal matrix of the given (up to 2-D) arrays.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> import xjax.scipy.linalg as jsl
    >>> jsl.block_diag(jnp.array([[1, 2]]), jnp.array(3))
    Array([[1, 2, 0],
           [0, 0, 3]], dtype=int32)
    """
    jnp = _jnp()
    if not arrs:
        return jnp.zeros((1, 0))
    check_arraylike("block_diag", *arrs)
    arrs = [jnp.atleast_2d(a) for a in _jnp_promote(*arrs)]
    for a in arrs:
        if len(_shape(a)) != 2:
            raise ValueError("Arguments to jax.scipy.linalg.block_diag must have at most 2 "
                             "dimensions, got {} at argument {}.".format(a, arrs.index(a)))
    total_cols = sum(_shape(a)[1] for a in arrs)
    rows, before = [], 0
    for a in arrs:
        r, c = _shape(a)
        rows.append(jnp.pad(a, ((0, 0), (before, total_cols - before - c))))
        before += c
    return jnp.concatenate(rows, axis=0)


def _jnp_promote(*args):
    return promote_dtypes(*args)


def toeplitz(c, r=None):
    """Toeplitz matrix with first column ``c`` and first row ``r`` (default ``conj(c)``);
    ``r[0]`` is ignored. Batched over leading axes."""
    jnp = _jnp()
    check_arraylike("toeplitz", c)
    if r is None:
        c = to_jax(c)
        r = jnp.conj(c)
    else:
        check_arraylike("toeplitz", r)
    c, r = _jnp_promote(c, r)
    c, r = jnp.atleast_1d(c), jnp.atleast_1d(r)
    m, n = _shape(c)[-1], _shape(r)[-1]
    values = jnp.concatenate([jnp.flip(c, -1), r[..., 1:]], axis=-1)  # c[m-1] ... c[0] r[1]..
    idx = (m - 1) - np.arange(m)[:, None] + np.arange(n)[None, :]
    return values[..., idx]


def hankel(c, r=None):
    """Hankel matrix with first column ``c`` and last row ``r`` (default zeros); ``r[0]`` is
    ignored."""
    jnp = _jnp()
    check_arraylike("hankel", c)
    c = jnp.ravel(to_jax(c))
    r = jnp.zeros_like(c) if r is None else jnp.ravel(to_jax(r))
    c, r = _jnp_promote(c, r)
    m, n = _shape(c)[0], _shape(r)[0]
    values = jnp.concatenate([c, r[1:]])
    idx = np.arange(m)[:, None] + np.arange(n)[None, :]
    return values[idx]


def circulant(c):
    """Circulant matrix whose first column is ``c`` (batched over leading axes)."""
    jnp = _jnp()
    check_arraylike("circulant", c)
    c = jnp.atleast_1d(to_jax(c))
    n = _shape(c)[-1]
    idx = (np.arange(n)[:, None] - np.arange(n)[None, :]) % n
    return c[..., idx]


def companion(a):
    """Companion matrix of the polynomial with coefficients ``a`` (highest degree first)."""
    jnp = _jnp()
    (a,) = _inexact("companion", a)
    if len(_shape(a)) != 1:
        raise ValueError("Incorrect shape for `a`. `a` must be one-dimensional")
    n = _shape(a)[0]
    if n < 2:
        raise ValueError("The length of `a` must be at least 2.")
    first_row = -a[1:] / a[0]
    below = jnp.eye(n - 2, n - 1, dtype=aval_of(a).dtype)
    return jnp.concatenate([first_row[None, :], below], axis=0)


def fiedler(a):
    """Fiedler matrix ``|a_i - a_j|``."""
    jnp = _jnp()
    check_arraylike("fiedler", a)
    a = jnp.atleast_1d(to_jax(a))
    return jnp.abs(a[..., :, None] - a[..., None, :])


def fiedler_companion(a):
    """Fiedler's pentadiagonal companion matrix of the polynomial ``a`` (highest degree
    first): ones and the negated monic coefficients on the two sub- and super-diagonals."""
    jnp = _jnp()
    (a,) = _inexact("fiedler_companion", a)
    if len(_shape(a)) != 1:
        raise ValueError("Input 'a' must be a 1-D array.")
    size = _shape(a)[0]
    if size <= 2:
        if size == 2:
            return jnp.reshape(-(a[1] / a[0]), (1, 1))
        return jnp.zeros((0,), aval_of(a).dtype)
    a = a / a[0]
    n = size - 1
    out = jnp.zeros((n, n), aval_of(a).dtype)

    def put(out, rows, cols, values):
        rows, cols = np.asarray(rows, int), np.asarray(cols, int)
        return out.at[rows, cols].set(values) if rows.size else out
    out = put(out, range(3, n, 2), range(1, n - 2, 2), 1)
    out = put(out, range(2, n, 2), range(1, n - 1, 2), -a[3::2])
    out = put(out, range(0, n - 2, 2), range(2, n, 2), 1)
    out = put(out, range(0, n - 1, 2), range(1, n, 2), -a[2::2])
    out = out.at[0, 0].set(-a[1])
    return out.at[1, 0].set(1)


def leslie(f, s):
    """Leslie matrix: fecundity ``f`` on the first row, survival ``s`` on the subdiagonal."""
    jnp = _jnp()
    check_arraylike("leslie", f, s)
    f, s = _jnp_promote(f, s)
    f, s = jnp.atleast_1d(f), jnp.atleast_1d(s)
    n = _shape(f)[-1]
    if _shape(s)[-1] != n - 1:
        raise ValueError(f"Incorrect lengths for f and s. The length of s along the last "
                         f"axis must be one less than the length of f; got {n} and "
                         f"{_shape(s)[-1]}")
    below = jnp.concatenate([s[..., :, None] * jnp.eye(n - 1, dtype=aval_of(s).dtype),
                             jnp.zeros(_shape(s)[:-1] + (n - 1, 1), aval_of(s).dtype)],
                            axis=-1)
    return jnp.concatenate([f[..., None, :], below], axis=-2)


def convolution_matrix(a, n: int, mode: str = "full"):
    """Matrix ``A`` with ``A @ v == convolve(a, v, mode)`` for vectors ``v`` of length ``n``."""
    jnp = _jnp()
    check_arraylike("convolution_matrix", a)
    a = jnp.asarray(a)
    if len(_shape(a)) != 1:
        raise ValueError("convolution_matrix expects a one-dimensional a")
    n = operator.index(n)
    if n <= 0:
        raise ValueError("n must be a positive integer")
    m = _shape(a)[0]
    if m == 0:
        raise ValueError("len(a) must be at least 1.")
    if mode not in ("full", "same", "valid"):
        raise ValueError("'mode' argument must be one of ('full', 'same', 'valid')")
    column = jnp.concatenate([a, jnp.zeros((n - 1,), aval_of(a).dtype)])
    row = jnp.concatenate([a[:1], jnp.zeros((n - 1,), aval_of(a).dtype)])
    full = toeplitz(column, row)
    if mode == "full":
        return full
    trim = min(n, m) - 1  # rows dropped: split evenly ('same') or all from both ends
    start = trim // 2 if mode == "same" else trim
    stop = m + n - 1 - (trim - trim // 2 if mode == "same" else trim)
    return full[start:stop]


def dft(n: int, scale=None, *, dtype=None):
    """The discrete Fourier transform matrix ``exp(-2 pi i j k / n)`` (scaled by ``1/n`` or
    ``1/sqrt(n)`` for ``scale`` 'n' or 'sqrtn')."""
    jnp = _jnp()
    if scale not in (None, "n", "sqrtn"):
        raise ValueError(f"scale must be None, 'n', or 'sqrtn', got {scale!r}")
    dtype = dtypes.canonicalize_dtype(np.complex64 if dtype is None else dtype)
    k = np.arange(n)
    m = np.exp(-2j * np.pi * np.outer(k, k) / n)
    if scale == "n":
        m = m / n
    elif scale == "sqrtn":
        m = m / math.sqrt(n)
    return jnp.asarray(m.astype(dtype))


def hadamard(n: int, dtype=int):
    """Sylvester's Hadamard matrix of order ``n`` (a power of 2)."""
    jnp = _jnp()
    if n < 1 or n & (n - 1):
        raise ValueError("n must be an positive a power of 2 integer")
    h = np.ones((1, 1))
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return jnp.asarray(h.astype(dtypes.canonicalize_dtype(np.dtype(dtype))))


def helmert(n: int, full: bool = False):
    """Helmert matrix of order ``n`` (without its first row unless ``full``)."""
    jnp = _jnp()
    h = np.tril(np.ones((n, n)), -1) - np.diag(np.arange(n))
    d = np.arange(n) * np.arange(1, n + 1)
    h[0] = 1
    d[0] = n
    out = h / np.sqrt(d)[:, None]
    out = out if full else out[1:]
    return jnp.asarray(out.astype(dtypes.default_float_dtype()))


def hilbert(n: int):
    """Hilbert matrix ``1 / (i + j + 1)``."""
    jnp = _jnp()
    i = np.arange(n)
    return jnp.asarray((1.0 / (i[:, None] + i[None, :] + 1)).astype(
        dtypes.default_float_dtype()))


def invhilbert(n: int):
    """Inverse of the Hilbert matrix of order ``n`` (exact integers, as a float array)."""
    jnp = _jnp()
    out = np.empty((n, n), dtype=object)
    for i in range(n):
        for j in range(i + 1):
            value = ((-1) ** (i + j) * (i + j + 1) * math.comb(n + i, n - j - 1) *
                     math.comb(n + j, n - i - 1) * math.comb(i + j, i) ** 2)
            out[i, j] = out[j, i] = value
    return jnp.asarray(out.astype(np.float64).astype(dtypes.default_float_dtype()))


def pascal(n: int, kind=None):
    """Pascal matrix: 'symmetric' (default), 'lower' or 'upper' (binomial coefficients)."""
    jnp = _jnp()
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"Expected kind to be one of 'symmetric', 'lower', or 'upper'; got "
                         f"{kind}")
    lower = np.array([[math.comb(i, j) for j in range(n)] for i in range(n)], dtype=np.float64)
    out = {"lower": lambda: lower, "upper": lambda: lower.T,
           "symmetric": lambda: lower @ lower.T}[kind]()
    return jnp.asarray(out.astype(dtypes.default_float_dtype()))


def invpascal(n: int, kind=None):
    """Inverse of :func:`pascal` (exact integers, as a float array)."""
    jnp = _jnp()
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"Expected kind to be one of 'symmetric', 'lower', or 'upper'; got "
                         f"{kind}")
    lower_inv = np.array([[(-1) ** (i - j) * math.comb(i, j) if i >= j else 0
                           for j in range(n)] for i in range(n)], dtype=np.float64)
    out = {"lower": lambda: lower_inv, "upper": lambda: lower_inv.T,
           "symmetric": lambda: lower_inv.T @ lower_inv}[kind]()
    return jnp.asarray(out.astype(dtypes.default_float_dtype()))
