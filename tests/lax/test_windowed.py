"""Window reductions (reduce_window_sum/max/min, the generic reduce_window),
conv_transpose and conv_general_dilated_patches: against NumPy loops, JAX where installed,
under jit, jvp/grad and vmap."""

import itertools

import numpy as np
import pytest

import xjax
from xjax import lax


def _loop_reduce_window(x, init, op, dims, strides, padding, base=None, wdil=None):
    """A direct reading of the XLA semantics: windows over the dilated, padded operand,
    padding and holes skipped."""
    ndim = x.ndim
    base = base or (1,) * ndim
    wdil = wdil or (1,) * ndim
    dilated_shape = [(s - 1) * b + 1 if s else 0 for s, b in zip(x.shape, base)]
    padded_shape = [d + lo + hi for d, (lo, hi) in zip(dilated_shape, padding)]
    span = [(w - 1) * d + 1 for w, d in zip(dims, wdil)]
    out_shape = [max(0, (p - s) // st + 1) if p >= s else 0
                 for p, s, st in zip(padded_shape, span, strides)]
    out = np.full(out_shape, init, x.dtype)
    for o in np.ndindex(*out_shape):
        acc = init
        for k in itertools.product(*(range(w) for w in dims)):
            pos = [oi * st + ki * d - lo for oi, st, ki, d, (lo, _) in
                   zip(o, strides, k, wdil, padding)]
            if any(p < 0 or p % b or p // b >= s for p, b, s in zip(pos, base, x.shape)):
                continue
            acc = op(acc, x[tuple(p // b for p, b in zip(pos, base))])
        out[o] = acc
    return out


CONFIGS = [
    dict(dims=(2, 2), strides=(1, 1), padding=((0, 0), (0, 0))),
    dict(dims=(3, 2), strides=(2, 1), padding=((1, 1), (0, 2))),
    dict(dims=(2, 2), strides=(2, 1), padding=((1, 0), (2, -1)), base=(2, 1), wdil=(1, 2)),
    dict(dims=(1, 3), strides=(1, 2), padding=((0, 0), (1, 1)), wdil=(1, 2)),
]


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("kind", ["sum", "max", "min"])
@pytest.mark.parametrize("jit", [False, True])
def test_against_loops(config, kind, jit):
    rng = np.random.default_rng(0)
    x = rng.integers(-5, 6, (5, 6)).astype(np.float32)
    comp, init, op = {"sum": (lax.add, 0.0, np.add), "max": (lax.max, -np.inf, np.maximum),
                      "min": (lax.min, np.inf, np.minimum)}[kind]

    def f(x):
        return lax.reduce_window(x, init, comp, config["dims"], config["strides"],
                                 config["padding"], config.get("base"), config.get("wdil"))

    got = (xjax.jit(f) if jit else f)(x)
    want = _loop_reduce_window(x, np.float32(init), op, config["dims"], config["strides"],
                               config["padding"], config.get("base"), config.get("wdil"))
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("config", CONFIGS[:3])
@pytest.mark.parametrize("jit", [False, True])
def test_generic_skips_padding(config, jit):
    x = np.arange(30, dtype=np.float32).reshape(5, 6) % 3 + 1  # exact products

    def f(x):  # an init that is not the identity: padding must not count
        return lax.reduce_window(x, 2.0, lambda a, b: a * b, config["dims"],
                                 config["strides"], config["padding"], config.get("base"),
                                 config.get("wdil"))

    got = (xjax.jit(f) if jit else f)(x)
    want = _loop_reduce_window(x, np.float32(2), lambda a, b: a * b, config["dims"],
                               config["strides"], config["padding"], config.get("base"),
                               config.get("wdil"))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_monoid_detection_and_jaxprs():
    x = np.ones((3, 4), np.float32)
    text = str(xjax.make_jaxpr(
        lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), "SAME"))(x))
    assert "reduce_window_sum[" in text and "padding=((0, 1), (0, 1))" in text
    text = str(xjax.make_jaxpr(
        lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 1), "VALID"))(x))
    assert "reduce_window_max[" in text
    text = str(xjax.make_jaxpr(
        lambda x: lax.reduce_window(x, 1.0, lax.add, (2, 2), (1, 1), "VALID"))(x))
    assert "reduce_window[" in text and "consts=()" in text
    xi = np.ones((3, 4), np.int32)
    text = str(xjax.make_jaxpr(lambda x: lax.reduce_window(
        x, np.iinfo(np.int32).min, lax.max, (2, 2), (1, 1), "VALID"))(xi))
    assert "reduce_window_max[" in text


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint8])
@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_infinite_identities_select_the_monoid_for_integer_operands(dtype, padding):
    """As JAX, the init value is compared with the identity of its own dtype: -inf with
    lax.max on integers is reduce_window_max (padding with the integer identity)."""
    x = np.arange(12, dtype=dtype).reshape(3, 4)
    pads = lax.padtype_to_pads(x.shape, (2, 2), (1, 1), padding)
    for init, fn, reducer, fill in ((-np.inf, lax.max, np.maximum, np.iinfo(dtype).min),
                                    (np.inf, lax.min, np.minimum, np.iinfo(dtype).max)):
        out = lax.reduce_window(x, init, fn, (2, 2), (1, 1), padding)
        assert out.dtype == dtype
        np.testing.assert_array_equal(out, _loop_reduce_window(x, fill, reducer, (2, 2),
                                                               (1, 1), pads))
    text = str(xjax.make_jaxpr(
        lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 1), padding))(x))
    assert "reduce_window_max[" in text
    with pytest.raises(TypeError, match=r"inconsistent dtypes for operands and init_values: "
                                        r"got operand dtypes \[dtype\('int32'\)\] and "
                                        r"init_value dtypes \[dtype\('float32'\)\]"):
        lax.reduce_window(x.astype(np.int32), 1.5, lax.add, (2, 2), (1, 1), padding)


