"""Derivatives and batching of the elementwise primitives against JAX (skipped without it):
jvp and vjp of every lax function on the same inputs (real and complex, broadcast shapes),
JAX's conventions at the edges (abs and sqrt at 0, ties of max/min, pow at 0, clamp's
bounds, float0 tangents of integer results, ...), and vmap of the rules that move batch
axes themselves (select_n, clamp, bitcast_convert_type)."""

import numpy as np
import pytest

import xjax
from xjax import lax
from xjax._src.core import dtypes

jax = pytest.importorskip("jax")
jlax = jax.lax

F32, C64 = np.dtype(np.float32), np.dtype(np.complex64)


def _values(rng, shape, dtype, low, high):
    x = rng.uniform(low, high, shape)
    if dtype == C64:
        x = x + 1j * rng.uniform(low, high, shape)
    return x.astype(dtype)


def _assert_close(got, want, tol, what=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    if got.dtype == dtypes.float0:
        return
    np.testing.assert_allclose(got.astype(np.complex128), want.astype(np.complex128),
                               rtol=tol, atol=tol, err_msg=what)


def _compare_derivatives(name, fun_x, fun_j, args, tol, argnums=None):
    """jvp (random tangents) and vjp (random cotangent) of ``fun_x`` (xjax) and ``fun_j``
    (JAX) at ``args``, in the operands ``argnums`` (default: all)."""
    argnums = range(len(args)) if argnums is None else argnums
    rng = np.random.default_rng(1)
    tangents = [_values(rng, np.shape(args[i]), args[i].dtype, -1, 1) for i in argnums]

    def restrict(fun):
        def f(*diff):
            full = list(args)
            for i, value in zip(argnums, diff, strict=True):
                full[i] = value
            return fun(*full)
        return f

    diff_args = [args[i] for i in argnums]
    out_x, tan_x = xjax.jvp(restrict(fun_x), tuple(diff_args), tuple(tangents))
    out_j, tan_j = jax.jvp(restrict(fun_j), tuple(diff_args), tuple(tangents))
    _assert_close(out_x, out_j, tol, f"{name} primal")
    _assert_close(tan_x, tan_j, tol, f"{name} jvp")
    ct = _values(rng, np.shape(out_j), np.asarray(out_j).dtype, -1, 1)
    cts_x = xjax.vjp(restrict(fun_x), *diff_args)[1](ct)
    cts_j = jax.vjp(restrict(fun_j), *diff_args)[1](ct)
    for i, (c_x, c_j) in enumerate(zip(cts_x, cts_j, strict=True)):
        _assert_close(c_x, c_j, tol, f"{name} vjp of operand {argnums[i]}")


# name: (domain low, high, accepts complex, tolerance)
_UNARY = {
    "neg": (-3, 3, True, 1e-6), "sign": (-3, 3, True, 1e-6), "floor": (-3, 3, False, 1e-6),
    "ceil": (-3, 3, False, 1e-6), "round": (-3, 3, False, 1e-6), "abs": (-3, 3, True, 1e-5),
    "square": (-3, 3, True, 1e-5), "exp": (-3, 3, True, 1e-5), "exp2": (-3, 3, True, 1e-5),
    "log": (0.2, 4, True, 1e-5), "log1p": (-0.5, 3, True, 1e-5), "expm1": (-3, 3, True, 1e-5),
    "tanh": (-2, 2, True, 1e-5), "logistic": (-4, 4, True, 1e-5), "sqrt": (0.2, 4, True, 1e-5),
    "rsqrt": (0.2, 4, True, 1e-5), "cbrt": (0.2, 4, False, 1e-5), "sin": (-3, 3, True, 1e-5),
    "cos": (-3, 3, True, 1e-5), "tan": (-1.2, 1.2, True, 1e-5), "asin": (-0.8, 0.8, True, 1e-5),
    "acos": (-0.8, 0.8, True, 1e-5), "atan": (-3, 3, True, 1e-5), "sinh": (-3, 3, True, 1e-5),
    "cosh": (-3, 3, True, 1e-5), "asinh": (-3, 3, True, 1e-5), "acosh": (1.2, 4, True, 1e-5),
    "atanh": (-0.8, 0.8, True, 1e-5), "erf": (-2, 2, False, 1e-5), "erfc": (-2, 2, False, 1e-5),
    "erf_inv": (-0.8, 0.8, False, 1e-5), "lgamma": (0.3, 5, False, 1e-4),
    "digamma": (0.3, 5, False, 1e-4), "bessel_i0e": (-5, 5, False, 1e-5),
    "bessel_i1e": (-5, 5, False, 1e-5), "conj": (-3, 3, True, 1e-6),
}


def _with_dtypes(table):
    """(name, dtype) cases: float32, and complex64 where the function takes it."""
    return [pytest.param(name, dtype, id=f"{name}-{dtype.name}") for name in sorted(table)
            for dtype in ((F32, C64) if table[name][2] else (F32,))]


@pytest.mark.parametrize("name,dtype", _with_dtypes(_UNARY))
def test_unary_derivatives_agree_with_jax(name, dtype):
    low, high, _, tol = _UNARY[name]
    x = _values(np.random.default_rng(0), (3, 4), dtype, low, high)
    _compare_derivatives(name, getattr(lax, name), getattr(jlax, name), [x], tol)


@pytest.mark.parametrize("name", ["real", "imag"])
def test_complex_part_derivatives_agree_with_jax(name):
    x = _values(np.random.default_rng(0), (3, 4), C64, -3, 3)
    _compare_derivatives(name, getattr(lax, name), getattr(jlax, name), [x], 1e-6)


@pytest.mark.parametrize("y", [0, 1, 2, 3, -1, -2])
def test_integer_pow_derivatives_agree_with_jax(y):
    x = _values(np.random.default_rng(0), (3, 4), F32, 0.5, 2)
    _compare_derivatives("integer_pow", lambda x: lax.integer_pow(x, y),
                         lambda x: jlax.integer_pow(x, y), [x], 1e-5)


_SHAPES = {"same": [(3, 4), (3, 4)], "rank0": [(), (3, 4)], "size1": [(3, 1), (1, 4)]}
# name: (domain of x, domain of y, accepts complex, tolerance)
_BINARY = {
    "add": ((-3, 3), (-3, 3), True, 1e-6), "sub": ((-3, 3), (-3, 3), True, 1e-6),
    "mul": ((-3, 3), (-3, 3), True, 1e-5), "div": ((-3, 3), (0.5, 3), True, 1e-5),
    "rem": ((-3, 3), (0.7, 3), False, 1e-5), "pow": ((0.3, 3), (-2, 2), True, 1e-5),
    "max": ((-3, 3), (-3, 3), False, 1e-6), "min": ((-3, 3), (-3, 3), False, 1e-6),
    "atan2": ((-3, 3), (-3, 3), False, 1e-5), "complex": ((-3, 3), (-3, 3), False, 1e-6),
    "igamma": ((0.5, 4), (0.3, 4), False, 1e-4), "igammac": ((0.5, 4), (0.3, 4), False, 1e-4),
}


@pytest.mark.parametrize("shapes", sorted(_SHAPES))
@pytest.mark.parametrize("name,dtype", _with_dtypes(_BINARY))
def test_binary_derivatives_agree_with_jax(name, dtype, shapes):
    (x_low, x_high), (y_low, y_high), _, tol = _BINARY[name]
    rng = np.random.default_rng(0)
    x_shape, y_shape = _SHAPES[shapes]
    args = [_values(rng, x_shape, dtype, x_low, x_high),
            _values(rng, y_shape, dtype, y_low, y_high)]
    _compare_derivatives(name, getattr(lax, name), getattr(jlax, name), args, tol)


def test_pow_with_integer_exponents_agrees_with_jax():
    rng = np.random.default_rng(0)
    x = _values(rng, (3, 4), F32, -2, 2)
    y = rng.integers(-3, 4, (3, 4)).astype(np.int32)
    y[0] = 0
    _compare_derivatives("pow", lax.pow, jlax.pow, [x, y], 1e-5, argnums=[0])


@pytest.mark.parametrize("name,first,domain", [("polygamma", 2.0, (0.5, 4)),
                                               ("zeta", 3.0, (0.5, 4))])
def test_derivatives_in_the_second_operand_agree_with_jax(name, first, domain):
    x = _values(np.random.default_rng(0), (3, 4), F32, *domain)
    m = np.full((3, 4), first, np.float32)
    if name == "zeta":  # JAX's lax.zeta has no rule: its jax.scipy zeta has one
        reference = jax.scipy.special.zeta
    else:
        reference = getattr(jlax, name)
    _compare_derivatives(name, getattr(lax, name), reference, [m, x], 1e-4, argnums=[1])


def test_betainc_derivative_in_x_agrees_with_jax():
    rng = np.random.default_rng(0)
    a, b = _values(rng, (3, 4), F32, 0.5, 4), _values(rng, (3, 4), F32, 0.5, 4)
    x = _values(rng, (3, 4), F32, 0.1, 0.9)
    _compare_derivatives("betainc", lax.betainc, jlax.betainc, [a, b, x], 1e-4, argnums=[2])


def test_unsupported_operands_raise_as_in_jax():
    x = np.full((2,), 2.0, np.float32)
    with pytest.raises(ValueError, match="polygamma gradient with respect to m"):
        xjax.grad(lambda m: lax.polygamma(m, x).sum())(x)
    with pytest.raises(ValueError, match="Betainc gradient with respect to a and b"):
        xjax.grad(lambda a: lax.betainc(a, x, x * 0.25).sum())(x)
    with pytest.raises(NotImplementedError, match="zeta"):
        xjax.grad(lambda s: lax.zeta(s, x).sum())(x)
    with pytest.raises(NotImplementedError, match="igamma_grad_a"):
        xjax.grad(lambda a: lax.igamma_grad_a(a, x).sum())(x)


def test_igamma_grad_a_derivative_in_x_matches_finite_differences():
    a = np.full((4,), 2.5, np.float32)
    x = np.array([0.5, 1.0, 2.0, 4.0], np.float64)
    slope = xjax.grad(lambda x: lax.igamma_grad_a(a, x).sum())(x.astype(np.float32))
    eps = 1e-3
    step = (np.asarray(lax.igamma_grad_a(a.astype(np.float64), x + eps)) -
            np.asarray(lax.igamma_grad_a(a.astype(np.float64), x - eps))) / (2 * eps)
    np.testing.assert_allclose(np.asarray(slope), step, rtol=1e-3, atol=2e-5)


# -- JAX's conventions at the edges --


def _grads_agree(fun_x, fun_j, *args, argnums=0):
    got = xjax.grad(fun_x, argnums=argnums)(*args)
    want = jax.grad(fun_j, argnums=argnums)(*args)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want),
                    strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_edge_conventions_agree_with_jax():
    z = np.float32(0.0)
    assert float(xjax.grad(lax.abs)(z)) == 1.0
    assert float(xjax.grad(lax.sqrt)(z)) == np.inf
    _grads_agree(lax.abs, jlax.abs, z)
    _grads_agree(lax.sqrt, jlax.sqrt, z)
    _grads_agree(lambda x: lax.pow(x, np.float32(2)), lambda x: jlax.pow(x, np.float32(2)), z)
    _grads_agree(lambda y: lax.pow(z, y), lambda y: jlax.pow(z, y), np.float32(2))
    _grads_agree(lambda x: lax.pow(x, np.int32(0)), lambda x: jlax.pow(x, np.int32(0)), z)
    _grads_agree(lambda x: lax.integer_pow(x, 0), lambda x: jlax.integer_pow(x, 0), z)
    _grads_agree(lax.rem, jlax.rem, np.float32(5.5), np.float32(2.0), argnums=(0, 1))
    for bound in (0.0, 0.5, 1.0):
        x = np.float32(bound)
        _grads_agree(lambda lo, x, hi: lax.clamp(lo, x, hi),
                     lambda lo, x, hi: jlax.clamp(lo, x, hi), np.float32(0), x, np.float32(1),
                     argnums=(0, 1, 2))


