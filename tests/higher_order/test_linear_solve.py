"""lax.custom_linear_solve: values against np.linalg.solve (eager and jitted, pytree
right-hand sides); derivatives by implicit differentiation against closed forms and finite
differences (jvp, grad, vjp, linear_transpose, second order), with solvers that cannot be
differentiated themselves; symmetric=True; has_aux; vmap against a Python loop; JAX's errors;
and differential tests against JAX."""

import re

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import grad, jit, lax, vmap
from xjax._src.testing.check_grads import check_grads


def _system(n=3, seed=0, spd=False):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (n, n)) + 3 * np.eye(n)
    if spd:
        a = a @ a.T + np.eye(n)
    b = rng.uniform(-1, 1, n)
    return a.astype(np.float32), b.astype(np.float32)


def _dense_solve(a, b):
    """A general system: solve and transpose_solve by LU (never differentiated)."""
    return lax.custom_linear_solve(lambda x: jnp.dot(a, x), b,
                                   lambda _, y: jnp.linalg.solve(a, y),
                                   lambda _, y: jnp.linalg.solve(a.T, y))


def _jacobi(matvec, b, diag, iters=200):
    """Jacobi iteration by ``while_loop``, which reverse mode cannot differentiate: a
    derivative through custom_linear_solve must not try to."""
    def body(state):
        i, x = state
        return i + 1, x + (b - matvec(x)) / diag
    return lax.while_loop(lambda s: s[0] < iters, body, (0, jnp.zeros_like(b)))[1]


def _iterative_solve(a, b):
    diag = jnp.diagonal(a)
    return lax.custom_linear_solve(
        lambda x: jnp.dot(a, x), b,
        lambda mv, y: _jacobi(mv, y, diag),
        lambda vm, y: _jacobi(vm, y, diag))


# -- values ----------------------------------------------------------------------------------

