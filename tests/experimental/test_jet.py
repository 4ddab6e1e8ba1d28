"""xjax.experimental.jet: Taylor-mode derivatives against nested jvp (the independent
reference), closed forms, and JAX's jet."""

import math

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax.experimental.jet import jet, jet2

K = 4
_rng = np.random.default_rng(0)
X0 = jnp.asarray(_rng.uniform(0.3, 0.9, 3), jnp.float32)
TERMS = [jnp.asarray(_rng.normal(size=3) * 0.5, jnp.float32) for _ in range(K)]
W = jnp.asarray(_rng.normal(size=(3, 3)), jnp.float32)


def nested_jvp_derivatives(f, primals, series, order):
    """Value and first ``order`` derivatives at t=0 of ``f(h_1(t), ..., h_n(t))`` where
    ``h_i(t) = x_i + sum_k s_ik t^k / k!``, by ``order`` nested scalar jvps."""
    def curve(t):
        return [x + sum(s * t ** (k + 1) / math.factorial(k + 1) for k, s in enumerate(ss))
                for x, ss in zip(primals, series)]

    def g(t):
        return f(*curve(t))

    derivs, current = [], g
    for _ in range(order):
        current = (lambda prev: lambda t: xjax.jvp(prev, (t,), (jnp.ones_like(t),))[1])(
            current)
        derivs.append(current(jnp.float32(0.0)))
    return g(jnp.float32(0.0)), derivs


