"""Dot algorithms as ``precision=``, ragged_dot/ragged_dot_general (values against NumPy
loops per group, jit, XLA, vmap against a Python loop, derivatives against finite
differences, JAX's errors), scaled_dot, Tolerance/AccuracyMode; differential checks against
JAX where it is installed."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src.core import dtypes
from xjax._src.core.config import _MATMUL_PRECISIONS
from xjax._src.testing.check_grads import check_grads

MODES = ["eager", "jit", "xla"]
BF16 = np.dtype(dtypes.bfloat16)


def run(mode, fun, *args):
    if mode == "jit":
        return xjax.jit(fun)(*args)
    if mode == "xla":
        with xjax.config.override(xjax_eager_via_xla=True):
            return fun(*args)
    return fun(*args)


# -- dot algorithms --

CPU_PRESETS = ["DEFAULT", "F16_F16_F16", "F32_F32_F32", "F64_F64_F64", "BF16_BF16_F32",
               "BF16_BF16_F32_X3", "BF16_BF16_F32_X6"]
OTHER_PRESETS = [p.name for p in lax.DotAlgorithmPreset if p.name not in CPU_PRESETS]


def _preset_reference(x, y, name):
    """The preset's operand types, a float64 product rounded to the accumulation type,
    then the output type (the operands' type)."""
    out = np.result_type(x.dtype, y.dtype)
    if name == "DEFAULT":
        kind, acc = None, out
    elif name.startswith("BF16_BF16_F32_X") or name == "F32_F32_F32":
        kind, acc = (np.float32,), np.float32
    elif name == "BF16_BF16_F32":
        kind, acc = (BF16, np.float32), np.float32
    elif name == "F16_F16_F16":
        kind, acc = (np.float16,), np.float16
    else:
        kind, acc = (np.float64,), np.float64

    def cast(v):
        return v if kind is None or v.dtype in kind else v.astype(kind[0])

    prod = cast(x).astype(np.float64) @ cast(y).astype(np.float64)
    return prod.astype(acc).astype(out)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16])
@pytest.mark.parametrize("name", CPU_PRESETS)
def test_cpu_presets_compute_in_their_types(name, dtype, mode):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 6)).astype(dtype)
    y = rng.standard_normal((6, 4)).astype(dtype)
    preset = lax.DotAlgorithmPreset[name]
    for precision in (preset, name):
        got = run(mode, lambda a, b: lax.dot(a, b, precision=precision), x, y)
        assert got.dtype == np.dtype(dtype)
        want = _preset_reference(x, y, name)
        tol = {np.dtype(np.float32): 1e-5, np.dtype(np.float16): 2e-3, BF16: 1e-2}[
            np.dtype(dtype)]
        np.testing.assert_allclose(np.asarray(got, np.float64), want.astype(np.float64),
                                   rtol=tol, atol=tol)


def test_f16_preset_rounds_float32_operands():
    # float32 operands are rounded to float16 first: not the float32 product
    x = np.full((1, 2), 1 + 2.0 ** -13, np.float32)
    got = lax.dot(x, x.T, precision="F16_F16_F16")
    assert got.dtype == np.float32
    assert float(got[0, 0]) == 2.0
    assert float(lax.dot(x, x.T)[0, 0]) != 2.0


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("name", OTHER_PRESETS)
def test_presets_xla_cpu_lacks_raise(name, mode):
    x = np.ones((2, 2), np.float32)
    with pytest.raises(ValueError, match=f"The precision '{name}' is not supported by "
                                         "dot_general on CPU"):
        run(mode, lambda a: lax.dot(a, a, precision=name), x)
    # tracing alone is fine, as in JAX (the check is made where the dot runs)
    xjax.make_jaxpr(lambda a: lax.dot(a, a, precision=name))(x)


def test_dot_algorithm_raises_on_cpu():
    algorithm = lax.DotAlgorithm(np.float32, np.float32, np.float32)
    assert algorithm.lhs_component_count == 1 and not algorithm.allow_imprecise_accumulation
    with pytest.raises(ValueError, match="not supported by dot_general on CPU"):
        lax.dot(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32), precision=algorithm)


