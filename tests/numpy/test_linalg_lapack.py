"""LU-based linear algebra under jit on the CPU, where ``lu`` lowers to LAPACK getrf and
``triangular_solve`` to BLAS trsm through FFI custom calls: values against NumPy, and
vmap/grad through them."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src.runtime import ffi

pytestmark = pytest.mark.skipif(ffi.LU_TARGET not in ffi.ffi_targets("cpu"),
                                reason="NumPy's bundled OpenBLAS was not found")

SHAPES = [(1, 1), (3, 3), (17, 17), (64, 64), (2, 5, 5), (3, 2, 8, 8)]
DTYPES = [np.float32, np.float64, np.complex64]


def _matrix(rng, shape, dtype):
    a = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.standard_normal(shape)
    # well conditioned: dominant diagonal
    return (a + 3 * shape[-1] ** 0.5 * np.eye(shape[-1])).astype(dtype)


def _tol(dtype):
    return 1e-10 if dtype == np.float64 else 2e-4


def test_jit_lu_lowers_to_lapack():
    text = xjax.jit(lax.linalg.lu).lower(jnp.ones((4, 4))).as_text()
    assert ffi.LU_TARGET in text
    # integer-free dtypes LAPACK lacks keep the lax algorithm
    text16 = xjax.jit(lax.linalg.lu).lower(jnp.ones((4, 4), jnp.float16)).as_text()
    assert ffi.LU_TARGET not in text16


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_jit_solve_inv_det_against_numpy(shape, dtype):
    with xjax.config.override(jax_enable_x64=dtype == np.float64):
        rng = np.random.default_rng(0)
        a = _matrix(rng, shape, dtype)
        b = rng.standard_normal(shape[:-1] + (2,)).astype(dtype)
        tol = _tol(dtype)
        x = xjax.jit(jnp.linalg.solve)(a, b)
        np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=tol, atol=tol)
        np.testing.assert_allclose(xjax.jit(jnp.linalg.inv)(a), np.linalg.inv(a), rtol=tol,
                                   atol=tol)
        unit = (a / (3 * shape[-1] ** 0.5)).astype(dtype)  # a determinant that fits
        np.testing.assert_allclose(xjax.jit(jnp.linalg.det)(unit), np.linalg.det(unit),
                                   rtol=tol * 10, atol=tol)


@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (2, 5, 4)], ids=str)
def test_jit_lu_matches_eager(shape):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(shape).astype(np.float32)
    lu_j, piv_j, perm_j = xjax.jit(lax.linalg.lu)(a)
    lu_e, piv_e, perm_e = lax.linalg.lu(a)
    np.testing.assert_array_equal(piv_j, piv_e)
    np.testing.assert_array_equal(perm_j, perm_e)
    np.testing.assert_allclose(lu_j, lu_e, rtol=1e-5, atol=1e-5)
    assert lu_j.dtype == np.float32 and piv_j.dtype == np.int32 and perm_j.dtype == np.int32


def test_jit_lu_of_a_singular_matrix_returns_factors():
    a = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)
    lu, piv, perm = xjax.jit(lax.linalg.lu)(a)
    lower = np.tril(np.asarray(lu), -1) + np.eye(2)
    np.testing.assert_allclose(lower @ np.triu(np.asarray(lu)), a[np.asarray(perm)], atol=1e-6)
    assert float(xjax.jit(jnp.linalg.det)(a)) == 0.0


def test_vmap_and_grad_through_jitted_lapack_lu():
    rng = np.random.default_rng(2)
    a = _matrix(rng, (3, 4, 4), np.float32)
    b = rng.standard_normal((3, 4)).astype(np.float32)
    x = xjax.jit(xjax.vmap(jnp.linalg.solve))(a, b)
    np.testing.assert_allclose(x, np.linalg.solve(a, b[..., None])[..., 0], rtol=2e-4,
                               atol=2e-4)
    # d/dA sum(solve(A, b)) = -A^-T 1 x^T, d/db = A^-T 1
    ga, gb = xjax.jit(xjax.grad(lambda m, v: jnp.linalg.solve(m, v).sum(), (0, 1)))(a[0], b[0])
    w = np.linalg.solve(a[0].T.astype(np.float64), np.ones(4))
    x0 = np.linalg.solve(a[0].astype(np.float64), b[0])
    np.testing.assert_allclose(gb, w, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(ga, -np.outer(w, x0), rtol=1e-3, atol=1e-4)
    gdet = xjax.jit(xjax.grad(jnp.linalg.det))(a[1])
    want = np.linalg.det(a[1].astype(np.float64)) * np.linalg.inv(a[1].astype(np.float64)).T
    np.testing.assert_allclose(gdet, want, rtol=1e-3, atol=1e-3)


@pytest.mark.skipif(ffi.TRSM_TARGET not in ffi.ffi_targets("cpu"),
                    reason="NumPy's bundled OpenBLAS has no trsm")
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a,conjugate_a", [(False, False), (True, False),
                                                     (True, True), (False, True)])
@pytest.mark.parametrize("unit_diagonal", [False, True])
def test_jit_triangular_solve_against_numpy(dtype, left_side, lower, transpose_a, conjugate_a,
                                            unit_diagonal):
    with xjax.config.override(jax_enable_x64=dtype in (np.float64, np.complex128)):
        rng = np.random.default_rng(3)
        a = _matrix(rng, (2, 5, 5), dtype)
        b = rng.standard_normal((2, 5, 3) if left_side else (2, 3, 5)).astype(dtype)
        kwargs = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
                      conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
        fun = xjax.jit(lambda m, v: lax.linalg.triangular_solve(m, v, **kwargs))
        if (dtype, left_side, lower) == (np.float32, True, True):
            assert ffi.TRSM_TARGET in fun.lower(a, b).as_text() or (
                conjugate_a and not transpose_a)
        x = np.asarray(fun(a, b))
        t = np.tril(a) if lower else np.triu(a)
        if unit_diagonal:
            t = t - np.diagonal(t, axis1=-2, axis2=-1)[..., None] * np.eye(5) + np.eye(5)
        if conjugate_a:
            t = t.conj()
        if transpose_a:
            t = np.swapaxes(t, -1, -2)
        got = t @ x if left_side else x @ t
        tol = 1e-10 if dtype in (np.float64, np.complex128) else 1e-4
        np.testing.assert_allclose(got, b, rtol=tol, atol=tol)