UNARY = {
    "sin": jnp.sin, "cos": jnp.cos, "exp": jnp.exp, "log": jnp.log, "tanh": jnp.tanh,
    "sigmoid": xjax.nn.sigmoid, "sqrt": jnp.sqrt, "rsqrt": lax.rsqrt,
    "div": lambda x: 1.0 / (1 + x), "pow_const": lambda x: x ** 2.5,
    "pow_both": lambda x: x ** x, "integer_pow": lambda x: x ** 3,
    "integer_pow_neg": lambda x: x ** -2, "dot_general": lambda x: jnp.tanh(W @ x),
    "reduce_sum": lambda x: jnp.sum(x ** 2) * x, "reduce_max": lambda x: jnp.max(x) * x,
    "reduce_min": lambda x: jnp.min(x) * x,
    "log1p": jnp.log1p, "expm1": jnp.expm1, "erf": xjax.scipy.special.erf, "tan": jnp.tan,
    "atan": jnp.arctan, "asin": jnp.arcsin, "acos": jnp.arccos, "asinh": jnp.arcsinh,
    "acosh": lambda x: jnp.arccosh(x + 1.5), "atanh": jnp.arctanh, "sinh": jnp.sinh,
    "cosh": jnp.cosh, "square": jnp.square, "cbrt": jnp.cbrt, "exp2": jnp.exp2,
    "erf_inv": lambda x: xjax.scipy.special.erfinv(x - 0.4),
    "erfc": xjax.scipy.special.erfc,
    "select_n": lambda x: jnp.where(x > 0.5, x ** 2, jnp.sin(x)),
    "abs": lambda x: jnp.abs(x - 0.6) * x,
    "shape_ops": lambda x: jnp.sum(jnp.outer(x, x).T.reshape(-1)[::2]),
    "atan2": lambda x: jnp.arctan2(x, 1.0 + x ** 2), "rem": lambda x: jnp.fmod(x * 3, 0.7) * x,
    "jit": xjax.jit(lambda x: jnp.exp(x) * x), "max": lambda x: jnp.maximum(x, 0.6) ** 2,
    "clamp": lambda x: jnp.clip(x, 0.4, 0.8) * x,
    "logsumexp": lambda x: xjax.nn.logsumexp(x) * x, "custom_jvp": xjax.nn.softplus,
    "gelu": xjax.nn.gelu, "concatenate": lambda x: jnp.concatenate([x, x ** 2]).sum(),
    "gather": lambda x: x[1] * x, "cumsum": lambda x: jnp.cumsum(x ** 2),
    "convert": lambda x: (x.astype(jnp.float16).astype(jnp.float32) * 0 + x) ** 2,
    "checkpoint": xjax.checkpoint(lambda x: jnp.sin(x) ** 2),
    "split": lambda x: jnp.split(jnp.concatenate([x, x ** 2]), 2)[1] * x,
    "dynamic_update_slice": lambda x: lax.dynamic_update_slice(jnp.sin(x), x[:1] ** 2, (1,)),
    "scatter_add": lambda x: jnp.zeros(3).at[jnp.array([0, 0, 2])].add(x ** 2),
    "scatter": lambda x: jnp.sin(x).at[1].set(x[0] ** 3),
    "conv": lambda x: jnp.convolve(x, x ** 2),
    "dynamic_slice": lambda x: lax.dynamic_slice(x ** 2, (jnp.int32(1),), (2,)).sum() * x,
    "pad": lambda x: jnp.pad(x ** 2, 1)[:3] * x, "softmax": xjax.nn.softmax,
    "relu": lambda x: xjax.nn.relu(x - 0.6) ** 2,
    "complex_abs": lambda x: jnp.abs(jnp.exp(1j * x) * x),
    "cumprod": lambda x: jnp.cumprod(jnp.outer(x, x + 0.5), axis=1),
    "cummax": lambda x: lax.cummax(jnp.sin(3 * x), reverse=True),
    "cummin": lambda x: lax.cummin(x, axis=0),
    "cumlogsumexp": lambda x: lax.cumlogsumexp(x ** 2),
    "reduce_prod": lambda x: jnp.prod(jnp.einsum("i,j,k->ijk", x, x + 0.5, x ** 2),
                                      axis=(0, 2)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_against_nested_jvp(name):
    f = UNARY[name]
    primal, terms = jet(f, (X0,), (TERMS,))
    want_primal, want_terms = nested_jvp_derivatives(f, [X0], [TERMS], K)
    np.testing.assert_allclose(primal, want_primal, rtol=1e-5, atol=1e-6)
    assert len(terms) == K
    for k, (got, want) in enumerate(zip(terms, want_terms)):
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3, err_msg=f"order {k + 1}")


def test_closed_forms():
    # exp along a line: the k-th derivative is exp(x0) h1^k.
    h1 = jnp.asarray([0.5, -1.0, 2.0])
    _, terms = jet(jnp.exp, (X0,), ([h1, 0 * h1, 0 * h1],))
    for k, t in enumerate(terms, start=1):
        np.testing.assert_allclose(t, np.exp(X0) * np.asarray(h1) ** k, rtol=1e-5)
    # x^3 at 0 along t: derivatives 0, 0, 6 exactly (no log of 0).
    _, terms = jet(lambda x: x ** 3, (0.0,), ([1.0, 0.0, 0.0, 0.0],))
    np.testing.assert_array_equal([float(t) for t in terms], [0.0, 0.0, 6.0, 0.0])
    # sin(h(t)), h = t^3 at 0.5 (Faa di Bruno, JAX's docstring example).
    h0, h1, h2 = 0.5 ** 3, 3 * 0.5 ** 2, 6 * 0.5
    f0, (f1, f2) = jet(jnp.sin, (h0,), ((h1, h2),))
    np.testing.assert_allclose(f0, np.sin(h0), rtol=1e-6)
    np.testing.assert_allclose(f1, np.cos(h0) * h1, rtol=1e-6)
    np.testing.assert_allclose(f2, -np.sin(h0) * h1 ** 2 + np.cos(h0) * h2, rtol=1e-6)


def test_max_tie_averages():
    x = jnp.asarray([1.0, 2.0, 2.0])
    _, (t,) = jet(jnp.max, (x,), ([jnp.asarray([5.0, 1.0, 3.0])],))
    assert float(t) == 2.0
    _, (t,) = jet(lambda a: jnp.maximum(a, 1.0), (jnp.asarray(1.0),), ([jnp.asarray(4.0)],))
    assert float(t) == 2.0


def test_jet2_is_unscaled():
    scaled = jet(jnp.tanh, (X0,), (TERMS,))[1]
    coeffs = [t / math.factorial(k + 1) for k, t in enumerate(TERMS)]
    unscaled = jet2(jnp.tanh, (X0,), (coeffs,))[1]
    for k, (a, b) in enumerate(zip(scaled, unscaled)):
        np.testing.assert_allclose(np.asarray(a) / math.factorial(k + 1), b, rtol=1e-5,
                                   atol=1e-6)


def test_two_arguments_and_pytree_output():
    y0 = jnp.asarray([1.3, 0.2, -0.5])
    y_terms = [jnp.full(3, 0.2), jnp.zeros(3), jnp.ones(3), jnp.full(3, -0.5)]

    def f(a, b):
        return {"s": jnp.sin(a) @ jnp.cos(b), "pair": (a * b, a / (2 + b))}

    primal, series = jet(f, (X0, y0), (TERMS, y_terms))
    assert set(primal) == {"s", "pair"} and len(series["pair"]) == 2
    for key in (lambda d: d["s"], lambda d: d["pair"][0], lambda d: d["pair"][1]):
        want_p, want_t = nested_jvp_derivatives(lambda a, b: key(f(a, b)), [X0, y0],
                                                [TERMS, y_terms], K)
        np.testing.assert_allclose(key(primal), want_p, rtol=1e-5)
        for got, want in zip(key(series), want_t):
            np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)


