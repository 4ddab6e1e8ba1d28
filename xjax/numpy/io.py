"""Reading, writing and printing arrays through NumPy: ``frombuffer``, ``fromstring``,
``save``, ``savez``, ``load``, ``array_repr``, ``array_str``; ``fromfile`` and ``fromiter``
raise, as in JAX (they may be impure under transformations).
"""

from __future__ import annotations

import numpy as np

import xjax.numpy as jnp
from xjax.core.array import Array
from xjax.core.stubs import not_implemented

ComplexWarning = np.exceptions.ComplexWarning

save = np.save
savez = np.savez


def load(file, *args, **kwargs):
    """``numpy.load``, with arrays returned as xjax arrays (``.npz`` archives stay lazy
    NumPy containers)."""
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray):
        if out.dtype == object:
            return out
        return jnp.asarray(out)
    return out


def frombuffer(buffer, dtype=float, count: int = -1, offset: int = 0):
    """An array read from the bytes of ``buffer`` (see ``numpy.frombuffer``).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.frombuffer(b"\\x01\\x02", dtype=jnp.uint8)
    Array([1, 2], dtype=uint8)
    """
    return jnp.asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string: str, dtype=float, count: int = -1, *, sep: str):
    """An array parsed from text separated by ``sep`` (see ``numpy.fromstring``)."""
    return jnp.asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


_IMPURE = ("jnp.{name}() is not implemented because it may be non-pure and thus unsafe for "
           "use with JIT and other JAX transformations. Consider using "
           "jnp.asarray(np.{name}(...)) instead, although care should be taken if "
           "np.{name} is used within a jax transformations because of its potential "
           "side-effect of consuming the iterable object; for more information see "
           "https://docs.jax.dev/en/latest/faq.html#why-are-some-functions-with-side-effects"
           "-not-supported")


# As in JAX, which defines both names only to raise this.
fromfile = not_implemented("fromfile", _IMPURE.format(name="fromfile"), jax_too=True)
fromiter = not_implemented("fromiter", _IMPURE.format(name="fromiter"), jax_too=True)


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """The repr of an array (``Array([...], dtype=...)`` for xjax arrays)."""
    if isinstance(arr, Array):
        return repr(arr)
    return np.array_repr(np.asarray(arr), max_line_width, precision, suppress_small)


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """The str of an array's values, as NumPy prints them."""
    return np.array_str(np.asarray(a), max_line_width, precision, suppress_small)


__all__ = ["ComplexWarning", "save", "savez", "load", "frombuffer", "fromstring",
           "fromfile", "fromiter", "array_repr", "array_str"]
