"""lax.empty, lax.broadcast_like and lax.scatter_apply: against NumPy loops and known
answers, JAX where installed, under jit, vmap and jvp/grad."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax.test_util import check_grads

DN_1D = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                    scatter_dims_to_operand_dims=(0,))
DN_ROWS = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                      scatter_dims_to_operand_dims=(0,))
DN_POINTS = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0, 1),
                                        scatter_dims_to_operand_dims=(0, 1))


# -- empty --

def test_empty():
    for shape, dtype in [((2, 3), np.float32), (3, np.int32), ((), np.bool_),
                         ((0, 4), np.uint8)]:
        x = lax.empty(shape, dtype)
        want_shape = (shape,) if isinstance(shape, int) else shape
        assert x.shape == want_shape and x.dtype == np.dtype(dtype) and not x.weak_type
        np.testing.assert_array_equal(x, np.zeros(want_shape, dtype))  # XLA CPU's fill
    y = xjax.jit(lambda: lax.empty((2, 2), jnp.bfloat16))()
    assert y.shape == (2, 2) and y.dtype == jnp.bfloat16
    with pytest.raises(TypeError, match="Shapes must be"):
        lax.empty((2.5,), np.float32)
    with pytest.raises(NotImplementedError, match="out_sharding"):
        lax.empty((2,), np.float32, out_sharding="x")


# -- broadcast_like --

def test_broadcast_like():
    got = lax.broadcast_like(jnp.array([1, 2, 3]), jnp.zeros((2, 3)))
    np.testing.assert_array_equal(got, [[1, 2, 3], [1, 2, 3]])
    assert got.dtype == np.int32
    got = lax.broadcast_like(np.ones((1, 3), np.float32) * 2, np.zeros((4, 2, 3)))
    np.testing.assert_array_equal(got, np.full((4, 2, 3), 2.0, np.float32))
    scalar = lax.broadcast_like(1.0, np.zeros((2,), np.int8))  # like_arr's dtype is ignored
    assert scalar.dtype == np.float32 and scalar.weak_type and scalar.shape == (2,)
    same = jnp.arange(3.0)
    assert lax.broadcast_like(same, same) is same
    f = xjax.jit(lax.broadcast_like)
    np.testing.assert_array_equal(f(np.arange(3), np.zeros((2, 3))),
                                  np.broadcast_to(np.arange(3), (2, 3)))
    with pytest.raises(ValueError, match="Incompatible types for broadcasting"):
        lax.broadcast_like(jnp.ones(2), jnp.zeros((2, 3)))
    with pytest.raises(ValueError, match="fewer dimensions"):
        lax.broadcast_like(jnp.ones((2, 3)), jnp.zeros(3))


def test_broadcast_like_grad_and_vmap():
    like = np.zeros((4, 3), np.float32)
    check_grads(lambda a: lax.broadcast_like(a, like), (np.arange(3, dtype=np.float32),), 2)
    xs = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = xjax.vmap(lambda a: lax.broadcast_like(a, like))(xs)
    np.testing.assert_array_equal(got, np.stack([np.broadcast_to(x, (4, 3)) for x in xs]))


# -- scatter_apply --

def _reference_points(operand, indices, func, mode="drop"):
    """Apply ``func`` once per index vector at the point it names (rank-k vectors into a
    rank-k operand); out-of-bounds vectors are dropped, or clamped in 'clip' mode."""
    out = np.array(operand, copy=True)
    for vec in np.asarray(indices).reshape(-1, operand.ndim):
        if mode == "clip":
            vec = np.clip(vec, 0, np.array(operand.shape) - 1)
        elif any(v < 0 or v >= s for v, s in zip(vec, operand.shape)):
            continue
        out[tuple(vec)] = func(out[tuple(vec)])
    return out


def _reference_rows(operand, indices, func, width, mode="drop"):
    """Windows ``operand[i, 0:width]`` (DN_ROWS); a window that does not fit is dropped, or
    its start clamped in 'clip' mode."""
    out = np.array(operand, copy=True)
    for (i,) in np.asarray(indices).reshape(-1, 1):
        if mode == "clip":
            i = min(max(i, 0), operand.shape[0] - 1)
        elif not 0 <= i < operand.shape[0]:
            continue
        out[i, :width] = func(out[i, :width])
    return out


def _affine(v):
    return v * 2 + 1


@pytest.mark.parametrize("mode", [None, "clip", "drop"])
def test_scatter_apply_points(mode):
    x = np.arange(5.0, dtype=np.float32)
    idx = np.array([[1], [3], [3], [7], [-1]], np.int32)
    want = _reference_points(x, idx, _affine, mode or "drop")
    f = lambda x, i: lax.scatter_apply(x, i, _affine, DN_1D, update_shape=(5,),  # noqa: E731
                                       mode=mode)
    np.testing.assert_array_equal(f(x, idx), want)
    np.testing.assert_array_equal(xjax.jit(f)(x, idx), want)


def test_scatter_apply_known_answer():
    # index 3 twice: 3 -> 7 -> 15; index 7 dropped
    got = lax.scatter_apply(jnp.arange(5.0), jnp.array([[1], [3], [3], [7]]), _affine, DN_1D,
                            update_shape=(4,))
    np.testing.assert_array_equal(got, [0.0, 3.0, 2.0, 15.0, 4.0])


def test_scatter_apply_2d_points_and_windows():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    idx = np.array([[0, 1], [3, 4], [0, 1], [2, 2], [4, 0]], np.int32)
    want = _reference_points(x, idx, np.tanh)
    got = lax.scatter_apply(x, idx, jnp.tanh, DN_POINTS, update_shape=(5,))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    rows = np.array([[0], [2], [2], [3]], np.int32)
    for mode in ("drop", "clip"):
        want = _reference_rows(x, rows, lambda v: -v + 1, 3, mode)
        f = lambda x, i: lax.scatter_apply(  # noqa: E731
            x, i, lambda v: -v + 1, DN_ROWS, update_shape=(4, 3), mode=mode)
        np.testing.assert_allclose(f(x, rows), want, rtol=1e-6)
        np.testing.assert_allclose(xjax.jit(f)(x, rows), want, rtol=1e-6)


def test_scatter_apply_dtypes_and_edges():
    ints = np.arange(6, dtype=np.int32)
    got = lax.scatter_apply(ints, np.array([[2], [2], [2]]), lambda v: v * 3, DN_1D,
                            update_shape=(3,))
    np.testing.assert_array_equal(got, [0, 1, 54, 3, 4, 5])
    bools = np.zeros(3, np.bool_)
    got = lax.scatter_apply(bools, np.array([[1]]), lambda v: ~v, DN_1D, update_shape=(1,))
    np.testing.assert_array_equal(got, [False, True, False])
    empty = np.zeros((0,), np.float32)
    assert lax.scatter_apply(empty, np.zeros((0, 1), np.int32), _affine, DN_1D,
                             update_shape=(0,)).shape == (0,)
    # no index vectors: the operand comes back unchanged
    np.testing.assert_array_equal(
        lax.scatter_apply(ints, np.zeros((0, 1), np.int32), _affine, DN_1D,
                          update_shape=(0,)), ints)


def test_scatter_apply_vmap():
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((3, 6)).astype(np.float32)
    idx = np.array([[[0], [5], [5]], [[1], [1], [9]], [[2], [3], [4]]], np.int32)
    f = lambda x, i: lax.scatter_apply(x, i, jnp.sin, DN_1D, update_shape=(3,))  # noqa: E731
    want = np.stack([_reference_points(x, i, np.sin) for x, i in zip(xs, idx)])
    for fun in (xjax.vmap(f), xjax.jit(xjax.vmap(f))):
        np.testing.assert_allclose(fun(xs, idx), want, rtol=1e-6, atol=1e-6)
    want = np.stack([_reference_points(x, idx[0], np.sin) for x in xs])
    np.testing.assert_allclose(xjax.vmap(f, in_axes=(0, None))(xs, idx[0]), want, rtol=1e-6,
                               atol=1e-6)


def test_scatter_apply_is_not_differentiable():
    # as JAX's scatter_apply (a scatter with an update computation): NotImplementedError
    idx = np.array([[1], [3], [3]], np.int32)
    x = np.linspace(0.1, 0.9, 5).astype(np.float32)
    f = lambda x: lax.scatter_apply(x, idx, jnp.sin, DN_1D, update_shape=(3,))  # noqa: E731
    for differentiate in (lambda: xjax.grad(lambda x: f(x).sum())(x),
                          lambda: xjax.jvp(f, (x,), (x,)),
                          lambda: xjax.jit(xjax.grad(lambda x: f(x).sum()))(x)):
        with pytest.raises(NotImplementedError, match="scatter_apply JVP not implemented"):
            differentiate()
    # a constant operand is no derivative to take
    y = jnp.asarray(x)
    g = xjax.grad(lambda s: (f(y) * s).sum())(np.float32(2))
    np.testing.assert_allclose(g, np.asarray(f(y)).sum(), rtol=1e-6)


def test_scatter_apply_func_may_not_close_over_tracers():
    # JAX traces func into the update computation, which takes concrete values only
    idx = np.array([[1]], np.int32)
    x = np.arange(5.0, dtype=np.float32)
    message = "Reduction computations can't close over Tracers"
    with pytest.raises(NotImplementedError, match=message):
        xjax.jit(lambda x, s: lax.scatter_apply(x, idx, lambda v: v * s, DN_1D,
                                                update_shape=(1,)))(x, 2.0)
    out = lax.scatter_apply(x, idx, lambda v: v * jnp.float32(3), DN_1D, update_shape=(1,))
    np.testing.assert_array_equal(out, [0, 3, 2, 3, 4])


def test_scatter_apply_errors():
    x = np.arange(5.0, dtype=np.float32)
    idx = np.array([[1]], np.int32)
    with pytest.raises(TypeError, match="func must map a scalar"):
        lax.scatter_apply(x, idx, lambda v: v.astype(jnp.int32), DN_1D, update_shape=(1,))
    with pytest.raises(TypeError, match="func must map a scalar"):
        lax.scatter_apply(x, idx, lambda v: jnp.stack([v, v]), DN_1D, update_shape=(1,))
    with pytest.raises(TypeError):  # update_shape inconsistent with the indices
        lax.scatter_apply(x, idx, _affine, DN_1D)


# -- JAX differential --

def test_matches_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    cases = [
        (x[0], np.array([[1], [3], [3], [7], [-2]], np.int32), DN_1D, (5,)),
        (x, np.array([[0, 1], [3, 4], [0, 1], [4, 0]], np.int32), DN_POINTS, (4,)),
        (x, np.array([[0], [2], [2], [3]], np.int32), DN_ROWS, (4, 3)),
    ]
    for operand, idx, dn, update_shape in cases:
        for mode in (None, "clip", "promise_in_bounds"):
            if mode == "promise_in_bounds" and (idx.min() < 0 or idx.max() >= 4):
                continue
            jdn = jax.lax.ScatterDimensionNumbers(*dn)
            want = jax.lax.scatter_apply(operand, idx, jax.numpy.cos, jdn,
                                         update_shape=update_shape, mode=mode)
            got = lax.scatter_apply(operand, idx, jnp.cos, dn, update_shape=update_shape,
                                    mode=mode)
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6,
                                       atol=1e-6)
    for arr, like in [(np.arange(3), np.zeros((2, 3))), (np.ones((1, 3), np.float32),
                                                        np.zeros((5, 2, 3)))]:
        want = jax.lax.broadcast_like(arr, like)
        got = lax.broadcast_like(arr, like)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    want = jax.lax.empty((2, 3), np.int16)
    got = lax.empty((2, 3), np.int16)
    assert got.shape == want.shape and got.dtype == want.dtype
