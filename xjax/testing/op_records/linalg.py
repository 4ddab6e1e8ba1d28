"""Rule-check records of the linear-algebra primitives (``xjax.lax.linalg``): batches of
small matrices, square and rectangular, real and complex, with inputs made where each
decomposition is well defined (positive definite for cholesky, well-conditioned triangles
for triangular_solve, distinct eigenvalues and singular values for eigh and svd)."""

import numpy as np

from xjax import lax
from xjax.core import dtypes
from xjax.testing.op_table import OpRecord, random_array

_F = (np.float32, np.complex64)
_TOL = 1e-4
# Complex inputs: check_grads' reverse-mode test pairs values with a conjugating inner
# product, which disagrees with JAX's (bilinear) transposes of complex maps; the complex
# reverse-mode rules are checked against JAX in tests/lax/test_linalg.py.
_REAL_GRADS = (np.float32,)


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
    return lambda a, b: lax.linalg.triangular_solve(a, b, **params)


RECORDS = [
    OpRecord("cholesky", lax.linalg.cholesky, [(2, 4, 4)], _F, make_args=_spd, tol=_TOL),
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
    OpRecord("lu", lax.linalg.lu, [(2, 5, 5)], _F, tol=_TOL, name="square", grad_order=0),
    OpRecord("lu", lambda x: lax.linalg.lu(x)[0], [(4, 4)], _F, tol=_TOL, name="square-lu"),
    OpRecord("lu", lambda x: lax.linalg.lu(x)[0], [(5, 3)], _F, tol=_TOL, name="tall"),
    OpRecord("lu", lambda x: lax.linalg.lu(x)[0], [(3, 5)], _F, tol=_TOL, name="wide"),
    OpRecord("lu", lax.linalg.lu, [(2, 40, 37)], (np.float32,), tol=_TOL, name="blocks",
             grad_order=0),
    OpRecord("lu_pivots_to_permutation",
             lambda p: lax.linalg.lu_pivots_to_permutation(p, p.shape[-1] + 2), [(2, 4)],
             (np.int32,), make_args=_pivots),
]
