"""``lax.linalg.eig`` and ``lax.linalg.schur`` on LAPACK geev/gees (FFI custom calls from
NumPy's OpenBLAS): under jit and eagerly (the same kernel, so bit-identical), checked by
their defining identities and NumPy's eigenvalues; batching, vmap, jvp under jit, NaN
inputs, empty matrices, the errors JAX raises, and the fallbacks without the library."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src.higher_order.linalg import eig as linalg_eig
from xjax._src.higher_order.linalg import schur as linalg_schur
from xjax._src.higher_order.linalg.common import use_scipy
from xjax._src.runtime import ffi

L = lax.linalg
pytestmark = pytest.mark.skipif(
    not {ffi.GEEV_TARGET, ffi.GEES_TARGET} <= ffi.ffi_targets("cpu"),
    reason="NumPy's bundled OpenBLAS (geev, gees) was not found")

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
FLAGS = [(True, True), (False, True), (True, False), (False, False)]


def _rand(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _tol(dtype):
    return 1e-10 if np.dtype(dtype) in (np.float64, np.complex128) else 5e-4


def _h(x):
    return np.conj(np.swapaxes(np.asarray(x), -1, -2))


def _x64(dtype):
    return xjax.config.override(jax_enable_x64=np.dtype(dtype).itemsize in (8, 16) and
                                np.dtype(dtype) != np.complex64)


def _assert_spectrum(got, a, tol):
    """``got`` are the eigenvalues of ``a`` (NumPy's, in float64), in any order."""
    want = list(np.linalg.eigvals(np.asarray(a, np.complex128)))
    for g in np.asarray(got).ravel():
        k = int(np.argmin(np.abs(np.asarray(want) - g)))  # each eigenvalue matched once
        np.testing.assert_allclose(g, want.pop(k), rtol=tol, atol=tol)


def _same(got, want):
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))

# -- eig --


def _eig(left, right):
    return lambda a: L.eig(a, compute_left_eigenvectors=left, compute_right_eigenvectors=right)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("flags", FLAGS, ids=str)
def test_jit_eig_is_geev(dtype, flags):
    rng = np.random.default_rng(0)
    a = _rand(rng, (2, 6, 6), dtype)
    tol = _tol(dtype)
    with _x64(dtype):
        outs = xjax.jit(_eig(*flags))(a)
        _same(outs, _eig(*flags)(a))  # eager runs the same kernel
    w = np.asarray(outs[0])
    assert w.dtype == (np.complex128 if np.dtype(dtype).itemsize in (8, 16)
                       and dtype != np.complex64 else np.complex64)
    for k in range(2):
        _assert_spectrum(w[k], a[k], tol)
    vectors = dict(zip([n for n, f in zip(("vl", "vr"), flags) if f], outs[1:], strict=True))
    for name, v in vectors.items():
        v = np.asarray(v)
        np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, rtol=tol, atol=tol)
        # geev's normalization: the largest-magnitude component of each vector is real
        largest = np.take_along_axis(v, np.argmax(np.abs(v), -2)[..., None, :], -2)
        np.testing.assert_allclose(largest.imag, 0, atol=tol)
        if name == "vr":
            np.testing.assert_allclose(a @ v, v * w[..., None, :], rtol=tol, atol=10 * tol)
        else:
            np.testing.assert_allclose(_h(v) @ a, w[..., :, None] * _h(v), rtol=tol,
                                       atol=10 * tol)


def test_jit_eig_lowers_to_the_geev_custom_call():
    text = xjax.jit(L.eig).lower(jnp.ones((2, 3, 3))).as_text()
    assert ffi.GEEV_TARGET in text
    assert "left = 1 : i64, right = 1 : i64" in text


def test_jnp_eig_and_eigvals_under_jit():
    rng = np.random.default_rng(1)
    a = _rand(rng, (3, 5, 5), np.float32)
    w, v = xjax.jit(jnp.linalg.eig)(a)
    np.testing.assert_allclose(np.asarray(a) @ np.asarray(v), np.asarray(v) * np.asarray(w)[
        ..., None, :], atol=1e-4)
    got = np.asarray(xjax.jit(jnp.linalg.eigvals)(a))
    for k in range(3):
        _assert_spectrum(got[k], a[k], 1e-4)


@pytest.mark.parametrize("in_axis", [0, 2])
def test_vmap_of_eig_under_jit_matches_a_loop(in_axis):
    rng = np.random.default_rng(2)
    mats = [_rand(rng, (4, 4), np.complex64) for _ in range(3)]
    batched = np.stack(mats, axis=in_axis)
    got = xjax.jit(xjax.vmap(L.eig, in_axes=in_axis))(batched)
    want = [np.stack(parts) for parts in zip(*[[np.asarray(o) for o in L.eig(m)]
                                               for m in mats], strict=True)]
    _same(got, want)


