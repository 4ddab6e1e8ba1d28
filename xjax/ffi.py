"""Calling foreign (C/C++) functions from xjax code through XLA's FFI (``jax.ffi``).

A handler compiled against XLA's FFI headers (``include_dir()``) is registered with
``register_ffi_target(name, pycapsule(lib.Handler))`` and called with
``ffi_call(name, result_shape_dtypes)(*args, **attributes)``: eagerly, under ``jit`` (one
``stablehlo.custom_call`` with ``api_version = 4``; keyword arguments become the call's FFI
attributes) and under ``vmap`` as ``vmap_method`` says. Not differentiable (as in JAX: wrap it
in ``custom_jvp``/``custom_vjp``).

Supported here: the CPU platform, typed FFI handlers (``api_version=1``) registered as one
execute-stage handler, ``custom_call_api_version=4``. Legacy custom calls (``api_version=0``,
``custom_call_api_version < 4``), handler bundles with other stages, custom FFI types
(``register_ffi_type``) and other platforms raise NotImplementedError.

Attributes: Python ``bool``/``int``/``float``/``str`` become ``i1``/``i64``/``f64``/string
attributes (JAX's mapping), NumPy scalars keep their dtype, 1-D NumPy arrays become dense
arrays (``Span`` attributes), dicts become dictionaries.
"""

from xjax._src.api.ffi import (  # noqa: F401
    build_ffi_lowering_function as build_ffi_lowering_function, ffi_call as ffi_call,
    ffi_lowering as ffi_lowering, include_dir as include_dir, pycapsule as pycapsule,
    register_ffi_target as register_ffi_target,
    register_ffi_target_as_batch_partitionable as register_ffi_target_as_batch_partitionable,
    register_ffi_type as register_ffi_type, register_ffi_type_id as register_ffi_type_id,
)
from xjax._src.api.ffi import __all__ as __all__  # noqa: F401