def test_variadic_pytree():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = lax.reduce_window({"s": x, "p": x + 1}, {"s": 0.0, "p": 1.0},
                            lambda a, b: {"s": a["s"] + b["s"], "p": a["p"] * b["p"]},
                            (2, 2), (1, 1), "VALID")
    np.testing.assert_array_equal(np.asarray(out["s"]),
                                  _loop_reduce_window(x, 0.0, np.add, (2, 2), (1, 1),
                                                      ((0, 0), (0, 0))))
    np.testing.assert_array_equal(np.asarray(out["p"]),
                                  _loop_reduce_window(x + 1, 1.0, np.multiply, (2, 2),
                                                      (1, 1), ((0, 0), (0, 0))))


@pytest.mark.parametrize("call,message", [
    (lambda x: lax.reduce_window(x, 0.0, lax.add, (2,), (1, 1), "SAME"),
     "reduce_window got the wrong number of window_dimensions for operand: got operand "
     "shape (3, 4) with window_dimensions (2,)."),
    (lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1,), "SAME"),
     "reduce_window got inconsistent window_strides and window_dimensions: got "
     "window_strides (1,) and window_dimensions (2, 2)."),
    (lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 0), (1, 1), "VALID"),
     "reduce_window_sum window_dimensions must have every element be strictly positive, "
     "got (2, 0)."),
    (lambda x: lax.reduce_window(x > 1, False, lax.add, (2, 2), (1, 1), "VALID"),
     "operand to reduce_window_sum must have a number dtype, got bool"),
])
def test_errors(call, message):
    with pytest.raises(TypeError) as info:
        call(np.ones((3, 4), np.float32))
    assert message in str(info.value)


def test_max_pool_jvp_picks_first_tie():
    """JAX's select_and_gather: the first element (row-major in the window) equal to the
    maximum gets the tangent."""
    x = np.array([[1, 3, 3, 2], [0, 3, 1, 1], [2, 2, 2, 2]], np.float32)

    def column_sums(f):
        eye = np.eye(x.size, dtype=np.float32)
        rows = [np.asarray(xjax.jvp(f, (x,), (e.reshape(x.shape),))[1]).sum() for e in eye]
        return np.array(rows).reshape(x.shape)

    got = column_sums(lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 1),
                                                  "VALID"))
    np.testing.assert_array_equal(got, [[0, 2, 1, 0], [0, 2, 0, 0], [0, 0, 1, 0]])
    got = column_sums(lambda x: lax.reduce_window(x, np.inf, lax.min, (2, 2), (1, 1),
                                                  "VALID"))
    np.testing.assert_array_equal(got, [[0, 0, 0, 0], [2, 0, 4, 0], [0, 0, 0, 0]])


@pytest.mark.parametrize("in_axes", [0, 1, 2])
def test_vmap(in_axes):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    moved = np.moveaxis(x, in_axes, 0)
    for comp, init in ((lax.add, 0.0), (lax.max, -np.inf), (lax.mul, 1.0)):
        def f(a):
            return lax.reduce_window(a, init, comp, (2, 2), (1, 2), "SAME")
        got = np.asarray(xjax.vmap(f, in_axes=in_axes)(x))
        for i in range(moved.shape[0]):
            np.testing.assert_allclose(got[i], np.asarray(f(moved[i])), rtol=1e-6)


