"""The ``xjax.numpy`` functions JAX builds on control flow: ``gcd``/``lcm`` (a
``while_loop``), ``piecewise`` (``switch``), ``polyval`` (``scan``), ``searchsorted`` and
``digitize`` (a binary search as a ``scan``). Installed into ``xjax.numpy`` by this package
(where the numpy layer does not define them itself)."""

from __future__ import annotations

import numpy as np

from xjax._src.core import dtypes
from xjax._src.lax.convert import _convert_element_type
from xjax._src.higher_order.cond import switch
from xjax._src.higher_order.loops import while_loop
from xjax._src.higher_order.scan import scan
from xjax._src.transformations.jit import jit
from xjax._src.transformations.vmap import vmap
import xjax._src.numpy as jnp
from xjax._src.numpy.nested_jit import jit_when_staged


def _jnp():
    return jnp


def _jit(fun, **kwargs):
    return jit(fun, **kwargs)


# -- gcd and lcm -----------------------------------------------------------------------------

def _gcd_step(state):
    jnp = _jnp()
    a, b = state
    nonzero = b != 0
    a, b = jnp.where(nonzero, b, a), jnp.where(nonzero, a % jnp.where(nonzero, b, 1), 0)
    return jnp.where(a < b, b, a), jnp.where(a < b, a, b)


def _gcd(x1, x2):
    jnp = _jnp()
    x1, x2 = jnp.broadcast_arrays(*_promote_integers("gcd", x1, x2))
    result, _ = while_loop(lambda s: jnp.any(s[1] != 0), _gcd_step, (jnp.abs(x1), jnp.abs(x2)))
    return result


def _promote_integers(name, x1, x2):
    jnp = _jnp()
    x1, x2 = jnp.asarray(x1), jnp.asarray(x2)
    if not (dtypes.is_integer(x1.dtype) and dtypes.is_integer(x2.dtype)):
        raise ValueError(f"Arguments to jax.numpy.{name} must be integers.")
    dtype, weak = dtypes.lattice_result((x1.dtype, x1.weak_type), (x2.dtype, x2.weak_type))
    return (_convert_element_type(x1, dtype, weak_type=weak),
            _convert_element_type(x2, dtype, weak_type=weak))


_gcd_jit = None


def gcd(x1, x2):
    """The greatest common divisor of ``|x1|`` and ``|x2|``, elementwise.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.gcd(jnp.array([12, 18, 24]), jnp.array([5, 10, 15]))
    Array([1, 2, 3], dtype=int32)
    """
    global _gcd_jit
    if _gcd_jit is None:
        _gcd_jit = _jit(_gcd)
    return _gcd_jit(x1, x2)


