"""Activation functions and the other elementwise and reducing functions of ``xjax.nn``.

Each function is composed from ``xjax.numpy`` and ``xjax.lax`` and, like JAX's, most are
jitted. relu, relu6 and log1mexp carry JAX's ``custom_jvp``; where JAX attaches one deeper
(``jnp.logaddexp`` under softplus), the function here is written so that ordinary
differentiation already gives JAX's values *and* JAX's derivatives at the edges
(``softplus'(0) == 0.5``): the masks or the branch-safe ``where`` forms below are deliberate.
"""

from __future__ import annotations

import functools
import math
import operator
import warnings

import numpy as np

from xjax._src import lax, numpy as jnp
from xjax._src.transformations.jit import jit
from xjax._src.core import dtypes
from xjax._src.numpy._promotion import (canonicalize_axes, canonicalize_axis, check_arraylike,
                                        promote_args_inexact)
from xjax._src.core.errors import ConcretizationTypeError
from xjax._src.transformations.custom_derivatives import custom_jvp


def _as_array(name, x):
    check_arraylike(name, x)
    return jnp.asarray(x)


# --------------------------------------------------------------------------------------------
# rectifiers and hard functions


@jit
def identity(x):
    """The identity activation: returns ``x`` unchanged (as an array).

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.identity(jnp.array([-1., 0., 2.]))
    Array([-1.,  0.,  2.], dtype=float32)
    """
    return _as_array("identity", x)


def _gradient_where(keep):
    """The derivative rule ``g`` where ``keep(x)``, else 0, of a piecewise-linear function."""
    def rule(g, ans, x):
        return lax.select(keep(x), g, lax.full_like(g, 0))
    return rule


# relu and relu6 are custom_jvp functions around a jit, as JAX's are: their jaxprs show a
# ``custom_jvp_call`` (libraries count equations by primitive), and the rule fixes the
# derivative at the kinks to 0.
@custom_jvp
@jit
def relu(x):
    """Rectified linear unit ``max(x, 0)``, with derivative 0 at ``x == 0`` (as JAX).

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.relu(jnp.array([-2., 0., 0.5, 2.]))
    Array([0. , 0. , 0.5, 2. ], dtype=float32)
    """
    return jnp.maximum(x, 0)


relu.defjvps(_gradient_where(lambda x: x > 0))


@custom_jvp
@jit
def relu6(x):
    """``min(max(x, 0), 6)``, with derivative 0 at 0 and 6 (as JAX).

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.relu6(jnp.array([-1., 3., 7.]))
    Array([0., 3., 6.], dtype=float32)
    """
    return jnp.minimum(jnp.maximum(x, 0), 6.)


relu6.defjvps(_gradient_where(lambda x: (x > 0) & (x < 6)))


@jit
def hard_sigmoid(x):
    """``relu6(x + 3) / 6``.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.hard_sigmoid(jnp.array([-4., 0., 4.]))
    Array([0. , 0.5, 1. ], dtype=float32)
    """
    return relu6(x + 3.) / 6.


