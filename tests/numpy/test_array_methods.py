"""Operators, properties and methods of Arrays and of tracers (installed by xjax.numpy)."""

import operator

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src.core.trace import Tracer

A = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], np.float32)
B = np.array([[2.0, 1.0, -3.0], [1.5, 2.0, 4.0]], np.float32)
IA = np.array([[5, -7, 3], [12, 0, 9]], np.int32)
IB = np.array([[2, 3, -4], [5, 7, 1]], np.int32)

ARITHMETIC = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
              operator.mod, operator.pow]
COMPARISON = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]
BITWISE = [operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift]


def _both(fn, *args):
    """fn applied to Arrays eagerly and to tracers under jit (whose tracers must work too)."""
    eager = fn(*[jnp.asarray(a) for a in args])
    seen = []

    def traced(*xs):
        seen.append(all(isinstance(x, Tracer) for x in xs))
        return fn(*xs)

    staged = xjax.jit(traced)(*[jnp.asarray(a) for a in args])
    assert seen == [True]
    return eager, staged


def _check(got, expected):
    assert isinstance(got, xjax.Array)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6)


@pytest.mark.parametrize("op", ARITHMETIC, ids=lambda o: o.__name__)
def test_arithmetic_operators(op):
    b = np.abs(B) + 0.5 if op is operator.pow else B
    for got in _both(op, np.abs(A) if op is operator.pow else A, b):
        _check(got, op(np.abs(A) if op is operator.pow else A, b))
    ib = np.abs(IB) + 1 if op in (operator.floordiv, operator.mod, operator.pow) else IB
    ia = np.abs(IA) % 4 if op is operator.pow else IA
    for got in _both(op, ia, ib):
        _check(got, op(ia, ib))


@pytest.mark.parametrize("op", ARITHMETIC + COMPARISON, ids=lambda o: o.__name__)
def test_operators_with_python_scalars_and_reflected(op):
    x = jnp.asarray(np.abs(A) + 1)
    for scalar in (2, 2.5):
        _check(op(x, scalar), op(np.abs(A) + 1, np.float32(scalar)))
        _check(op(scalar, x), op(np.float32(scalar), np.abs(A) + 1))
        _check(xjax.jit(lambda x: op(scalar, x))(x), op(np.float32(scalar), np.abs(A) + 1))


@pytest.mark.parametrize("op", COMPARISON, ids=lambda o: o.__name__)
def test_comparison_operators(op):
    for got in _both(op, A, B):
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, op(A, B))


CA = np.array([1 + 1j, 2, np.nan + 1j, 1 + np.nan * 1j, 3 - 1j, 2 + 1j], np.complex64)
CB = np.array([1 + 2j, 1, 1 + 1j, 1 + 1j, 3 - 1j, np.nan], np.complex64)
ORDERING = {operator.lt: jnp.less, operator.le: jnp.less_equal, operator.gt: jnp.greater,
            operator.ge: jnp.greater_equal}


@pytest.mark.parametrize("op", list(ORDERING), ids=lambda o: o.__name__)
def test_ordering_of_complex_values_is_lexicographic_as_numpy(op):
    expected = op(CA, CB)  # by real parts, then by imaginary parts; NaN compares False
    for got in (*_both(op, CA, CB), *_both(ORDERING[op], CA, CB)):
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(op(jnp.asarray(CA), 2), op(CA, 2))
    np.testing.assert_array_equal(op(1j, jnp.asarray(CA)), op(1j, CA))
    lax_fn = {operator.lt: xjax.lax.lt, operator.le: xjax.lax.le, operator.gt: xjax.lax.gt,
              operator.ge: xjax.lax.ge}[op]
    with pytest.raises(TypeError, match="does not accept dtype complex64"):
        lax_fn(jnp.asarray(CA), jnp.asarray(CB))


@pytest.mark.parametrize("op", BITWISE, ids=lambda o: o.__name__)
def test_bitwise_operators(op):
    ib = np.abs(IB) % 8 if op in (operator.lshift, operator.rshift) else IB
    for got in _both(op, IA, ib):
        np.testing.assert_array_equal(got, op(IA, ib))
    assert op(jnp.asarray(IA), 1).dtype == np.int32
    _check(op(3, jnp.asarray(ib)), op(np.int32(3), ib))


def test_unary_operators():
    for fn, ref in [(operator.neg, -A), (operator.pos, A), (abs, np.abs(A))]:
        for got in _both(fn, A):
            _check(got, ref)
    for got in _both(operator.invert, IA):
        np.testing.assert_array_equal(got, ~IA)
    assert round(jnp.float32(2.5)).tolist() == 2.0
    np.testing.assert_array_equal(round(jnp.asarray(A)), np.round(A))


def test_matmul_operator():
    for got in _both(operator.matmul, A, B.T):
        _check(got, A @ B.T)
    _check(np.ones((3, 2), np.float32) @ jnp.asarray(A), np.ones((3, 2)) @ A)