def lcm(x1, x2):
    """The least common multiple of ``|x1|`` and ``|x2|``, elementwise (0 if either is 0).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.lcm(jnp.array([4, 6]), jnp.array([6, 4]))
    Array([12, 12], dtype=int32)
    """
    jnp = _jnp()
    x1, x2 = _promote_integers("lcm", x1, x2)
    x1, x2 = jnp.abs(x1), jnp.abs(x2)
    d = gcd(x1, x2)
    # a Python 0 keeps the result's dtype and weak type (lcm(4, 6) is weak, as in JAX)
    return jnp.where(d == 0, 0, x1 * (x2 // jnp.where(d == 0, 1, d)))


# -- piecewise -------------------------------------------------------------------------------

def piecewise(x, condlist, funclist, *args, **kw):
    """Evaluate ``funclist[i](x)`` where ``condlist[i]`` holds (the first true condition
    wins; with one more function than conditions, the last is the default, else 0).

    Each element goes through a ``lax.switch`` over the functions, as in JAX.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> x = jnp.arange(-2.0, 3.0)
    >>> jnp.piecewise(x, [x < 0, x > 0], [lambda v: -v, lambda v: 10 * v])
    Array([ 2.,  1.,  0., 10., 20.], dtype=float32)
    """
    jnp = _jnp()
    x = jnp.asarray(x)
    n_cond, n_fun = len(condlist), len(funclist)
    if n_fun == n_cond + 1:
        funclist = list(funclist[-1:]) + list(funclist[:-1])
    elif n_fun == n_cond:
        funclist = [0] + list(funclist)
    else:
        raise ValueError(f"with {n_cond} condition(s), either {n_cond} or {n_cond + 1} "
                         f"functions are expected; got {n_fun}")
    conds = jnp.asarray(condlist, dtype=bool)
    if conds.ndim == x.ndim:  # one condition given for a scalar-shaped x
        conds = conds.reshape((n_cond,) + x.shape)
    padded = jnp.concatenate([jnp.zeros_like(conds[:1]), conds], 0)
    indices = jnp.argmax(jnp.cumsum(padded, 0), 0)
    dtype = x.dtype

    def call(f):
        if callable(f):
            return lambda v: jnp.asarray(f(v, *args, **kw)).astype(dtype)
        return lambda v: jnp.asarray(f, dtype=dtype)

    branches = [call(f) for f in funclist]
    flat = vmap(lambda i, v: switch(i, branches, v))(indices.ravel(), x.ravel())
    return flat.reshape(x.shape)


# -- polyval ---------------------------------------------------------------------------------

@jit_when_staged(static_argnames=('unroll',))
def polyval(p, x, *, unroll=16):
    """The polynomial with coefficients ``p`` (highest degree first) at ``x``: Horner's
    rule as a ``scan`` over the coefficients.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.polyval(jnp.array([1.0, 2.0, 3.0]), jnp.array([0.0, 1.0, 2.0]))
    Array([ 3.,  6., 11.], dtype=float32)
    """
    jnp = _jnp()
    p, x = jnp.asarray(p), jnp.asarray(x)
    dtype = jnp.result_type(p, x)
    p, x = p.astype(dtype), x.astype(dtype)
    shape = jnp.broadcast_shapes(p.shape[1:], x.shape)
    y = jnp.zeros(shape, dtype)
    y, _ = scan(lambda y, c: (y * x + c, None), y, p, unroll=unroll)
    return y


# -- searchsorted and digitize ---------------------------------------------------------------

def _less_equal(x, y):
    """``x <= y`` in the order that sorts NaN last (complex: lexicographic)."""
    jnp = _jnp()
    if dtypes.is_complex(x.dtype):
        return jnp.logical_or(_less(x.real, y.real),
                              jnp.logical_and(x.real == y.real, _less_equal(x.imag, y.imag)))
    if dtypes.is_float(x.dtype):
        return jnp.logical_or(x <= y, jnp.isnan(y))
    return x <= y


def _less(x, y):
    jnp = _jnp()
    if dtypes.is_complex(x.dtype):
        return jnp.logical_or(_less(x.real, y.real),
                              jnp.logical_and(x.real == y.real, _less(x.imag, y.imag)))
    if dtypes.is_float(x.dtype):
        return jnp.logical_or(x < y, jnp.logical_and(jnp.isnan(y), ~jnp.isnan(x)))
    return x < y


def _search_by_scan(a, v, side, unrolled):
    jnp = _jnp()
    n = a.shape[0]
    if n == 0:
        return jnp.zeros(v.shape, np.int32)
    goes_left = _less_equal if side == "left" else _less
    levels = int(np.ceil(np.log2(n + 1)))

    def step(state, _):
        low, high = state
        mid = low + (high - low) // 2
        left = goes_left(v, a[mid])
        return (jnp.where(left, low, mid), jnp.where(left, mid, high)), None

    init = (jnp.zeros(v.shape, np.int32), jnp.full(v.shape, n, np.int32))
    (_, high), _ = scan(step, init, None, length=levels, unroll=levels if unrolled else 1)
    return high


def _search_compare_all(a, v, side):
    jnp = _jnp()
    op = _less if side == "left" else _less_equal
    v_b = v[..., None]
    return jnp.sum(op(a, v_b), axis=-1, dtype=np.int32)


@jit_when_staged(static_argnames=('side', 'method'))
def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Indices where inserting ``v`` keeps the 1-D sorted ``a`` sorted (NaN sorts last).

    ``method`` is ``"scan"`` (a binary search as a ``lax.scan``), ``"scan_unrolled"`` or
    ``"compare_all"``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.searchsorted(jnp.array([1, 3, 5]), jnp.array([0, 3, 4, 9]))
    Array([0, 1, 2, 3], dtype=int32)
    """
    jnp = _jnp()
    if side not in ("left", "right"):
        raise ValueError(f"invalid argument side={side!r}, expected 'left' or 'right'")
    if method not in ("scan", "scan_unrolled", "compare_all", "sort"):
        raise ValueError(f"Unsupported method: {method}")
    a, v = jnp.asarray(a), jnp.asarray(v)
    if a.ndim != 1:
        raise ValueError("a should be 1-dimensional")
    dtype = jnp.result_type(a, v)
    a, v = a.astype(dtype), v.astype(dtype)
    if sorter is not None:
        a = a[jnp.asarray(sorter)]
    if method == "compare_all":
        return _search_compare_all(a, v, side)
    return _search_by_scan(a, v, side, unrolled=method == "scan_unrolled")


def digitize(x, bins, right=False, *, method=None):
    """The index of the bin of ``bins`` (monotonic) each ``x`` falls in.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.digitize(jnp.array([0.2, 6.4, 3.0]), jnp.array([0.0, 1.0, 2.5, 4.0, 10.0]))
    Array([1, 4, 3], dtype=int32)
    """
    jnp = _jnp()
    x, bins = jnp.asarray(x), jnp.asarray(bins)
    if bins.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
    if bins.shape[0] == 0:
        return jnp.zeros(x.shape, np.int32)
    side = "left" if right else "right"
    method = "scan" if method is None else method
    increasing = searchsorted(bins, x, side=side, method=method)
    decreasing = bins.shape[0] - searchsorted(bins[::-1], x, side=side, method=method)
    return jnp.where(bins[-1] >= bins[0], increasing, decreasing)


FUNCTIONS = {"gcd": gcd, "lcm": lcm, "piecewise": piecewise, "polyval": polyval,
             "searchsorted": searchsorted, "digitize": digitize}
