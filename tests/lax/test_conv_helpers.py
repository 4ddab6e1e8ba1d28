"""lax.conv_general_permutations, conv_shape_tuple, conv_general_shape_tuple,
ConvGeneralDilatedDimensionNumbers and conv_general_dilated_local: against NumPy loops and
known answers, JAX where installed, under jit, grad and vmap."""

import itertools

import numpy as np
import pytest

import xjax
from xjax import lax
from xjax.test_util import check_grads


# -- permutations and shapes --

def test_permutations_known_answers():
    assert lax.conv_general_permutations(("NCHW", "OIHW", "NCHW")) == \
        ((0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3))
    assert lax.conv_general_permutations(("NHWC", "HWIO", "NHWC")) == \
        ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    # spatial dims of lhs/out follow rhs_spec's order of the spatial characters
    assert lax.conv_general_permutations(("NWHC", "OIHW", "HNCW")) == \
        ((0, 3, 2, 1), (0, 1, 2, 3), (1, 2, 0, 3))


def test_permutations_errors():
    with pytest.raises(TypeError, match="exactly once"):
        lax.conv_general_permutations(("NCHW", "OOHW", "NCHW"))
    with pytest.raises(TypeError, match="duplicate"):
        lax.conv_general_permutations(("NCHH", "OIHW", "NCHW"))
    with pytest.raises(TypeError, match="same set of spatial"):
        lax.conv_general_permutations(("NCHW", "OIHX", "NCHW"))


def test_conv_shape_tuple_known_answers():
    assert lax.conv_shape_tuple((2, 3, 9, 9), (4, 3, 3, 3), (1, 1), "VALID") == (2, 4, 7, 7)
    assert lax.conv_shape_tuple((2, 3, 9, 9), (4, 3, 3, 3), (2, 2), "SAME") == (2, 4, 5, 5)
    assert lax.conv_shape_tuple((2, 3, 9, 8), (4, 3, 3, 2), (2, 3),
                                [(1, 0), (2, 2)]) == (2, 4, 4, 4)
    assert lax.conv_shape_tuple((6, 3, 5), (4, 3, 9), (1,), "VALID") == (6, 4, 0)
    assert lax.conv_shape_tuple((6, 3, 5), (4, 3, 2), (1,), [(0, 0)],
                                batch_group_count=3) == (2, 4, 4)


def test_conv_shape_tuple_errors():
    with pytest.raises(TypeError, match="Wrong number of explicit pads"):
        lax.conv_shape_tuple((2, 3, 9, 9), (4, 3, 3, 3), (1, 1), [(0, 0)])
    with pytest.raises(ValueError, match="Negative padding is larger"):
        lax.conv_shape_tuple((2, 3, 4), (4, 3, 3), (1,), [(-3, -2)])


def test_padtype_to_pads_returns_a_list_of_pairs():
    assert lax.padtype_to_pads((3, 4), (2, 2), (1, 1), "SAME") == [(0, 1), (0, 1)]
    assert lax.padtype_to_pads((3, 4), (2, 2), (1, 1), "same_lower") == [(1, 0), (1, 0)]
    assert lax.padtype_to_pads((3, 4), (2, 2), (1, 1), "VALID") == [(0, 0), (0, 0)]
    assert lax.padtype_to_pads((9,), (3,), (2,), "SAME") == [(1, 1)]
    assert lax.padtype_to_pads((0,), (2,), (1,), "SAME") == [(0, 1)]
    assert type(lax.padtype_to_pads((3,), (2,), (1,), "SAME")) is list
    with pytest.raises(RuntimeError, match="Unrecognized padding type: expected 'VALID', "
                                           "'SAME', or 'SAME_LOWER', got foo."):
        lax.padtype_to_pads((3,), (2,), (1,), "foo")


CONV_CASES = [
    ((2, 9, 8, 3), (3, 2, 3, 4), (1, 2), "SAME", ("NHWC", "HWIO", "NHWC")),
    ((2, 3, 9, 8), (4, 3, 3, 2), (2, 1), [(1, 2), (0, 1)], ("NCHW", "OIHW", "NCHW")),
    ((5, 7, 2, 3), (4, 3, 3, 2), (1, 1), "VALID", ("HWNC", "OIWH", "CNHW")),
    ((2, 3, 10), (5, 3, 4), (3,), "SAME", ("NCW", "OIW", "NWC")),
]


@pytest.mark.parametrize("lhs_shape,rhs_shape,strides,padding,dn", CONV_CASES)
def test_conv_general_shape_tuple_matches_conv(lhs_shape, rhs_shape, strides, padding, dn):
    want = lax.conv_general_dilated(np.zeros(lhs_shape, np.float32),
                                    np.zeros(rhs_shape, np.float32), strides, padding,
                                    dimension_numbers=dn).shape
    assert lax.conv_general_shape_tuple(lhs_shape, rhs_shape, strides, padding, dn) == want
    # the canonical-order rule agrees once the operands are permuted
    lhs_perm, rhs_perm, out_perm = lax.conv_general_permutations(dn)
    canon = lax.conv_shape_tuple([lhs_shape[i] for i in lhs_perm],
                                 [rhs_shape[i] for i in rhs_perm], strides, padding)
    assert tuple(want[i] for i in out_perm) == canon


