"""xjax.scipy.optimize: minimize (BFGS, JAX's experimental L-BFGS) against closed forms,
SciPy's BFGS and, where installed, JAX's minimize (same algorithm: same iterates)."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax.scipy.optimize import OptimizeResults, minimize
from xjax._src.scipy.optimize._line_search import line_search

# The algorithm evaluates interpolants that may be NaN (then rejected by their bounds
# checks); eagerly NumPy warns about them.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

LBFGS = "l-bfgs-experimental-do-not-rely-on-this"
A = np.array([[3., 1., 0.], [1., 4., 1.], [0., 1., 2.]])
B = np.array([1., -2., 3.])


def rosen(x, np_=jnp):
    return np_.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def quadratic(x, np_=jnp):
    return 0.5 * x @ np_.asarray(A, x.dtype) @ x - np_.asarray(B, x.dtype) @ x


@pytest.fixture
def x64():
    with xjax.config.override(jax_enable_x64=True):
        yield


def scipy_bfgs(f, x0):
    so = pytest.importorskip("scipy.optimize")
    grad = xjax.grad(f)
    return so.minimize(lambda x: float(f(jnp.asarray(x))), x0, method="BFGS",
                       jac=lambda x: np.asarray(grad(jnp.asarray(x))))


@pytest.mark.parametrize("method", ["BFGS", "bfgs", LBFGS])
def test_quadratic_reaches_the_solution(method, x64):
    res = minimize(quadratic, jnp.zeros(3), method=method)
    assert isinstance(res, OptimizeResults)
    assert bool(res.success) and int(res.status) == 0
    np.testing.assert_allclose(res.x, np.linalg.solve(A, B), rtol=1e-6)
    np.testing.assert_allclose(res.fun, quadratic(np.linalg.solve(A, B), np), rtol=1e-10)
    np.testing.assert_allclose(res.jac, A @ np.asarray(res.x) - B, atol=1e-5)
    assert np.max(np.abs(np.asarray(res.jac))) < 1e-5  # the default gtol, infinity norm
    assert int(res.nfev) == int(res.njev) >= int(res.nit) + 1
    if method == LBFGS:
        assert res.hess_inv is None
    else:  # the BFGS estimate approaches the true inverse Hessian
        np.testing.assert_allclose(res.hess_inv, np.linalg.inv(A), atol=2e-2)


@pytest.mark.parametrize("x0", [np.zeros(5), np.array([2.0, 2.0])])
def test_bfgs_rosenbrock_against_scipy(x0, x64):
    res = minimize(rosen, jnp.asarray(x0), method="BFGS")
    ref = scipy_bfgs(rosen, x0)
    assert bool(res.success) and ref.success
    assert int(res.status) == ref.status == 0
    np.testing.assert_allclose(res.x, ref.x, atol=1e-6)
    np.testing.assert_allclose(res.x, np.ones_like(x0), atol=1e-6)
    assert float(res.fun) < 1e-12 and ref.fun < 1e-12
    # the line searches differ (JAX's, not SciPy's): the iteration counts are close only
    assert abs(int(res.nit) - ref.nit) <= 0.5 * ref.nit


def test_bfgs_quadratic_against_scipy(x64):
    res = minimize(quadratic, jnp.zeros(3), method="BFGS")
    ref = scipy_bfgs(quadratic, np.zeros(3))
    assert int(res.status) == ref.status == 0 and bool(res.success) == ref.success
    np.testing.assert_allclose(res.x, ref.x, atol=1e-6)
    np.testing.assert_allclose(res.fun, ref.fun, rtol=1e-10)
    assert int(res.nit) == ref.nit


def test_float32_quadratic_lands_near_the_solution():
    res = minimize(quadratic, jnp.zeros(3), method="BFGS")
    assert res.x.dtype == jnp.float32 and res.hess_inv.dtype == jnp.float32
    np.testing.assert_allclose(res.x, np.linalg.solve(A, B), atol=1e-5)
    # float32 often ends in a failed zoom (status 3) once the interval is below 1e-5, as JAX
    assert int(res.status) in (0, 3)


def test_args_are_passed(x64):
    def shifted(x, c, scale):
        return scale * jnp.sum((x - c) ** 2)
    res = minimize(shifted, jnp.zeros(2), args=(jnp.array([1., -2.]), 3.), method="BFGS")
    np.testing.assert_allclose(res.x, [1., -2.], atol=1e-8)


@pytest.mark.parametrize("method", ["BFGS", LBFGS])
def test_maxiter_stops_with_status_1(method, x64):
    res = minimize(rosen, jnp.zeros(4), method=method, options={"maxiter": 3})
    assert int(res.status) == 1 and not bool(res.success)
    # L-BFGS tests its limits before each update, so it runs one iteration past (as JAX)
    assert int(res.nit) == (3 if method == "BFGS" else 4)


def test_jit_matches_eager(x64):
    x0 = jnp.array([0.3, -0.2, 0.8])
    eager = minimize(rosen, x0, method="BFGS")
    jitted = xjax.jit(lambda x: minimize(rosen, x, method="BFGS"))(x0)
    assert int(jitted.status) == int(eager.status)
    np.testing.assert_allclose(jitted.x, eager.x, atol=1e-7)
    np.testing.assert_allclose(jitted.hess_inv, eager.hess_inv, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("method", ["BFGS", LBFGS])
def test_vmap_over_starting_points(method, x64):
    x0s = jnp.asarray(np.random.default_rng(0).normal(size=(3, 3)))
    batched = xjax.vmap(lambda x: minimize(rosen, x, method=method))(x0s)
    for i in range(3):
        one = minimize(rosen, x0s[i], method=method)
        for name in ("x", "fun", "status", "nit", "nfev", "success"):
            np.testing.assert_allclose(getattr(batched, name)[i], getattr(one, name),
                                       rtol=1e-12, err_msg=name)


def test_jit_of_vmap_over_args(x64):
    centers = jnp.array([[1., 2.], [-3., 0.5], [0., 0.]])
    solve = xjax.jit(xjax.vmap(lambda c: minimize(lambda x, c: jnp.sum((x - c) ** 4 + x ** 2),
                                                  jnp.ones(2), args=(c,), method="BFGS").x))
    xs = np.asarray(solve(centers))
    # stationarity of sum((x - c)^4 + x^2): 4 (x - c)^3 + 2 x = 0
    np.testing.assert_allclose(4 * (xs - centers) ** 3 + 2 * xs, 0, atol=1e-4)


def test_errors_as_jax():
    with pytest.raises(ValueError, match="Method Nelder-Mead not recognized"):
        minimize(rosen, jnp.zeros(2), method="Nelder-Mead")
    with pytest.raises(TypeError, match="args argument to jax.scipy.optimize.minimize must "
                                        "be a tuple, got"):
        minimize(rosen, jnp.zeros(2), args=[1.0], method="BFGS")
    with pytest.raises(TypeError):
        minimize(rosen, jnp.zeros(2), method="BFGS", options={"no_such_option": 1})
    with pytest.raises(TypeError):
        minimize(rosen, jnp.zeros(2))  # method is required


def test_line_search_satisfies_strong_wolfe(x64):
    f = lambda x: rosen(x)
    x = jnp.array([-1.2, 1.0])
    p = -xjax.grad(f)(x)
    res = line_search(f, x, p, c1=1e-4, c2=0.9)
    assert not bool(res.failed) and int(res.status) == 0
    a = float(res.a_k)
    g0 = float(jnp.dot(xjax.grad(f)(x), p))
    assert float(f(x + a * p)) <= float(f(x)) + 1e-4 * a * g0
    assert abs(float(jnp.dot(xjax.grad(f)(x + a * p), p))) <= 0.9 * abs(g0)
    np.testing.assert_allclose(res.f_k, f(x + a * p), rtol=1e-12)
    np.testing.assert_allclose(res.g_k, xjax.grad(f)(x + a * p), rtol=1e-12)


# -- JAX as a differential reference: the same algorithm takes the same steps ------------------

CASES = [("rosen", np.zeros(5)), ("rosen", np.array([-1.2, 1.0])),
         ("rosen", np.array([0.5, 0.3, -0.4, 1.1])), ("quadratic", np.zeros(3))]


@pytest.mark.parametrize("method", ["BFGS", LBFGS])
@pytest.mark.parametrize("name,x0", CASES)
def test_against_jax_float64(method, name, x0, x64):
    jax = pytest.importorskip("jax")
    import jax.numpy as jjnp
    from jax.scipy.optimize import minimize as jax_minimize
    f = {"rosen": rosen, "quadratic": quadratic}[name]
    with jax.enable_x64(True):
        ref = jax_minimize(lambda x: f(x, jjnp), jjnp.asarray(x0), method=method)
        ref = jax.tree_util.tree_map(np.asarray, ref._asdict())
    res = minimize(f, jnp.asarray(x0), method=method)
    for field in ("nit", "nfev", "njev", "status", "success"):
        assert int(getattr(res, field)) == int(ref[field]), field
    np.testing.assert_allclose(res.x, ref["x"], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(res.fun, ref["fun"], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("method", ["BFGS", LBFGS])
def test_against_jax_float32_under_jit(method):
    """float32 iterates depend on rounding, and xjax's XLA CPU plugin rounds some float32
    dot products differently from jaxlib's: problems whose path is not chaotic agree."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jjnp
    from jax.scipy.optimize import minimize as jax_minimize
    x0 = np.zeros(5, np.float32)
    ref = jax.jit(lambda x: jax_minimize(lambda x: rosen(x, jjnp), x, method=method))(x0)
    res = xjax.jit(lambda x: minimize(rosen, x, method=method))(x0)
    assert int(res.status) == int(ref.status)
    assert int(res.nit) == int(ref.nit)
    np.testing.assert_allclose(res.x, np.asarray(ref.x), rtol=1e-5, atol=1e-6)


def test_lbfgs_complex_against_jax(x64):
    jax = pytest.importorskip("jax")
    import jax.numpy as jjnp
    from jax.scipy.optimize import minimize as jax_minimize
    c = np.array([1 + 2j, -0.5 + 0.25j, 3 - 1j])

    def f(z, np_=jnp):
        return np_.sum(np_.abs(z - c) ** 2 + 0.1 * np_.abs(z) ** 4)

    with jax.enable_x64(True):
        ref = jax_minimize(lambda z: f(z, jjnp), jjnp.zeros(3, jjnp.complex128), method=LBFGS)
        ref = jax.tree_util.tree_map(np.asarray, ref._asdict())
    res = minimize(f, jnp.zeros(3, jnp.complex128), method=LBFGS)
    assert int(res.nit) == int(ref["nit"]) and int(res.status) == int(ref["status"])
    np.testing.assert_allclose(res.x, ref["x"], rtol=1e-9, atol=1e-12)