def _finite_difference(fun, a, da, eps=1e-6):
    return (np.asarray(fun(a + eps * da)) - np.asarray(fun(a - eps * da))) / (2 * eps)


def test_jvp_of_eigvals_under_jit_against_finite_differences():
    rng = np.random.default_rng(3)
    with xjax.config.override(jax_enable_x64=True):
        a, da = rng.standard_normal((5, 5)), rng.standard_normal((5, 5))
        eigvals = _eig(False, False)
        w, dw = xjax.jit(lambda a, da: xjax.jvp(lambda x: eigvals(x)[0], (a,), (da,)))(a, da)
        np.testing.assert_array_equal(np.asarray(w), np.asarray(eigvals(a)[0]))
        np.testing.assert_allclose(dw, _finite_difference(lambda x: eigvals(x)[0], a, da),
                                   atol=1e-6)


def test_jvp_of_eigenvectors_under_jit_against_finite_differences():
    rng = np.random.default_rng(4)
    with xjax.config.override(jax_enable_x64=True):
        a, da = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))

        def right_vectors(x):
            return L.eig(x, compute_left_eigenvectors=False, enable_eigvec_derivs=True)[1]

        _, dv = xjax.jit(lambda a, da: xjax.jvp(right_vectors, (a,), (da,)))(a, da)
        np.testing.assert_allclose(dv, _finite_difference(right_vectors, a, da), atol=1e-5)
        with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
            xjax.jit(lambda a, da: xjax.jvp(lambda x: L.eig(x)[2], (a,), (da,)))(a, da)


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_eig_of_a_non_finite_matrix_is_nan(mode):
    a = np.stack([np.eye(3, dtype=np.float32), np.full((3, 3), np.nan, np.float32)])
    a[0, 0, 1] = 2.0
    fun = xjax.jit(L.eig) if mode == "jit" else L.eig
    outs = [np.asarray(o) for o in fun(a)]
    for o in outs:
        assert np.isnan(o[1]).all()
        assert np.isfinite(o[0]).all()
    np.testing.assert_allclose(outs[0][0], [1, 1, 1])


@pytest.mark.parametrize("shape", [(0, 0), (0, 3, 3), (2, 0, 0)], ids=str)
def test_eig_and_schur_of_empty_matrices(shape):
    a = np.zeros(shape, np.float32)
    for fun in (L.eig, L.schur):
        got = xjax.jit(fun)(a)
        want = fun(a)
        assert [g.shape for g in got] == [w.shape for w in want]
        assert [g.dtype for g in got] == [w.dtype for w in want]


def test_eig_errors_match_jax():
    with pytest.raises(ValueError, match="Only the lapack implementation"):
        xjax.jit(lambda a: L.eig(a, implementation=L.EigImplementation.MAGMA))(np.eye(2))
    with pytest.raises(NotImplementedError, match="float16"):
        xjax.jit(L.eig)(np.eye(2, dtype=np.float16))
    with pytest.raises(TypeError, match="rank at least 2"):
        L.eig(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="square"):
        L.eig(np.ones((2, 3), np.float32))

# -- schur --


def _check_schur(a, t, z, tol):
    a, t, z = (np.asarray(x) for x in (a, t, z))
    n = a.shape[-1]
    np.testing.assert_allclose(z @ t @ _h(z), a, rtol=tol, atol=10 * tol)
    np.testing.assert_allclose(_h(z) @ z, np.broadcast_to(np.eye(n), a.shape), atol=10 * tol)
    if np.iscomplexobj(a):
        assert not np.tril(t, -1).any()
    else:  # quasi-triangular: 1x1 and 2x2 diagonal blocks
        assert not np.tril(t, -2).any()
        sub = np.diagonal(t, -1, -2, -1)
        assert not (sub[..., 1:] != 0)[sub[..., :-1] != 0].any()
    for k in np.ndindex(a.shape[:-2]):
        _assert_spectrum(np.linalg.eigvals(t[k]), a[k], 10 * tol)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(1, 1), (5, 5), (2, 3, 7, 7), (40, 40)], ids=str)
def test_jit_schur_is_gees(dtype, shape):
    a = _rand(np.random.default_rng(5), shape, dtype)
    with _x64(dtype):
        t, z = xjax.jit(L.schur)(a)
        _same((t, z), L.schur(a))
        (t_only,) = xjax.jit(lambda x: L.schur(x, compute_schur_vectors=False))(a)
    assert t.dtype == z.dtype == a.dtype
    np.testing.assert_array_equal(np.asarray(t_only), np.asarray(t))
    _check_schur(a, t, z, _tol(dtype))


