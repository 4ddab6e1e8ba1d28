"""xjax.scipy.sparse.linalg (cg, bicgstab, gmres in both solve methods): solutions against
np.linalg.solve and SciPy; matrices, functions and ``@`` objects as operators; pytrees, x0,
preconditioners, maxiter and restarts; derivatives by implicit differentiation against
closed forms and finite differences; jit and vmap against a loop; JAX's errors;
differential tests against JAX."""

from functools import partial

import numpy as np
import pytest

import xjax.numpy as jnp
from xjax import grad, jit, vmap
from xjax.scipy.sparse import linalg as sla
from xjax._src.testing.check_grads import check_grads

SOLVERS = {"cg": sla.cg, "bicgstab": sla.bicgstab, "gmres": sla.gmres,
           "gmres_incremental": partial(sla.gmres, solve_method="incremental")}


def _spd(n=5, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, n))
    return (q @ q.T + n * np.eye(n)).astype(np.float32), rng.standard_normal(n).astype(
        np.float32)


def _general(n=5, seed=0):
    rng = np.random.default_rng(seed)
    return ((rng.standard_normal((n, n)) + 2 * n ** 0.5 * np.eye(n)).astype(np.float32),
            rng.standard_normal(n).astype(np.float32))


@pytest.mark.parametrize("jitted", [False, True])
@pytest.mark.parametrize("name", SOLVERS)
def test_solution_against_numpy(name, jitted):
    a, b = _spd() if name == "cg" else _general()
    f = (lambda a, b: SOLVERS[name](a, b)[0])
    f = jit(f) if jitted else f
    np.testing.assert_allclose(f(a, b), np.linalg.solve(a.astype(np.float64), b),
                               rtol=1e-4, atol=1e-5)


def test_info_is_none_and_operator_forms():
    a, b = _spd()
    want = np.linalg.solve(a.astype(np.float64), b)

    class Op:
        shape = a.shape

        def __matmul__(self, x):
            return jnp.dot(a, x)

    for op in (a, jnp.asarray(a), lambda x: jnp.dot(a, x), Op()):
        x, info = sla.cg(op, b)
        assert info is None
        np.testing.assert_allclose(x, want, rtol=1e-4, atol=1e-5)