@jit
def hard_silu(x):
    """``x * hard_sigmoid(x)`` (also called hard swish).

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.hard_silu(jnp.array([-4., 0., 4.]))
    Array([-0.,  0.,  4.], dtype=float32)
    """
    x = _as_array("hard_silu", x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


@jit
def hard_tanh(x):
    """``x`` clipped to ``[-1, 1]``.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.hard_tanh(jnp.array([-2., 0.5, 2.]))
    Array([-1. ,  0.5,  1. ], dtype=float32)
    """
    x = _as_array("hard_tanh", x)
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


@jit
def leaky_relu(x, negative_slope=1e-2):
    """``x`` where ``x >= 0``, else ``negative_slope * x``.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.leaky_relu(jnp.array([-1., 2.]), negative_slope=0.1)
    Array([-0.1,  2. ], dtype=float32)
    """
    x = _as_array("leaky_relu", x)
    return jnp.where(x >= 0, x, negative_slope * x)


@jit
def elu(x, alpha=1.0):
    """Exponential linear unit: ``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.elu(jnp.array([-1., 2.]))
    Array([-0.63212055,  2.        ], dtype=float32)
    """
    x = _as_array("elu", x)
    # The inner where keeps expm1 of large positive x out of the untaken branch's gradient.
    return jnp.where(x > 0, x, alpha * jnp.expm1(jnp.where(x > 0, 0., x)))


@jit
def celu(x, alpha=1.0):
    """Continuously differentiable ELU: ``max(x, 0) + alpha * expm1(min(x, 0) / alpha)``.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.celu(jnp.array([-1., 2.]))
    Array([-0.63212055,  2.        ], dtype=float32)
    """
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@jit
def selu(x):
    """Scaled ELU: ``scale * elu(x, alpha)`` with the self-normalizing constants
    ``alpha = 1.67326...`` and ``scale = 1.05070...``.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.selu(jnp.array([1.]))
    Array([1.050701], dtype=float32)
    """
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


@jit
def sparse_plus(x):
    """``0`` for ``x <= -1``, ``x`` for ``x >= 1``, ``(x + 1)**2 / 4`` between.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.sparse_plus(jnp.array([-2., 0., 2.]))
    Array([0.  , 0.25, 2.  ], dtype=float32)
    """
    x = _as_array("sparse_plus", x)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


@jit
def sparse_sigmoid(x):
    """``clip((x + 1) / 2, 0, 1)``, the derivative of :func:`sparse_plus`.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.sparse_sigmoid(jnp.array([-2., 0., 2.]))
    Array([0. , 0.5, 1. ], dtype=float32)
    """
    return 0.5 * jnp.clip(x + 1.0, 0.0, 2.0)


# --------------------------------------------------------------------------------------------
# smooth activations


@jit(inline=True)
def sigmoid(x):
    """Logistic sigmoid ``1 / (1 + exp(-x))`` (``lax.logistic``; floating inputs only).

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.sigmoid(jnp.array([0.]))
    Array([0.5], dtype=float32)
    """
    return lax.logistic(x)


@jit
def softplus(x):
    """``log(1 + exp(x))``, computed stably: ``jnp.logaddexp(x, 0)``, as JAX's (its custom
    derivative is sigmoid(x), 0.5 at 0).

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.softplus(jnp.array([0.]))
    Array([0.6931472], dtype=float32)
    """
    return jnp.logaddexp(x, 0)


@jit
def log_sigmoid(x):
    """``log(sigmoid(x)) = -softplus(-x)``.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.log_sigmoid(jnp.array([0.]))
    Array([-0.6931472], dtype=float32)
    """
    x = _as_array("log_sigmoid", x)
    return -softplus(-x)


@jit
def soft_sign(x):
    """``x / (|x| + 1)``.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.soft_sign(jnp.array([-1., 3.]))
    Array([-0.5 ,  0.75], dtype=float32)
    """
    x = _as_array("soft_sign", x)
    return x / (jnp.abs(x) + 1)


@jit
def silu(x):
    """SiLU (swish): ``x * sigmoid(x)``.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.silu(jnp.array([0., 1.]))
    Array([0.       , 0.7310586], dtype=float32)
    """
    x = _as_array("silu", x)
    return x * sigmoid(x)


swish = silu


@jit
def mish(x):
    """``x * tanh(softplus(x))``.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.mish(jnp.array([1.]))
    Array([0.8650985], dtype=float32)
    """
    x = _as_array("mish", x)
    return x * jnp.tanh(softplus(x))


@jit
def squareplus(x, b=4):
    """``(x + sqrt(x**2 + b)) / 2``.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.squareplus(jnp.array([0.]))
    Array([1.], dtype=float32)
    """
    check_arraylike("squareplus", x, b)
    x, b = jnp.asarray(x), jnp.asarray(b)
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2


def gelu(x, approximate: bool = True):
    """Gaussian error linear unit ``x * Phi(x)``; with ``approximate`` (the default) the
    tanh approximation ``x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x**3)))``.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.gelu(jnp.array([1.]), approximate=False)
    Array([0.8413447], dtype=float32)
    """
    # Not jitted: JAX leaves gelu unjitted too.
    x, = promote_args_inexact("gelu", x)
    dtype = x.dtype
    if approximate:
        sqrt_2_over_pi = np.sqrt(2 / np.pi).astype(dtype)
        cdf = 0.5 * (1.0 + jnp.tanh(sqrt_2_over_pi * (x + 0.044715 * (x ** 3))))
        return x * cdf
    sqrt_half = np.sqrt(0.5).astype(dtype)
    return jnp.array(0.5 * x * lax.erfc(-x * sqrt_half), dtype=dtype)


@jit(static_argnames=("axis",))
def glu(x, axis: int = -1):
    """Gated linear unit: ``x1 * sigmoid(x2)`` for the two halves of ``x`` along ``axis``.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.glu(jnp.array([1., 0.]))
    Array([0.5], dtype=float32)
    """
    x = _as_array("glu", x)
    if x.shape[axis] % 2 != 0:
        # JAX asserts this (AssertionError) with the same words.
        raise AssertionError("axis size must be divisible by 2")
    x1, x2 = jnp.split(x, 2, axis)
    return x1 * sigmoid(x2)


def tanh(x, /):
    """Elementwise hyperbolic tangent (``jnp.tanh``).

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.tanh(jnp.array([0.]))
    Array([0.], dtype=float32)
    """
    return jnp.tanh(x)


@jit
def _log1mexp_value(x):
    x = _as_array("log1mexp", x)
    -x  # noqa: B018  (bool inputs raise JAX's TypeError here, as JAX's -x does)
    x, = promote_args_inexact("log1mexp", x)
    c = jnp.log(2.0)
    return jnp.where(x < c, jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


def log1mexp(x):
    """``log(1 - exp(-x))`` for ``x >= 0``, accurate near 0 and for large ``x``.

    As in JAX, a custom derivative ``1 / expm1(x)`` (so it is -1 at ``-inf``, ``inf`` at 0).

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.log1mexp(jnp.array([1.]))
    Array([-0.45867515], dtype=float32)
    """
    return _log1mexp_custom()(x)


@functools.cache
def _log1mexp_custom():
    fun = custom_jvp(jit(_log1mexp_value))
    fun.defjvps(lambda g, ans, x: g / jnp.expm1(x))
    return fun


# --------------------------------------------------------------------------------------------
# reductions: logsumexp, softmax, standardize


def _count(x, axis, where, keepdims, dtype):
    """The number of elements each reduction over ``axis`` sees (``where`` counts)."""
    axes = canonicalize_axes(axis, jnp.ndim(x))
    if where is None:
        n = math.prod(jnp.shape(x)[a] for a in axes)
        shape = tuple(1 if a in axes else d for a, d in enumerate(jnp.shape(x))) \
            if keepdims else tuple(d for a, d in enumerate(jnp.shape(x)) if a not in axes)
        return jnp.full(shape, n, dtype=dtype)
    mask = jnp.broadcast_to(where, jnp.shape(x))
    return jnp.sum(mask, axis=axes, keepdims=keepdims, dtype=dtype)


def logsumexp(a, axis=None, b=None, keepdims: bool = False, return_sign: bool = False,
              where=None):
    """``log(sum(b * exp(a), axis))``, computed stably by shifting by the maximum.

    Parameters
    ----------
    a : array_like
    axis : int or tuple of ints, optional
        Axes to reduce (all by default).
    b : array_like, optional
        Weights of ``exp(a)`` (broadcast against ``a``); a negative sum gives NaN unless
        ``return_sign``.
    keepdims : bool
    return_sign : bool
        Also return the sign of the sum (and the log of its absolute value).
    where : array_like of bool, optional
        The elements to include.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.logsumexp(jnp.array([0., 0.]))
    Array(0.6931472, dtype=float32)
    """
    if where is not None:
        a = jnp.where(where, a, 0)
    if b is not None:
        a, b = promote_args_inexact("logsumexp", a, b)
        a = jnp.where(b != 0, a, -np.inf)
    else:
        a, = promote_args_inexact("logsumexp", a)
    axes = canonicalize_axes(axis, a.ndim)
    amax = jnp.max(jnp.real(a), axis=axes, keepdims=keepdims, where=where, initial=-np.inf)
    # The shift is a constant (JAX stops its gradient too); infinite maxima shift by 0.
    amax = lax.stop_gradient(lax.select(jnp.isfinite(amax), amax, lax.full_like(amax, 0)))
    amax_kept = amax if keepdims else lax.expand_dims(amax, axes)
    exp_a = lax.exp(lax.sub(a, amax_kept.astype(a.dtype)))
    if b is not None:
        exp_a = lax.mul(exp_a, b)
    sumexp = exp_a.sum(axis=axes, keepdims=keepdims, where=where)
    sign = lax.sign(sumexp)
    if return_sign or not dtypes.is_complex(a.dtype):
        sumexp = abs(sumexp)
    out = lax.add(lax.log(sumexp), amax.astype(sumexp.dtype))
    if return_sign:
        return out, sign
    if b is not None and not dtypes.is_complex(out.dtype):
        out = jnp.where(sign < 0, jnp.array(np.nan, dtype=out.dtype), out)
    return out


@jit(static_argnames=("axis", "keepdims"))
def logmeanexp(x, axis=None, where=None, keepdims: bool = False):
    """``log(mean(exp(x), axis))``, computed stably: ``logsumexp - log(count)``.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.logmeanexp(jnp.array([1., 1.]))
    Array(1., dtype=float32)
    """
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    count = _count(x, axis, where, keepdims, lse.dtype)
    return lse - jnp.log(count)


@jit(static_argnames=("axis",))
def log_softmax(x, axis=-1, where=None):
    """``x - logsumexp(x, axis, keepdims=True)``; ``-inf`` where ``where`` is False.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.log_softmax(jnp.array([0., 0.]))
    Array([-0.6931472, -0.6931472], dtype=float32)
    """
    x = _as_array("log_softmax", x)
    x_max = jnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, -np.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    shifted_logsumexp = jnp.log(jnp.sum(jnp.exp(shifted), axis, where=where, keepdims=True))
    result = shifted - shifted_logsumexp
    if where is not None:
        return jnp.where(where, result, -np.inf)
    return result


def softmax(x, axis=-1, where=None):
    """``exp(x) / sum(exp(x), axis, keepdims=True)``, shifted by the maximum; 0 where
    ``where`` is False.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.softmax(jnp.array([0., 0.]))
    Array([0.5, 0.5], dtype=float32)
    """
    # JAX's default (jax_softmax_custom_jvp=False): no custom_jvp, the shift's gradient
    # stopped. Not jitted, as in JAX.
    x_max = jnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, -np.inf)
    unnormalized = jnp.exp(x_safe - lax.stop_gradient(x_max))
    result = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
    if where is not None:
        result = jnp.where(where, result, 0)
    return result


@jit(static_argnames=("axis", "algorithm"))
def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                algorithm: str = "fast"):
    """``(x - mean) / sqrt(variance + epsilon)`` with mean and variance over ``axis``
    (computed unless given).

    ``algorithm="fast"`` takes the variance as ``mean(x**2) - mean(x)**2`` clipped at 0;
    ``"stable"`` as ``mean((x - mean)**2)``.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.standardize(jnp.array([1., 3.]), epsilon=0.)
    Array([-1.,  1.], dtype=float32)
    """
    check_arraylike("standardize", x)
    for value in (mean, variance, where):
        if value is not None:
            check_arraylike("standardize", value)
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = jnp.mean(jnp.square(jnp.subtract(x, mean)), axis, keepdims=True,
                                where=where)
        elif algorithm == "fast":
            variance = jnp.mean(jnp.square(x), axis, keepdims=True, where=where) \
                - jnp.square(mean)
            # The one-pass variance can come out slightly negative; rsqrt needs >= 0.
            variance = jnp.clip(variance, 0)
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return jnp.subtract(x, mean) * lax.rsqrt(variance + epsilon)


