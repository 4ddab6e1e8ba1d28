"""xjax.image: resize and scale_and_translate against an independent NumPy reference, exact
cases, JAX (where installed), and under jit, vmap and differentiation."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import image
from xjax.image import ResizeMethod
from xjax.test_util import check_grads

# -- an independent reference: float64 weight matrices from the kernels' definitions --------


def _ref_kernel(method, x):
    """Kernel values at distances x >= 0 (float64)."""
    if method == "linear":
        return np.clip(1.0 - x, 0.0, None)
    if method in ("lanczos3", "lanczos5"):
        a = 3.0 if method == "lanczos3" else 5.0
        return np.where(x <= a, np.sinc(x) * np.sinc(x / a), 0.0)
    if method in ("cubic", "cubic-pytorch"):
        a = -0.5 if method == "cubic" else -0.75   # Keys (1981) with parameter a
        near = (a + 2) * x ** 3 - (a + 3) * x ** 2 + 1
        far = a * x ** 3 - 5 * a * x ** 2 + 8 * a * x - 4 * a
        return np.select([x < 1, x < 2], [near, far], 0.0)
    raise AssertionError(method)


def _ref_weights(m, n, scale, translation, method, antialias):
    """[m, n]: output pixel i samples input coordinate (i + 0.5 - t) / s (half-pixel centres);
    the kernel is widened by 1/s when downsampling with antialias; columns sum to 1; an output
    whose sample falls outside the input is 0."""
    centre = (np.arange(n) + 0.5 - translation) / scale - 0.5
    if method == "area":
        lo = (np.arange(n) - translation) / scale
        hi = lo + 1.0 / scale
        j = np.arange(m)[:, None]
        w = np.clip(np.minimum(hi[None], j + 1.0) - np.maximum(lo[None], j), 0.0, None)
    else:
        width = max(1.0 / scale, 1.0) if antialias else 1.0
        if method == "cubic-pytorch" and not antialias:
            # edge pixels repeated: virtual pixels beyond the edge land on the edge pixel
            pos = np.arange(-2, m + 2)
            raw = _ref_kernel(method, np.abs(centre[None] - pos[:, None]) / width)
            w = np.zeros((m, n))
            np.add.at(w, np.clip(pos, 0, m - 1), raw)
            return _normalize(w)   # and no zeroing of samples beyond the edges
        if method == "cubic-pytorch":
            method = "cubic"
        w = _ref_kernel(method, np.abs(centre[None] - np.arange(m)[:, None]) / width)
    inside = (centre >= -0.5) & (centre <= m - 0.5)
    return np.where(inside[None], _normalize(w), 0.0)


def _normalize(w):
    """Columns divided by their sums; columns summing to (nearly) 0 become 0."""
    total = w.sum(0, keepdims=True)
    return np.where(np.abs(total) > 1e3 * np.finfo(np.float32).eps,
                    w / np.where(total, total, 1), 0.0)


def _ref_apply(x, out_shape, dims, scales, translations, method, antialias):
    x = np.asarray(x, np.float64)
    for d, s, t in zip(dims, scales, translations, strict=True):
        w = _ref_weights(x.shape[d], out_shape[d], s, t, method, antialias)
        x = np.moveaxis(np.tensordot(x, w, axes=([d], [0])), -1, d)
    return x


def _ref_resize(x, shape, method, antialias=True):
    dims = [d for d in range(x.ndim) if x.shape[d] != shape[d]]
    scales = [shape[d] / x.shape[d] if shape[d] else 1.0 for d in dims]
    return _ref_apply(x, shape, dims, scales, [0.0] * len(dims), method, antialias)


def _rand(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


KERNEL_METHODS = ["linear", "lanczos3", "lanczos5", "cubic", "cubic-pytorch", "area"]
SHAPES = [((7,), (13,)), ((13,), (5,)), ((4, 6), (9, 3)), ((5, 4, 3), (2, 11, 3)),
          ((1,), (4,)), ((3,), (1,)), ((8,), (24,)), ((24,), (8,))]


def _close(got, want, tol=2e-5):
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=tol, atol=tol)


# -- against the reference -------------------------------------------------------------------


@pytest.mark.parametrize("antialias", [True, False])
@pytest.mark.parametrize("method", KERNEL_METHODS)
def test_resize_matches_reference(method, antialias):
    for k, (ins, outs) in enumerate(SHAPES):
        x = _rand(ins, seed=k)
        got = image.resize(x, outs, method, antialias=antialias)
        assert got.shape == outs and got.dtype == np.float32
        _close(got, _ref_resize(x, outs, method, antialias))


@pytest.mark.parametrize("antialias", [True, False])
@pytest.mark.parametrize("method", KERNEL_METHODS)
def test_scale_and_translate_matches_reference(method, antialias):
    x = _rand((6, 5), seed=3)
    for s, t in [(2.3, 0.7), (0.4, -1.2), (1.0, 0.0), (0.9, 3.3), (3.0, -5.2), (0.35, 0.6)]:
        scale, translation = np.array([s, 1 / s], np.float32), np.array([t, -t], np.float32)
        got = image.scale_and_translate(x, (9, 4), (0, 1), scale, translation, method,
                                        antialias=antialias)
        want = _ref_apply(x, (9, 4), (0, 1), scale.astype(np.float64),
                          translation.astype(np.float64), method, antialias)
        assert got.shape == (9, 4) and got.dtype == np.float32
        _close(got, want)


def test_scale_and_translate_negative_and_partial_dims():
    x = _rand((3, 6, 2), seed=4)
    got = image.scale_and_translate(x, (3, 10, 2), (-2,), jnp.array([1.7]),
                                    jnp.array([0.3]), "cubic")
    _close(got, _ref_apply(x, (3, 10, 2), (1,), [np.float32(1.7)], [np.float32(0.3)],
                           "cubic", True))


# -- exact answers ---------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["nearest"] + KERNEL_METHODS)
def test_identity_resize(method):
    x = _rand((4, 5, 3), seed=5)
    got = image.resize(x, x.shape, method)
    np.testing.assert_array_equal(np.asarray(got), x)
    got = image.resize(x.astype(np.int32), x.shape, method)
    assert got.dtype == (np.int32 if method == "nearest" else np.float32)
    np.testing.assert_array_equal(np.asarray(got), x.astype(np.int32))


@pytest.mark.parametrize("factors", [(2, 3), (1, 4), (5, 1)])
def test_nearest_integer_upsampling_repeats(factors):
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    shape = (3 * factors[0], 4 * factors[1])
    got = image.resize(x, shape, "nearest")
    want = np.repeat(np.repeat(x, factors[0], axis=0), factors[1], axis=1)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(got), want)


def test_nearest_integer_downsampling_picks_centres():
    x = np.arange(24.0, dtype=np.float32).reshape(4, 6)
    got = image.resize(x, (2, 3), ResizeMethod.NEAREST)
    np.testing.assert_array_equal(np.asarray(got), x[1::2, 1::2])


@pytest.mark.parametrize("m, n", [(4, 9), (5, 16), (3, 7), (2, 2 * 50)])
def test_linear_upsampling_is_half_pixel_interp(m, n):
    x = _rand((m,), seed=m)
    centres = (np.arange(n) + 0.5) * m / n - 0.5   # clamped at the ends by np.interp
    want = np.interp(centres, np.arange(m), x.astype(np.float64))
    for method in ["linear", "bilinear", "trilinear", "triangle"]:
        _close(image.resize(x, (n,), method), want, 1e-6)


def test_integer_translation_shifts():
    x = jnp.arange(1.0, 6.0)
    got = image.scale_and_translate(x, (5,), (0,), jnp.array([1.0]), jnp.array([2.0]),
                                    "lanczos3")
    _close(got, [0, 0, 1, 2, 3], 1e-6)


def test_zero_size_output_and_no_spatial_dims():
    assert image.resize(jnp.ones((2, 3)), (2, 0), "linear").shape == (2, 0)
    x = jnp.arange(6).reshape(2, 3)
    got = image.scale_and_translate(x, (2, 3), (), jnp.zeros((0,)), jnp.zeros((0,)),
                                    "linear")
    assert got.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(got), np.arange(6.0).reshape(2, 3))


# -- dtypes ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.bool_, np.float16,
                                   xjax.dtypes.bfloat16, np.complex64])
def test_dtypes(dtype):
    x = (_rand((4, 5), seed=6) * 10).astype(dtype)
    assert image.resize(x, (7, 3), "nearest").dtype == dtype
    inexact = np.issubdtype(dtype, np.inexact) or dtype == xjax.dtypes.bfloat16
    out = image.resize(x, (7, 3), "linear")
    assert out.dtype == (dtype if inexact else np.float32)
    tol = 2e-5 if out.dtype in (np.float32, np.complex64) else 5e-2
    want = _ref_resize(np.real(x).astype(np.float64), (7, 3), "linear")
    got = np.asarray(out).astype(np.complex128 if dtype == np.complex64 else np.float64)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10)


def test_float64_with_x64():
    with xjax.config.override(jax_enable_x64=True):
        x = _rand((5, 3), seed=7).astype(np.float64)
        out = image.resize(x, (8, 2), "lanczos3")
        assert out.dtype == np.float64
        np.testing.assert_allclose(np.asarray(out), _ref_resize(x, (8, 2), "lanczos3"),
                                   rtol=1e-12, atol=1e-12)
        ints = image.scale_and_translate(np.arange(4.0), (6,), (0,), np.array([2]),
                                         np.array([1]), "linear")
        assert ints.dtype == np.float64


# -- methods and errors ----------------------------------------------------------------------


def test_resize_method_names():
    names = {"nearest": "NEAREST", "linear": "LINEAR", "bilinear": "LINEAR",
             "trilinear": "LINEAR", "triangle": "LINEAR", "lanczos3": "LANCZOS3",
             "lanczos5": "LANCZOS5", "cubic": "CUBIC", "bicubic": "CUBIC",
             "tricubic": "CUBIC", "cubic-pytorch": "CUBIC_PYTORCH",
             "bicubic-pytorch": "CUBIC_PYTORCH", "area": "AREA"}
    for s, name in names.items():
        assert ResizeMethod.from_string(s) is ResizeMethod[name]
    x = _rand((3, 4), seed=8)
    np.testing.assert_array_equal(np.asarray(image.resize(x, (5, 7), ResizeMethod.CUBIC)),
                                  np.asarray(image.resize(x, (5, 7), "bicubic")))


def test_errors():
    x = jnp.ones((3, 4))
    with pytest.raises(ValueError, match='Unknown resize method "bogus"'):
        image.resize(x, (3, 5), "bogus")
    with pytest.raises(ValueError, match="Unknown resize method"):
        ResizeMethod.from_string("Linear")
    with pytest.raises(ValueError, match="shape must have length equal to the number"):
        image.resize(x, (3,), "linear")
    with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values"):
        image.resize(x, (3, 4.0), "linear")
    with pytest.raises(AssertionError):
        image.resize(x, (3, 5), 7)
    s, t = jnp.array([2.0]), jnp.array([0.0])
    with pytest.raises(ValueError, match="Nearest neighbor resampling is not currently"):
        image.scale_and_translate(x, (3, 8), (1,), s, t, "nearest")
    with pytest.raises(ValueError, match="shape must have length equal to the number"):
        image.scale_and_translate(x, (3,), (1,), s, t, "linear")
    with pytest.raises(ValueError, match="Unknown resize method"):
        image.scale_and_translate(x, (3, 8), (1,), s, t, "bogus")
    with pytest.raises(AssertionError):
        image.scale_and_translate(x, (3, 8), (1,), jnp.array([2.0, 1.0]), t, "linear")
    with pytest.raises(ValueError, match="out of bounds"):
        image.scale_and_translate(x, (3, 8), (2,), s, t, "linear")


# -- transformations -------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["nearest", "linear", "lanczos3", "area"])
def test_jit_matches_eager(method):
    x = _rand((5, 6), seed=9)
    f = xjax.jit(lambda x: image.resize(x, (8, 4), method))
    np.testing.assert_allclose(np.asarray(f(x)), np.asarray(image.resize(x, (8, 4), method)),
                               rtol=1e-6, atol=1e-6)
    if method == "nearest":
        return
    g = xjax.jit(lambda x, s, t: image.scale_and_translate(x, (8, 4), (0, 1), s, t, method))
    s, t = np.array([1.3, 0.6], np.float32), np.array([0.4, -0.2], np.float32)
    _close(g(x, s, t), _ref_apply(x, (8, 4), (0, 1), s, t, method, True))


def test_eager_under_disable_jit():
    x = _rand((5, 6), seed=10)
    want = image.resize(x, (3, 9), "cubic")
    with xjax.disable_jit():
        got = image.resize(x, (3, 9), "cubic")
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("method", ["nearest", "linear", "lanczos5"])
def test_vmap_resize_matches_loop(method):
    xs = _rand((3, 5, 4), seed=11)
    f = lambda x: image.resize(x, (7, 2), method)  # noqa: E731
    want = np.stack([np.asarray(f(x)) for x in xs])
    np.testing.assert_allclose(np.asarray(xjax.vmap(f)(xs)), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(xjax.vmap(f, in_axes=2, out_axes=1)(
        np.moveaxis(xs, 0, 2))), np.moveaxis(want, 0, 1), rtol=1e-6, atol=1e-6)


def test_vmap_scale_and_translate_over_parameters():
    x = _rand((6, 5), seed=12)
    scales = np.array([[1.5, 0.7], [0.5, 2.0], [1.0, 1.0]], np.float32)
    shifts = np.array([[0.3, -0.4], [1.2, 0.0], [-2.0, 0.5]], np.float32)
    f = lambda x, s, t: image.scale_and_translate(x, (7, 8), (0, 1), s, t, "cubic")  # noqa
    got = xjax.vmap(f, in_axes=(None, 0, 0))(x, scales, shifts)
    want = np.stack([np.asarray(f(x, s, t)) for s, t in zip(scales, shifts, strict=True)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("method", ["linear", "lanczos3", "cubic", "area"])
def test_grad_wrt_image(method):
    x = jnp.asarray(_rand((4, 5), seed=13))
    check_grads(lambda x: image.resize(x, (6, 3), method), (x,), order=2,
                modes=("fwd", "rev"))
    check_grads(lambda x: image.resize(x, (2, 9), "nearest"), (x,), order=1,
                modes=("fwd", "rev"))


@pytest.mark.parametrize("method", ["linear", "lanczos3", "cubic", "cubic-pytorch"])
def test_grad_wrt_scale_and_translation(method):
    with xjax.config.override(jax_enable_x64=True):
        x = jnp.asarray(_rand((6, 5), seed=14).astype(np.float64))
        s, t = jnp.array([1.37, 0.61]), jnp.array([0.23, -0.41])
        f = lambda x, s, t: image.scale_and_translate(x, (7, 4), (0, 1), s, t, method,  # noqa
                                                      antialias=method != "cubic-pytorch")
        check_grads(f, (x, s, t), order=1, modes=("fwd", "rev"), eps=1e-6)
        # the gradient of a scalar loss by reverse mode, against central differences
        loss = lambda s: jnp.sum(f(x, s, t) ** 2)  # noqa: E731
        g = np.asarray(xjax.grad(loss)(s))
        for k in range(2):
            e = np.zeros(2)
            e[k] = 1e-6
            fd = (float(loss(s + e)) - float(loss(s - e))) / 2e-6
            np.testing.assert_allclose(g[k], fd, rtol=1e-5, atol=1e-7)


# -- against JAX -----------------------------------------------------------------------------


def _jax():
    jax = pytest.importorskip("jax")
    return jax


@pytest.mark.parametrize("antialias", [True, False])
@pytest.mark.parametrize("method", ["nearest"] + KERNEL_METHODS)
def test_resize_matches_jax(method, antialias):
    jax = _jax()
    for k, (ins, outs) in enumerate(SHAPES + [((2, 3), (0, 3))]):
        x = _rand(ins, seed=20 + k)
        want = jax.image.resize(x, outs, method, antialias=antialias)
        got = image.resize(x, outs, method, antialias=antialias)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)


def test_nearest_indices_match_jax_on_float32_ties():
    jax = _jax()
    # sizes where (i + 0.5) * m / n lands on an integer, so float32 rounding picks the side
    for m, n in [(10, 25), (20, 25), (30, 25), (30, 29), (34, 31), (7, 3), (1000, 41)]:
        x = np.arange(m, dtype=np.int32)
        np.testing.assert_array_equal(np.asarray(image.resize(x, (n,), "nearest")),
                                      np.asarray(jax.image.resize(x, (n,), "nearest")))


@pytest.mark.parametrize("dtype", ["int32", "uint8", "bool", "float16", "bfloat16"])
def test_dtypes_match_jax(dtype):
    jax = _jax()
    x = (_rand((4, 5), seed=30) * 10).astype(xjax.numpy.dtype(dtype))
    for method in ["nearest", "linear", "cubic"]:
        want = jax.image.resize(x, (7, 3), method)
        got = image.resize(x, (7, 3), method)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32),
                                   rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("method", KERNEL_METHODS)
def test_scale_and_translate_matches_jax(method):
    jax = _jax()
    x = _rand((6, 5, 2), seed=31)
    for aa in [True, False]:
        for s, t in [(2.3, 0.7), (0.4, -1.2), (0.9, 3.0), (3.0, -5.0)]:
            args = (x, (9, 4, 2), (0, 1), np.array([s, 1 / s], np.float32),
                    np.array([t, -t], np.float32), method)
            want = jax.image.scale_and_translate(*args, antialias=aa)
            got = image.scale_and_translate(*args, antialias=aa)
            assert got.dtype == want.dtype
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5,
                                       atol=1e-5)


def test_grads_match_jax():
    jax = _jax()
    x = _rand((6, 5), seed=32)
    s, t = np.array([1.37, 0.61], np.float32), np.array([0.23, -0.41], np.float32)

    def loss(lib, x, s, t):
        out = lib.image.scale_and_translate(x, (7, 4), (0, 1), s, t, "lanczos3")
        return (out * out).sum()

    want = jax.grad(lambda *a: loss(jax, *a), argnums=(0, 1, 2))(x, s, t)
    got = xjax.grad(lambda *a: loss(xjax, *a), argnums=(0, 1, 2))(x, s, t)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("precision", [None, "highest", xjax.lax.Precision.DEFAULT,
                                       (xjax.lax.Precision.HIGH, xjax.lax.Precision.HIGH)])
def test_precision_arguments(precision):
    x = _rand((3, 4), seed=40)
    _close(image.resize(x, (5, 2), "cubic", precision=precision),
           _ref_resize(x, (5, 2), "cubic"))
    s, t = np.array([1.5, 0.5], np.float32), np.array([0.2, 0.0], np.float32)
    _close(image.scale_and_translate(x, (5, 2), (0, 1), s, t, "cubic", precision=precision),
           _ref_apply(x, (5, 2), (0, 1), s, t, "cubic", True))