def test_max_and_min_split_ties_evenly_as_jax():
    x = np.array([1.0, 3.0, 3.0, -0.0], np.float32)
    y = np.array([2.0, 3.0, 1.0, 0.0], np.float32)
    for name in ("max", "min"):
        _grads_agree(lambda a, b: getattr(lax, name)(a, b).sum(),
                     lambda a, b: getattr(jlax, name)(a, b).sum(), x, y, argnums=(0, 1))
    got = xjax.grad(lambda a: lax.max(a, np.float32(3)).sum())(x)
    np.testing.assert_array_equal(np.asarray(got), [0.0, 0.5, 0.5, 0.0])


def test_select_n_differentiates_both_branches_as_jax():
    x = np.array([-1.0, 0.0, 4.0], np.float32)

    def safe_sqrt(lib):
        return lambda x: lib.select(x > 0, lib.sqrt(x), x * 0).sum()

    got = xjax.grad(safe_sqrt(lax))(x)
    want = jax.grad(safe_sqrt(jlax))(x)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))  # NaN where JAX's is
    which = np.array([0, 2, 1], np.int32)
    cases = [np.float32(c) * np.ones(3, np.float32) for c in (1, 2, 3)]
    _compare_derivatives("select_n", lambda *c: lax.select_n(which, *c),
                         lambda *c: jlax.select_n(which, *c), cases, 0)


