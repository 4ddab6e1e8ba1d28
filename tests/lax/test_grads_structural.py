"""Differential tests of the structural primitives' derivative rules against JAX 0.10.2:
jvp (value and tangent) and vjp (cotangents) of the same lax function on the same inputs,
eagerly and under jit, for the cases where the bookkeeping is easy to get wrong (duplicate
gather/scatter indices, grouped and strided convolutions, batched dot_general, ties of
max/min, products with zeros, negative and interior padding). Skipped without JAX.

Plus finite-difference checks for the rules JAX does not have (scatter-mul's derivative in
updates with repeated indices).
"""

import numpy as np
import pytest

import xjax
from xjax import lax
from xjax._src.testing.check_grads import check_grads

jax = pytest.importorskip("jax")
jlax = pytest.importorskip("jax.lax")


def _normal(*shape):
    return lambda rng: rng.standard_normal(shape).astype(np.float32)


def _small_ints(*shape, low=0, high=3):
    """Floats from a tiny set of integers: ties everywhere, some zeros."""
    return lambda rng: rng.integers(low, high, shape).astype(np.float32)


def _const(value, dtype=np.int32):
    return lambda rng: np.asarray(value, dtype)


def _with_zeros(*shape, where=()):
    def make(rng):
        x = rng.uniform(0.5, 1.5, shape).astype(np.float32)
        for index in where:
            x[index] = 0.0
        return x
    return make


class Case:
    """``fun(m, *args)`` built from lax module ``m`` (xjax's or JAX's); ``diff`` are the
    positions differentiated (the others are constants such as indices)."""

    def __init__(self, name, fun, makers, diff=(0,), tol=1e-5):
        self.name, self.fun, self.makers, self.diff, self.tol = name, fun, makers, diff, tol


def _gdn(m, **kw):
    return m.GatherDimensionNumbers(**kw)


def _sdn(m, **kw):
    return m.ScatterDimensionNumbers(**kw)


_ROWS = dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
_ROWS_S = dict(update_window_dims=(1,), inserted_window_dims=(0,),
               scatter_dims_to_operand_dims=(0,))
_POINTS_S = dict(update_window_dims=(), inserted_window_dims=(0, 1),
                 scatter_dims_to_operand_dims=(0, 1))
_BATCHED = dict(offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(1,),
                operand_batching_dims=(0,), start_indices_batching_dims=(0,))
_BATCHED_S = dict(update_window_dims=(1,), inserted_window_dims=(),
                  scatter_dims_to_operand_dims=(1,), operand_batching_dims=(0,),
                  scatter_indices_batching_dims=(0,))
_DUP_ROWS = [[1], [3], [1], [6], [-1], [1], [0]]
_DUP_POINTS = [[0, 0], [3, 2], [0, 0], [1, 1], [4, 0], [3, 2], [0, 0]]
_DUP_ROWS_IN_BOUNDS = [[1], [3], [1], [4], [1], [0]]
_DUP_POINTS_IN_BOUNDS = [[0, 0], [3, 2], [0, 0], [1, 1], [3, 2], [0, 0]]


def _gather_cases():
    cases = []
    for mode in ("clip", "fill", "promise_in_bounds"):
        cases.append(Case(f"gather-dup-rows-{mode}", lambda m, x, i, mode=mode: m.gather(
            x, i, _gdn(m, **_ROWS), (1, 4), mode=mode, fill_value=None),
            [_normal(5, 4), _const(_DUP_ROWS if mode != "promise_in_bounds"
                                   else [[1], [3], [1], [4], [1], [0]])]))
    cases.append(Case("gather-batching", lambda m, x, i: m.gather(
        x, i, _gdn(m, **_BATCHED), (1, 2), mode="clip"),
        [_normal(3, 5), _const([[0], [3], [4]])]))
    cases.append(Case("gather-2d-window", lambda m, x, i: m.gather(
        x, i, _gdn(m, offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0, 1)),
        (2, 3), mode="clip"), [_normal(5, 4), _const([[4, 3], [1, 0], [1, 0]])]))
    return cases