def test_dimension_numbers_alias():
    assert lax.ConvDimensionNumbers in lax.ConvGeneralDilatedDimensionNumbers.__args__
    assert type(None) in lax.ConvGeneralDilatedDimensionNumbers.__args__


# -- conv_general_dilated_local --

def _dilate_pad(x, dilation, padding):
    """lhs dilated (holes of zeros) then padded (negative pads crop) along axes 2..."""
    for axis, (d, (lo, hi)) in enumerate(zip(dilation, padding), start=2):
        n = x.shape[axis]
        shape = list(x.shape)
        shape[axis] = (n - 1) * d + 1 if n else 0
        y = np.zeros(shape, x.dtype)
        index = [slice(None)] * x.ndim
        index[axis] = slice(None, None, d)
        y[tuple(index)] = x
        widths = [(0, 0)] * x.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        y = np.pad(y, widths)
        crop = [slice(None)] * x.ndim
        crop[axis] = slice(max(-lo, 0), y.shape[axis] - max(-hi, 0))
        x = y[tuple(crop)]
    return x


def _local_reference(lhs, rhs, strides, padding, filter_shape, lhs_dil, rhs_dil, dn):
    """A loop over output locations, windows and channels, in the canonical layouts
    (N, C, spatial...) and (O, C*taps, out spatial...)."""
    lhs_perm, rhs_perm, out_perm = lax.conv_general_permutations(dn)
    filter_canon = tuple(filter_shape)  # already in rhs_spec's spatial order
    x = _dilate_pad(np.transpose(lhs, lhs_perm).astype(np.float64), lhs_dil, padding)
    w = np.transpose(rhs, rhs_perm).astype(np.float64)
    n, c = x.shape[:2]
    out_spatial = w.shape[2:]
    out = np.zeros((n, w.shape[0], *out_spatial))
    taps = list(itertools.product(*(range(f) for f in filter_canon)))
    for y in itertools.product(*(range(s) for s in out_spatial)):
        for ch in range(c):
            for t, k in enumerate(taps):
                pos = tuple(yi * s + ki * d for yi, s, ki, d in zip(y, strides, k, rhs_dil))
                v = x[(slice(None), ch) + pos]  # (N,)
                out[(slice(None), slice(None)) + y] += (
                    v[:, None] * w[(slice(None), ch * len(taps) + t) + y][None, :])
    return np.transpose(out, np.argsort(out_perm))


LOCAL_CASES = [
    # lhs_shape (in dn layout), filter_shape (rhs spatial order), strides, padding, lhs_dil,
    # rhs_dil, dn, O
    ((2, 3, 6, 5), (2, 3), (1, 1), [(0, 0), (1, 0)], (1, 1), (1, 1),
     ("NCHW", "OIHW", "NCHW"), 4),
    ((2, 7, 6, 2), (3, 2), (2, 1), [(1, 1), (0, 1)], (1, 1), (1, 2),
     ("NHWC", "HWIO", "NHWC"), 3),
    ((1, 2, 5, 4), (2, 2), (1, 2), [(0, 1), (1, 1)], (2, 1), (1, 1),
     ("NCHW", "IWHO", "CHWN"), 2),
    ((3, 2, 7), (3,), (2,), [(2, 1)], (1,), (2,), ("NCW", "WIO", "NWC"), 2),
]


def _local_operands(case, seed=0):
    lhs_shape, filt, strides, padding, lhs_dil, rhs_dil, dn, o = case
    rng = np.random.default_rng(seed)
    lhs = rng.standard_normal(lhs_shape).astype(np.float32)
    # the output spatial shape, from the patches
    patches = lax.conv_general_dilated_patches(lhs, filt, strides, padding, lhs_dil, rhs_dil,
                                               dn)
    _, _, out_perm = lax.conv_general_permutations(dn)
    out_spatial = [patches.shape[i] for i in out_perm[2:]]
    channels = lhs_shape[dn[0].index("C")]
    canon = (o, channels * int(np.prod(filt)), *out_spatial)
    _, rhs_perm, _ = lax.conv_general_permutations(dn)
    rhs = np.transpose(rng.standard_normal(canon).astype(np.float32), np.argsort(rhs_perm))
    return lhs, rhs


@pytest.mark.parametrize("case", LOCAL_CASES, ids=lambda c: c[6][0] + "-" + c[6][1])
def test_local_against_loop(case):
    _, filt, strides, padding, lhs_dil, rhs_dil, dn, _ = case
    lhs, rhs = _local_operands(case)
    want = _local_reference(lhs, rhs, strides, padding, filt, lhs_dil, rhs_dil, dn)
    f = lambda a, b: lax.conv_general_dilated_local(  # noqa: E731
        a, b, strides, padding, filt, lhs_dil, rhs_dil, dn)
    got = f(lhs, rhs)
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(xjax.jit(f)(lhs, rhs)), want, rtol=1e-4, atol=1e-4)