def test_integer_results_have_float0_tangents_as_jax():
    x = np.array([1.5, -2.5], np.float32)
    for target in (np.int32, np.bool_):
        _, tangent = xjax.jvp(lambda x: lax.convert_element_type(x, target), (x,), (x,))
        _, jax_tangent = jax.jvp(lambda x: jlax.convert_element_type(x, target), (x,), (x,))
        assert np.asarray(tangent).dtype == np.asarray(jax_tangent).dtype == dtypes.float0
    for fun in (lambda x: lax.floor(x), lambda x: lax.sign(x), lambda x: lax.round(x)):
        np.testing.assert_array_equal(np.asarray(xjax.jvp(fun, (x,), (x,))[1]), [0.0, 0.0])
    grads = xjax.grad(lambda x: lax.convert_element_type(
        lax.convert_element_type(x, np.int32), np.float32).sum())(x)
    np.testing.assert_array_equal(np.asarray(grads), [0.0, 0.0])


@pytest.mark.parametrize("target", [np.float16, dtypes.bfloat16, np.complex64])
def test_conversion_derivatives_agree_with_jax(target):
    x = _values(np.random.default_rng(0), (3, 4), F32, -3, 3)
    _compare_derivatives("convert_element_type", lambda x: lax.convert_element_type(x, target),
                         lambda x: jlax.convert_element_type(x, target), [x], 1e-6)
    z = _values(np.random.default_rng(0), (3, 4), C64, -3, 3)
    _compare_derivatives("convert_element_type", lambda z: lax.convert_element_type(z, F32),
                         lambda z: jlax.convert_element_type(z, F32), [z], 1e-6)