_SCATTERS = ("scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min",
             "scatter_max")


def _scatter_cases():
    cases = []
    for name in _SCATTERS:
        extremum = name in ("scatter_min", "scatter_max")
        make = _small_ints if extremum else _normal
        # JAX differentiates scatter_mul in its updates only for unique indices
        diff = (0,) if name == "scatter_mul" else (0, 2)
        for mode in ("clip", "drop"):
            # JAX 0.10.2 counts the contenders of scatter-min/max with a dropping scatter-add,
            # so clipped out-of-bounds updates give it inf/NaN tangents: those cases are
            # checked by finite differences below instead
            clipped_by_jax = extremum and mode == "clip"
            rows = _DUP_ROWS_IN_BOUNDS if clipped_by_jax else _DUP_ROWS
            points = _DUP_POINTS_IN_BOUNDS if clipped_by_jax else _DUP_POINTS
            for label, dn, shapes, idx in (
                    ("rows", _ROWS_S, [(5, 4), (len(rows), 4)], rows),
                    ("points", _POINTS_S, [(5, 4), (len(points),)], points)):
                cases.append(Case(
                    f"{name}-dup-{label}-{mode}",
                    lambda m, x, i, u, name=name, dn=dn, mode=mode: getattr(m, name)(
                        x, i, u, _sdn(m, **dn), mode=mode),
                    [make(*shapes[0]), _const(idx), make(*shapes[1])], diff=diff))
        cases.append(Case(
            f"{name}-unique-batching",
            lambda m, x, i, u, name=name: getattr(m, name)(
                x, i, u, _sdn(m, **_BATCHED_S), unique_indices=True),
            [make(3, 5), _const([[0], [3], [2]]), make(3, 2)], diff=(0, 2)))
        cases.append(Case(
            f"{name}-unique-rows",
            lambda m, x, i, u, name=name: getattr(m, name)(
                x, i, u, _sdn(m, **_ROWS_S), unique_indices=True, mode="drop"),
            [make(5, 4), _const([[3], [0], [9], [1]]), make(4, 4)], diff=(0, 2)))
    return cases


def _conv(**kw):
    return lambda m, x, w: m.conv_general_dilated(x, w, **kw)


_CONV_CASES = [
    Case("conv-full1d", _conv(window_strides=(1,), padding=[(9, 9)]),
         [_normal(1, 1, 3), _normal(1, 1, 10)], diff=(0, 1), tol=1e-4),
    Case("conv-strided-dilated", _conv(window_strides=(2, 1), padding="SAME",
                                       rhs_dilation=(1, 2)),
         [_normal(2, 3, 7, 6), _normal(4, 3, 3, 2)], diff=(0, 1), tol=1e-4),
    Case("conv-feature-groups-nhwc", _conv(
        window_strides=(1, 1), padding=[(1, -1), (2, 0)], lhs_dilation=(2, 1),
        dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=2),
        [_normal(2, 5, 4, 4), _normal(3, 2, 2, 6)], diff=(0, 1), tol=1e-4),
    Case("conv-batch-groups", _conv(window_strides=(1,), padding="VALID",
                                    batch_group_count=2),
         [_normal(4, 3, 6), _normal(4, 3, 2)], diff=(0, 1), tol=1e-4),
    Case("conv-everything", _conv(
        window_strides=(3, 2), padding=[(2, 1), (0, 3)], lhs_dilation=(1, 2),
        rhs_dilation=(2, 1), feature_group_count=3),
        [_normal(2, 6, 11, 7), _normal(6, 2, 3, 2)], diff=(0, 1), tol=1e-4),
    Case("conv-batch-groups-strided-layouts", _conv(
        window_strides=(2, 3), padding=[(1, 0), (2, 2)], rhs_dilation=(2, 1),
        batch_group_count=3, dimension_numbers=("NHWC", "OIHW", "NCHW")),
        [_normal(6, 9, 8, 4), _normal(6, 4, 2, 3)], diff=(0, 1), tol=1e-4),
    Case("conv-stride-skips-input", _conv(window_strides=(3,), padding=[(0, 0)]),
         [_normal(2, 2, 10), _normal(3, 2, 3)], diff=(0, 1), tol=1e-4),
]


