"""``hyp2f1``, ``wofz`` (and complex ``erfcx``) and ``sph_harm_y`` against closed forms,
SciPy, finite differences and, where installed, JAX 0.10.2."""

import numpy as np
import pytest
import scipy.special as ss

import xjax
import xjax.numpy as jnp
from xjax._src.core import errors
from xjax.scipy import special


def _x64(fn, *args):
    with xjax.config.override(jax_enable_x64=True):
        return np.asarray(fn(*[jnp.asarray(a) for a in args]))


def _rel(got, want):
    return np.abs(np.asarray(got) - want) / np.abs(want)


# ---------------------------------------------------------------------------------------------
# hyp2f1

_X_INSIDE = np.concatenate([np.linspace(-0.999, 0.999, 81), [-1e-8, 1e-8, 0.4999, 0.5001]])
_X_ALL = np.concatenate([_X_INSIDE, -np.geomspace(1.001, 1e6, 40)])


def _closed_forms(x):
    """(a, b, c, x, value) for elementary and elliptic-integral cases, covering the plain
    series, Pfaff, the connection formula and its logarithmic (integer c-a-b) limits."""
    x = x[x != 0]
    t = np.sqrt(np.abs(x))
    inside = np.abs(x) < 1
    z = x[inside]
    cases = [
        (1.0, 1.0, 2.0, x, -np.log1p(-x) / x),                     # c - a - b = 0
        (0.5, 1.0, 1.5, -np.abs(x), np.arctan(t) / t),
        (0.5, 0.5, 1.5, np.abs(z), np.arcsin(t[inside]) / t[inside]),
        (0.5, 0.5, 1.0, x, 2 / np.pi * ss.ellipk(x)),               # logarithmic, m = 0
        (-0.5, 0.5, 1.0, x, 2 / np.pi * ss.ellipe(x)),              # logarithmic, m = 1
        (2.3, 1.7, 1.7, x, (1 - x) ** -2.3),
        (0.3, 0.7, 1.5, np.sin(z) ** 2,                             # F(a, 1-a; 3/2; sin^2)
         np.sin(-0.4 * z) / (-0.4 * np.sin(z))),
    ]
    out = [(np.full(xs.size, a), np.full(xs.size, b), np.full(xs.size, c), xs, value)
           for a, b, c, xs, value in cases]
    return [np.concatenate(parts) for parts in zip(*out)]


def test_hyp2f1_closed_forms_float64():
    a, b, c, x, want = _closed_forms(_X_ALL)
    assert np.max(_rel(_x64(special.hyp2f1, a, b, c, x), want)) < 1e-13


def test_hyp2f1_closed_forms_float32():
    a, b, c, x, want = _closed_forms(_X_INSIDE[np.abs(_X_INSIDE) <= 0.9])
    got = special.hyp2f1(*[v.astype(np.float32) for v in (a, b, c, x)])
    assert got.dtype == np.float32
    assert np.max(_rel(got, want)) < 1e-5  # includes rounding x to float32


def test_hyp2f1_legendre_polynomials_and_gauss_sum():
    x = np.linspace(-1, 1, 41)
    for n in range(6):
        got = _x64(special.hyp2f1, -float(n), n + 1.0, 1.0, (1 - x) / 2)
        np.testing.assert_allclose(got, ss.eval_legendre(n, x), rtol=1e-13, atol=2e-14)
    a, b, c = np.array([0.3, -1.7, 2.5]), np.array([0.4, 2.2, -0.5]), np.array([2.1, 3.9, 4.5])
    gauss = ss.gamma(c) * ss.gamma(c - a - b) / (ss.gamma(c - a) * ss.gamma(c - b))
    np.testing.assert_allclose(_x64(special.hyp2f1, a, b, c, np.ones(3)), gauss, rtol=1e-13)


@pytest.mark.parametrize("lo, hi", [(-1, 0.5), (0.5, 0.99), (-50, -1)])
def test_hyp2f1_random_parameters_against_scipy(lo, hi):
    rng = np.random.default_rng(int(abs(lo * 100 + hi)))
    a, b, c = (rng.uniform(-5, 5, 400) for _ in range(3))
    x = rng.uniform(lo, hi, 400)
    want = ss.hyp2f1(a, b, c, x)
    rel = _rel(_x64(special.hyp2f1, a, b, c, x), want)
    # SciPy's own error reaches ~1e-8 in this range; most points agree to rounding.
    assert np.max(rel) < 1e-7 and np.median(rel) < 1e-14
    got32 = np.asarray(special.hyp2f1(*[v.astype(np.float32) for v in (a, b, c, x)]))
    want32 = ss.hyp2f1(*[v.astype(np.float32).astype(np.float64) for v in (a, b, c, x)])
    rel32 = _rel(got32, want32)
    assert np.median(rel32) < 1e-6 and np.mean(rel32 < 1e-4) > 0.97