# -- against JAX --

jax = pytest.importorskip("jax")
jlax = pytest.importorskip("jax.lax")


@pytest.mark.parametrize("config", CONFIGS)
def test_sum_transpose_matches_jax(config):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 6)).astype(np.float32)
    ct = None

    def f(m, x):
        return m.reduce_window(x, 0.0, m.add, config["dims"], config["strides"],
                               config["padding"], config.get("base"), config.get("wdil"))

    out, pullback = xjax.vjp(lambda x: f(lax, x), x)
    ct = rng.standard_normal(out.shape).astype(np.float32)
    (got,) = pullback(ct)
    _, jax_pullback = jax.vjp(lambda x: f(jlax, x), x)
    (want,) = jax_pullback(ct)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)


# JAX has no max-pool VJP with window dilation (xjax has; the rule-check records verify it
# by finite differences)
@pytest.mark.parametrize("config", CONFIGS[:2])
@pytest.mark.parametrize("kind", ["max", "min"])
def test_chooser_grad_matches_jax(config, kind):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 3, (5, 6)).astype(np.float32)  # ties everywhere
    w = rng.standard_normal((8, 8)).astype(np.float32)

    def f(m, x):
        comp, init = (m.max, -np.inf) if kind == "max" else (m.min, np.inf)
        out = m.reduce_window(x, init, comp, config["dims"], config["strides"],
                              config["padding"], config.get("base"), config.get("wdil"))
        return (out * w[:out.shape[0], :out.shape[1]]).sum()

    got = xjax.grad(lambda x: f(lax, x))(x)
    want = jax.grad(lambda x: f(jlax, x))(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


def test_generic_jvp_matches_jax():
    rng = np.random.default_rng(4)
    x = rng.uniform(0.5, 1.5, (4, 5)).astype(np.float32)
    t = rng.standard_normal((4, 5)).astype(np.float32)

    def f(m, x):
        return m.reduce_window(x, 1.0, m.mul, (2, 2), (1, 1), "SAME")

    got = xjax.jvp(lambda x: f(lax, x), (x,), (t,))
    want = jax.jvp(lambda x: f(jlax, x), (x,), (t,))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5)


@pytest.mark.parametrize("padding", ["SAME", "VALID", ((1, 2), (0, 1))])
@pytest.mark.parametrize("transpose_kernel", [False, True])
def test_conv_transpose_matches_jax(padding, transpose_kernel):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 7, 6, 3)).astype(np.float32)
    k = rng.standard_normal((3, 2, 3, 4) if not transpose_kernel else (3, 2, 4, 3))
    k = k.astype(np.float32)
    got = lax.conv_transpose(x, k, (2, 1), padding, transpose_kernel=transpose_kernel)
    want = jlax.conv_transpose(x, k, (2, 1), padding, transpose_kernel=transpose_kernel)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)


def test_conv_transpose_1d_dilated_matches_jax():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 5, 3)).astype(np.float32)
    k = rng.standard_normal((3, 3, 4)).astype(np.float32)
    got = lax.conv_transpose(x, k, (2,), "SAME", rhs_dilation=(2,))
    want = jlax.conv_transpose(x, k, (2,), "SAME", rhs_dilation=(2,))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dimension_numbers", [None, ("NCHW", "OIHW", "NCHW"),
                                               ("NHWC", "HWIO", "NHWC")])
def test_conv_general_dilated_patches_matches_jax(dimension_numbers):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 7, 6)).astype(np.float32)
    if dimension_numbers and dimension_numbers[0] == "NHWC":
        x = x.transpose(0, 2, 3, 1)
    args = ((2, 3), (1, 2), "SAME")
    got = lax.conv_general_dilated_patches(x, *args, dimension_numbers=dimension_numbers)
    want = jlax.conv_general_dilated_patches(x, *args, dimension_numbers=dimension_numbers)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("padding", ["SAME", "VALID", ((1, 2), (0, 1))])
def test_shape_tuples_match_jax(padding):
    args = ((2, 7, 6, 3), (3, 2, 3, 4), (2, 1), padding, ("NHWC", "HWIO", "NHWC"))
    assert lax.conv_transpose_shape_tuple(*args) == tuple(
        int(d) for d in jlax.conv_transpose_shape_tuple(*args))
    if not isinstance(padding, str):
        args = ((5, 6), (2, 3), (1, 2), padding, (2, 1), (1, 2))
        assert lax.reduce_window_shape_tuple(*args) == tuple(
            int(d) for d in jlax.reduce_window_shape_tuple(*args))