def test_precision_strings_and_errors():
    x = np.ones((2, 2), np.float32)
    assert lax.dot(x, x, precision="highest").dtype == np.float32
    text = str(xjax.make_jaxpr(lambda a: lax.dot(a, a, precision="F32_F32_F32"))(x))
    assert "precision=F32_F32_F32" in text
    with pytest.raises(ValueError, match="Precision argument must be one of"):
        lax.dot(x, x, precision="F17_F17_F17")
    with pytest.raises(ValueError, match="Precision argument must be one of"):
        lax.dot(x, x, precision=3)


def test_preset_properties():
    p = lax.DotAlgorithmPreset
    assert p.DEFAULT.supported_lhs_types is None
    assert p.BF16_BF16_F32.supported_lhs_types == (BF16, np.dtype(np.float32))
    assert p.F16_F16_F16.accumulation_type == np.float16
    assert p.ANY_F8_ANY_F8_ANY.accumulation_type is None
    assert p.F16_F16_F32.supported_output_types(np.float16, np.float16) == (
        np.dtype(np.float32), np.dtype(np.float16))
    assert p.F16_F16_F32.supported_output_types(np.float32, np.float16) == (
        np.dtype(np.float32),)
    assert repr(p.F32_F32_F32) == "DotAlgorithmPreset.F32_F32_F32"
    assert str(p.F32_F32_F32) == "F32_F32_F32"


def test_preset_gradients_and_vmap():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    y = rng.standard_normal((4, 2)).astype(np.float32)
    check_grads(lambda a, b: lax.dot(a, b, precision="F32_F32_F32"), (x, y), order=2)
    xs = rng.standard_normal((5, 3, 4)).astype(np.float32)
    got = xjax.vmap(lambda a: lax.dot(a, y, precision="BF16_BF16_F32"))(xs)
    np.testing.assert_allclose(got, np.stack([a @ y for a in xs]), rtol=1e-5, atol=1e-5)


def test_tolerance_and_accuracy_mode():
    t = lax.Tolerance(atol=1e-3, ulps=2)
    assert (t.atol, t.rtol, t.ulps) == (1e-3, 0.0, 2)
    with pytest.raises(ValueError, match="Tolerances must be non-negative."):
        lax.Tolerance(atol=-1.0)
    with pytest.raises(ValueError, match="At least one of atol, rtol, or ulps must be set."):
        lax.Tolerance()
    assert lax.AccuracyMode.HIGHEST.value == 1 and lax.AccuracyMode.DEFAULT.value == 2


def test_precision_like_names_the_accepted_types():
    args = set(lax.PrecisionLike.__args__)
    assert {lax.DotAlgorithm, lax.DotAlgorithmPreset, lax.Precision, str} <= args


# -- ragged_dot --


def ragged_reference(lhs, rhs, group_sizes, out_dtype=None):
    """Row group i of lhs times rhs[i], in float64; rows past the groups are zero."""
    out = np.zeros((lhs.shape[0], rhs.shape[2]))
    start = 0
    for i, size in enumerate(group_sizes):
        stop = start + int(size)
        out[start:stop] = lhs[start:stop].astype(np.float64) @ rhs[i].astype(np.float64)
        start = stop
    return out if out_dtype is None else out.astype(out_dtype)


GROUPS = [[2, 0, 3, 1], [6, 0, 0, 0], [1, 1, 1, 1], [0, 2, 2, 0]]  # the last sums below m


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("sizes", GROUPS)
def test_ragged_dot_matches_a_loop_over_groups(sizes, mode):
    rng = np.random.default_rng(0)
    lhs = rng.standard_normal((6, 3)).astype(np.float32)
    rhs = rng.standard_normal((4, 3, 5)).astype(np.float32)
    gs = np.array(sizes, np.int32)
    got = run(mode, lax.ragged_dot, lhs, rhs, gs)
    assert got.shape == (6, 5) and got.dtype == np.float32
    np.testing.assert_allclose(got, ragged_reference(lhs, rhs, gs), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", MODES)
def test_ragged_dot_dtypes(mode):
    rng = np.random.default_rng(0)
    lhs = rng.integers(-50, 50, (5, 4)).astype(np.int8)
    rhs = rng.integers(-50, 50, (2, 4, 3)).astype(np.int8)
    gs = np.array([3, 2], np.int32)
    got = run(mode, lambda a, b, g: lax.ragged_dot(a, b, g, preferred_element_type=np.int32),
              lhs, rhs, gs)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, ragged_reference(lhs, rhs, gs).astype(np.int32))
    got = run(mode, lax.ragged_dot, lhs.astype(BF16), rhs.astype(np.float32),
              gs.astype(np.uint8))
    assert got.dtype == np.float32  # mixed inputs: the higher type, as dot_general
    np.testing.assert_allclose(got, ragged_reference(lhs, rhs, gs), rtol=1e-6)