def test_hyp2f1_integer_c_minus_a_minus_b_against_scipy():
    rng = np.random.default_rng(3)
    a = rng.integers(-4, 5, 300) + rng.choice([0.25, 0.5], 300)
    b = rng.integers(-4, 5, 300) + rng.choice([0.0, 0.5], 300)
    c = a + b + rng.integers(-4, 5, 300)
    c = np.where((c <= 0) & (c == np.round(c)), c + 0.5, c)
    x = np.concatenate([rng.uniform(0.5, 0.999, 150), rng.uniform(-30, -1, 150)])
    np.testing.assert_allclose(_x64(special.hyp2f1, a, b, c, x), ss.hyp2f1(a, b, c, x),
                               rtol=1e-9)


def test_hyp2f1_special_regions_as_scipy():
    cases = [(1, 2, 3, 1.0), (1.5, 1.5, 2.0, 1.0), (1, 1, 2, 1.5), (0.5, 0.3, 2.2, 3.0),
             (-2, 1, 3, 5.0), (-3, 2, -5, 2.0), (3, -1, -2, 0.7), (1, 2, 2, 1.5),
             (1, 1, -2, 0.3), (1, 1, 0, 0.3), (0.7, -0.3, 1.1, 0.0), (-3, 2, -5, 0.5)]
    a, b, c, x = (np.array(v, float) for v in zip(*cases))
    np.testing.assert_allclose(_x64(special.hyp2f1, a, b, c, x), ss.hyp2f1(a, b, c, x),
                               rtol=1e-13)


def test_hyp2f1_dtypes_jit_and_vmap():
    assert special.hyp2f1(1, 1, 2, 0).dtype == np.float32
    half = special.hyp2f1(1.0, 1.0, 2.0, jnp.array([0.5], jnp.float16))
    assert half.dtype == np.float16 and abs(float(half[0]) - 2 * np.log(2)) < 2e-3
    x = jnp.linspace(-3.0, 0.95, 7)
    eager = special.hyp2f1(0.5, 1.5, 2.5, x)
    np.testing.assert_allclose(xjax.jit(special.hyp2f1)(0.5, 1.5, 2.5, x), eager, rtol=1e-6)
    mapped = xjax.vmap(special.hyp2f1, (None, None, None, 0))(0.5, 1.5, 2.5, x)
    np.testing.assert_allclose(mapped, eager, rtol=1e-6)


@pytest.mark.parametrize("point", [(1.0, 2.0, 3.0, 0.3), (1.5, -2.5, 0.7, -3.0),
                                   (2.0, 3.0, 4.5, 0.9), (-2.0, 1.5, 3.0, 0.5),
                                   (0.5, 0.5, 1.0, 0.7)])
def test_hyp2f1_gradient_against_finite_differences(point):
    with xjax.config.override(jax_enable_x64=True):
        grads = xjax.grad(special.hyp2f1, argnums=(0, 1, 2, 3))(*point)
    for i, g in enumerate(grads):
        h = 1e-5 * max(1.0, abs(point[i]))
        up, down = list(point), list(point)
        up[i] += h
        down[i] -= h
        fd = (_x64(special.hyp2f1, *up) - _x64(special.hyp2f1, *down)) / (2 * h)
        np.testing.assert_allclose(float(g), fd, rtol=1e-7, atol=1e-9)


def test_hyp2f1_against_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(5)
    a, b = rng.uniform(0.1, 3, 200).astype(np.float32), rng.uniform(0.1, 3, 200).astype(np.float32)
    c = (a + b + rng.uniform(0.2, 3, 200)).astype(np.float32)
    x = rng.uniform(-0.8, 0.8, 200).astype(np.float32)
    theirs = np.asarray(jax.scipy.special.hyp2f1(a, b, c, x))
    np.testing.assert_allclose(special.hyp2f1(a, b, c, x), theirs, rtol=2e-5)
    g_ours = xjax.grad(special.hyp2f1, argnums=(0, 3))(1.5, 0.5, 2.5, 0.4)
    g_theirs = jax.grad(jax.scipy.special.hyp2f1, argnums=(0, 3))(1.5, 0.5, 2.5, 0.4)
    np.testing.assert_allclose(g_ours, g_theirs, rtol=1e-4)


# ---------------------------------------------------------------------------------------------
# wofz


