"""Rule-check records of the linear-algebra primitives (``xjax.lax.linalg``): batches of
small matrices, square and rectangular, real and complex, with inputs made where each
decomposition is well defined (positive definite for cholesky, well-conditioned triangles
for triangular_solve, distinct eigenvalues and singular values for eigh and svd)."""

import numpy as np

from xjax._src.higher_order.linalg import api as lax_linalg
from xjax import lax
from xjax._src.core import dtypes
from op_table import OpRecord, random_array

_F = (np.float32, np.complex64)
_TOL = 1e-4


def _spd(rng, shapes, dtype):
    a = random_array(rng, shapes[0], dtype)
    n = shapes[0][-1]
    return [(a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)]


def _triangular_and_rhs(rng, shapes, dtype):
    a = random_array(rng, shapes[0], dtype)
    n = shapes[0][-1]
    a = (a + 3 * n * np.eye(n)).astype(dtype)  # diagonally dominant: well conditioned
    return [a, random_array(rng, shapes[1], dtype)]


def _pivots(rng, shapes, dtype):
    (shape,) = shapes
    k = shape[-1]
    m = k + 2
    return [np.stack([rng.integers(i, m, shape[:-1]) for i in range(k)], -1).astype(dtype)]


def _solve(**params):
    return lambda a, b: lax_linalg.triangular_solve(a, b, **params)


RECORDS = [
    OpRecord("cholesky", lax_linalg.cholesky, [(2, 4, 4)], _F, make_args=_spd, tol=_TOL),
    OpRecord("triangular_solve", _solve(left_side=True, lower=True), [(2, 4, 4), (2, 4, 3)],
             _F, make_args=_triangular_and_rhs, tol=_TOL, name="left-lower"),
    # XLA solves 16-bit floats rounding at each step, the NumPy impl once (in float32)
    OpRecord("triangular_solve", _solve(left_side=True, lower=True), [(2, 4, 4), (2, 4, 3)],
             (np.float16, dtypes.bfloat16), make_args=_triangular_and_rhs, tol=3e-2,
             name="left-lower-16bit"),
    OpRecord("triangular_solve", _solve(left_side=True, lower=False, transpose_a=True,
                                        unit_diagonal=True), [(3, 3), (3, 2)], _F,
             make_args=_triangular_and_rhs, tol=_TOL, name="left-upper-t-unit"),
    OpRecord("triangular_solve", _solve(left_side=False, lower=True, transpose_a=True,
                                        conjugate_a=True), [(4, 4), (2, 4)], _F,
             make_args=_triangular_and_rhs, tol=_TOL, name="right-lower-adjoint"),
    OpRecord("triangular_solve", _solve(left_side=False, lower=False, conjugate_a=True),
             [(2, 3, 3), (2, 5, 3)], _F, make_args=_triangular_and_rhs, tol=_TOL,
             name="right-upper-conj"),
    OpRecord("lu", lax_linalg.lu, [(2, 5, 5)], _F, tol=_TOL, name="square", grad_order=0),
    OpRecord("lu", lambda x: lax_linalg.lu(x)[0], [(4, 4)], _F, tol=_TOL, name="square-lu"),
    OpRecord("lu", lambda x: lax_linalg.lu(x)[0], [(5, 3)], _F, tol=_TOL, name="tall"),
    OpRecord("lu", lambda x: lax_linalg.lu(x)[0], [(3, 5)], _F, tol=_TOL, name="wide"),
    OpRecord("lu", lax_linalg.lu, [(2, 40, 37)], (np.float32,), tol=_TOL, name="blocks",
             grad_order=0),
    OpRecord("lu_pivots_to_permutation",
             lambda p: lax_linalg.lu_pivots_to_permutation(p, p.shape[-1] + 2), [(2, 4)],
             (np.int32,), make_args=_pivots),
]


def _weights(n, dtype):
    """diag(1, 2, ..., n) as a matrix constant."""
    return np.diag(np.arange(1, n + 1)).astype(dtype)