def test_ragged_dot_general_modes():
    rng = np.random.default_rng(2)
    # mode 1 (ragged free dim) with a batch dim and per-batch group sizes [b, g]
    lhs = rng.standard_normal((2, 5, 3)).astype(np.float32)
    rhs = rng.standard_normal((3, 2, 3, 4)).astype(np.float32)  # [g, b, k, n]
    gs = np.array([[1, 2, 2], [0, 4, 1]], np.int32)
    dims = lax.RaggedDotDimensionNumbers((([2], [2]), ([0], [1])), [1], [0])
    for mode in MODES:
        got = run(mode, lambda a, b, g: lax.ragged_dot_general(a, b, g, dims), lhs, rhs, gs)
        want = np.stack([ragged_reference(lhs[i], rhs[:, i], gs[i]) for i in range(2)])
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # mode 2 (ragged contracting dim): one product per group -> [g, m, n]
    lhs = rng.standard_normal((3, 6)).astype(np.float32)
    rhs = rng.standard_normal((6, 2)).astype(np.float32)
    gs = np.array([2, 0, 3], np.int32)
    dims = lax.RaggedDotDimensionNumbers((([1], [0]), ([], [])), [1], [])
    bounds = np.concatenate([[0], np.cumsum(gs)])
    want = np.stack([lhs[:, s:e] @ rhs[s:e] for s, e in zip(bounds[:-1], bounds[1:])])
    for mode in MODES:
        got = run(mode, lambda a, b, g: lax.ragged_dot_general(a, b, g, dims), lhs, rhs, gs)
        assert got.shape == (3, 3, 2)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # mode 3 (ragged batch dim): dot_general, the group sizes unused
    lhs = rng.standard_normal((4, 2, 3)).astype(np.float32)
    rhs = rng.standard_normal((4, 3, 5)).astype(np.float32)
    dims = lax.RaggedDotDimensionNumbers((([2], [1]), ([0], [0])), [0], [])
    for mode in MODES:
        got = run(mode, lambda a, b, g: lax.ragged_dot_general(a, b, g, dims), lhs, rhs,
                  np.array([1, 3], np.int32))
        np.testing.assert_allclose(got, np.einsum("bmk,bkn->bmn", lhs, rhs), rtol=1e-5,
                                   atol=1e-5)


