"""Eager shortcuts (dot, matmul, stack, iteration compute with one NumPy call instead of
binding primitives) give what the primitives give: the same values, dtypes, weak types."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp

RNG = np.random.default_rng(0)


def _same(eager, staged):
    assert eager.dtype == staged.dtype and eager.shape == staged.shape
    assert eager.weak_type == staged.weak_type
    np.testing.assert_allclose(np.asarray(eager), np.asarray(staged), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fun", ["dot", "matmul"])
@pytest.mark.parametrize("shapes", [((3, 4), (4,)), ((3, 4), (4, 5)), ((4,), (4,)),
                                    ((4,), (4, 2)), ((2, 3, 4), (4, 5)),
                                    ((2, 3, 4), (2, 4, 5))])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.int32])
def test_products_match_the_primitive_path(fun, shapes, dtype):
    if fun == "dot" and len(shapes[1]) > 2:
        shapes = (shapes[0], shapes[1][1:])
    a, b = (jnp.asarray((RNG.standard_normal(s) * 3).astype(dtype)) for s in shapes)
    f = getattr(jnp, fun)
    _same(f(a, b), xjax.jit(f)(a, b))


def test_products_keep_weak_types_and_errors():
    weak = jnp.asarray([1.0, 2.0]) * 1.0  # strong
    assert not jnp.dot(weak, weak).weak_type
    w = xjax.lax.full((2,), 1.0)  # weakly typed
    assert w.weak_type
    _same(jnp.dot(w, w), xjax.jit(jnp.dot)(w, w))
    with pytest.raises(TypeError, match="contracting dimensions"):
        jnp.dot(jnp.ones((2, 3)), jnp.ones(4))
    with pytest.raises(ValueError):  # JAX: ValueError (incompatible batch dimensions)
        jnp.matmul(jnp.ones((2, 2, 3)), jnp.ones((3, 3, 4)))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_stack_matches_the_primitive_path(axis):
    xs = [jnp.asarray(RNG.standard_normal((3, 4)).astype(np.float32)) for _ in range(5)]
    _same(jnp.stack(xs, axis), xjax.jit(lambda *a: jnp.stack(a, axis))(*xs))
    _same(jnp.stack([1.0, 2.0]), xjax.jit(lambda: jnp.stack([1.0, 2.0]))())
    mixed = [jnp.ones(2), jnp.ones(2, jnp.int32)]
    _same(jnp.stack(mixed), xjax.jit(lambda *a: jnp.stack(a))(*mixed))


def test_stack_and_iteration_of_one_array():
    x = jnp.asarray(RNG.standard_normal((4, 3)).astype(np.float32))
    rows = list(x)
    assert len(rows) == 4 and all(type(r) is xjax.Array and r.shape == (3,) for r in rows)
    np.testing.assert_array_equal(np.asarray(jnp.stack(x)), np.asarray(x))
    np.testing.assert_array_equal(np.asarray(rows[2]), np.asarray(x)[2])
    assert all(r.shape == () for r in jnp.arange(3))


def test_fast_paths_step_aside_under_eager_via_xla():
    a = jnp.asarray(RNG.standard_normal((3, 4)).astype(np.float32))
    v = jnp.asarray(RNG.standard_normal(4).astype(np.float32))
    xjax.config.update("xjax_eager_via_xla", True)
    try:
        via_xla = jnp.dot(a, v)
    finally:
        xjax.config.update("xjax_eager_via_xla", False)
    _same(jnp.dot(a, v), via_xla)
