"""Host callbacks and LAPACK kernels inside compiled code, as XLA FFI custom calls.

The C handlers live in ``_pjrt_ffi.c`` and are registered with the plugin's PJRT FFI
extension on first use. This module knows nothing of jaxprs: it maps integer ids to Python
functions and says which custom-call targets a platform has.

- ``HOST_CALLBACK_TARGET``: a custom call ``@xjax_host_callback`` with ``api_version = 4``
  and the attribute ``mhlo.backend_config = {callback_id = <id> : i64}`` calls the function
  registered under ``id`` with the operands as read-only NumPy arrays (copies: the call may
  keep them) and must return one array per result. Token operands and results are skipped.
- ``LU_TARGET``: LAPACK ``?getrf`` on column-major matrices, from the OpenBLAS that NumPy
  bundles (found by ``_find_numpy_lapack``); absent when that library is not found.
- ``TRSM_TARGET``: BLAS ``?trsm`` (triangular solve) from the same library, column-major;
  integer attributes ``left``, ``lower``, ``trans`` (0 none, 1 transpose, 2 adjoint), ``unit``.
- ``GEEV_TARGET``: LAPACK ``?geev`` (eigendecomposition of a general matrix) from the same
  library: integer attributes ``left`` and ``right`` (which eigenvectors); results ``w``, then
  ``vl`` and/or ``vr``, complex, matrices column-major; NaN where the input is not finite or
  geev fails.
- ``GEES_TARGET``: LAPACK ``?gees`` (Schur decomposition, unordered) from the same library:
  integer attribute ``vectors``; results ``T``, then ``Z`` if asked, column-major; NaN where
  the input is not finite or gees fails.

- ``SORT_TARGET``: a stable sort by the first operand along the i64 attribute ``dimension``
  (which the caller makes minor in memory through the operand and result layouts), as JAX's
  comparator orders keys (-0.0 equal to 0.0, NaNs equal and last); the other operands are
  permuted alike. Keys: bool, integers up to 64 bits, float16, bfloat16, float32, float64.

Registered functions live as long as the process (executables refer to them by id; the
cache of compiled programs would otherwise have to track them). ``register_host_callback``
reuses the id of an equal function, so re-tracing the same callback does not grow the table.
"""

from __future__ import annotations

import ctypes
import glob
import os
import threading

import ml_dtypes
import numpy as np

from . import _pjrt
from .client import _find_plugin, get_client

__all__ = ["GEES_TARGET", "GEEV_TARGET", "HOST_CALLBACK_TARGET", "LU_TARGET", "SORT_TARGET",
           "TRSM_TARGET",
           "ffi_targets", "register_host_callback"]

HOST_CALLBACK_TARGET = "xjax_host_callback"
LU_TARGET = "xjax_lapack_getrf"
TRSM_TARGET = "xjax_blas_trsm"
GEEV_TARGET = "xjax_lapack_geev"
GEES_TARGET = "xjax_lapack_gees"
SORT_TARGET = "xjax_sort"
# the optional routines ffi_load_lapack may find -> the targets they serve
_OPTIONAL_TARGETS = {"trsm": TRSM_TARGET, "geev": GEEV_TARGET, "gees": GEES_TARGET}

# XLA_FFI_DataType (xla_data.proto's PrimitiveType numbers) -> numpy dtype.
_FFI_DTYPES = {
    1: np.bool_, 2: np.int8, 3: np.int16, 4: np.int32, 5: np.int64, 6: np.uint8,
    7: np.uint16, 8: np.uint32, 9: np.uint64, 10: np.float16, 11: np.float32,
    12: np.float64, 15: np.complex64, 16: ml_dtypes.bfloat16, 18: np.complex128,
    19: ml_dtypes.float8_e5m2, 20: ml_dtypes.float8_e4m3fn,
    23: ml_dtypes.float8_e4m3b11fnuz, 24: ml_dtypes.float8_e5m2fnuz,
    25: ml_dtypes.float8_e4m3fnuz,
}
_FFI_DTYPES = {k: np.dtype(v) for k, v in _FFI_DTYPES.items()}