def test_reduce_precision_and_copy_are_linear_as_in_jax():
    x = _values(np.random.default_rng(0), (3, 4), F32, -3, 3)
    _compare_derivatives("reduce_precision", lambda x: lax.reduce_precision(x, 5, 10),
                         lambda x: jlax.reduce_precision(x, 5, 10), [x], 0)
    _, tangent = xjax.jvp(lambda x: lax.copy_p.bind(x), (x,), (x,))
    np.testing.assert_array_equal(np.asarray(tangent), x)


def test_stop_gradient_and_nextafter():
    x = np.float32(3.0)
    assert float(xjax.grad(lambda x: x * lax.stop_gradient(x))(x)) == 3.0
    # nextafter moves x by one ulp: slope 1 in x, none in the direction (JAX has no rule)
    slope_x, slope_y = xjax.grad(lax.nextafter, argnums=(0, 1))(x, np.float32(5.0))
    assert (float(slope_x), float(slope_y)) == (1.0, 0.0)


# -- batching of the rules that arrange operands themselves --


def _vmaps_agree(fun_x, fun_j, in_axes, *args):
    got = xjax.vmap(fun_x, in_axes=in_axes)(*args)
    want = jax.vmap(fun_j, in_axes=in_axes)(*args)
    _assert_close(got, want, 0, f"in_axes={in_axes}")
    jitted = xjax.jit(xjax.vmap(fun_x, in_axes=in_axes))(*args)
    _assert_close(jitted, want, 0, f"jit, in_axes={in_axes}")


