"""Reading, writing and printing arrays through NumPy: ``frombuffer``, ``fromstring``,
``save``, ``savez``, ``load``, ``from_dlpack``, ``array_repr``, ``array_str``; ``fromfile``
and ``fromiter`` raise, as in JAX (they may be impure under transformations).
"""

from __future__ import annotations

import numpy as np

import xjax._src.numpy as jnp
from xjax._src.core.array import Array
from xjax._src.core.stubs import not_implemented
from xjax._src.transformations.jit import device_put

ComplexWarning = np.exceptions.ComplexWarning

save = np.save
savez = np.savez


def load(file, *args, **kwargs):
    """``numpy.load``, with arrays returned as xjax arrays (``.npz`` archives stay lazy
    NumPy containers).

    NumPy writes bfloat16 arrays as two-byte void (``|V2``) since it has no name for the
    type; as JAX does, such arrays are read back as bfloat16.
    """
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray):
        if out.dtype == object:
            return out
        if out.dtype == np.dtype("V2"):
            out = out.view(jnp.bfloat16)
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


def from_dlpack(x, /, *, device=None, copy: bool | None = None):
    """An Array from an object exporting DLPack (``__dlpack__`` and ``__dlpack_device__``):
    NumPy arrays, xjax Arrays, and host tensors of other libraries.

    Parameters
    ----------
    x : object
        The exporter. Its dtype is canonicalized as by :func:`asarray` (float64 becomes
        float32 with 64-bit types disabled).
    device : Device, optional
        Where to place the result (default: the default device).
    copy : bool, optional
        Passed to ``numpy.from_dlpack``: True always copies, False never does (raising
        where a copy is needed). Arrays are immutable, so an Array is returned as is.

    Returns
    -------
    Array

    Raises
    ------
    TypeError
        If ``x`` has no ``__dlpack__`` or ``__dlpack_device__`` method.
    BufferError
        If the exporter's memory is not on the host (the importer is NumPy's).

    Examples
    --------
    >>> import numpy as np
    >>> import xjax.numpy as jnp
    >>> jnp.from_dlpack(np.arange(3.0))
    Array([0., 1., 2.], dtype=float32)
    """
    if not (hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__")):
        raise TypeError("The array passed to from_dlpack must have __dlpack__ and "
                        "__dlpack_device__ methods.")
    if isinstance(x, Array):
        out = x
    else:
        kwargs = {} if copy is None else {"copy": copy}
        out = jnp.asarray(np.from_dlpack(x, **kwargs))
    if device is not None:
        out = device_put(out, device)
    return out


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """The repr of an array (``Array([...], dtype=...)`` for xjax arrays)."""
    if isinstance(arr, Array):
        return repr(arr)
    return np.array_repr(np.asarray(arr), max_line_width, precision, suppress_small)


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """The str of an array's values, as NumPy prints them."""
    return np.array_str(np.asarray(a), max_line_width, precision, suppress_small)


__all__ = ["ComplexWarning", "save", "savez", "load", "frombuffer", "fromstring",
           "fromfile", "fromiter", "from_dlpack", "array_repr", "array_str"]
