"""Focused batching cases of the structural primitives (dot_general, gather/scatter,
dynamic slices, reductions, pad, conv) against a Python loop over the batch."""

import numpy as np
import pytest

import xjax
from xjax import lax

B = 3
RNG = np.random.default_rng(0)


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _check(fun, args, in_axes, tol=1e-5):
    """vmap(fun) (eager and jit) against fun applied per example and stacked on axis 0."""
    def example(i):
        return [a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, in_axes)]
    want = np.stack([np.asarray(fun(*example(i))) for i in range(B)])
    for f in (xjax.vmap(fun, in_axes=in_axes), xjax.jit(xjax.vmap(fun, in_axes=in_axes))):
        got = np.asarray(f(*args))
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


MATMUL = (((1,), (0,)), ((), ()))
BATCHED_MATMUL = (((2,), (1,)), ((0,), (0,)))


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (1, 2), (2, None), (None, 1)])
def test_dot_general_matmul(in_axes):
    def shape(base, ax):
        return base if ax is None else base[:ax] + (B,) + base[ax:]
    lhs, rhs = _f32(*shape((4, 5), in_axes[0])), _f32(*shape((5, 6), in_axes[1]))
    _check(lambda x, y: lax.dot_general(x, y, MATMUL), [lhs, rhs], in_axes)


@pytest.mark.parametrize("in_axes", [(0, 0), (1, None), (None, 3), (3, 0)])
def test_dot_general_with_existing_batch_dims(in_axes):
    def shape(base, ax):
        return base if ax is None else base[:ax] + (B,) + base[ax:]
    lhs, rhs = _f32(*shape((2, 4, 5), in_axes[0])), _f32(*shape((2, 5, 6), in_axes[1]))
    _check(lambda x, y: lax.dot_general(x, y, BATCHED_MATMUL), [lhs, rhs], in_axes)


def _take_rows(x, idx):
    dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                    start_index_map=(0,))
    return lax.gather(x, idx, dn, (1, x.shape[1]), mode="clip")


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0), (2, 1)])
def test_gather_rows(in_axes):
    x = _f32(5, 4)
    idx = np.array([[3], [0], [4], [1]], np.int32)
    xs = np.stack([x + i for i in range(B)], in_axes[0]) if in_axes[0] is not None else x
    idxs = (np.stack([(idx + i) % 5 for i in range(B)], in_axes[1])
            if in_axes[1] is not None else idx)
    _check(_take_rows, [xs, idxs], in_axes)


def _scatter_add_rows(x, idx, upd):
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    return lax.scatter_add(x, idx, upd, dn)


@pytest.mark.parametrize("in_axes", [(0, None, None), (None, 0, None), (None, None, 0),
                                     (None, 1, 0), (1, 0, 2)])
def test_scatter_add_rows(in_axes):
    shapes = [(5, 4), (3, 1), (3, 4)]
    values = [_f32(*s) if i != 1 else np.array([[1], [3], [1]], np.int32)
              for i, s in enumerate(shapes)]
    args = []
    for v, ax in zip(values, in_axes):
        if ax is None:
            args.append(v)
        elif v.dtype == np.int32:
            args.append(np.stack([(v + i) % 5 for i in range(B)], ax))
        else:
            args.append(np.stack([v * (i + 1) for i in range(B)], ax))
    _check(_scatter_add_rows, args, in_axes)


@pytest.mark.parametrize("in_axes", [(None, 0, None), (0, 0, 0), (1, None, 0)])
def test_dynamic_slice_with_batched_starts(in_axes):
    x = _f32(6, 5) if in_axes[0] is None else _f32(*[(B, 6, 5), (6, B, 5)][in_axes[0]])
    i = np.array([0, 3, 7], np.int32) if in_axes[1] is not None else np.int32(2)
    j = np.array([1, -1, 4], np.int32) if in_axes[2] is not None else np.int32(1)
    _check(lambda x, i, j: lax.dynamic_slice(x, (i, j), (3, 2)), [x, i, j], in_axes)


@pytest.mark.parametrize("in_axes", [(None, None, 0), (0, None, 0), (0, 0, None), (1, 0, 0)])
def test_dynamic_update_slice_with_batched_starts(in_axes):
    x = _f32(6, 5) if in_axes[0] is None else _f32(*[(B, 6, 5), (6, B, 5)][in_axes[0]])
    u = _f32(3, 2) if in_axes[1] is None else _f32(B, 3, 2)
    i = np.array([0, 2, 9], np.int32) if in_axes[2] is not None else np.int32(2)
    _check(lambda x, u, i: lax.dynamic_update_slice(x, u, (i, np.int32(1))), [x, u, i],
           in_axes)


@pytest.mark.parametrize("reducer", [lax.reduce_sum, lax.reduce_max, lax.reduce_min,
                                     lax.reduce_prod])
@pytest.mark.parametrize("axis", [0, 1, 3])
def test_reductions_over_several_axes(reducer, axis):
    x = _f32(*{0: (B, 2, 3, 4), 1: (2, B, 3, 4), 3: (2, 3, 4, B)}[axis])
    _check(lambda v: reducer(v, (0, 2)), [x], (axis,), tol=1e-4)


@pytest.mark.parametrize("axis", [0, 2])
def test_argmax_and_cumsum(axis):
    x = _f32(*[(B, 4, 5), None, (4, 5, B)][axis])
    _check(lambda v: lax.argmax(v, 1, np.int32), [x], (axis,))
    _check(lambda v: lax.cumsum(v, 1, reverse=True), [x], (axis,))


def test_pad_with_batched_padding_value():
    x, value = _f32(B, 3, 2), _f32(B)
    config = ((1, 2, 1), (-1, 1, 0))
    _check(lambda v, p: lax.pad(v, p, config), [x, value], (0, 0))
    _check(lambda v, p: lax.pad(v, p, config), [x[0], value], (None, 0))


CONV = dict(window_strides=(1,), padding=((1, 0),), dimension_numbers=("NCH", "OIH", "NCH"))


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0), (2, 3)])
@pytest.mark.parametrize("groups", [{}, {"feature_group_count": 2},
                                    {"batch_group_count": 2}])
def test_conv_with_batched_lhs_and_rhs(in_axes, groups):
    fg, bg = groups.get("feature_group_count", 1), groups.get("batch_group_count", 1)
    lhs_shape, rhs_shape = (2 * bg, 4, 7), (4, 4 // fg, 3)

    def shape(base, ax):
        return base if ax is None else base[:ax] + (B,) + base[ax:]
    lhs, rhs = _f32(*shape(lhs_shape, in_axes[0])), _f32(*shape(rhs_shape, in_axes[1]))
    _check(lambda x, k: lax.conv_general_dilated(x, k, **CONV, **groups), [lhs, rhs], in_axes,
           tol=1e-4)