def _dot(dims, **kw):
    return lambda m, x, y: m.dot_general(x, y, dims, **kw)


_DOT_CASES = [
    Case("dot-batched", _dot((((2,), (1,)), ((0,), (0,)))),
         [_normal(2, 3, 4), _normal(2, 4, 5)], diff=(0, 1)),
    Case("dot-scrambled", _dot((((3, 0), (1, 0)), ((1,), (3,)))),
         [_normal(2, 3, 4, 5), _normal(2, 5, 6, 3)], diff=(0, 1)),
    Case("dot-batch-middle", _dot((((0, 2), (2, 1)), ((1,), (0,)))),
         [_normal(4, 3, 5), _normal(3, 5, 4, 2)], diff=(0, 1)),
    Case("dot-outer", _dot((((), ()), ((), ()))), [_normal(2, 3), _normal(4)], diff=(0, 1)),
    Case("dot-preferred-float16", _dot((((1,), (0,)), ((), ())),
                                       preferred_element_type=np.float16),
         [_normal(3, 4), _normal(4, 5)], diff=(0, 1), tol=5e-3),
]


_REDUCE_CASES = [
    Case("reduce_max-ties", lambda m, x: m.reduce_max(x, (0, 2)), [_small_ints(4, 5, 3)]),
    Case("reduce_min-ties", lambda m, x: m.reduce_min(x, (1,)), [_small_ints(4, 5, 3)]),
    Case("reduce_prod-one-zero", lambda m, x: m.reduce_prod(x, (1,)),
         [_with_zeros(3, 5, where=((1, 2),))]),
    Case("reduce_prod-two-zeros", lambda m, x: m.reduce_prod(x, (0, 2)),
         [_with_zeros(3, 4, 3, where=((0, 1, 0), (2, 1, 2), (1, 3, 1)))]),
    Case("reduce_prod-odd-length", lambda m, x: m.reduce_prod(x, (0,)),
         [_with_zeros(7, 2, where=((3, 1),))]),
    Case("reduce_sum", lambda m, x: m.reduce_sum(x, (0, 2)), [_normal(3, 4, 5)]),
    Case("cumsum-reverse", lambda m, x: m.cumsum(x, 1, reverse=True), [_normal(3, 6)]),
    Case("cumprod-zeros", lambda m, x: m.cumprod(x, 1),
         [_with_zeros(3, 7, where=((0, 2), (1, 3), (1, 5)))]),
    Case("cumprod-reverse-zeros", lambda m, x: m.cumprod(x, 0, reverse=True),
         [_with_zeros(6, 2, where=((4, 0),))]),
    Case("cummax-ties", lambda m, x: m.cummax(x, 1), [_small_ints(3, 7)]),
    Case("cummin-ties-reverse", lambda m, x: m.cummin(x, 0, reverse=True),
         [_small_ints(6, 3)]),
    Case("cumlogsumexp", lambda m, x: m.cumlogsumexp(x, 1), [_normal(3, 8)]),
]