_lock = threading.Lock()
_callbacks: list = []
_ids: dict = {}
_registered: dict[str, frozenset] = {}


def register_host_callback(fn) -> int:
    """Register ``fn(*arrays) -> sequence of arrays`` for ``xjax_host_callback``; return its id.

    ``fn`` receives the custom call's (non-token) operands as NumPy arrays and returns one
    array-like per (non-token) result, of the result's shape; it is cast to the result's
    dtype. Equal functions (by ``==``/hash) share an id. The function is kept alive for the
    life of the process.
    """
    with _lock:
        try:
            known = _ids.get(fn)
        except TypeError:  # unhashable: never shared
            known = None
        if known is not None:
            return known
        _callbacks.append(fn)
        index = len(_callbacks) - 1
        try:
            _ids[fn] = index
        except TypeError:
            pass
        return index


def _array_at(dtype_code, address, dims, copy):
    dtype = _FFI_DTYPES.get(dtype_code)
    if dtype is None:
        raise NotImplementedError(f"host callbacks do not support XLA element type {dtype_code}")
    if address is None:
        return np.zeros(dims, dtype)
    count = int(np.prod(dims, dtype=np.int64))
    raw = (ctypes.c_char * (count * dtype.itemsize)).from_address(address)
    view = np.frombuffer(raw, dtype=dtype).reshape(dims)
    return view.copy() if copy else view


def _dispatch(callback_id, args, rets):
    """Called by the C handler (GIL held) with (dtype, address, dims) triples."""
    fn = _callbacks[callback_id]
    arrays = [_array_at(*a, copy=True) for a in args if a is not None]
    outs = fn(*arrays)
    targets = [r for r in rets if r is not None]
    outs = [] if outs is None else list(outs)
    if len(outs) != len(targets):
        raise RuntimeError(f"Mismatched number of outputs from callback. Expected: "
                           f"{len(targets)}, Actual: {len(outs)}")
    for i, (out, (code, address, dims)) in enumerate(zip(outs, targets, strict=True)):
        dest = _array_at(code, address, dims, copy=False)
        out = np.asarray(out)
        if out.shape != dest.shape:
            raise RuntimeError(f"Incorrect output shape for return value #{i}: Expected: "
                               f"{dest.shape}, Actual: {out.shape}")
        if dest.size:
            np.copyto(dest, out, casting="unsafe")


def _find_numpy_lapack():
    """(path, symbol prefix, symbol suffix) of the ILP64 OpenBLAS bundled with NumPy's
    wheels (``numpy.libs/libscipy_openblas64_*.so``, symbols ``scipy_sgetrf_64_``), or None."""
    root = os.path.dirname(os.path.dirname(np.__file__))
    for path in sorted(glob.glob(os.path.join(root, "numpy.libs", "libscipy_openblas64_*.so"))):
        return path, "scipy_", "_64_"
    return None


def ffi_targets(platform: str = "cpu") -> frozenset:
    """The xjax FFI custom-call targets registered for ``platform`` (registering them on
    first call). Empty where the plugin has no FFI extension (e.g. not the CPU)."""
    known = _registered.get(platform)
    if known is not None:
        return known
    with _lock:
        if platform in _registered:
            return _registered[platform]
        names = set()
        if platform == "cpu":
            try:
                get_client(platform)  # the client sets XLA's flags before the plugin loads
                plugin = _pjrt.load_plugin(_find_plugin(platform)[0])
                _pjrt.ffi_set_dispatcher(_dispatch)
                _pjrt.ffi_register_target(plugin, HOST_CALLBACK_TARGET)
                names.add(HOST_CALLBACK_TARGET)
                _pjrt.ffi_register_target(plugin, SORT_TARGET)
                names.add(SORT_TARGET)
                lapack = _find_numpy_lapack()
                if lapack is not None:
                    found = _pjrt.ffi_load_lapack(*lapack)
                    _pjrt.ffi_register_target(plugin, LU_TARGET)
                    names.add(LU_TARGET)
                    for routine in found:
                        _pjrt.ffi_register_target(plugin, _OPTIONAL_TARGETS[routine])
                        names.add(_OPTIONAL_TARGETS[routine])
            except (NotImplementedError, OSError, RuntimeError):
                pass
        _registered[platform] = frozenset(names)
        return _registered[platform]