def test_constant_and_identity_outputs():
    primal, (terms,) = jet(lambda x: (3.0 * jnp.ones(2),), (X0,), (TERMS,))
    np.testing.assert_array_equal(primal[0], [3.0, 3.0])
    assert len(terms) == K and all(np.all(np.asarray(t) == 0) for t in terms)
    primal, terms = jet(lambda x: x, (X0,), (TERMS,))
    for got, want in zip(terms, TERMS):  # equal up to the rounding of scaling by k!
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_composes_with_transformations():
    def second_derivative_of_sin(x):
        return jet(jnp.sin, (x,), ([jnp.ones_like(x), jnp.zeros_like(x)],))[1][1]

    np.testing.assert_allclose(xjax.jit(second_derivative_of_sin)(X0), -np.sin(X0),
                               rtol=1e-6)
    np.testing.assert_allclose(xjax.vmap(second_derivative_of_sin)(X0), -np.sin(X0),
                               rtol=1e-6)
    np.testing.assert_allclose(
        xjax.grad(lambda x: second_derivative_of_sin(x).sum())(X0), -np.cos(X0), rtol=1e-5)


def test_errors():
    with pytest.raises(ValueError, match="inconsistent lengths"):
        jet(jnp.sin, (1.0,), ([1.0, 2.0], [1.0]))
    with pytest.raises(ValueError, match="primal value at position 0 is not an array"):
        jet(jnp.sin, ([1.0],), ([1.0],))
    with pytest.raises(ValueError, match="term 0 for argument 0 is not an array"):
        jet(jnp.sin, (1.0,), ([[1.0]],))
    with pytest.raises(ValueError, match="2 primals but 1 series"):
        jet(lambda a, b: a + b, (1.0, 2.0), ([1.0],))
    with pytest.raises(NotImplementedError, match="Jet rule for 'sort' not implemented"):
        jet(jnp.sort, (X0,), (TERMS,))
    with pytest.raises(KeyError):  # JAX raises KeyError here; the error is both
        jet(xjax.scipy.special.gammaln, (X0,), (TERMS,))
    # Unsupported primitives whose inputs carry no series are simply evaluated.
    primal, _ = jet(lambda x: x + jnp.sort(jnp.asarray([3.0, 1.0]))[0], (X0,), (TERMS,))
    np.testing.assert_allclose(primal, X0 + 1.0)


@pytest.mark.parametrize("name", ["sin", "exp", "log", "tanh", "sigmoid", "sqrt", "div",
                                  "pow_const", "pow_both", "integer_pow", "dot_general",
                                  "reduce_max", "log1p", "expm1", "erf", "abs", "max",
                                  "erf_inv", "atan2", "select_n", "cumprod", "cummax"])
def test_against_jax(name):
    jax = pytest.importorskip("jax")
    from jax.experimental.jet import jet as jax_jet
    import jax.numpy as jax_jnp
    import jax.scipy.special as jsp
    jax_fns = {
        "sin": jax_jnp.sin, "exp": jax_jnp.exp, "log": jax_jnp.log, "tanh": jax_jnp.tanh,
        "sigmoid": jax.nn.sigmoid, "sqrt": jax_jnp.sqrt, "div": lambda x: 1.0 / (1 + x),
        "pow_const": lambda x: x ** 2.5, "pow_both": lambda x: x ** x,
        "integer_pow": lambda x: x ** 3, "dot_general": lambda x: jax_jnp.tanh(np.asarray(W) @ x),
        "reduce_max": lambda x: jax_jnp.max(x) * x, "log1p": jax_jnp.log1p,
        "expm1": jax_jnp.expm1, "erf": jsp.erf, "abs": lambda x: jax_jnp.abs(x - 0.6) * x,
        "max": lambda x: jax_jnp.maximum(x, 0.6) ** 2,
        "erf_inv": lambda x: jsp.erfinv(x - 0.4),
        "atan2": lambda x: jax_jnp.arctan2(x, 1.0 + x ** 2),
        "select_n": lambda x: jax_jnp.where(x > 0.5, x ** 2, jax_jnp.sin(x)),
        "cumprod": lambda x: jax_jnp.cumprod(jax_jnp.outer(x, x + 0.5), axis=1),
        "cummax": lambda x: jax.lax.cummax(jax_jnp.sin(3 * x), reverse=True),
    }
    x0, terms = np.asarray(X0), [np.asarray(t) for t in TERMS]
    primal, series = jet(UNARY[name], (x0,), (terms,))
    want_primal, want_series = jax_jet(jax_fns[name], (x0,), (terms,))
    np.testing.assert_allclose(primal, want_primal, rtol=1e-5, atol=1e-6)
    for got, want in zip(series, want_series):
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)
