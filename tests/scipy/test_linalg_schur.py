"""``xjax.scipy.linalg``'s Schur-based functions: schur (real/complex), rsf2csf, sqrtm and
funm, by their identities (``Z T Z^H = A``, ``sqrtm(A)^2 = A``), against SciPy (a test
extra: skipped without it) and against JAX where installed; eager and under jit."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
import xjax.scipy.linalg as jsl
from xjax._src.runtime import ffi

pytestmark = pytest.mark.skipif(ffi.GEES_TARGET not in ffi.ffi_targets("cpu"),
                                reason="NumPy's bundled OpenBLAS (gees) was not found")

MODES = ["eager", "jit"]


def _run(fun, mode):
    return xjax.jit(fun) if mode == "jit" else fun


def _rand(rng, shape, dtype=np.float32):
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _h(x):
    return np.conj(np.swapaxes(np.asarray(x), -1, -2))


def _scipy():
    return pytest.importorskip("scipy.linalg")


def _x64():
    return xjax.config.override(jax_enable_x64=True)

# -- schur --


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("output", ["real", "complex"])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_schur_reconstructs(dtype, output, mode):
    a = _rand(np.random.default_rng(0), (2, 6, 6), dtype)
    t, z = _run(lambda a: jsl.schur(a, output=output), mode)(a)
    complex_out = output == "complex" or dtype == np.complex64
    assert t.dtype == z.dtype == (np.complex64 if complex_out else np.float32)
    t, z = np.asarray(t), np.asarray(z)
    np.testing.assert_allclose(z @ t @ _h(z), a, atol=5e-5 * 6)
    np.testing.assert_allclose(_h(z) @ z, np.broadcast_to(np.eye(6), a.shape), atol=1e-5 * 6)
    assert not np.tril(t, -1 if complex_out else -2).any()


def test_schur_against_scipy():
    sl = _scipy()
    with _x64():
        a = _rand(np.random.default_rng(1), (5, 5), np.float64)
        for output in ("real", "complex"):
            t, z = (np.asarray(x) for x in jsl.schur(a, output=output))
            want_t, _ = sl.schur(a, output=output)
            # same eigenvalue order from the same algorithm: the diagonals agree
            np.testing.assert_allclose(np.diagonal(t), np.diagonal(want_t), atol=1e-10)
            np.testing.assert_allclose(np.abs(t), np.abs(want_t), atol=1e-10)


def test_schur_rejects_an_unknown_output():
    with pytest.raises(ValueError, match="'real' or 'complex'"):
        jsl.schur(np.eye(2, dtype=np.float32), output="upper")

# -- rsf2csf --


def test_rsf2csf_against_scipy():
    sl = _scipy()
    with _x64():
        # rotations with complex eigenvalue pairs, 2x2 blocks and 1x1 ones mixed
        a = _rand(np.random.default_rng(2), (7, 7), np.float64)
        t, z = sl.schur(a)
        got_t, got_z = (np.asarray(x) for x in jsl.rsf2csf(t, z))
        want_t, want_z = sl.rsf2csf(t, z)
    np.testing.assert_allclose(got_t, want_t, atol=1e-10)
    np.testing.assert_allclose(got_z, want_z, atol=1e-10)
    assert not np.tril(got_t, -1).any()


@pytest.mark.parametrize("mode", MODES)
def test_rsf2csf_batched_reconstructs(mode):
    a = _rand(np.random.default_rng(3), (3, 5, 5))
    t, z = jsl.schur(a)
    ct, cz = (np.asarray(x) for x in _run(jsl.rsf2csf, mode)(t, z))
    assert ct.dtype == np.complex64
    np.testing.assert_allclose(cz @ ct @ _h(cz), a, atol=3e-5 * 5)
    assert not np.tril(ct, -1).any()
    # batch dims broadcast: one Z for every T
    bt, bz = jsl.rsf2csf(t, jnp.eye(5, dtype=jnp.float32))
    assert bt.shape == bz.shape == (3, 5, 5)


def test_rsf2csf_checks_shapes():
    with pytest.raises(ValueError, match="'T' must be square"):
        jsl.rsf2csf(np.ones((2, 3)), np.eye(2))
    with pytest.raises(ValueError, match="'Z' must be square"):
        jsl.rsf2csf(np.eye(2), np.ones(2))
    with pytest.raises(ValueError, match="shapes must match"):
        jsl.rsf2csf(np.eye(2), np.eye(3))

# -- sqrtm --


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_sqrtm_squares_back(dtype, mode):
    a = _rand(np.random.default_rng(4), (6, 6), dtype)
    s = np.asarray(_run(jsl.sqrtm, mode)(a))
    assert s.dtype == np.complex64
    np.testing.assert_allclose(s @ s, a, atol=5e-5 * 6)


def test_sqrtm_against_scipy():
    sl = _scipy()
    rng = np.random.default_rng(5)
    with _x64():
        for a in (_rand(rng, (6, 6), np.float64), _rand(rng, (4, 4), np.complex128),
                  np.triu(_rand(rng, (5, 5), np.float64)) + 3 * np.eye(5)):
            np.testing.assert_allclose(np.asarray(jsl.sqrtm(a)), sl.sqrtm(a), atol=1e-10)
    # float32 (computed in complex64): eigenvalues off the negative real axis, where the
    # sign of a rounded-to-zero imaginary part would pick the other branch of the root
    a = (rng.standard_normal((5, 5)) + 4 * np.eye(5)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(jsl.sqrtm(a)), sl.sqrtm(a.astype(np.float64)),
                               atol=2e-5)


def test_sqrtm_special_inputs():
    # zero eigenvalues: T_ij == s gives 0 rather than 0/0 (as JAX)
    np.testing.assert_array_equal(np.asarray(jsl.sqrtm(np.zeros((3, 3), np.float32))), 0)
    np.testing.assert_allclose(np.asarray(jsl.sqrtm(np.diag([4.0, 9.0, 16.0]))),
                               np.diag([2.0, 3.0, 4.0]), atol=1e-6)
    with pytest.raises(NotImplementedError, match="Blocked"):
        jsl.sqrtm(np.eye(2), blocksize=2)
    with pytest.raises(ValueError, match="square 2-D"):
        jsl.sqrtm(np.ones((2, 2, 2)))

# -- funm --


@pytest.mark.parametrize("mode", MODES)
def test_funm_exp_is_expm(mode):
    sl = _scipy()
    a = _rand(np.random.default_rng(6), (5, 5)) * 0.5
    got = np.asarray(_run(lambda a: jsl.funm(a, jnp.exp), mode)(a))
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, sl.expm(a.astype(np.float64)), atol=2e-5)


def test_funm_against_scipy():
    sl = _scipy()
    rng = np.random.default_rng(7)
    with _x64():
        for a in (_rand(rng, (6, 6), np.float64), _rand(rng, (4, 4), np.complex128)):
            for f, f_np in ((jnp.sin, np.sin), (lambda x: x ** 3 - 2 * x, None)):
                want = sl.funm(a, f_np or (lambda x: x ** 3 - 2 * x))
                np.testing.assert_allclose(np.asarray(jsl.funm(a, f)), want, atol=1e-9)
    # a polynomial of A is exactly the matrix polynomial
    a = _rand(rng, (4, 4), np.float64)
    with _x64():
        got = np.asarray(jsl.funm(a, lambda x: x ** 2 + 1))
    np.testing.assert_allclose(got, a @ a + np.eye(4), atol=1e-10)


def test_funm_error_estimate_and_checks():
    a = _rand(np.random.default_rng(8), (4, 4))
    f, err = jsl.funm(a, jnp.sin, disp=False)
    np.testing.assert_allclose(np.asarray(f), np.asarray(jsl.funm(a, jnp.sin)))
    assert np.finfo(np.float32).eps <= float(err) <= 1
    with pytest.raises(ValueError, match="square"):
        jsl.funm(np.ones((2, 3)), jnp.exp)

# -- against JAX --


def test_against_jax():
    jax = pytest.importorskip("jax")
    jsl_ref = pytest.importorskip("jax.scipy.linalg")
    a = _rand(np.random.default_rng(9), (5, 5))
    pairs = [(jsl.sqrtm(a), jsl_ref.sqrtm(a)),
             (jsl.funm(a, jnp.exp), jsl_ref.funm(a, jax.numpy.exp)),
             (jsl.funm(a, jnp.cos, disp=False)[1], jsl_ref.funm(a, jax.numpy.cos, disp=False)[1])]
    pairs += list(zip(jsl.rsf2csf(*jsl.schur(a)), jsl_ref.rsf2csf(*jsl_ref.schur(a)),
                      strict=True))
    for got, want in pairs:
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-5)