# -- user handlers (xjax.ffi.register_ffi_target) --

_PJRT_EXTENSION_TYPE_FFI = 5  # pjrt_c_api.h: PJRT_Extension_Type_FFI
_PLATFORM_NAMES = {"cpu": b"Host"}


class _ExtensionBase(ctypes.Structure):
    pass


_ExtensionBase._fields_ = [("struct_size", ctypes.c_size_t), ("type", ctypes.c_int),
                           ("next", ctypes.POINTER(_ExtensionBase))]


class _RegisterHandlerArgs(ctypes.Structure):  # mirrors RegisterHandlerArgs of _pjrt_ffi.c
    _fields_ = [("struct_size", ctypes.c_size_t), ("target_name", ctypes.c_char_p),
                ("target_name_size", ctypes.c_size_t), ("handler", ctypes.c_void_p),
                ("platform_name", ctypes.c_char_p), ("platform_name_size", ctypes.c_size_t),
                ("traits", ctypes.c_int)]


_REGISTER = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(_RegisterHandlerArgs))


def register_handler_address(name: str, address: int, platform: str = "cpu") -> None:
    """Register the XLA FFI handler at ``address`` (an ``XLA_FFI_Handler*``) as custom-call
    target ``name`` through the plugin's PJRT FFI extension (the one xjax's own handlers
    use). XLA's registry is process-global; the handler must outlive the process's
    executables."""
    if platform not in _PLATFORM_NAMES:
        raise NotImplementedError(f"registering FFI targets for platform {platform!r}: xjax "
                                  "supports 'cpu' only")
    get_client(platform)  # loads the plugin with xjax's flags first
    lib = ctypes.CDLL(_find_plugin(platform)[0])  # the same (already loaded) library
    lib.GetPjrtApi.restype = ctypes.c_void_p
    api = lib.GetPjrtApi()
    # PJRT_Api: size_t struct_size; PJRT_Extension_Base* extension_start; ...
    ext = ctypes.cast(ctypes.c_void_p.from_address(api + 8).value,
                      ctypes.POINTER(_ExtensionBase))
    while ext:
        if ext.contents.type == _PJRT_EXTENSION_TYPE_FFI:
            break
        ext = ext.contents.next
    else:
        raise NotImplementedError("this PJRT plugin has no FFI extension: custom FFI targets "
                                  "are unavailable")
    base = ctypes.addressof(ext.contents)
    # FfiExtension: base, type_register, user_data_add, register_handler
    register = ctypes.c_void_p.from_address(base + ctypes.sizeof(_ExtensionBase) + 16).value
    if not register:
        raise NotImplementedError("this PJRT plugin's FFI extension cannot register handlers")
    encoded, platform_name = name.encode(), _PLATFORM_NAMES[platform]
    args = _RegisterHandlerArgs(
        struct_size=_RegisterHandlerArgs.traits.offset + ctypes.sizeof(ctypes.c_int),
        target_name=encoded, target_name_size=len(encoded), handler=address,
        platform_name=platform_name, platform_name_size=len(platform_name), traits=0)
    with _lock:
        err = _REGISTER(register)(ctypes.byref(args))
    if err:
        raise RuntimeError(f"XLA rejected the FFI handler for target {name!r}")
