"""The dtype names of ``xjax.numpy`` (``jnp.float32``, ``jnp.int8``, ``jnp.bfloat16``...).

As in JAX, each is a class that stands for its dtype wherever a dtype is accepted
(``jnp.zeros(3, jnp.float32)``, ``np.dtype(jnp.float32)``, ``x.astype(jnp.int8)``), and that,
when called, builds an xjax Array rather than a NumPy scalar:
``jnp.float32(1)`` is ``Array(1., dtype=float32)``.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from xjax._src.numpy.creation import asarray


class _ScalarMeta(type):
    """Metaclass of the scalar types: equal and hash-equal to the NumPy scalar type, an
    instance check that accepts NumPy scalars of the type, and a call that makes an Array."""

    dtype: np.dtype

    def __hash__(cls) -> int:
        return hash(cls.dtype.type)

    def __eq__(cls, other) -> bool:
        return cls is other or cls.dtype.type == other

    def __ne__(cls, other) -> bool:
        # ``cls.__eq__`` would find ``object.__eq__`` on the class, not this method.
        return not _ScalarMeta.__eq__(cls, other)

    def __call__(cls, x):
        return asarray(x, dtype=cls.dtype)

    def __instancecheck__(cls, instance) -> bool:
        return isinstance(instance, cls.dtype.type)


def _make_scalar_type(scalar_type) -> type:
    dtype = np.dtype(scalar_type)
    name = dtype.name if scalar_type is not np.bool_ else "bool"
    cls = _ScalarMeta(name, (object,), {"dtype": dtype, "__module__": "xjax._src.numpy",
                                        "__doc__": f"The {dtype.name} dtype and scalar "
                                                   "constructor (returns an Array)."})
    return cls


bool_ = _make_scalar_type(np.bool_)
uint8 = _make_scalar_type(np.uint8)
uint16 = _make_scalar_type(np.uint16)
uint32 = _make_scalar_type(np.uint32)
uint64 = _make_scalar_type(np.uint64)
int8 = _make_scalar_type(np.int8)
int16 = _make_scalar_type(np.int16)
int32 = _make_scalar_type(np.int32)
int64 = _make_scalar_type(np.int64)
float16 = _make_scalar_type(np.float16)
float32 = _make_scalar_type(np.float32)
float64 = _make_scalar_type(np.float64)
complex64 = _make_scalar_type(np.complex64)
complex128 = _make_scalar_type(np.complex128)
bfloat16 = _make_scalar_type(ml_dtypes.bfloat16)

bool = bool_  # noqa: A001  (NumPy 2 spells it np.bool)
int_ = int64
uint = uint64
float_ = float64
complex_ = complex128
double = float64
single = float32
csingle = complex64
cdouble = complex128

_ML_NAMES = ("int1", "uint1", "int2", "uint2", "int4", "uint4", "float4_e2m1fn",
             "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz",
             "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
             "float8_e8m0fnu")
ML_SCALAR_TYPES = {name: _make_scalar_type(getattr(ml_dtypes, name))
                   for name in _ML_NAMES if hasattr(ml_dtypes, name)}
globals().update(ML_SCALAR_TYPES)

# The abstract scalar type hierarchy is NumPy's (issubdtype understands it).
generic = np.generic
number = np.number
integer = np.integer
signedinteger = np.signedinteger
unsignedinteger = np.unsignedinteger
inexact = np.inexact
floating = np.floating
complexfloating = np.complexfloating
character = np.character
flexible = np.flexible
object_ = np.object_

__all__ = ["bool_", "bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32",
           "int64", "float16", "float32", "float64", "complex64", "complex128", "bfloat16",
           "int_", "uint", "float_", "complex_", "double", "single", "csingle", "cdouble",
           "generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact",
           "floating", "complexfloating", "character", "flexible", "object_",
           *ML_SCALAR_TYPES]