# --------------------------------------------------------------------------------------------
# one_hot


def _concrete_num_classes(num_classes):
    try:
        return operator.index(num_classes)
    except TypeError:
        pass
    if hasattr(num_classes, "aval"):
        raise ConcretizationTypeError(
            num_classes, "The error arose in jax.nn.one_hot argument `num_classes`.")
    raise TypeError(f"num_classes must be an integer, got {num_classes!r}")


@jit(static_argnames=("num_classes", "dtype", "axis"))
def _one_hot(x, num_classes: int, *, dtype, axis):
    if isinstance(axis, str):
        raise NotImplementedError("one_hot with a named vmap axis is not supported yet")
    out_axis = canonicalize_axis(axis, x.ndim + 1)
    lhs = lax.expand_dims(x, (axis,))
    rhs_shape = [1] * x.ndim
    rhs_shape.insert(out_axis, num_classes)
    rhs = lax.broadcasted_iota(x.dtype, tuple(rhs_shape), out_axis)
    return (lhs == rhs).astype(dtype)


def one_hot(x, num_classes: int, *, dtype=None, axis=-1):
    """One-hot encode ``x``: ``out[..., j] = (x[...] == j)`` along a new axis ``axis`` of
    size ``num_classes``; out-of-range values give all-zero rows.

    Parameters
    ----------
    x : array_like of ints
    num_classes : int
    dtype : dtype, optional
        Of the result (the default float dtype by default).
    axis : int
        Where the new axis goes.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.nn.one_hot(jnp.array([0, 2]), 3)
    Array([[1., 0., 0.],
           [0., 0., 1.]], dtype=float32)
    """
    num_classes = _concrete_num_classes(num_classes)
    x = jnp.asarray(x)
    if not dtypes.is_integer(x.dtype):
        # JAX deprecated non-integer inputs (2024-12-18) and warns the same way.
        warnings.warn(f"jax.nn.one_hot input should be integer-typed; got dtype={x.dtype}",
                      DeprecationWarning, stacklevel=2)
    dtype = dtypes.default_float_dtype() if dtype is None else np.dtype(dtype)
    return _one_hot(x, num_classes, dtype=dtype, axis=axis)
