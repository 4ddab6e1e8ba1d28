"""Operands of lax wrappers: :func:`to_operand` converts what a wrapper receives into what a
primitive accepts. lax never promotes: Python scalars become weakly typed arrays of the
canonical dtype. (The elementwise family's factory is ``naryop``.)
"""

from __future__ import annotations

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.array import Array, frozen_value
from xjax._src.core.avals import ShapedArray, python_scalar_aval
from xjax._src.core.trace import Tracer

_PY_SCALARS = (bool, int, float, complex)


def to_operand(x):
    """An operand a primitive accepts: Arrays and tracers pass through; Python scalars become
    weakly typed arrays; NumPy values and other array-likes become arrays of canonical dtype."""
    t = type(x)
    if t is Array or isinstance(x, Tracer):
        return x
    if t in _PY_SCALARS:
        aval = python_scalar_aval(x)
        return Array._from_numpy(np.asarray(x, aval.dtype), aval)
    if isinstance(x, (list, tuple)):
        raise TypeError(f"lax operations do not accept Python lists or tuples, got {x!r}; "
                        "convert with jnp.asarray first")
    handler = canonicalize_dtype_handlers.get(t)
    npy = np.asarray(x) if handler is None else handler(x)
    if npy.dtype == object:
        raise TypeError(f"Value {x!r} of type {type(x)} is not a valid JAX array type")
    dtype = dtypes.canonicalize_dtype(npy.dtype)
    if npy.dtype != dtype:
        npy = npy.astype(dtype)
    return Array._from_numpy(frozen_value(npy, x), ShapedArray(npy.shape, dtype, False))


def _canonical_numpy(x) -> np.ndarray:
    """``x`` as a NumPy array of the canonical dtype (64-bit types narrowed unless x64)."""
    npy = np.asarray(x)
    dtype = dtypes.canonicalize_dtype(npy.dtype) if npy.dtype != object else npy.dtype
    return npy if npy.dtype == dtype else npy.astype(dtype)


# Array-like types -> the function making a NumPy array of them (JAX's
# ``xla.canonicalize_dtype_handlers``): libraries register their array-like types, usually with
# the entry of ``np.ndarray``.
canonicalize_dtype_handlers: dict = {np.ndarray: _canonical_numpy}