def _projectors(v, n_cols):
    """sum_j (j + 1) v_j v_j^H: invariant to each column's sign (phase), unlike v itself."""
    d = _weights(n_cols, v.dtype)
    vh = lax.transpose(v, tuple(range(v.ndim - 2)) + (v.ndim - 1, v.ndim - 2))
    if np.issubdtype(v.dtype, np.complexfloating):
        vh = lax.conj(vh)
    return _matmul(_matmul(v, d), vh)


def _matmul(a, b):
    nb = max(a.ndim, 2) - 2
    if b.ndim == 2 and a.ndim > 2:
        return lax.dot_general(a, b, (((a.ndim - 1,), (0,)), ((), ())))
    batch = tuple(range(nb))
    return lax.dot_general(a, b, (((a.ndim - 1,), (b.ndim - 2,)), (batch, batch)))


def _eigh(**kw):
    def fun(x):
        v, w = lax_linalg.eigh(x, **kw)
        return w, _projectors(v, v.shape[-1])
    return fun


def _svd(full_matrices):
    def fun(x):
        u, s, vt = lax_linalg.svd(x, full_matrices=full_matrices)
        k = s.shape[-1]
        u = lax.slice_in_dim(u, 0, k, 1, u.ndim - 1)
        vt = lax.slice_in_dim(vt, 0, k, 1, vt.ndim - 2)
        return s, _matmul(_matmul(u, _weights(k, u.dtype)), vt)
    return fun


def _qr(full_matrices):
    return lambda x: lax_linalg.qr(x, full_matrices=full_matrices)


RECORDS += [
    OpRecord("qr", _qr(False), [(2, 5, 3)], _F, tol=_TOL, name="tall-reduced"),
    OpRecord("qr", _qr(True), [(4, 4)], _F, tol=_TOL, name="square-full"),
    OpRecord("qr", _qr(True), [(5, 3)], _F, tol=_TOL, name="tall-full", grad_order=1),
    OpRecord("qr", _qr(False), [(3, 5)], _F, tol=_TOL, name="wide"),
    # the permutation output has no tangent: check_grads sees only (q, r)
    OpRecord("qr", lambda x: lax_linalg.qr(x, pivoting=True, full_matrices=False), [(2, 5, 4)],
             _F, tol=_TOL, name="pivoting", grad_order=0),
    OpRecord("qr", lambda x: lax_linalg.qr(x, pivoting=True, full_matrices=False)[:2],
             [(5, 4)], _F, tol=_TOL, name="pivoting-grads"),
    OpRecord("qr", lambda x: lax_linalg.qr(x, pivoting=True)[:2], [(3, 5)], _F, tol=_TOL,
             name="pivoting-wide"),
    OpRecord("eigh", _eigh(), [(2, 4, 4)], _F, tol=_TOL, name="batched"),
    OpRecord("eigh", _eigh(lower=False), [(5, 5)], _F, tol=_TOL, name="upper-odd"),
    OpRecord("eigh", lambda x: lax_linalg.eigh(x, subset_by_index=(1, 3))[1], [(4, 4)], _F,
             tol=_TOL, name="subset", grad_order=0),
    OpRecord("svd", _svd(False), [(2, 5, 3)], _F, tol=_TOL, name="tall"),
    OpRecord("svd", _svd(False), [(3, 4)], _F, tol=_TOL, name="wide"),
    OpRecord("svd", _svd(True), [(3, 3)], _F, tol=_TOL, name="square-full"),
    OpRecord("svd", lambda x: lax_linalg.svd(x, compute_uv=False), [(2, 4, 3)], _F,
             tol=_TOL, name="values"),
    OpRecord("svd", _svd(True), [(5, 2)], _F, tol=_TOL, name="tall-full", grad_order=0),
    # eig and schur run LAPACK (geev, gees) eagerly and under jit alike; eigenvectors and
    # Schur vectors are phase-normalized by LAPACK, so compared as they are
    OpRecord("eig", lambda x: lax_linalg.eig(x, compute_left_eigenvectors=False,
                                             compute_right_eigenvectors=False),
             [(2, 4, 4)], _F, tol=_TOL, name="values", grad_order=1),
    OpRecord("eig", lax_linalg.eig, [(3, 3)], _F, tol=_TOL, name="vectors", grad_order=0),
    OpRecord("schur", lax_linalg.schur, [(2, 4, 4)], _F, tol=_TOL, grad_order=0),
]