def test_local_with_shared_kernel_is_conv():
    # the same kernel at every location gives conv_general_dilated's result
    rng = np.random.default_rng(1)
    lhs = rng.standard_normal((2, 3, 7, 6)).astype(np.float32)
    kernel = rng.standard_normal((4, 3, 3, 2)).astype(np.float32)
    want = lax.conv_general_dilated(lhs, kernel, (2, 1), "SAME")
    flat = kernel.reshape(4, 3 * 3 * 2)
    rhs = np.broadcast_to(flat[:, :, None, None], (4, 18, *want.shape[2:])).copy()
    got = lax.conv_general_dilated_local(lhs, rhs, (2, 1), "SAME", (3, 2))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)


def test_local_grads():
    case = LOCAL_CASES[1]
    _, filt, strides, padding, lhs_dil, rhs_dil, dn, _ = case
    lhs, rhs = _local_operands(case, seed=2)
    f = lambda a, b: lax.conv_general_dilated_local(  # noqa: E731
        a, b, strides, padding, filt, lhs_dil, rhs_dil, dn)
    check_grads(f, (lhs, rhs), order=1, modes=("fwd", "rev"))
    # linear in rhs: the gradient of sum(out) wrt rhs is the patches
    g = xjax.grad(lambda b: f(lhs, b).sum())(rhs)
    assert g.shape == rhs.shape


def test_local_vmap():
    case = LOCAL_CASES[0]
    _, filt, strides, padding, lhs_dil, rhs_dil, dn, _ = case
    lhs, rhs = _local_operands(case, seed=3)
    lhs_b = np.stack([lhs, 2 * lhs, -lhs])
    f = lambda a, b: lax.conv_general_dilated_local(  # noqa: E731
        a, b, strides, padding, filt, lhs_dil, rhs_dil, dn)
    got = xjax.vmap(f, in_axes=(0, None))(lhs_b, rhs)
    want = np.stack([np.asarray(f(x, rhs)) for x in lhs_b])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
    rhs_b = np.stack([rhs, rhs * 0.5], axis=-1)
    got = xjax.vmap(f, in_axes=(None, -1))(lhs, rhs_b)
    want = np.stack([np.asarray(f(lhs, rhs_b[..., i])) for i in range(2)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_local_errors():
    lhs, rhs = _local_operands(LOCAL_CASES[0])
    with pytest.raises(ValueError, match="Unsupported precision"):
        lax.conv_general_dilated_local(lhs, rhs, (1, 1), [(0, 0), (1, 0)], (2, 3),
                                       precision=lax.DotAlgorithmPreset.DEFAULT)
    with pytest.raises(TypeError):  # a kernel whose I is not C * prod(filter_shape)
        lax.conv_general_dilated_local(lhs, rhs[:, :5], (1, 1), [(0, 0), (1, 0)], (2, 3))


# -- JAX differential --

def test_helpers_match_jax():
    jax = pytest.importorskip("jax")
    for lhs_shape, rhs_shape, strides, padding, dn in CONV_CASES:
        assert lax.conv_general_permutations(dn) == jax.lax.conv_general_permutations(dn)
        want = jax.lax.conv_general_shape_tuple(lhs_shape, rhs_shape, strides, padding, dn)
        assert lax.conv_general_shape_tuple(lhs_shape, rhs_shape, strides, padding, dn) == \
            tuple(int(d) for d in want)
    assert lax.conv_shape_tuple((6, 3, 9, 9), (4, 3, 3, 2), (2, 3), "SAME", 2) == \
        tuple(int(d) for d in jax.lax.conv_shape_tuple((6, 3, 9, 9), (4, 3, 3, 2), (2, 3),
                                                       "SAME", 2))


@pytest.mark.parametrize("case", LOCAL_CASES + [
    ((2, 3, 7, 6), (3, 2), (2, 1), "SAME", None, None, ("NCHW", "OIHW", "NCHW"), 4),
    ((2, 7, 6, 3), (3, 3), (1, 1), "VALID", None, None, ("NHWC", "HWIO", "NHWC"), 2)],
    ids=lambda c: c[6][0] + "-" + c[6][1] + "-" + str(c[3])[:5])
def test_local_matches_jax(case):
    jax = pytest.importorskip("jax")
    _, filt, strides, padding, lhs_dil, rhs_dil, dn, _ = case
    lhs, rhs = _local_operands(case, seed=4)
    want = jax.lax.conv_general_dilated_local(lhs, rhs, strides, padding, filt, lhs_dil,
                                              rhs_dil, dn)
    got = lax.conv_general_dilated_local(lhs, rhs, strides, padding, filt, lhs_dil, rhs_dil,
                                         dn)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-4)