def test_ragged_dot_general_contracting_dims_out_of_order():
    # two contracting dims given in swapped order; the rhs group dim last
    rng = np.random.default_rng(3)
    lhs = rng.standard_normal((2, 5, 3)).astype(np.float32)  # [k2, m, k1]
    rhs = rng.standard_normal((3, 2, 4, 2)).astype(np.float32)  # [k1, k2, n, g]
    gs = np.array([3, 2], np.int32)
    dims = lax.RaggedDotDimensionNumbers((([2, 0], [0, 1]), ([], [])), [1], [3])
    got = lax.ragged_dot_general(lhs, rhs, gs, dims)
    flat_lhs = np.transpose(lhs, (1, 2, 0)).reshape(5, 6)
    flat_rhs = np.transpose(rhs, (3, 0, 1, 2)).reshape(2, 6, 4)
    np.testing.assert_allclose(got, ragged_reference(flat_lhs, flat_rhs, gs), rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_allclose(xjax.jit(lambda a, b: lax.ragged_dot_general(a, b, gs, dims))(
        lhs, rhs), got, rtol=1e-5, atol=1e-5)
    check_grads(lambda a, b: lax.ragged_dot_general(a, b, gs, dims), (lhs, rhs), order=1)


def test_ragged_dot_grads():
    rng = np.random.default_rng(4)
    lhs = rng.standard_normal((6, 3)).astype(np.float32)
    rhs = rng.standard_normal((3, 3, 2)).astype(np.float32)
    gs = np.array([2, 3, 0], np.int32)

    def f(a, b):
        return lax.ragged_dot(a, b, gs)

    check_grads(f, (lhs, rhs), order=1, modes=("fwd", "rev"))
    check_grads(f, (lhs, rhs), order=2, modes=("fwd",))
    # d/d rhs[i] of sum(out) is the column sums of group i's rows (zero for empty groups)
    g_rhs = xjax.grad(lambda b: f(lhs, b).sum())(rhs)
    bounds = [0, 2, 5, 5]
    for i in range(3):
        want = np.repeat(lhs[bounds[i]:bounds[i + 1]].sum(0)[:, None], 2, axis=1)
        np.testing.assert_allclose(g_rhs[i], want, rtol=1e-5, atol=1e-6)
    # under jit too
    g = xjax.jit(xjax.grad(lambda a, b: f(a, b).sum(), argnums=(0, 1)))(lhs, rhs)
    np.testing.assert_allclose(g[1], g_rhs, rtol=1e-5, atol=1e-6)


def test_ragged_dot_second_reverse_derivative_raises_as_jax():
    # the rhs cotangent is a ragged dot in the contracting mode, which JAX cannot transpose
    lhs = np.ones((3, 2), np.float32)
    rhs = np.ones((2, 2, 2), np.float32)
    gs = np.array([1, 2], np.int32)

    def g_rhs(b):
        return xjax.grad(lambda b: (lax.ragged_dot(lhs, b, gs) ** 2).sum())(b).sum()

    with pytest.raises(NotImplementedError, match="RAGGED_CONTRACTING"):
        xjax.grad(lambda a: xjax.grad(
            lambda b: (lax.ragged_dot(a, b, gs) ** 2).sum())(rhs).sum())(lhs)
    assert np.isfinite(float(g_rhs(rhs)))


@pytest.mark.parametrize("in_axes", [(0, 0, 0), (0, None, None), (None, 0, None),
                                     (None, None, 0), (1, 0, None), (0, 3, 0)])
def test_ragged_dot_vmap_matches_a_loop(in_axes):
    rng = np.random.default_rng(5)
    n = 3
    lhs = rng.standard_normal((5, 4)).astype(np.float32)
    rhs = rng.standard_normal((2, 4, 3)).astype(np.float32)
    gs = np.array([2, 3], np.int32)
    args = [lhs, rhs, gs]
    batched = []
    for x, ax in zip(args, in_axes):
        if ax is None:
            batched.append(x)
        elif x.dtype == np.int32:
            batched.append(np.stack([np.array([i, 4 - i], np.int32) for i in range(n)], ax))
        else:
            batched.append(np.stack([x + i for i in range(n)], ax).astype(x.dtype))

    def example(i):
        return [x if ax is None else np.take(x, i, ax) for x, ax in zip(batched, in_axes)]

    want = np.stack([ragged_reference(*example(i)) for i in range(n)])
    for fun in (xjax.vmap(lax.ragged_dot, in_axes=in_axes),
                xjax.jit(xjax.vmap(lax.ragged_dot, in_axes=in_axes))):
        np.testing.assert_allclose(fun(*batched), want, rtol=1e-5, atol=1e-5)


def test_ragged_dot_general_vmap_contracting_mode():
    rng = np.random.default_rng(6)
    dims = lax.RaggedDotDimensionNumbers((([1], [0]), ([], [])), [1], [])
    lhs = rng.standard_normal((3, 2, 5)).astype(np.float32)
    rhs = rng.standard_normal((5, 4)).astype(np.float32)
    gs = np.array([[1, 4], [5, 0], [2, 2]], np.int32)

    def f(a, b, g):
        return lax.ragged_dot_general(a, b, g, dims)

    got = xjax.vmap(f, in_axes=(0, None, 0))(lhs, rhs, gs)
    want = np.stack([np.asarray(f(lhs[i], rhs, gs[i])) for i in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_ragged_dot_errors():
    lhs = np.ones((4, 3), np.float32)
    rhs = np.ones((2, 3, 5), np.float32)
    with pytest.raises(TypeError, match="group_sizes.dtype is subtype of np.integer"):
        lax.ragged_dot(lhs, rhs, np.array([2.0, 2.0], np.float32))
    with pytest.raises(TypeError, match="expected rhs group dimension size to be 3, got 2."):
        lax.ragged_dot(lhs, rhs, np.array([1, 1, 2], np.int32))
    with pytest.raises(TypeError, match="expected rank of group_sizes to be >=1."):
        lax.ragged_dot(lhs, rhs, np.int32(2))
    with pytest.raises(NotImplementedError, match="Unimplemented group_offset support."):
        lax.ragged_dot(lhs, rhs, np.array([2, 2], np.int32), group_offset=np.array([0]))
    dims = lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [])
    with pytest.raises(TypeError, match="exactly one rhs group dimension"):
        lax.ragged_dot_general(lhs, rhs, np.array([2, 2], np.int32), dims)
    with pytest.raises(TypeError, match="contracting dimensions to have the same shape"):
        lax.ragged_dot(lhs, np.ones((2, 4, 5), np.float32), np.array([2, 2], np.int32))


def test_ragged_dot_jaxpr():
    text = str(xjax.make_jaxpr(lax.ragged_dot)(np.ones((4, 3), np.float32),
                                               np.ones((2, 3, 5), np.float32),
                                               np.array([2, 2], np.int32)))
    assert "ragged_dot_general[" in text and "f32[4,5]" in text


# -- scaled_dot --


def test_scaled_dot_values_and_errors():
    rng = np.random.default_rng(7)
    lhs = rng.standard_normal((2, 3, 8)).astype(np.float32)
    rhs = rng.standard_normal((2, 8, 4)).astype(np.float32)
    ls = np.exp2(rng.integers(-2, 3, (2, 3, 2))).astype(np.float32)
    rs = np.exp2(rng.integers(-2, 3, (2, 2, 4))).astype(np.float32)
    got = lax.scaled_dot(lhs, rhs, lhs_scale=ls, rhs_scale=rs,
                         preferred_element_type=np.float32)
    bf = lambda v: v.astype(BF16).astype(np.float64)  # noqa: E731
    want = np.einsum("bmk,bkn->bmn", bf(lhs) * np.repeat(ls, 4, axis=2),
                     bf(rhs) * np.repeat(rs, 4, axis=1))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert lax.scaled_dot(lhs, rhs).dtype == BF16
    with pytest.raises(TypeError, match="must be divisible by its scale's dim size 3"):
        lax.scaled_dot(lhs, rhs, lhs_scale=np.ones((2, 3, 3), np.float32))
    with pytest.raises(TypeError, match=r"must be at least 2\."):
        lax.scaled_dot(lhs, rhs, lhs_scale=np.ones((2, 3, 8), np.float32))
    with pytest.raises(TypeError, match="0-rank and 1-rank"):
        lax.scaled_dot(np.ones(3, np.float32), np.ones(3, np.float32))


# -- differential checks against JAX --


def test_presets_against_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(8)
    for dtype in (np.float32, np.float16, BF16):
        x = rng.standard_normal((3, 6)).astype(dtype)
        y = rng.standard_normal((6, 4)).astype(dtype)
        for name in CPU_PRESETS:
            want = jax.lax.dot(x, y, precision=name)
            got = lax.dot(x, y, precision=name)
            assert got.dtype == want.dtype
            np.testing.assert_allclose(np.asarray(got, np.float64),
                                       np.asarray(want, np.float64), rtol=2e-3, atol=2e-3)


def test_ragged_dot_against_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(9)
    lhs = rng.standard_normal((7, 3)).astype(np.float32)
    rhs = rng.standard_normal((3, 3, 4)).astype(np.float32)
    gs = np.array([3, 0, 2], np.int32)
    np.testing.assert_allclose(lax.ragged_dot(lhs, rhs, gs),
                               jax.lax.ragged_dot(lhs, rhs, gs), rtol=1e-5, atol=1e-5)

    def loss(lib):
        return lambda a, b: (lib.lax.ragged_dot(a, b, gs) ** 2).sum()

    got = xjax.grad(loss(xjax), argnums=(0, 1))(lhs, rhs)
    want = jax.grad(loss(jax), argnums=(0, 1))(lhs, rhs)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    i8 = rng.integers(-9, 9, (7, 3)).astype(np.int8)
    r8 = rng.integers(-9, 9, (3, 3, 4)).astype(np.int8)
    got = lax.ragged_dot(i8, r8, gs, preferred_element_type=np.int32)
    want = jax.lax.ragged_dot(i8, r8, gs, preferred_element_type=np.int32)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    # the contracting mode with batch-dependent group sizes
    dims = lax.RaggedDotDimensionNumbers((([2], [1]), ([0], [0])), [2], [])
    jdims = jax.lax.RaggedDotDimensionNumbers((([2], [1]), ([0], [0])), [2], [])
    a = rng.standard_normal((2, 3, 5)).astype(np.float32)
    b = rng.standard_normal((2, 5, 4)).astype(np.float32)
    g = np.array([[2, 3], [5, 0]], np.int32)
    np.testing.assert_allclose(lax.ragged_dot_general(a, b, g, dims),
                               jax.lax.ragged_dot_general(a, b, g, jdims), rtol=1e-5,
                               atol=1e-5)


def test_scaled_dot_against_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(10)
    lhs = rng.standard_normal((3, 8)).astype(np.float32)
    rhs = rng.standard_normal((8, 4)).astype(np.float32)
    ls = np.exp2(rng.integers(-2, 3, (3, 2))).astype(np.float32)
    for kw in ({}, {"lhs_scale": ls}, {"lhs_scale": ls, "preferred_element_type": np.float32}):
        got = lax.scaled_dot(lhs, rhs, **kw)
        want = jax.lax.scaled_dot(lhs, rhs, **kw)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                                   rtol=1e-2, atol=1e-2)


def _dot_params(fun, *args):
    (eqn,) = [e for e in xjax.make_jaxpr(fun)(*args).jaxpr.eqns
              if e.primitive.name in ("dot_general", "conv_general_dilated")]
    return eqn.params


@pytest.mark.parametrize("value,expected", [
    ("float32", (lax.Precision.HIGHEST, lax.Precision.HIGHEST)),
    ("highest", (lax.Precision.HIGHEST, lax.Precision.HIGHEST)),
    ("tensorfloat32", (lax.Precision.HIGH, lax.Precision.HIGH)),
    ("bfloat16", (lax.Precision.DEFAULT, lax.Precision.DEFAULT)),
    ("F32_F32_F32", lax.DotAlgorithmPreset.F32_F32_F32)])
def test_default_matmul_precision_fills_in_unset_precisions(value, expected):
    """As in JAX 0.10.2: the flag's value becomes the precision of dots (and convolutions)
    that set none, in the jaxpr; an explicit precision wins."""
    x = jnp.ones((3, 4))
    with xjax.default_matmul_precision(value):
        assert _dot_params(lambda a: a @ a.T, x)["precision"] == expected
        assert _dot_params(lambda a: lax.conv(a[None, None], a[None, None], (1, 1), "SAME"),
                           x)["precision"] == expected
        explicit = _dot_params(lambda a: lax.dot(a, a.T, precision="default"), x)
        assert explicit["precision"] == (lax.Precision.DEFAULT, lax.Precision.DEFAULT)
        np.testing.assert_allclose(xjax.jit(lambda a: a @ a.T)(x), np.full((3, 3), 4.0))
    assert _dot_params(lambda a: a @ a.T, x)["precision"] is None


def test_default_matmul_precision_is_part_of_jits_cache_key():
    traces = []

    @xjax.jit
    def f(a):
        traces.append(1)
        return a @ a

    x = jnp.ones((2, 2))
    f(x)
    with xjax.default_matmul_precision("float32"):
        f(x)
        assert "HIGHEST" in f.lower(x).as_text()
    assert len(traces) == 2


def test_default_matmul_precision_rejects_unknown_values():
    with pytest.raises(ValueError, match="new enum value must be None or in "
                                         r"\['default', 'high', 'highest'.*got bogus"):
        with xjax.default_matmul_precision("bogus"):
            pass
    with pytest.raises(ValueError, match="got fast"):
        xjax.config.update("jax_default_matmul_precision", "fast")
    assert xjax.config.jax_default_matmul_precision is None


def test_default_matmul_precision_accepts_every_preset_name():
    """The flag's values (core/config.py, which cannot import lax) name every
    DotAlgorithmPreset but DEFAULT, after the precision names, as JAX's do."""
    presets = [m for m in lax.DotAlgorithmPreset if m.name != "DEFAULT"]
    assert _MATMUL_PRECISIONS[6:] == [m.name for m in presets]
    x = jnp.ones((2, 2))
    for preset in presets:
        with xjax.default_matmul_precision(preset.name):
            assert _dot_params(lambda a: a @ a, x)["precision"] is preset
