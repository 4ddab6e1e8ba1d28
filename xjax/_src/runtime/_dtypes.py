"""numpy dtypes <-> PJRT element types, and the slow paths of host transfers.

The C extension handles the common case (a native, C-contiguous ndarray of a
supported dtype) by itself; everything else comes here once per call.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from . import _pjrt

_T = _pjrt.BUFFER_TYPES

# PJRT element type name -> numpy dtype (ml_dtypes for the extension types).
_NAMES = {
    "PRED": np.bool_,
    "S8": np.int8,
    "S16": np.int16,
    "S32": np.int32,
    "S64": np.int64,
    "U8": np.uint8,
    "U16": np.uint16,
    "U32": np.uint32,
    "U64": np.uint64,
    "F16": np.float16,
    "F32": np.float32,
    "F64": np.float64,
    "BF16": ml_dtypes.bfloat16,
    "C64": np.complex64,
    "C128": np.complex128,
    "F8E5M2": getattr(ml_dtypes, "float8_e5m2", None),
    "F8E4M3FN": getattr(ml_dtypes, "float8_e4m3fn", None),
    "F8E4M3B11FNUZ": getattr(ml_dtypes, "float8_e4m3b11fnuz", None),
    "F8E5M2FNUZ": getattr(ml_dtypes, "float8_e5m2fnuz", None),
    "F8E4M3FNUZ": getattr(ml_dtypes, "float8_e4m3fnuz", None),
    "F8E4M3": getattr(ml_dtypes, "float8_e4m3", None),
    "F8E3M4": getattr(ml_dtypes, "float8_e3m4", None),
    "F8E8M0FNU": getattr(ml_dtypes, "float8_e8m0fnu", None),
    "S4": getattr(ml_dtypes, "int4", None),
    "U4": getattr(ml_dtypes, "uint4", None),
    "S2": getattr(ml_dtypes, "int2", None),
    "U2": getattr(ml_dtypes, "uint2", None),
    "F4E2M1FN": getattr(ml_dtypes, "float4_e2m1fn", None),
}

# Sub-byte types: one element per byte in numpy (bare codes) and in the host
# buffers the CPU plugin reads and writes; a plugin that returns them packed (two
# or four to a byte, first element in the low bits) is unpacked by `unpack`.
_BITS = {"S4": 4, "U4": 4, "S2": 2, "U2": 2, "F4E2M1FN": 4}

PTYPE_TO_DTYPE: dict[int, np.dtype] = {
    _T[n]: np.dtype(t) for n, t in _NAMES.items() if t is not None and n in _T
}
DTYPE_TO_PTYPE: dict[np.dtype, int] = {d: p for p, d in PTYPE_TO_DTYPE.items()}
_SUBBYTE_BITS: dict[int, int] = {_T[n]: b for n, b in _BITS.items() if _T[n] in PTYPE_TO_DTYPE}

SUPPORTED_DTYPES: tuple[np.dtype, ...] = tuple(PTYPE_TO_DTYPE.values())


def dtype_code(dtype: np.dtype) -> int:
    """PJRT type of a native dtype the C fast path can send as is; -1 otherwise."""
    p = DTYPE_TO_PTYPE.get(dtype)
    if p is None or not dtype.isnative:
        if p is None and dtype.newbyteorder("=") not in DTYPE_TO_PTYPE:
            raise TypeError(f"xjax has no device type for dtype {dtype}")
        return -1
    return p


def normalize(x) -> tuple:
    """Returns (native array, PJRT type) for anything numpy-like."""
    a = np.asarray(x)
    dt = a.dtype
    if not dt.isnative:
        a = a.astype(dt.newbyteorder("="))
        dt = a.dtype
    p = DTYPE_TO_PTYPE.get(dt)
    if p is None:
        raise TypeError(f"xjax has no device type for dtype {dt}")
    return a, p


def unpack(raw: np.ndarray, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Host bytes of a sub-byte-typed buffer (packed or not) -> one element per byte."""
    n = int(np.prod(shape, dtype=np.int64))
    if raw.size == n:
        return raw.view(dtype).reshape(shape)
    bits = _SUBBYTE_BITS[DTYPE_TO_PTYPE[dtype]]
    per = 8 // bits
    mask = np.uint8((1 << bits) - 1)
    codes = np.empty((raw.size, per), np.uint8)
    for j in range(per):
        codes[:, j] = (raw >> np.uint8(j * bits)) & mask
    # ml_dtypes keeps the bare codes (no sign extension) one per byte.
    return codes.reshape(-1)[:n].view(dtype).reshape(shape)


def configure() -> None:
    _pjrt._configure(
        ndarray=np.ndarray,
        dtypes=dict(PTYPE_TO_DTYPE),
        itemsizes={p: d.itemsize for p, d in PTYPE_TO_DTYPE.items()},
        subbyte={p: True for p in _SUBBYTE_BITS},
        dtype_code=dtype_code,
        normalize=normalize,
        contiguous=np.ascontiguousarray,
        empty=np.empty,
        unpack=unpack,
    )