def test_operators_refuse_unknown_types():
    x = jnp.ones(3)
    assert x.__add__("a") is NotImplemented
    assert x.__add__([1, 2, 3]) is NotImplemented
    with pytest.raises(TypeError, match="unsupported operand"):
        x + [1, 2, 3]
    with pytest.raises(TypeError, match="unsupported operand"):
        x + (1, 2, 3)
    assert (x == "a") is False
    with pytest.raises(TypeError, match="unhashable"):
        hash(x)


def test_operators_take_objects_with_jax_array():
    # As JAX (Flax's Variable holds a Python float and defines __jax_array__).
    class Boxed:
        def __init__(self, value):
            self.value = value

        def __jax_array__(self):
            return jnp.asarray(self.value)

    x = jnp.array([1.0, 2.0])
    np.testing.assert_array_equal(x + Boxed(1.0), [2.0, 3.0])
    np.testing.assert_array_equal(x - Boxed(1.0), [0.0, 1.0])
    np.testing.assert_array_equal(x.__rsub__(Boxed(1.0)), [0.0, -1.0])
    np.testing.assert_array_equal(x ** Boxed(2.0), [1.0, 4.0])
    np.testing.assert_array_equal(x < Boxed(1.5), [True, False])
    assert float(x @ Boxed(np.ones(2, np.float32))) == 3.0
    np.testing.assert_array_equal(xjax.jit(lambda v: v * Boxed(3.0))(x), [3.0, 6.0])


def test_numpy_operands_both_sides():
    x = jnp.ones(3)
    out = np.ones(3) + x
    assert isinstance(out, xjax.Array) and out.dtype == np.float32
    out = x * np.float64(2)
    assert isinstance(out, xjax.Array) and out.dtype == np.float32
    out = np.ones(3, np.float32) < x
    assert isinstance(out, xjax.Array) and out.dtype == np.bool_


REDUCING_METHODS = [("sum", {}), ("sum", {"axis": 0}), ("mean", {"axis": 1}),
                    ("std", {}), ("var", {"ddof": 1}), ("max", {"axis": 1}), ("min", {}),
                    ("prod", {"axis": 0}), ("argmax", {}), ("argmin", {"axis": 1}),
                    ("any", {}), ("all", {"axis": 0}), ("cumsum", {"axis": 1}),
                    ("cumprod", {}), ("ptp", {"axis": 0})]


@pytest.mark.parametrize("name,kwargs", REDUCING_METHODS,
                         ids=[f"{n}-{k}" for n, k in REDUCING_METHODS])
def test_reducing_methods(name, kwargs):
    ref = getattr(np, name)(A, **kwargs)
    for got in _both(lambda x: getattr(x, name)(**kwargs), A):
        np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-5)


def test_shape_methods():
    x = jnp.asarray(A)
    for got in _both(lambda x: x.reshape(3, 2), A):
        _check(got, A.reshape(3, 2))
    for got in _both(lambda x: x.reshape((3, 2), order="F"), A):
        _check(got, A.reshape((3, 2), order="F"))
    _check(x.reshape([6]), A.reshape(6))
    _check(x.reshape(-1), A.reshape(-1))
    _check(x.reshape(np.array([3, 2])), A.reshape(3, 2))
    for got in _both(lambda x: x.transpose(), A):
        _check(got, A.T)
    _check(x.transpose(1, 0), A.T)
    _check(x.transpose((1, 0)), A.T)
    _check(x.T, A.T)
    _check(x.mT, A.T)
    _check(x.flatten(), A.flatten())
    _check(x.ravel(), A.ravel())
    _check(x[None].squeeze(), A)
    _check(x.swapaxes(0, 1), A.T)
    _check(x.repeat(2, axis=0), A.repeat(2, axis=0))
    _check(x.take(jnp.array([0, 4])), A.take([0, 4]))
    _check(x.dot(jnp.asarray(B.T)), A.dot(B.T))
    _check(x.round(), np.round(A))
    _check(x.clip(0, 2), A.clip(0, 2))
    _check(x.clip(max=2), A.clip(None, 2))
    for got in _both(lambda x: x.T.reshape(2, 3).T, A):
        _check(got, A.T.reshape(2, 3).T)