def _complex_grid(rng, n, lo, hi, y_lo):
    return rng.uniform(lo, hi, n) + 1j * rng.uniform(y_lo, hi, n)


def test_wofz_complex128_against_scipy():
    rng = np.random.default_rng(0)
    z = np.concatenate([_complex_grid(rng, 3000, -1, 1, -1), _complex_grid(rng, 3000, -7, 7, -5),
                        _complex_grid(rng, 2000, -40, 40, -4),
                        _complex_grid(rng, 500, -1e5, 1e5, 0), [0j, 1e-300j, 1e10 + 1j]])
    assert np.max(_rel(_x64(special.wofz, z), ss.wofz(z))) < 1e-13


def test_wofz_complex64_against_scipy():
    rng = np.random.default_rng(1)
    z = _complex_grid(rng, 4000, -8, 8, 0).astype(np.complex64)
    got = special.wofz(jnp.asarray(z))
    assert got.dtype == np.complex64
    rel = _rel(got, ss.wofz(z.astype(np.complex128)))
    assert np.max(rel) < 2e-6


def test_wofz_of_real_arguments_is_gaussian_plus_dawson():
    x = np.linspace(-30, 30, 1201)
    got = _x64(special.wofz, x)
    np.testing.assert_allclose(got.real, np.exp(-x * x), rtol=1e-13, atol=0)
    np.testing.assert_allclose(got.imag, 2 / np.sqrt(np.pi) * ss.dawsn(x), rtol=1e-13)
    assert special.wofz(1).dtype == np.complex64
    assert special.wofz(jnp.float16(1)).dtype == np.complex64


def test_wofz_special_values_as_scipy():
    z = np.array([complex(np.inf, 0), complex(-np.inf, 0), complex(np.nan, 0), complex(0, np.inf),
                  complex(0, -np.inf), complex(1, -30), complex(0, -30), complex(np.inf, -3)])
    np.testing.assert_array_equal(_x64(special.wofz, z), ss.wofz(z))


def test_wofz_derivative():
    z = jnp.asarray(np.array([0.3 + 0.2j, -2 + 1j, 4 - 0.5j, 7 + 7j]))
    with xjax.config.override(jax_enable_x64=True):
        z = z.astype(np.complex128)
        w, dw = xjax.jvp(special.wofz, (z,), (jnp.ones_like(z),))
        holo = xjax.vmap(xjax.grad(special.wofz, holomorphic=True))(z)
        zn = np.asarray(z)
        h = 1e-6
        fd = (_x64(special.wofz, zn + h) - _x64(special.wofz, zn - h)) / (2 * h)
    np.testing.assert_allclose(dw, -2 * zn * np.asarray(w) + 2j / np.sqrt(np.pi), rtol=1e-13)
    np.testing.assert_allclose(dw, fd, rtol=1e-8)
    np.testing.assert_allclose(holo, dw, rtol=1e-14)
    np.testing.assert_allclose(xjax.jit(special.wofz)(z[:2]), special.wofz(z[:2]), rtol=1e-6)


def test_erfcx_of_complex_arguments():
    rng = np.random.default_rng(2)
    z = _complex_grid(rng, 500, -5, 5, -5)
    np.testing.assert_allclose(_x64(special.erfcx, z), ss.erfcx(z), rtol=1e-12)
    np.testing.assert_allclose(special.erfcx(jnp.array([0.5, 2.0])), ss.erfcx([0.5, 2.0]),
                               rtol=1e-6)


def test_wofz_against_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(3)
    z = _complex_grid(rng, 500, -6, 6, -2).astype(np.complex64)
    ours = np.asarray(special.wofz(jnp.asarray(z)))
    theirs = np.asarray(jax.scipy.special.wofz(z))
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# sph_harm_y


def _random_degrees(rng, n_max, size):
    n = rng.integers(0, n_max + 1, size)
    return n, np.clip(rng.integers(-n_max, n_max + 1, size), -n, n)


def test_sph_harm_y_against_scipy():
    rng = np.random.default_rng(0)
    n, m = _random_degrees(rng, 30, 3000)
    theta, phi = rng.uniform(0, np.pi, 3000), rng.uniform(0, 2 * np.pi, 3000)
    theta[:5] = [0, np.pi, np.pi / 2, 1e-9, np.pi - 1e-9]
    want = ss.sph_harm_y(n, m, theta, phi)
    scale = np.sqrt((2 * n + 1) / (4 * np.pi))  # the size of the largest value of Y_n
    got = _x64(special.sph_harm_y, n, m, theta, phi)
    assert got.dtype == np.complex128
    assert np.max(np.abs(got - want) / scale) < 1e-13
    got32 = special.sph_harm_y(n, m, theta.astype(np.float32), phi.astype(np.float32))
    assert got32.dtype == np.complex64
    want32 = ss.sph_harm_y(n, m, theta.astype(np.float32), phi.astype(np.float32))
    assert np.max(np.abs(np.asarray(got32) - want32) / scale) < 5e-6


