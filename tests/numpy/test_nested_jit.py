"""jnp functions that JAX defines under jit appear as nested ``jit[name=...]`` equations
when a jaxpr is built, with JAX's static arguments; eagerly they run directly."""

import logging

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax

X = np.linspace(0.1, 0.9, 6, dtype=np.float32).reshape(2, 3)
Y = np.linspace(0.2, 0.8, 6, dtype=np.float32).reshape(2, 3)


def nested_jit_names(jaxpr):
    return [str(e.params["name"]) for e in jaxpr.jaxpr.eqns if e.primitive.name == "jit"]


# (function, arguments, the names JAX 0.10.2 gives its top-level jit equations)
CASES = [
    (lambda x: jnp.where(x > 0.5, x, 0.0), (X,), ["_where"]),
    (lambda x: jnp.clip(x, 0, 1), (X,), ["clip"]),
    (lambda x: jnp.sort(x, axis=0), (X,), ["sort"]),
    (jnp.argsort, (X,), ["argsort"]),
    (jnp.cumsum, (X,), ["cumsum"]),
    (jnp.round, (X,), ["round"]),
    (jnp.around, (X,), ["around"]),
    (jnp.nan_to_num, (X,), ["nan_to_num"]),
    (jnp.isclose, (X, Y), ["isclose"]),
    (jnp.tril, (X,), ["tril"]),
    (jnp.diagonal, (X,), ["diagonal"]),
    (jnp.flip, (X,), ["_flip"]),
    (jnp.var, (X,), ["_var"]),
    (jnp.std, (X,), ["_std"]),
    (jnp.ptp, (X,), ["_ptp"]),
    (jnp.nanmean, (X,), ["nanmean"]),
    (jnp.median, (X,), ["median"]),
    (lambda a, b: jnp.linspace(a, b, 4), (X, Y), ["_linspace"]),
    (jnp.floor_divide, (X, Y), ["floor_divide"]),
    (jnp.remainder, (X, Y), ["remainder"]),
    (jnp.mod, (X, Y), ["remainder"]),
    (jnp.hypot, (X, Y), ["hypot"]),
    (jnp.fmax, (X, Y), ["fmax"]),
    (jnp.arccosh, (X,), ["arccosh"]),
    (jnp.isin, (X, Y), ["_in1d"]),
    (lambda x: jnp.vstack([x, x]), (X,), ["atleast_2d"]),
    (jnp.diff, (X,), ["diff"]),
    (jnp.count_nonzero, (X,), ["count_nonzero"]),
]


@pytest.mark.parametrize("index", range(len(CASES)))
def test_staged_as_a_nested_jit_and_the_same_values(index):
    fun, args, names = CASES[index]
    assert nested_jit_names(xjax.make_jaxpr(fun)(*args)) == names
    eager = fun(*args)
    compiled = xjax.jit(fun)(*args)
    for e, c in zip(xjax.tree_util.tree_leaves(eager), xjax.tree_util.tree_leaves(compiled),
                    strict=True):
        np.testing.assert_allclose(np.asarray(c), np.asarray(e), rtol=2e-6, atol=1e-7)


def test_static_arguments_are_parameters_of_the_inner_jaxpr():
    text = str(xjax.make_jaxpr(lambda x: jnp.clip(x, 0, 1) + jnp.sort(x, axis=0))(X))
    assert "name=clip" in text and "name=sort" in text
    # clip's bounds are dynamic inputs of the nested call, as in JAX; sort's axis is static
    assert "] a 0:i32[] 1:i32[]" in text


def test_dynamic_ddof_of_var_is_traced():
    def f(x, ddof):
        return jnp.var(x, axis=0, ddof=ddof)
    np.testing.assert_allclose(xjax.jit(f)(X, 1), np.var(X, axis=0, ddof=1), rtol=1e-6)


def test_nested_under_grad_and_vmap_matches_direct():
    def loss(x):
        return jnp.sum(jnp.where(x > 0.5, jnp.clip(x, 0.2, 0.7) ** 2, jnp.sort(x)))

    eager = xjax.grad(loss)(X)
    staged = xjax.jit(xjax.grad(loss))(X)
    np.testing.assert_allclose(staged, eager, rtol=1e-6)
    batched = xjax.jit(xjax.vmap(lambda r: jnp.cumsum(jnp.flip(r))))(X)
    np.testing.assert_allclose(batched, np.cumsum(X[:, ::-1], axis=1), rtol=1e-6)
    assert "name=_where" in str(xjax.make_jaxpr(xjax.grad(loss))(X))


def test_arguments_the_nested_call_cannot_take_fall_back_to_inlining():
    # a list axis is not hashable, so it cannot be a static argument: inlined instead
    out = xjax.jit(lambda x: jnp.nansum(x, axis=[0, 1]))(X)
    np.testing.assert_allclose(out, X.sum(), rtol=1e-6)
    with pytest.raises(TypeError):  # and a wrong call still raises the function's error
        xjax.make_jaxpr(lambda x: jnp.clip(x, "low"))(X)


def test_eager_calls_and_eager_loop_bodies_compile_nothing(caplog):
    def body(carry, x):
        return carry + jnp.where(x > 0.5, jnp.clip(x, 0, 0.6), 0.0), None

    xjax.config.update("jax_log_compiles", True)
    try:
        with caplog.at_level(logging.WARNING):
            out, _ = lax.scan(body, jnp.zeros(3), X)
            direct = jnp.clip(X, 0, 1)
    finally:
        xjax.config.update("jax_log_compiles", False)
    assert not [r for r in caplog.records if "Compiling" in r.getMessage()]
    expected = np.where(X > 0.5, np.clip(X, 0, 0.6), 0.0).sum(0)
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    np.testing.assert_allclose(direct, X, rtol=0)
    # the scan body's jaxpr holds the nested calls, as JAX's does
    text = str(xjax.make_jaxpr(lambda c, xs: lax.scan(body, c, xs))(jnp.zeros(3), X))
    assert "name=_where" in text and "name=clip" in text


def test_same_nested_jit_names_as_jax():
    jax = pytest.importorskip("jax")
    jax_numpy = pytest.importorskip("jax.numpy")
    names = ["clip", "sort", "argsort", "cumsum", "cumprod", "nancumsum", "round", "around",
             "nan_to_num", "isclose", "allclose", "tril", "triu", "trace", "diag", "diagonal",
             "flip", "fliplr", "diff", "ediff1d", "ptp", "var", "std", "nanmax", "nansum",
             "nanvar", "nanargmax", "median", "nanmedian", "count_nonzero", "floor_divide",
             "remainder", "fmod", "divmod", "copysign", "hypot", "heaviside", "frexp", "modf",
             "rint", "signbit", "sinc", "isinf", "arccosh", "trunc", "fmax", "fmin", "i0",
             "angle", "iscomplex", "isreal", "kron", "append", "atleast_1d", "atleast_3d",
             "corrcoef", "cov", "gradient", "lexsort", "sort_complex", "isin", "matvec",
             "polyadd", "polyder", "polyval", "rot90", "trapezoid", "unwrap", "hstack",
             "vstack", "dstack", "where"]
    for name in names:
        for args in ((X,), (X, Y)):
            try:
                expected = jax.make_jaxpr(getattr(jax_numpy, name))(*args)
            except Exception:  # noqa: BLE001  (this arity is not the function's)
                continue
            got = xjax.make_jaxpr(getattr(jnp, name))(*args)
            assert nested_jit_names(got) == nested_jit_names(expected), name
            break