@pytest.mark.parametrize("in_axes", [(0, 0, 0), (None, 1, 0), (0, None, None), (1, None, 0),
                                     (0, 0, None)])
def test_select_n_batching_agrees_with_jax(in_axes):
    rng = np.random.default_rng(0)
    which = rng.random((2, 3)) < 0.5
    a, b = (_values(rng, (2, 3), F32, -3, 3) for _ in range(2))
    args = [np.moveaxis(v, 0, ax) if ax is not None else v[0]
            for v, ax in zip((which, a, b), in_axes, strict=True)]
    _vmaps_agree(lax.select_n, jlax.select_n, in_axes, *args)


def test_select_n_batching_with_a_scalar_which_agrees_with_jax():
    rng = np.random.default_rng(0)
    which = np.array([0, 2, 1, 5], np.int32)  # out of range clamps
    cases = [_values(rng, (4, 3), F32, -3, 3) for _ in range(3)]
    _vmaps_agree(lax.select_n, jlax.select_n, (0, 0, None, 0), which, cases[0], cases[1][0],
                 cases[2])
    _vmaps_agree(lax.select_n, jlax.select_n, (None, 1, 1, 1), np.int32(1),
                 *(c.T for c in cases))


@pytest.mark.parametrize("shapes,in_axes", [
    ([(4,), (4, 3), (4,)], (0, 0, 0)),        # a batch of scalar bounds
    ([(), (3, 4), ()], (None, 1, None)),      # scalar bounds, unbatched
    ([(4, 3), (3,), (4, 3)], (0, None, 0)),   # unbatched operand, batched bounds
    ([(3, 4), (4, 3), (4, 3)], (1, 0, 0)),    # bounds of the operand's shape
    ([(4,), (), (4,)], (0, None, 0)),         # everything scalar per example
])
def test_clamp_batching_agrees_with_jax(shapes, in_axes):
    rng = np.random.default_rng(0)
    low, x, high = (_values(rng, s, F32, -3, 3) for s in shapes)
    low, high = np.minimum(low, -0.5), np.maximum(high, 0.5)
    _vmaps_agree(lax.clamp, jlax.clamp, in_axes, low, x, high)


@pytest.mark.parametrize("source,target,example_shape,axis", [
    (np.float32, np.uint8, (3,), 0),       # narrower: a trailing dimension appears
    (np.float32, np.uint8, (3,), 1),
    (np.uint8, np.float32, (3, 4), 0),     # wider: the trailing dimension goes
    (np.uint8, np.float32, (3, 4), 1),
    (np.uint8, np.float32, (3, 4), 2),     # ... batched along the last axis
    (np.float16, np.float32, (5, 2), 2),
    (np.int32, np.float32, (3,), 1),
])
def test_bitcast_batching_agrees_with_jax(source, target, example_shape, axis):
    batch = np.random.default_rng(0).integers(0, 100, (4,) + example_shape).astype(source)
    x = np.moveaxis(batch, 0, axis)
    fun = (lambda v: lax.bitcast_convert_type(v, target))
    if np.dtype(source).itemsize < np.dtype(target).itemsize and axis == len(example_shape):
        # JAX's rule fails here (it leaves the batch axis where the width is consumed)
        want = np.stack([np.asarray(fun(example)) for example in batch])
        _assert_close(xjax.vmap(fun, in_axes=axis)(x), want, 0)
        _assert_close(xjax.jit(xjax.vmap(fun, in_axes=axis))(x), want, 0)
    else:
        _vmaps_agree(fun, lambda v: jlax.bitcast_convert_type(v, target), axis, x)


