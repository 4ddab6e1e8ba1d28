"""xjax.scipy.linalg against scipy.linalg (a test-only reference, skipped without SciPy):
solvers and decompositions, matrix functions, special matrices; jit, vmap and derivatives for
a sample; JAX's unimplemented cases."""

import numpy as np
import pytest

import xjax
import xjax.scipy.linalg as jsl
from xjax.test_util import check_grads

sl = pytest.importorskip("scipy.linalg")
rng = np.random.default_rng(0)


def _rand(shape, dtype=np.float32):
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _spd(n, dtype=np.float32):
    a = _rand((n, n), dtype)
    return (a @ np.conj(a.T) + n * np.eye(n)).astype(dtype)


def _close(got, want, tol=1e-4):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, np.abs(want).max()))


DTYPES = [np.float32, np.complex64]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [False, True])
def test_cholesky_family(lower, dtype):
    a = _spd(4, dtype)
    b = _rand((4, 2), dtype)
    _close(jsl.cholesky(a, lower=lower), sl.cholesky(a, lower=lower), 1e-3)
    c = jsl.cho_factor(a, lower=lower)
    assert c[1] == lower
    _close(jsl.cho_solve(c, b), sl.cho_solve(sl.cho_factor(a, lower=lower), b), 1e-3)
    _close(jsl.cho_solve(c, b[:, 0]), sl.cho_solve(sl.cho_factor(a, lower=lower), b[:, 0]),
           1e-3)
    _close(jsl.solve(a, b, assume_a="pos"), sl.solve(a, b, assume_a="pos"), 1e-3)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("trans", [0, 1, 2, "N", "T", "C"])
@pytest.mark.parametrize("lower", [False, True])
def test_solve_triangular(trans, lower, dtype):
    a = _rand((4, 4), dtype) + 4 * np.eye(4, dtype=dtype)
    b = _rand((4, 3), dtype)
    _close(jsl.solve_triangular(a, b, trans=trans, lower=lower),
           sl.solve_triangular(a, b, trans=trans, lower=lower), 1e-3)
    _close(jsl.solve_triangular(a, b[:, 0], trans=trans, lower=lower, unit_diagonal=True),
           sl.solve_triangular(a, b[:, 0], trans=trans, lower=lower, unit_diagonal=True), 1e-3)


@pytest.mark.parametrize("dtype", DTYPES)
def test_lu_family(dtype):
    a = _rand((5, 5), dtype)
    b = _rand((5, 2), dtype)
    for got, want in zip(jsl.lu(a), sl.lu(a), strict=True):
        _close(got, want)
    for got, want in zip(jsl.lu(a[:, :3], permute_l=True), sl.lu(a[:, :3], permute_l=True),
                         strict=True):
        _close(got, want)
    for got, want in zip(jsl.lu(a[:3]), sl.lu(a[:3]), strict=True):
        _close(got, want)
    factors = jsl.lu_factor(a)
    want_factors = sl.lu_factor(a)
    _close(factors[0], want_factors[0])
    np.testing.assert_array_equal(np.asarray(factors[1]), want_factors[1])
    for trans in (0, 1, 2):
        _close(jsl.lu_solve(factors, b, trans=trans), sl.lu_solve(want_factors, b, trans=trans),
               1e-3)
    _close(jsl.lu_solve(factors, b[:, 0]), sl.lu_solve(want_factors, b[:, 0]), 1e-3)
    _close(jsl.solve(a, b), sl.solve(a, b), 1e-3)
    _close(jsl.det(a), sl.det(a), 1e-3)
    _close(jsl.inv(a), sl.inv(a), 1e-3)


@pytest.mark.parametrize("dtype", DTYPES)
def test_qr_svd_eigh_hessenberg(dtype):
    a = _rand((5, 3), dtype)
    for mode in ("full", "economic"):
        for got, want in zip(jsl.qr(a, mode=mode), sl.qr(a, mode=mode), strict=True):
            _close(got, want)
    _close(jsl.qr(a, mode="r")[0], sl.qr(a, mode="r")[0])
    c = _rand((2, 5), dtype)
    _close(jsl.qr_multiply(a, c)[0], sl.qr_multiply(a, c)[0])
    d = _rand((3, 2), dtype)
    _close(jsl.qr_multiply(a, d, mode="left")[0], sl.qr_multiply(a, d, mode="left")[0])
    _close(jsl.svd(a, compute_uv=False), sl.svd(a, compute_uv=False))
    u, s, vh = jsl.svd(a)
    _close((np.asarray(u)[:, :3] * np.asarray(s)) @ np.asarray(vh), a)
    h = _spd(4, dtype)
    w, v = jsl.eigh(h)
    _close(w, sl.eigh(h)[0], 1e-3)
    _close(jsl.eigh(h, eigvals_only=True), sl.eigh(h, eigvals_only=True), 1e-3)
    m = _rand((5, 5), dtype)
    hess, q = jsl.hessenberg(m, calc_q=True)
    _close(np.asarray(q) @ np.asarray(hess) @ np.conj(np.asarray(q).T), m, 1e-3)
    _close(np.abs(np.asarray(hess)), np.abs(sl.hessenberg(m)), 1e-3)


def test_eigh_tridiagonal():
    d, e = _rand(6), _rand(5)
    _close(jsl.eigh_tridiagonal(d, e, eigvals_only=True),
           sl.eigh_tridiagonal(d, e, eigvals_only=True), 1e-4)
    w, v = jsl.eigh_tridiagonal(d, e)
    t = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    _close(t @ np.asarray(v), np.asarray(v) * np.asarray(w), 1e-4)
    _close(jsl.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(1, 3)),
           sl.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(1, 3)), 1e-4)