def test_sph_harm_y_orthonormal_on_the_sphere():
    # Gauss-Legendre in cos(theta) times the trapezoid rule in phi integrate Y Y* exactly.
    nodes, weights = np.polynomial.legendre.leggauss(8)
    phi = np.linspace(0, 2 * np.pi, 16, endpoint=False)
    theta_grid, phi_grid = np.meshgrid(np.arccos(nodes), phi, indexing="ij")
    w = (weights[:, None] * np.full(16, 2 * np.pi / 16)).ravel()
    pairs = [(n, m) for n in range(5) for m in range(-n, n + 1)]
    ys = np.stack([_x64(special.sph_harm_y, np.full(w.size, n), np.full(w.size, m),
                        theta_grid.ravel(), phi_grid.ravel()) for n, m in pairs])
    gram = (ys * w) @ ys.conj().T
    np.testing.assert_allclose(gram, np.eye(len(pairs)), atol=1e-13)


def test_sph_harm_y_orders_beyond_the_degree_and_n_max():
    assert np.all(special.sph_harm_y(jnp.array([2, 1]), jnp.array([3, -2]), 0.5, 0.3) == 0)
    n, m = jnp.array([0, 1, 2, 3]), jnp.array([0, -1, 2, -1])
    full = special.sph_harm_y(n, m, 0.5, 0.3)
    clipped = special.sph_harm_y(n, m, 0.5, 0.3, n_max=2)  # n = 3 is clipped to 2, as JAX
    np.testing.assert_allclose(clipped[:3], full[:3], rtol=1e-6)
    np.testing.assert_allclose(clipped[3], ss.sph_harm_y(2, -1, 0.5, 0.3), rtol=1e-6)


def test_sph_harm_y_transformations_and_errors():
    n, m = jnp.array([1, 2, 3]), jnp.array([1, -2, 0])
    theta, phi = jnp.array([0.2, 1.0, 2.0]), jnp.array([0.1, 2.0, 4.0])
    eager = special.sph_harm_y(n, m, theta, phi)
    jitted = xjax.jit(lambda *a: special.sph_harm_y(*a, n_max=3))(n, m, theta, phi)
    np.testing.assert_allclose(jitted, eager, rtol=1e-6)
    with pytest.raises(errors.ConcretizationTypeError, match="n_max"):
        xjax.jit(special.sph_harm_y)(n, m, theta, phi)
    with pytest.raises(TypeError, match="n must be an array of integers"):
        special.sph_harm_y(jnp.array([1.0]), m[:1], 0.5, 0.5)
    with pytest.raises(NotImplementedError, match="diff_n"):
        special.sph_harm_y(n, m, theta, phi, diff_n=1)
    np.testing.assert_allclose(special.sph_harm_y(n, m, theta, phi, diff_n=0), eager)


def test_sph_harm_y_gradients():
    def real_part(theta, phi):
        return jnp.real(special.sph_harm_y(jnp.array([3]), jnp.array([2]), theta, phi))[0]
    with xjax.config.override(jax_enable_x64=True):
        for theta in (0.0, 0.7, np.pi):
            g_theta, g_phi = xjax.grad(real_part, argnums=(0, 1))(theta, 0.4)
            # Y(theta) is smooth through the poles (an even/odd continuation), so the
            # central difference also holds there.
            h = 1e-6
            fd = (ss.sph_harm_y(3, 2, theta + h, 0.4)
                  - ss.sph_harm_y(3, 2, theta - h, 0.4)).real / (2 * h)
            np.testing.assert_allclose(float(g_theta), fd, rtol=1e-6, atol=1e-8)
            fd_phi = (ss.sph_harm_y(3, 2, theta, 0.4 + h)
                      - ss.sph_harm_y(3, 2, theta, 0.4 - h)).real / (2 * h)
            np.testing.assert_allclose(float(g_phi), fd_phi, rtol=1e-6, atol=1e-8)


def test_sph_harm_y_against_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(4)
    n, m = _random_degrees(rng, 12, 200)
    theta = rng.uniform(0, np.pi, 200).astype(np.float32)
    phi = rng.uniform(0, 2 * np.pi, 200).astype(np.float32)
    theirs = np.asarray(jax.scipy.special.sph_harm_y(n, m, theta, phi))
    ours = np.asarray(special.sph_harm_y(n, m, theta, phi))
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)