def test_against_scipy():
    scipy_sla = pytest.importorskip("scipy.sparse.linalg")
    a, b = _general(seed=3)
    spd, c = _spd(seed=3)
    np.testing.assert_allclose(sla.cg(spd, c, tol=1e-6)[0],
                               scipy_sla.cg(spd.astype(np.float64), c, rtol=1e-10)[0],
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(sla.bicgstab(a, b, tol=1e-6)[0],
                               scipy_sla.bicgstab(a.astype(np.float64), b, rtol=1e-10)[0],
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", SOLVERS)
def test_pytree_b_x0_and_preconditioner(name):
    a1, b1 = _spd(4, seed=1)
    a2, b2 = _spd(3, seed=2)

    def matvec(x):
        return {"u": jnp.dot(a1, x["u"]), "v": jnp.dot(a2, x["v"])}

    def jacobi(x):
        return {"u": x["u"] / np.diagonal(a1), "v": x["v"] / np.diagonal(a2)}

    b = {"u": b1, "v": b2}
    x0 = {"u": np.ones(4, np.float32), "v": np.zeros(3, np.float32)}
    for kwargs in ({}, {"x0": x0}, {"M": jacobi}, {"x0": x0, "M": jacobi}):
        x, _ = SOLVERS[name](matvec, b, **kwargs)
        np.testing.assert_allclose(x["u"], np.linalg.solve(a1, b1), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(x["v"], np.linalg.solve(a2, b2), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", SOLVERS)
def test_maxiter_stops_early(name):
    a, b = _spd(8) if name == "cg" else _general(8)
    # gmres counts restarts: one restart of a 1-dimensional Krylov space is one step
    extra = {"restart": 1} if name.startswith("gmres") else {}
    x1, _ = SOLVERS[name](a, b, maxiter=1, **extra)
    x_full, _ = SOLVERS[name](a, b)
    r1 = np.linalg.norm(a @ np.asarray(x1) - b)
    r_full = np.linalg.norm(a @ np.asarray(x_full) - b)
    assert r1 > 10 * r_full  # one step is far from converged; the default converges
    assert r_full < 1e-4 * np.linalg.norm(b)


def test_complex_hermitian():
    rng = np.random.default_rng(0)
    q = rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4))
    a = (q @ q.conj().T + 4 * np.eye(4)).astype(np.complex64)
    b = (rng.standard_normal(4) + 1j * rng.standard_normal(4)).astype(np.complex64)
    want = np.linalg.solve(a.astype(np.complex128), b)
    for solver in SOLVERS.values():
        x, _ = solver(a, b)
        assert x.dtype == np.complex64
        np.testing.assert_allclose(x, want, rtol=1e-4, atol=1e-5)


# -- derivatives -----------------------------------------------------------------------------

@pytest.mark.parametrize("jitted", [False, True])
@pytest.mark.parametrize("name", SOLVERS)
def test_grad_against_closed_form(name, jitted):
    # L = w . x with A x = b:  dL/db = A^-T w,  dL/dA = -(A^-T w) x^T
    a, b = _spd() if name == "cg" else _general()
    w = np.linspace(-1, 1, 5).astype(np.float32)

    def loss(a, b):
        return jnp.dot(w, SOLVERS[name](lambda x: jnp.dot(a, x), b, tol=1e-6)[0])

    g = grad(loss, argnums=(0, 1))
    ga, gb = (jit(g) if jitted else g)(a, b)
    a64 = a.astype(np.float64)
    x, lam = np.linalg.solve(a64, b), np.linalg.solve(a64.T, w)
    np.testing.assert_allclose(gb, lam, rtol=1e-3, atol=1e-5)
    np.testing.assert_allclose(ga, -np.outer(lam, x), rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("name", SOLVERS)
def test_check_grads(name):
    a, b = _spd(4) if name == "cg" else _general(4)

    def f(a, b):
        return SOLVERS[name](lambda x: jnp.dot(a, x), b, tol=1e-6)[0]

    check_grads(f, (a, b), order=1, modes=("fwd", "rev"), atol=2e-2, rtol=2e-2)


# -- vmap ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", SOLVERS)
def test_vmap_against_a_loop(name):
    mats, rhs = zip(*[(_spd(4, seed=s) if name == "cg" else _general(4, seed=s))
                      for s in range(3)])
    mats, rhs = np.stack(mats), np.stack(rhs)

    def f(a, b):
        return SOLVERS[name](a, b, tol=1e-6)[0]

    for in_axes, args in [((0, 0), (mats, rhs)), ((None, 0), (mats[0], rhs)),
                          ((0, None), (mats, rhs[0]))]:
        got = vmap(f, in_axes=in_axes)(*args)
        want = np.stack([np.asarray(f(*[x if ax is None else x[i]
                                        for x, ax in zip(args, in_axes)])) for i in range(3)])
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


# -- errors ----------------------------------------------------------------------------------

def test_errors():
    a, b = _spd(3)
    with pytest.raises(ValueError, match=r"linear operator must be a square matrix, but has "
                                         r"shape: \(3, 2\)"):
        sla.cg(a[:, :2], b)
    with pytest.raises(TypeError, match="linear operator must be either a function or "
                                        "ndarray"):
        sla.cg("matrix", b)
    with pytest.raises(ValueError, match="x0 and b must have matching tree structure"):
        sla.cg(a, b, x0=[b])
    with pytest.raises(ValueError, match=r"arrays in x0 and b must have matching shapes: "
                                         r"\[\(2,\)\] vs \[\(3,\)\]"):
        sla.bicgstab(a, b, x0=b[:2])
    with pytest.raises(ValueError, match="invalid solve_method qr, must be either "
                                         "'incremental' or 'batched'"):
        sla.gmres(a, b, solve_method="qr")
    with pytest.raises(ValueError, match="x0 and b must have matching tree structure"):
        sla.gmres(a, b, x0=(b,))


def test_gmres_info_and_restarts():
    a, b = _general(6, seed=4)
    want = np.linalg.solve(a.astype(np.float64), b)
    for method in ("batched", "incremental"):
        for restart in (2, 3, 20):
            x, info = sla.gmres(a, b, restart=restart, solve_method=method, tol=1e-6)
            assert int(info) == 0 and info.dtype == np.int32
            np.testing.assert_allclose(x, want, rtol=1e-4, atol=1e-5)
    # a singular (zero) operator: the solution is NaN and info says so, as in JAX
    x, info = sla.gmres(lambda x: x * 0, b)
    assert int(info) == -1 and np.isnan(np.asarray(x)).all()


# -- against JAX -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", SOLVERS)
def test_against_jax(name):
    jax = pytest.importorskip("jax")
    from jax.scipy.sparse import linalg as jax_sla
    theirs_solver = (partial(jax_sla.gmres, solve_method="incremental")
                     if name == "gmres_incremental" else getattr(jax_sla, name))
    a, b = _spd() if name == "cg" else _general()

    def loss(solver, dot):
        return lambda a, b: dot(b, solver(lambda x: dot(a, x), b, maxiter=3)[0])

    np.testing.assert_allclose(SOLVERS[name](a, b, maxiter=3)[0],
                               theirs_solver(a, b, maxiter=3)[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(SOLVERS[name](a, b)[0], theirs_solver(a, b)[0],
                               rtol=1e-4, atol=1e-5)
    got = grad(loss(SOLVERS[name], jnp.dot), argnums=(0, 1))(a, b)
    want = jax.grad(loss(theirs_solver, jax.numpy.dot), argnums=(0, 1))(a, b)
    for x, y in zip(got, want):
        np.testing.assert_allclose(x, y, rtol=1e-3, atol=1e-4)
    for case in (lambda m: m.cg(a, b, x0=[b]), lambda m: m.cg(a[:, :2], b)):
        with pytest.raises(ValueError) as their_err:
            case(jax_sla)
        with pytest.raises(ValueError) as my_err:
            case(sla)
        assert str(my_err.value) == str(their_err.value)


# -- properties of the algorithms (not tied to any reference's iteration order) --------------

def _rel_residual(a, x, b):
    return np.linalg.norm(a @ np.asarray(x, np.float64) - b) / np.linalg.norm(b)


@pytest.mark.parametrize("method", ["batched", "incremental"])
@pytest.mark.parametrize("restart", [3, 10, 40])
def test_gmres_restarts_on_a_larger_system(method, restart):
    # restart < n forces several cycles; restart == n is full GMRES
    a, b = _general(40, seed=7)
    x, info = sla.gmres(a, b, restart=restart, solve_method=method, tol=1e-6)
    assert int(info) == 0
    assert _rel_residual(a, x, b) < 1e-5
    np.testing.assert_allclose(x, np.linalg.solve(a.astype(np.float64), b), rtol=1e-4,
                               atol=1e-5)


@pytest.mark.parametrize("name", SOLVERS)
def test_preconditioner_reaches_the_tolerance(name):
    a, b = _spd(30, seed=5) if name == "cg" else _general(30, seed=5)
    scale = np.linspace(1, 50, 30).astype(np.float32)  # a badly scaled system
    a, b = a * scale[:, None] * scale[None, :], b * scale
    d = np.diagonal(a)
    x, _ = SOLVERS[name](a, b, M=lambda v: v / d, tol=1e-6)
    assert _rel_residual(a, x, b) < 1e-4


@pytest.mark.parametrize("name", SOLVERS)
def test_degenerate_problems(name):
    a, b = _spd(6, seed=2) if name == "cg" else _general(6, seed=2)
    want = np.linalg.solve(a.astype(np.float64), b).astype(np.float32)
    solver = SOLVERS[name]
    # b == 0: the zero solution, no NaN from normalising a zero residual
    x, _ = solver(a, np.zeros_like(b))
    np.testing.assert_array_equal(x, np.zeros_like(b))
    # x0 already the solution: returned (essentially) unchanged
    x, _ = solver(a, b, x0=want)
    np.testing.assert_allclose(x, want, rtol=1e-5, atol=1e-6)
    # the identity: the Krylov space is exhausted after one step
    x, _ = solver(lambda v: v, b)
    np.testing.assert_allclose(x, b, rtol=1e-6, atol=1e-6)
    # an eigenvector right-hand side: likewise a one-dimensional Krylov space
    d = np.arange(1, 7, dtype=np.float32)
    e = np.zeros(6, np.float32)
    e[2] = 1
    x, _ = solver(lambda v: d * v, e)
    np.testing.assert_allclose(x, e / 3, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("method", ["batched", "incremental"])
def test_gmres_singular_operator_reports_nan(method):
    _, b = _general(5)
    x, info = sla.gmres(lambda v: v * 0, b, solve_method=method)
    assert int(info) == -1 and np.isnan(np.asarray(x)).all()


@pytest.mark.parametrize("name", ["bicgstab", "gmres", "gmres_incremental"])
def test_complex_non_hermitian(name):
    rng = np.random.default_rng(3)
    n = 12
    a = (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
         + 3 * n ** 0.5 * np.eye(n)).astype(np.complex64)
    b = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    x, _ = SOLVERS[name](a, b, tol=1e-6)
    assert x.dtype == np.complex64
    np.testing.assert_allclose(x, np.linalg.solve(a.astype(np.complex128), b), rtol=1e-4,
                               atol=1e-5)


@pytest.mark.parametrize("name", SOLVERS)
def test_vmap_lanes_converging_at_different_times(name):
    # one lane is already solved (b == 0), one is easy, one needs many iterations/cycles
    a, b = _spd(12, seed=4) if name == "cg" else _general(12, seed=4)
    rhs = np.stack([np.zeros_like(b), a[:, 0], b])
    extra = {"restart": 3} if name.startswith("gmres") else {}
    xs = vmap(lambda r: SOLVERS[name](a, r, tol=1e-6, **extra)[0])(rhs)
    for x, r in zip(xs, rhs):
        np.testing.assert_allclose(x, np.linalg.solve(a.astype(np.float64), r), rtol=1e-4,
                                   atol=1e-5)


@pytest.mark.parametrize("name", SOLVERS)
def test_pytree_with_mixed_real_and_complex_leaves(name):
    # a diagonal operator on (real vector, complex matrix): each leaf keeps its dtype
    b = (np.array([1.0, 2.0], np.float32), np.full((2, 2), 1 + 2j, np.complex64))
    x, _ = SOLVERS[name](lambda t: (2 * t[0], 4 * t[1]), b)
    assert x[0].dtype == np.float32 and x[1].dtype == np.complex64
    np.testing.assert_allclose(x[0], b[0] / 2, rtol=1e-5)
    np.testing.assert_allclose(x[1], b[1] / 4, rtol=1e-5)


@pytest.mark.parametrize("name", ["bicgstab", "gmres", "gmres_incremental"])
def test_grad_of_a_pytree_solve_under_jit(name):
    a1, b1 = _general(3, seed=8)
    a2, b2 = _general(2, seed=9)

    def loss(a1, a2):
        x, _ = SOLVERS[name](lambda t: {"p": jnp.dot(a1, t["p"]), "q": jnp.dot(a2, t["q"])},
                             {"p": b1, "q": b2}, tol=1e-7)
        return jnp.sum(x["p"]) + jnp.sum(x["q"] ** 2)

    g1, g2 = jit(grad(loss, argnums=(0, 1)))(a1, a2)
    a1_64, a2_64 = a1.astype(np.float64), a2.astype(np.float64)
    x1, x2 = np.linalg.solve(a1_64, b1), np.linalg.solve(a2_64, b2)
    # d/dA of w . A^-1 b is -(A^-T w) x^T
    lam1, lam2 = np.linalg.solve(a1_64.T, np.ones(3)), np.linalg.solve(a2_64.T, 2 * x2)
    np.testing.assert_allclose(g1, -np.outer(lam1, x1), rtol=1e-3, atol=1e-5)
    np.testing.assert_allclose(g2, -np.outer(lam2, x2), rtol=1e-3, atol=1e-5)