_SHAPE_CASES = [
    Case("pad-negative-interior", lambda m, x, v: m.pad(x, v, ((1, 2, 1), (-1, 0, 2),
                                                               (0, -2, 0))),
         [_normal(3, 4, 5), _normal()], diff=(0, 1)),
    Case("pad-crop-into-interior", lambda m, x, v: m.pad(x, v, ((-3, -2, 2),)),
         [_normal(4), _normal()], diff=(0, 1)),
    Case("broadcast_in_dim-unit-dims", lambda m, x: m.broadcast_in_dim(x, (2, 3, 4, 1),
                                                                       (1, 2, 3)),
         [_normal(3, 1, 1)]),
    Case("reshape-dimensions", lambda m, x: m.reshape(x, (6, 4), (2, 0, 1)),
         [_normal(2, 3, 4)]),
    Case("slice-strided", lambda m, x: m.slice(x, (1, 0), (5, 6), (3, 4)), [_normal(6, 7)]),
    Case("dynamic_slice-clamped", lambda m, x, i: m.dynamic_slice(x, (i, 1), (3, 2)),
         [_normal(5, 4), _const(4)]),
    Case("dynamic_update_slice-clamped",
         lambda m, x, u, i: m.dynamic_update_slice(x, u, (i, 1)),
         [_normal(5, 4), _normal(2, 3), _const(7)], diff=(0, 1)),
    Case("concatenate", lambda m, x, y: m.concatenate([x, y, x], 1),
         [_normal(2, 3), _normal(2, 1)], diff=(0, 1)),
    Case("split", lambda m, x: m.split(x, (1, 0, 3), 1), [_normal(2, 4)]),
    Case("stack-unstack", lambda m, x, y: m.unstack(m.stack([x, y, x], 1), 2),
         [_normal(2, 3), _normal(2, 3)], diff=(0, 1)),
    Case("tile", lambda m, x: m.tile(x, (2, 1, 3)), [_normal(2, 3, 1)]),
]

CASES = _gather_cases() + _scatter_cases() + _CONV_CASES + _DOT_CASES + _REDUCE_CASES + \
    _SHAPE_CASES


def _split_args(case, rng):
    args = [make(rng) for make in case.makers]
    return args, [args[i] for i in case.diff]


def _closed(fun, module, args, diff):
    def f(*diff_args):
        full = list(args)
        for i, value in zip(diff, diff_args, strict=True):
            full[i] = value
        return fun(module, *full)
    return f


def _assert_same(got, want, tol, what):
    got_leaves, want_leaves = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves), what
    for g, w in zip(got_leaves, want_leaves, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype, f"{what}: dtype {g.dtype} != {w.dtype}"
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=tol,
                                   atol=tol, err_msg=what)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_matches_jax(case, jit):
    rng = np.random.default_rng(0)
    args, diff_args = _split_args(case, rng)
    f_xjax = _closed(case.fun, lax, [xjax.numpy.asarray(a) for a in args], case.diff)
    f_jax = _closed(case.fun, jlax, args, case.diff)
    if jit:
        f_xjax = xjax.jit(f_xjax)
    tangents = tuple(rng.standard_normal(a.shape).astype(a.dtype) for a in diff_args)
    out, tangent_out = xjax.jvp(f_xjax, tuple(diff_args), tangents)
    want_out, want_tangent = jax.jvp(f_jax, tuple(diff_args), tangents)
    _assert_same(out, want_out, case.tol, "value")
    _assert_same(tangent_out, want_tangent, case.tol, "jvp")
    cts = jax.tree_util.tree_map(
        lambda o: rng.standard_normal(np.shape(o)).astype(np.asarray(o).dtype), want_out)
    got_ct = xjax.vjp(f_xjax, *diff_args)[1](cts)
    want_ct = jax.vjp(f_jax, *diff_args)[1](cts)
    _assert_same(got_ct, want_ct, case.tol, "vjp")


def test_max_ties_split_evenly():
    grad = xjax.grad(lambda x: lax.reduce_max(x, (0,)))(np.array([1.0, 3.0, 3.0], np.float32))
    np.testing.assert_array_equal(np.asarray(grad), [0.0, 0.5, 0.5])


