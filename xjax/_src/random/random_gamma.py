"""``random_gamma_p``: Gamma(a) variates, one per element of ``a``, each from its own key, as
the primitive JAX names ``jax.random.random_gamma_p``.

JAX makes gamma sampling a primitive so its derivative with respect to ``a`` can be the
implicit reparameterization gradient (``lax.random_gamma_grad``: the change of the sample
that keeps its CDF value fixed) rather than the derivative of the rejection sampler's
transform; beta, Dirichlet, chi-square, Student's t and F inherit it. Its operands here are
raw Threefry key data, ``uint32[*a.shape, 2]`` (xjax's typed keys wrap such data; JAX binds
typed keys), and ``a``; the parameter ``log_space`` samples ``log(Gamma(a))``.

Its evaluation is Marsaglia and Tsang's rejection loop per element (``_gamma_one`` in
``gamma_family``), compiled with XLA both eagerly and under ``jit`` (as every sampler is), so
adding the primitive changed no sample's bits.
"""

from __future__ import annotations

import functools
import math

import ml_dtypes
import numpy as np

from xjax._src.transformations import lax_map
from xjax._src.core import dtypes
from xjax._src.core.ad_util import Zero, get_aval, tangent_aval
from xjax._src.core.avals import ShapedArray
from xjax._src.core.primitive import NONLINEAR, Primitive
from xjax._src.lax.batch_rules import move_axis, not_mapped
from xjax._src.higher_order.linalg.common import lower_via_lax
from xjax._src.random._common import sampler_jit
from xjax._src import lax
from xjax._src.lax.operands import to_operand

_U32 = np.dtype(np.uint32)


def _random_gamma_abstract_eval(keys, a, *, log_space):
    if not dtypes.is_float(a.dtype):
        raise TypeError(f"random_gamma: a must have a floating dtype, got {a.dtype}")
    if keys.dtype != _U32 or tuple(keys.shape) != tuple(a.shape) + (2,):
        raise TypeError("random_gamma: keys must be Threefry key data of shape a.shape + (2,) "
                        f"and dtype uint32, got {keys.dtype}{list(keys.shape)} for a of shape "
                        f"{tuple(a.shape)}")
    return ShapedArray(tuple(a.shape), a.dtype)


def _random_gamma_algorithm(keys, a, *, log_space):
    """The samples, with lax: one rejection loop per element, mapped sequentially."""
    from xjax._src.random.gamma_family import _gamma_one  # gamma_family imports this module
    shape = tuple(get_aval(a).shape)
    count = math.prod(shape)
    if count == 0:
        return lax.full(shape, 0, get_aval(a).dtype)
    one = functools.partial(_gamma_one, log_space=log_space)
    samples = lax_map.map(lambda args: one(*args),
                      (lax.reshape(keys, (count, 2)), lax.reshape(a, (count,))))
    return lax.reshape(samples, shape)


@sampler_jit(static_argnames=("log_space",))
def _compiled(keys, a, *, log_space):
    return _random_gamma_algorithm(keys, a, log_space=log_space)


def _random_gamma_impl(keys, a, *, log_space):
    return np.asarray(_compiled(keys, a, log_space=log_space))


def _gamma_grad(sample, a, *, log_space):
    """d sample / d a at a fixed CDF value (JAX's ``_gamma_grad``)."""
    if not log_space:
        return lax.random_gamma_grad(a, sample)
    # d log(x) = dx / x; exp(log x) may round to 0, which becomes the smallest normal
    x = lax.exp(sample)
    tiny = lax.full_like(x, float(ml_dtypes.finfo(get_aval(x).dtype).tiny))
    x = lax.select(lax.eq(x, lax.full_like(x, 0)), tiny, x)
    return lax.div(lax.random_gamma_grad(a, x), x)


def _random_gamma_jvp(primals, tangents, *, log_space):
    keys, a = primals
    ans = random_gamma_p.bind(keys, a, log_space=log_space)
    a_dot = tangents[1]
    if type(a_dot) is Zero:
        return ans, Zero(tangent_aval(get_aval(ans)))
    return ans, lax.mul(a_dot, _gamma_grad(ans, a, log_space=log_space))


def _random_gamma_batch(args, dims, *, log_space):
    size = next(get_aval(x).shape[d] for x, d in zip(args, dims, strict=True)
                if d is not not_mapped)
    moved = [lax.broadcast(x, (size,)) if d is not_mapped else move_axis(x, d, 0)
             for x, d in zip(args, dims, strict=True)]
    return random_gamma_p.bind(*moved, log_space=log_space), 0


random_gamma_p = Primitive(
    "random_gamma",
    abstract_eval=_random_gamma_abstract_eval,
    impl=_random_gamma_impl,
    lower=lower_via_lax(_random_gamma_algorithm, "random_gamma"),
    jvp=_random_gamma_jvp,
    transpose=NONLINEAR,
    batch=_random_gamma_batch,
)


def random_gamma(keys, a, *, log_space: bool = False):
    """Gamma(``a``) variates (or their logs), element ``i`` drawn with key ``keys[i]``.

    Parameters
    ----------
    keys : uint32 array of shape ``a.shape + (2,)``
        Raw Threefry key data, one key per element.
    a : float array
    log_space : bool
        Return ``log(Gamma(a))``, sampled in log space (accurate for small ``a``).

    Returns
    -------
    Array of ``a``'s shape and dtype.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import random
    >>> keys = random.key_data(random.split(random.key(0), 3))
    >>> random_gamma(keys, jnp.array([0.5, 1.0, 4.0])).shape
    (3,)
    """
    return random_gamma_p.bind(to_operand(keys), to_operand(a), log_space=bool(log_space))