@pytest.mark.parametrize("jitted", [False, True])
@pytest.mark.parametrize("fun", [_dense_solve, _iterative_solve], ids=["lu", "jacobi"])
def test_values_against_numpy(fun, jitted):
    a, b = _system()
    f = jit(fun) if jitted else fun
    np.testing.assert_allclose(f(a, b), np.linalg.solve(a.astype(np.float64), b),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("jitted", [False, True])
def test_pytree_right_hand_side(jitted):
    a1, b1 = _system(3, seed=1)
    a2, b2 = _system(2, seed=2)

    def f(b):
        def matvec(x):
            return {"u": jnp.dot(a1, x["u"]), "v": (jnp.dot(a2, x["v"][0]),)}

        def solve(_, y):
            return {"u": jnp.linalg.solve(a1, y["u"]), "v": (jnp.linalg.solve(a2, y["v"][0]),)}

        return lax.custom_linear_solve(matvec, b, solve, symmetric=False)

    f = jit(f) if jitted else f
    out = f({"u": b1, "v": (b2,)})
    assert set(out) == {"u", "v"} and isinstance(out["v"], tuple)
    np.testing.assert_allclose(out["u"], np.linalg.solve(a1, b1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["v"][0], np.linalg.solve(a2, b2), rtol=1e-5, atol=1e-6)


def test_only_solve_runs_and_output_types():
    a, b = _system()
    calls = []

    def solve(mv, y):
        calls.append("solve")
        return jnp.linalg.solve(a, y)

    out = lax.custom_linear_solve(lambda x: jnp.dot(a, x), b, solve)
    assert out.dtype == np.float32 and out.shape == (3,)
    assert calls == ["solve"]  # traced once; matvec is traced but solve alone runs
    np.testing.assert_allclose(out, np.linalg.solve(a, b), rtol=1e-5, atol=1e-6)


# -- derivatives -----------------------------------------------------------------------------

@pytest.mark.parametrize("jitted", [False, True])
@pytest.mark.parametrize("fun", [_dense_solve, _iterative_solve], ids=["lu", "jacobi"])
def test_grad_against_closed_form(fun, jitted):
    # L = w . x with A x = b:  dL/db = A^-T w,  dL/dA = -(A^-T w) x^T
    a, b = _system()
    w = np.array([1.0, -2.0, 0.5], np.float32)

    def loss(a, b):
        return jnp.dot(w, fun(a, b))

    g = jit(grad(loss, argnums=(0, 1))) if jitted else grad(loss, argnums=(0, 1))
    ga, gb = g(a, b)
    a64 = a.astype(np.float64)
    x = np.linalg.solve(a64, b)
    lam = np.linalg.solve(a64.T, w)
    np.testing.assert_allclose(gb, lam, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ga, -np.outer(lam, x), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("jitted", [False, True])
def test_jvp_against_closed_form(jitted):
    # x_dot = A^-1 (b_dot - A_dot x)
    a, b = _system()
    a_dot, b_dot = _system(seed=5)
    f = jit(_iterative_solve) if jitted else _iterative_solve
    x, x_dot = xjax.jvp(f, (a, b), (a_dot, b_dot))
    a64 = a.astype(np.float64)
    want_x = np.linalg.solve(a64, b)
    np.testing.assert_allclose(x, want_x, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(x_dot, np.linalg.solve(a64, b_dot - a_dot @ want_x),
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("jitted", [False, True])
def test_check_grads_second_order(jitted):
    a, b = _system()
    f = jit(_dense_solve) if jitted else _dense_solve
    check_grads(f, (a, b), order=2, modes=("fwd", "rev"))


def test_check_grads_pytree_and_closed_over_scale():
    a, b = _system()

    def f(s, b):
        def matvec(x):
            return (s * jnp.dot(a, x[0]), x[1] * s)

        def solve(_, y):
            return (jnp.linalg.solve(a, y[0]) / s, y[1] / s)

        return lax.custom_linear_solve(matvec, b, solve, lambda _, y: (
            jnp.linalg.solve(a.T, y[0]) / s, y[1] / s))

    check_grads(f, (np.float32(1.5), (b, b[:2])), order=2, modes=("fwd", "rev"))


def test_vjp_and_linear_transpose_use_transpose_solve():
    a, b = _system()
    ct = np.array([0.3, -1.0, 2.0], np.float32)
    x, pullback = xjax.vjp(lambda b: _dense_solve(a, b), b)
    (b_ct,) = pullback(ct)
    np.testing.assert_allclose(b_ct, np.linalg.solve(a.T.astype(np.float64), ct),
                               rtol=1e-5, atol=1e-6)
    (t_ct,) = xjax.linear_transpose(lambda b: _dense_solve(a, b), b)(ct)
    np.testing.assert_allclose(t_ct, b_ct, rtol=1e-6, atol=1e-6)


def test_derived_vecmat_is_the_transpose_of_matvec():
    # transpose_solve receives vecmat, derived by transposing matvec: vecmat(y) = A^T y
    a, b = _system()
    seen = {}

    def transpose_solve(vecmat, y):
        seen["vecmat"] = vecmat
        return jnp.linalg.solve(a.T, y)

    lax.custom_linear_solve(lambda x: jnp.dot(a, x), b, lambda _, y: jnp.linalg.solve(a, y),
                            transpose_solve)
    y = np.array([1.0, 2.0, -1.0], np.float32)
    np.testing.assert_allclose(seen["vecmat"](y), a.T @ y, rtol=1e-6)


@pytest.mark.parametrize("jitted", [False, True])
def test_symmetric_uses_solve_for_the_transpose(jitted):
    a, b = _system(spd=True)
    calls = []

    def solve(matvec, y):
        calls.append(matvec)
        return jnp.linalg.solve(a, y)

    def f(a_, b):
        return lax.custom_linear_solve(lambda x: jnp.dot(a_, x), b, solve, symmetric=True)

    g = grad(lambda a_, b: jnp.sum(f(a_, b) ** 2), argnums=(0, 1))
    g = jit(g) if jitted else g
    ga, gb = g(a, b)
    a64 = a.astype(np.float64)
    x = np.linalg.solve(a64, b)
    lam = np.linalg.solve(a64, 2 * x)
    np.testing.assert_allclose(gb, lam, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ga, -np.outer(lam, x), rtol=1e-4, atol=1e-5)
    assert len(calls) == 2  # traced as solve and as transpose_solve
    check_grads(lambda b: f(a, b), (b,), order=1, modes=("rev",))


def test_grad_without_transpose_solve_raises_jax_error_but_jvp_works():
    a, b = _system()

    def f(b):
        return lax.custom_linear_solve(lambda x: jnp.dot(a, x), b,
                                       lambda _, y: jnp.linalg.solve(a, y))

    with pytest.raises(TypeError, match="transpose_solve required for backwards mode "
                                        "automatic differentiation of custom_linear_solve"):
        grad(lambda b: jnp.sum(f(b)))(b)
    _, x_dot = xjax.jvp(f, (b,), (np.ones(3, np.float32),))
    np.testing.assert_allclose(x_dot, np.linalg.solve(a, np.ones(3)), rtol=1e-5, atol=1e-6)


def test_grad_of_an_iterative_solver_needs_custom_linear_solve():
    # the same Jacobi loop differentiated directly fails in reverse mode (while_loop)
    a, b = _system()
    diag = jnp.diagonal(a)
    with pytest.raises(Exception):
        grad(lambda b: jnp.sum(_jacobi(lambda x: jnp.dot(a, x), b, diag)))(b)
    g = grad(lambda b: jnp.sum(_iterative_solve(a, b)))(b)
    np.testing.assert_allclose(g, np.linalg.solve(a.T, np.ones(3)), rtol=1e-4, atol=1e-5)


# -- has_aux ---------------------------------------------------------------------------------

def _aux_solve(a, b):
    def solve(_, y):
        x = jnp.linalg.solve(a, y)
        return x, {"residual": jnp.linalg.norm(jnp.dot(a, x) - y), "iters": jnp.int32(1)}

    def transpose_solve(_, y):
        x = jnp.linalg.solve(a.T, y)
        return x, {"residual": jnp.linalg.norm(jnp.dot(a.T, x) - y), "iters": jnp.int32(1)}

    return lax.custom_linear_solve(lambda x: jnp.dot(a, x), b, solve, transpose_solve,
                                   has_aux=True)


@pytest.mark.parametrize("jitted", [False, True])
def test_has_aux_values_and_grad(jitted):
    a, b = _system()
    f = jit(_aux_solve) if jitted else _aux_solve
    x, aux = f(a, b)
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-5, atol=1e-6)
    assert set(aux) == {"residual", "iters"}
    assert aux["iters"].dtype == np.int32 and int(aux["iters"]) == 1
    assert float(aux["residual"]) < 1e-4
    g = grad(lambda b: jnp.sum(f(a, b)[0]))(b)
    np.testing.assert_allclose(g, np.linalg.solve(a.T, np.ones(3)), rtol=1e-4, atol=1e-5)
    _, (x_dot, aux_dot) = xjax.jvp(lambda b: f(a, b), (b,), (np.ones(3, np.float32),))
    np.testing.assert_allclose(x_dot, np.linalg.solve(a, np.ones(3)), rtol=1e-4, atol=1e-5)
    assert float(aux_dot["residual"]) == 0.0


def test_has_aux_vmap():
    a, b = _system()
    bs = np.stack([b, 2 * b, -b])
    xs, aux = vmap(lambda b: _aux_solve(a, b))(bs)
    np.testing.assert_allclose(xs, np.linalg.solve(a, bs.T).T, rtol=1e-5, atol=1e-6)
    assert aux["residual"].shape == (3,) and aux["iters"].shape == (3,)


# -- vmap ------------------------------------------------------------------------------------

def _loop(fun, args, in_axes):
    size = next(np.shape(x)[ax] for x, ax in zip(args, in_axes) if ax is not None)
    outs = [fun(*[x if ax is None else np.take(x, i, axis=ax)
                  for x, ax in zip(args, in_axes)]) for i in range(size)]
    return np.stack([np.asarray(o) for o in outs])


@pytest.mark.parametrize("jitted", [False, True])
@pytest.mark.parametrize("in_axes", [(None, 0), (0, None), (0, 0), (2, 1), (1, None)])
@pytest.mark.parametrize("fun", [_dense_solve, _iterative_solve], ids=["lu", "jacobi"])
def test_vmap_against_a_loop(fun, in_axes, jitted):
    rng = np.random.default_rng(3)
    a = (rng.uniform(-1, 1, (4, 3, 3)) + 3 * np.eye(3)).astype(np.float32)
    b = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
    a_in = a[0] if in_axes[0] is None else np.moveaxis(a, 0, in_axes[0])
    b_in = b[0] if in_axes[1] is None else np.moveaxis(b, 0, in_axes[1])
    f = vmap(fun, in_axes=in_axes)
    f = jit(f) if jitted else f
    np.testing.assert_allclose(f(a_in, b_in), _loop(fun, (a_in, b_in), in_axes),
                               rtol=1e-5, atol=1e-5)


def test_vmap_of_grad_and_grad_of_vmap():
    rng = np.random.default_rng(4)
    a = (rng.uniform(-1, 1, (3, 3, 3)) + 3 * np.eye(3)).astype(np.float32)
    b = rng.uniform(-1, 1, (3, 3)).astype(np.float32)

    def loss(a, b):
        return jnp.sum(jnp.sin(_dense_solve(a, b)))

    per_example = vmap(grad(loss, argnums=(0, 1)))(a, b)
    looped = [grad(loss, argnums=(0, 1))(a[i], b[i]) for i in range(3)]
    for k in range(2):
        np.testing.assert_allclose(per_example[k], np.stack([np.asarray(g[k]) for g in looped]),
                                   rtol=1e-5, atol=1e-5)
    summed = grad(lambda a, b: jnp.sum(vmap(loss)(a, b)), argnums=(0, 1))(a, b)
    for k in range(2):
        np.testing.assert_allclose(summed[k], per_example[k], rtol=1e-5, atol=1e-5)


def test_vmap_batched_matrix_only_in_matvec():
    # matvec closes over a batched matrix while solve uses its own (unbatched) copy:
    # the unbatched b and x must still be batched consistently across the held jaxprs
    rng = np.random.default_rng(6)
    scales = np.array([1.0, 2.0, 4.0], np.float32)
    a, b = _system()

    def f(s):
        return lax.custom_linear_solve(lambda x: s * jnp.dot(a, x), b,
                                       lambda _, y: jnp.linalg.solve(a, y) / s,
                                       lambda _, y: jnp.linalg.solve(a.T, y) / s)

    got = vmap(f)(scales)
    want = np.stack([np.linalg.solve(s * a, b) for s in scales])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    g = vmap(grad(lambda s: jnp.sum(f(s))))(scales)
    eps = 1e-2
    fd = [(np.sum(np.linalg.solve((s + eps) * a, b)) -
           np.sum(np.linalg.solve((s - eps) * a, b))) / (2 * eps) for s in scales]
    np.testing.assert_allclose(g, fd, rtol=1e-3, atol=1e-4)
    del rng


# -- errors ----------------------------------------------------------------------------------

def test_errors_for_mismatched_outputs():
    b = np.ones(3, np.float32)
    with pytest.raises(ValueError, match=r"matvec\(\) output shapes must match b, got "
                                         r"\[\(3,\), \(3,\)\] and \[\(3,\)\]"):
        lax.custom_linear_solve(lambda x: (x, x), b, lambda m, y: y)
    with pytest.raises(ValueError, match=r"solve\(\) output shapes must match b, got "
                                         r"\[\(2,\)\] and \[\(3,\)\]"):
        lax.custom_linear_solve(lambda x: x, b, lambda m, y: y[:2])
    with pytest.raises(TypeError, match=r"matvec\(\) output pytree structure must match b, "
                                        r"got PyTreeDef\(\[\*\]\) and PyTreeDef\(\*\)\."):
        lax.custom_linear_solve(lambda x: [x], b, lambda m, y: y)
    with pytest.raises(TypeError, match=r"transpose_solve\(\) output pytree structure must "
                                        r"match b, got PyTreeDef\(\[\*\]\) and "
                                        r"PyTreeDef\(\*\)\."):
        lax.custom_linear_solve(lambda x: x, b, lambda m, y: y, lambda m, y: [y])
    with pytest.raises(ValueError):  # has_aux but solve returns no (x, aux) pair
        lax.custom_linear_solve(lambda x: x, b, lambda m, y: y, has_aux=True)
    with pytest.raises(ValueError, match=r"too many values to unpack \(expected 2\)"):
        lax.custom_linear_solve(lambda x: x, (b, b, b), lambda m, y: y, has_aux=True)
    with pytest.raises(TypeError, match=r"solve\(\) output pytree structure must match b, "
                                        r"got PyTreeDef\(\[\*\]\) and PyTreeDef\(\*\)\."):
        lax.custom_linear_solve(lambda x: x, b, lambda m, y: ([y], 0.0), has_aux=True)


def test_error_for_a_solve_of_another_dtype():
    b = np.ones(3, np.float32)
    with pytest.raises(TypeError, match="solve\\(\\) must return arrays of b's shapes and "
                                        "dtypes"):
        lax.custom_linear_solve(lambda x: x, b, lambda m, y: y.astype(jnp.int32))


# -- jaxprs ----------------------------------------------------------------------------------

def test_make_jaxpr_holds_the_four_jaxprs():
    a, b = _system()
    text = str(xjax.make_jaxpr(_dense_solve)(a, b))
    assert "custom_linear_solve[" in text
    # a's three uses (matvec, its derived transpose, and a.T in transpose_solve) are consts
    assert re.search(r"const_lengths=_LinearSolveTuple\(matvec=1, vecmat=1, solve=\d+, "
                     r"transpose_solve=\d+\)", text)
    symmetric = str(xjax.make_jaxpr(lambda b: lax.custom_linear_solve(
        lambda x: 2.0 * x, b, lambda m, y: y / 2.0, symmetric=True))(b))
    assert ("const_lengths=_LinearSolveTuple(matvec=0, vecmat=0, solve=0, transpose_solve=0)"
            in symmetric)
    no_transpose = str(xjax.make_jaxpr(lambda b: lax.custom_linear_solve(
        lambda x: 2.0 * x, b, lambda m, y: y / 2.0))(b))
    assert "vecmat=None" in no_transpose and "transpose_solve=None" in no_transpose
    assert xjax.lax.linear_solve_p.name == "custom_linear_solve"


# -- against JAX -----------------------------------------------------------------------------

def _programs(lx, lnp):
    def dense(a, b):
        return lx.custom_linear_solve(lambda x: lnp.dot(a, x), b,
                                      lambda _, y: lnp.linalg.solve(a, y),
                                      lambda _, y: lnp.linalg.solve(a.T, y))

    def aux(a, b):
        return lx.custom_linear_solve(lambda x: lnp.dot(a, x), b,
                                      lambda _, y: (lnp.linalg.solve(a, y), lnp.sum(y)),
                                      symmetric=True, has_aux=True)

    return dense, aux


def test_against_jax():
    jax = pytest.importorskip("jax")
    a, b = _system()
    mine, theirs = _programs(lax, jnp), _programs(jax.lax, jax.numpy)
    w = np.array([1.0, -2.0, 0.5], np.float32)
    for f, g in zip(mine, theirs):
        for x, y in zip(xjax.tree_util.tree_leaves(f(a, b)), jax.tree_util.tree_leaves(g(a, b)),
                        strict=True):
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)

        def loss(fun, dot):
            return lambda a, b: dot(w, xjax.tree_util.tree_leaves(fun(a, b))[0])

        got = grad(loss(f, jnp.dot), argnums=(0, 1))(a, b)
        want = jax.grad(loss(g, jax.numpy.dot), argnums=(0, 1))(a, b)
        for x, y in zip(got, want):
            np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-5)
    bs = np.stack([b, 2 * b])
    np.testing.assert_allclose(vmap(mine[0], (None, 0))(a, bs),
                               jax.vmap(theirs[0], (None, 0))(a, bs), rtol=1e-5, atol=1e-6)
    _, t_mine = xjax.jvp(mine[0], (a, b), (a, b))
    _, t_theirs = jax.jvp(theirs[0], (a, b), (a, b))
    np.testing.assert_allclose(t_mine, t_theirs, rtol=1e-4, atol=1e-5)


def test_errors_match_jax():
    jax = pytest.importorskip("jax")
    b = np.ones(3, np.float32)
    cases = [
        lambda lx: lx.custom_linear_solve(lambda x: (x, x), b, lambda m, y: y),
        lambda lx: lx.custom_linear_solve(lambda x: x, b, lambda m, y: y[:2]),
        lambda lx: lx.custom_linear_solve(lambda x: [x], b, lambda m, y: y),
        lambda lx: lx.custom_linear_solve(lambda x: x, b, lambda m, y: y, lambda m, y: [y]),
        lambda lx: lx.custom_linear_solve(lambda x: x, (b, b, b), lambda m, y: y,
                                          has_aux=True),
        lambda lx: lx.custom_linear_solve(lambda x: x, b, lambda m, y: ([y], 0.0),
                                          has_aux=True),
    ]
    for case in cases:
        with pytest.raises(Exception) as theirs:
            case(jax.lax)
        with pytest.raises(type(theirs.value)) as mine:
            case(lax)
        assert str(mine.value) == str(theirs.value)


def test_jaxpr_matches_jax():
    jax = pytest.importorskip("jax")

    def prog(lx):
        return lambda b: lx.custom_linear_solve(lambda x: x + x, b, lambda m, y: y * 0.5,
                                                lambda m, y: y * 0.5)

    b = np.ones(2, np.float32)
    mine = str(xjax.make_jaxpr(prog(lax))(b))
    theirs = str(jax.make_jaxpr(prog(jax.lax))(b))
    # the equation's head and const_lengths print alike; the held jaxprs' layout differs
    for text in (mine, theirs):
        assert "custom_linear_solve[" in text
    head = "const_lengths=_LinearSolveTuple(matvec=0, vecmat=0, solve=0, transpose_solve=0)"
    assert head in mine and head in theirs
    assert mine.splitlines()[0] == theirs.splitlines()[0]