def test_prod_gradient_with_one_and_two_zeros():
    grad = xjax.grad(lambda x: lax.reduce_prod(x, (0,)))
    np.testing.assert_array_equal(np.asarray(grad(np.array([2.0, 0.0, 3.0], np.float32))),
                                  [0.0, 6.0, 0.0])
    np.testing.assert_array_equal(np.asarray(grad(np.array([0.0, 2.0, 0.0], np.float32))),
                                  [0.0, 0.0, 0.0])


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("mode", ["clip", "drop"])
def test_scatter_mul_updates_with_repeated_indices(mode, jit):
    """As in JAX, the derivative in the updates needs unique_indices=True (NotImplementedError
    otherwise); the one in the operand is checked by finite differences."""
    dn = lax.ScatterDimensionNumbers(**_POINTS_S)
    indices = np.array(_DUP_POINTS, np.int32)
    rng = np.random.default_rng(1)
    x = rng.uniform(0.5, 1.5, (5, 4)).astype(np.float32)
    u = rng.uniform(0.5, 1.5, (7,)).astype(np.float32)
    u[2] = 0.0  # one of the three updates of [0, 0]

    def f(x, u):
        return lax.scatter_mul(x, indices, u, dn, mode=mode)

    g = xjax.jit(f) if jit else f
    with pytest.raises(NotImplementedError,
                       match="scatter_mul gradients are only implemented if `unique_indices"):
        xjax.jvp(lambda u: g(x, u), (u,), (u,))
    check_grads(lambda x: g(x, u), (x,), order=2, atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", ["scatter_min", "scatter_max"])
def test_scatter_extremum_clipped_out_of_bounds(name, jit):
    """Clipped updates contend where they land (JAX 0.10.2 gets inf/NaN here)."""
    dn = lax.ScatterDimensionNumbers(**_ROWS_S)
    indices = np.array(_DUP_ROWS, np.int32)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    u = rng.standard_normal((7, 4)).astype(np.float32)

    def f(x, u):
        return getattr(lax, name)(x, indices, u, dn, mode="clip")

    check_grads(xjax.jit(f) if jit else f, (x, u), order=2, atol=2e-2, rtol=2e-2)


def test_scatter_jvp_keeps_only_the_winning_update():
    """Repeated indices: the tangent at a position is the tangent of the update XLA kept."""
    dn = lax.ScatterDimensionNumbers(**_ROWS_S)
    indices = np.array([[1], [1], [2]], np.int32)
    x = np.zeros((3, 2), np.float32)
    u = np.arange(6, dtype=np.float32).reshape(3, 2)
    out, tangent = xjax.jvp(lambda u: lax.scatter(x, indices, u, dn), (u,), (u + 10,))
    out, tangent = np.asarray(out), np.asarray(tangent)
    assert out[1].tolist() in ([0.0, 1.0], [2.0, 3.0])
    np.testing.assert_array_equal(tangent[0], [0.0, 0.0])  # no update: x's (zero) tangent
    np.testing.assert_array_equal(tangent[1:], out[1:] + 10)  # the winner's tangent


def _vjp_jaxpr_text(lib, f, *args):
    return str(lib.make_jaxpr(lambda *a: lib.vjp(f, *a)[1](f(*a)))(*args))


def test_transposes_and_tile_stage_as_jax():
    """Measured on JAX 0.10.2: concatenate's transpose is one ``split`` (parts of the
    constant operands dropped), and ``jnp.tile`` is the ``tile`` primitive after a
    rank-raising broadcast."""
    x = np.ones((2, 3), np.float32)

    def concat(lib):
        y = lib.numpy.ones((1, 3))  # an Array: one constvar (a NumPy array read twice is
        # two in xjax, one in JAX)
        return lambda a: lib.lax.concatenate([a, y, a], 0)

    assert _vjp_jaxpr_text(xjax, concat(xjax), x) == _vjp_jaxpr_text(jax, concat(jax), x)
    for reps in [(2, 2), 2, (2, 1, 1), ()]:
        for a in (np.ones(3, np.float32), x):
            ours = str(xjax.make_jaxpr(lambda v, r=reps: xjax.numpy.tile(v, r))(a))
            theirs = str(jax.make_jaxpr(lambda v, r=reps: jax.numpy.tile(v, r))(a))
            assert ours == theirs, reps