def test_jit_schur_lowers_to_the_gees_custom_call():
    text = xjax.jit(L.schur).lower(jnp.ones((3, 3))).as_text()
    assert ffi.GEES_TARGET in text and "vectors = 1 : i64" in text


@pytest.mark.parametrize("in_axis", [0, 1])
def test_vmap_of_schur_matches_a_loop(in_axis):
    rng = np.random.default_rng(6)
    mats = [_rand(rng, (5, 5), np.float32) for _ in range(3)]
    batched = np.stack(mats, axis=in_axis)
    for fun in (xjax.vmap(L.schur, in_axes=in_axis),
                xjax.jit(xjax.vmap(L.schur, in_axes=in_axis))):
        want = [np.stack(parts) for parts in zip(*[[np.asarray(o) for o in L.schur(m)]
                                                   for m in mats], strict=True)]
        _same(fun(batched), want)


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_schur_of_a_non_finite_matrix_is_nan(mode):
    a = np.stack([np.diag([1.0, 2.0]), [[np.inf, 0.0], [0.0, 1.0]]]).astype(np.float32)
    t, z = (xjax.jit(L.schur) if mode == "jit" else L.schur)(a)
    assert np.isnan(np.asarray(t)[1]).all() and np.isnan(np.asarray(z)[1]).all()
    np.testing.assert_array_equal(np.asarray(t)[0], np.diag([1.0, 2.0]))


def test_schur_errors_match_jax():
    a = np.eye(3, dtype=np.float32)
    sorted_schur = lambda x: L.schur(x, sort_eig_vals=True)  # noqa: E731
    for fun in (sorted_schur, xjax.jit(sorted_schur)):
        with pytest.raises(NotImplementedError, match="sort feature"):
            fun(a)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'schur'"):
        xjax.jvp(lambda x: L.schur(x)[0], (a,), (a,))
    with pytest.raises(ValueError, match="must be a square matrix"):
        L.schur(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="rank at least 2"):
        L.schur(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="schur does not accept dtype int32"):
        L.schur(np.eye(2, dtype=np.int32))
    with pytest.raises(NotImplementedError, match="float16"):
        L.schur(np.eye(2, dtype=np.float16))
    # select_callable is ignored, as in JAX
    _same(L.schur(a, select_callable=lambda *x: True), L.schur(a))

# -- without NumPy's OpenBLAS --


@pytest.fixture
def no_lapack_targets(monkeypatch):
    monkeypatch.setattr(ffi, "ffi_targets", lambda platform="cpu": frozenset())


def test_without_the_library_jit_says_so_and_eager_falls_back(no_lapack_targets):
    rng = np.random.default_rng(7)
    a = _rand(rng, (4, 4), np.float32)
    for fun, routine in ((L.eig, "geev"), (L.schur, "gees")):
        with pytest.raises(NotImplementedError, match=f"LAPACK {routine}.*not found"):
            xjax.jit(lambda x: fun(x))(a)
    pytest.importorskip("scipy.linalg")
    t, z = L.schur(a)  # SciPy's gees
    _check_schur(a, t, z, 5e-4)
    w, vl, vr = L.eig(a)  # SciPy's geev
    np.testing.assert_allclose(a @ np.asarray(vr), np.asarray(vr) * np.asarray(w), atol=1e-4)
    with use_scipy(False):
        w, vl, vr = (np.asarray(o) for o in L.eig(a))  # numpy.linalg.eig
        np.testing.assert_allclose(_h(vl) @ a, w[:, None] * _h(vl), atol=1e-4)
        with pytest.raises(NotImplementedError, match="gees"):
            L.schur(a)


def test_the_fallback_checks_are_the_lowering_ones():
    assert linalg_eig._geev_missing(np.zeros((2, 2), np.float32)) is None
    assert linalg_schur._gees_missing(np.zeros((2, 2), np.float32)) is None

# -- against JAX --


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_against_jax(dtype):
    jax = pytest.importorskip("jax")
    a = _rand(np.random.default_rng(8), (2, 6, 6), dtype)
    tol = _tol(dtype)
    for got, want in zip(xjax.jit(L.eig)(a), jax.jit(jax.lax.linalg.eig)(a), strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)
    for got, want in zip(xjax.jit(L.schur)(a), jax.jit(jax.lax.linalg.schur)(a),
                         strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)