def test_dtype_methods_and_properties():
    x = jnp.asarray(A)
    out = x.astype(jnp.int32)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, A.astype(np.int32))
    assert jnp.asarray(1.0).astype(jnp.float32).weak_type is False
    with pytest.warns(UserWarning, match="requested in astype"):
        assert x.astype(jnp.float64).dtype == np.float32
    assert jnp.astype(x, "int8").dtype == np.int8
    np.testing.assert_array_equal(jnp.array([1.7, -1.7, np.nan]).astype(jnp.int32), [1, -1, 0])
    np.testing.assert_array_equal(jnp.array([0.0, 2.0]).astype(bool), [False, True])
    np.testing.assert_array_equal(x.view(jnp.int32), A.view(np.int32))
    z = jnp.array([1 + 2j, 3 - 4j])
    np.testing.assert_array_equal(z.real, [1, 3])
    np.testing.assert_array_equal(z.imag, [2, -4])
    np.testing.assert_array_equal(z.conj(), [1 - 2j, 3 + 4j])
    np.testing.assert_array_equal(z.conjugate(), [1 - 2j, 3 + 4j])
    with pytest.raises(NotImplementedError, match="arr.flat"):
        x.flat
    (rows, cols) = jnp.array([[0, 1], [2, 0]]).nonzero()
    np.testing.assert_array_equal(rows, [0, 1])
    np.testing.assert_array_equal(cols, [1, 0])


def test_tracer_only_methods():
    def f(x):
        assert x.copy() is x
        with pytest.raises(xjax.errors.ConcretizationTypeError):
            x.item()
        with pytest.raises(xjax.errors.ConcretizationTypeError):
            x.tolist()
        return x.at[0].set(x[1]) + x.real + x.sum()

    _check(xjax.jit(f)(jnp.arange(3.0)), np.array([1., 1., 2.]) + np.arange(3.0) + 3.0)


def test_tracer_printing_and_selu():
    seen = []

    @xjax.jit
    def selu(x, alpha=1.67, lmbda=1.05):
        seen.append(repr(x))
        return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)

    x = jnp.asarray(np.linspace(-2, 2, 7).astype(np.float32))
    xs = np.asarray(x)
    ref = 1.05 * np.where(xs > 0, xs, 1.67 * np.exp(xs) - 1.67)
    _check(selu(x), ref)
    _check(selu(x), ref)
    assert len(seen) == 1  # traced once, then cached
    assert seen[0].startswith("Traced<ShapedArray(float32[7])>")


def test_grad_through_numpy_functions():
    def sum_logistic(x):
        return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))

    g = xjax.grad(sum_logistic)(jnp.arange(3.))
    np.testing.assert_allclose(np.asarray(g), [0.25, 0.19661194, 0.10499357], rtol=1e-5)


def test_sorting_and_selection_methods():
    """Array.sort/argsort/argpartition/searchsorted/compress/choose, as JAX's Array has them
    (they forward to the jnp functions)."""
    a = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]], np.float32)
    x = jnp.asarray(a)
    np.testing.assert_array_equal(x.sort(axis=0), np.sort(a, axis=0))
    np.testing.assert_array_equal(x.argsort(), np.argsort(a, kind="stable"))
    np.testing.assert_array_equal(x.sort(descending=True), -np.sort(-a))
    part = np.asarray(x.argpartition(1))
    picked = np.take_along_axis(a, part, axis=-1)
    assert (picked[:, :1] <= picked[:, 1:2]).all() and (picked[:, 1:2] <= picked[:, 2:]).all()
    s = jnp.array([1.0, 2.0, 3.0])
    assert int(s.searchsorted(2.5)) == np.searchsorted([1.0, 2.0, 3.0], 2.5)
    np.testing.assert_array_equal(x.compress(jnp.array([True, False]), axis=0), a[:1])
    np.testing.assert_array_equal(jnp.array([0, 1]).choose([jnp.array([1, 2]),
                                                             jnp.array([3, 4])]), [1, 4])


def test_builtin_round_without_ndigits_gives_integers():
    out = round(jnp.float32(2.5))
    assert out.dtype == np.int32 and int(out) == 2  # half to even, as Python's round
    assert round(jnp.float32(2.56), 1).dtype == np.float32


def test_unsafe_buffer_pointer():
    x = jnp.arange(4.0)
    pointer = x.unsafe_buffer_pointer()
    assert isinstance(pointer, int) and pointer == x.unsafe_buffer_pointer()
    y = xjax.jit(lambda a: a * 2)(jnp.ones(512))
    if xjax.default_backend() == "cpu":  # NumPy views the device memory
        assert y.unsafe_buffer_pointer() == np.asarray(y).ctypes.data
    assert isinstance(jnp.zeros(0).unsafe_buffer_pointer(), int)
    # Asking for the pointer does not stop donation: the buffer is updated in place.
    buffer = jnp.zeros(1000)
    before = buffer.unsafe_buffer_pointer()
    out = xjax.jit(lambda b: b.at[0].add(1), donate_argnums=0)(buffer)
    assert buffer.is_deleted() and out.unsafe_buffer_pointer() == before
    x.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        x.unsafe_buffer_pointer()
    with pytest.raises(xjax.errors.ConcretizationTypeError,
                       match=r"unsafe_buffer_pointer\(\) method was called on traced array"):
        xjax.jit(lambda a: a.unsafe_buffer_pointer())(jnp.ones(2))