@pytest.mark.parametrize("scale", [0.01, 1.0, 6.0])
@pytest.mark.parametrize("dtype", DTYPES)
def test_expm(scale, dtype):
    a = (_rand((4, 4), dtype) * scale).astype(dtype)
    _close(jsl.expm(a), sl.expm(a), 1e-3)
    _close(xjax.jit(jsl.expm)(a), sl.expm(a), 1e-3)


def test_expm_batched_and_special_inputs():
    a = _rand((3, 4, 4))
    _close(jsl.expm(a), np.stack([sl.expm(m) for m in a]), 1e-3)
    _close(jsl.expm(np.zeros((2, 2), np.float32)), np.eye(2))
    assert np.isnan(np.asarray(jsl.expm(np.full((2, 2), np.nan, np.float32)))).all()


def test_expm_frechet_polar_sylvester():
    a, e = _rand((4, 4)), _rand((4, 4))
    got_expm, got_frechet = jsl.expm_frechet(a, e)
    want_expm, want_frechet = sl.expm_frechet(a, e)
    _close(got_expm, want_expm, 1e-3)
    _close(got_frechet, want_frechet, 1e-3)
    _close(jsl.expm_frechet(a, e, compute_expm=False), want_frechet, 1e-3)
    for side in ("right", "left"):
        for got, want in zip(jsl.polar(a, side), sl.polar(a, side), strict=True):
            _close(got, want, 1e-3)
    b, c = _rand((3, 3)), _rand((4, 3))
    _close(jsl.solve_sylvester(a, b, c), sl.solve_sylvester(a, b, c), 1e-3)


def test_special_matrices():
    c, r = np.array([1., 2., 3.], np.float32), np.array([1., 5., 6., 7.], np.float32)
    _close(jsl.toeplitz(c, r), sl.toeplitz(c, r))
    _close(jsl.toeplitz(np.array([1, 2 + 1j, 3])), sl.toeplitz([1, 2 + 1j, 3]))
    _close(jsl.hankel(c, r), sl.hankel(c, r))
    _close(jsl.hankel(c), sl.hankel(c))
    _close(jsl.circulant(c), sl.circulant(c))
    _close(jsl.companion(np.array([2., 2., 3.])), sl.companion([2., 2., 3.]))
    _close(jsl.fiedler(np.array([1, 4, 2])), sl.fiedler([1, 4, 2]))
    for k in range(2, 8):
        _close(jsl.fiedler_companion(np.arange(1., k + 1)), sl.fiedler_companion(
            np.arange(1., k + 1)))
    _close(jsl.leslie(np.array([0.1, 2., 1.]), np.array([0.2, 0.8])),
           sl.leslie([0.1, 2., 1.], [0.2, 0.8]))
    for mode in ("full", "same", "valid"):
        for n in (2, 4, 6):
            _close(jsl.convolution_matrix(np.array([1., 2., 3., 4.]), n, mode),
                   sl.convolution_matrix([1., 2., 3., 4.], n, mode))
    _close(jsl.dft(4), sl.dft(4))
    _close(jsl.dft(3, "sqrtn"), sl.dft(3, "sqrtn"))
    np.testing.assert_array_equal(jsl.hadamard(8), sl.hadamard(8))
    _close(jsl.helmert(5), sl.helmert(5))
    _close(jsl.helmert(4, full=True), sl.helmert(4, full=True))
    _close(jsl.hilbert(4), sl.hilbert(4))
    _close(jsl.invhilbert(4), sl.invhilbert(4))
    for kind in ("symmetric", "lower", "upper"):
        _close(jsl.pascal(5, kind), sl.pascal(5, kind))
        _close(jsl.invpascal(5, kind), sl.invpascal(5, kind))
    blocks = (np.ones((2, 2)), np.array([[5, 6]]), np.array(7))
    _close(jsl.block_diag(*blocks), sl.block_diag(*blocks))
    assert jsl.hadamard(4).dtype == np.int32 and jsl.pascal(3).dtype == np.float32


def test_jit_vmap_and_grads():
    a = _rand((4, 4)) + 4 * np.eye(4, dtype=np.float32)
    b = _rand((4, 2))
    factors = jsl.lu_factor(a)
    _close(xjax.jit(jsl.lu_solve)(factors, b), jsl.lu_solve(factors, b), 1e-4)
    factor = np.linalg.cholesky(_spd(4))
    _close(xjax.jit(lambda c, b: jsl.cho_solve((c, True), b))(factor, b),
           jsl.cho_solve((factor, True), b), 1e-3)
    batch = np.stack([a, 2 * a])
    _close(xjax.vmap(jsl.expm)(batch), np.stack([sl.expm(m) for m in batch]), 1e-3)
    check_grads(lambda a: jsl.expm(a * 0.3), (_rand((3, 3)),), order=1, atol=2e-2, rtol=2e-2)
    check_grads(lambda a, b: jsl.solve_triangular(a, b, lower=True), (a, b), order=1,
                atol=2e-2, rtol=2e-2)
    check_grads(lambda a: jsl.det(a), (a,), order=1, atol=2e-2, rtol=2e-2)


def test_not_implemented():
    m = np.eye(2, dtype=np.float32)
    with pytest.raises(NotImplementedError):
        jsl.eigh(m, m)


def test_pivoted_qr():
    a = _rand((5, 4))
    for mode in ("full", "economic"):
        for got, want in zip(jsl.qr(a, mode=mode, pivoting=True),
                             sl.qr(a, mode=mode, pivoting=True), strict=True):
            _close(got, want)
    c = _rand((2, 5))
    for got, want in zip(jsl.qr_multiply(a, c, pivoting=True),
                         sl.qr_multiply(a, c, pivoting=True), strict=True):
        _close(got, want)
