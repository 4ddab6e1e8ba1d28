"""``xjax.dlpack``: exchanging arrays through DLPack (JAX's ``jax.dlpack``)."""

from __future__ import annotations

import numpy as np

from xjax._src.core import dtypes
from xjax._src.numpy import from_dlpack as jnp_from_dlpack


def from_dlpack(external_array, device=None, copy=None):
    """An Array from any object with ``__dlpack__`` and ``__dlpack_device__``.

    Examples
    --------
    >>> import numpy as np, xjax
    >>> xjax.dlpack.from_dlpack(np.arange(3.0))
    Array([0., 1., 2.], dtype=float32)
    """
    return jnp_from_dlpack(external_array, device=device, copy=copy)


_SUPPORTED = frozenset(np.dtype(t) for t in (
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, np.float32, np.float64, np.complex64, np.complex128, np.bool_,
    dtypes.bfloat16))


def is_supported_dtype(dtype) -> bool:
    """Whether arrays of ``dtype`` can be exchanged through DLPack."""
    return np.dtype(dtype) in _SUPPORTED


__all__ = ["from_dlpack", "is_supported_dtype"]