def test_batched_derivatives_agree_with_jax():
    rng = np.random.default_rng(0)
    x, y = _values(rng, (5, 3), F32, 0.5, 2), _values(rng, (3,), F32, 0.5, 2)

    def f(lib):
        return lambda x, y: lib.mul(lib.pow(x, y), lib.atan2(x, y)).sum()

    got = xjax.vmap(xjax.grad(f(lax), argnums=(0, 1)), in_axes=(0, None))(x, y)
    want = jax.vmap(jax.grad(f(jlax), argnums=(0, 1)), in_axes=(0, None))(x, y)
    for g, w in zip(got, want, strict=True):
        _assert_close(g, w, 1e-5)


_BINARY_FOR_JAXPRS = ("add", "sub", "mul", "div", "max", "min", "pow", "atan2", "rem")
_SHAPE_PAIRS = (((4, 3), (4, 3)), ((4, 3), (4, 1)), ((4, 1), (4, 3)))


def _jvp_jaxpr_text(lib, op, shapes, which):
    """The jaxpr of ``jvp(op)`` with tangents in both operands or one (``which``)."""
    x = np.full(shapes[0], 1.5, np.float32)
    y = np.full(shapes[1], 0.5, np.float32)
    if which == "both":
        return str(lib.make_jaxpr(lambda x, y, tx, ty: lib.jvp(op, (x, y), (tx, ty)))(x, y, x, y))
    if which == "x":
        return str(lib.make_jaxpr(lambda x, y, t: lib.jvp(lambda a: op(a, y), (x,), (t,)))(x, y, x))
    return str(lib.make_jaxpr(lambda x, y, t: lib.jvp(lambda b: op(x, b), (y,), (t,)))(x, y, y))


@pytest.mark.parametrize("name", _BINARY_FOR_JAXPRS)
def test_binary_jvp_jaxprs_print_as_jax(name):
    """JAX 0.10.2's rules equation for equation: contributions summed with ``add_any``, add
    and sub adding tangents themselves, a lone broadcast tangent reshaped then broadcast,
    max/min's shares and rem's quotient in JAX's order."""
    for shapes in _SHAPE_PAIRS:
        for which in ("both", "x", "y"):
            ours = _jvp_jaxpr_text(xjax, getattr(lax, name), shapes, which)
            theirs = _jvp_jaxpr_text(jax, getattr(jlax, name), shapes, which)
            assert ours == theirs, (name, shapes, which)


@pytest.mark.parametrize("name", ["erf", "erfc", "erf_inv", "exp2"])
def test_unary_jvps_multiply_in_jaxs_order(name):
    """The tangent's products in JAX's order (the rounding of the derivative follows it)."""
    x = np.linspace(-0.9, 0.9, 64, dtype=np.float32)
    t = np.linspace(0.3, 3.0, 64, dtype=np.float32)

    def text(lib, op):
        return str(lib.make_jaxpr(lambda x, t: lib.jvp(op, (x,), (t,)))(x, t))

    assert text(xjax, getattr(lax, name)) == text(jax, getattr(jlax, name))
    ours = xjax.jit(lambda x, t: xjax.jvp(getattr(lax, name), (x,), (t,))[1])(x, t)
    theirs = jax.jit(lambda x, t: jax.jvp(getattr(jlax, name), (x,), (t,))[1])(x, t)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
