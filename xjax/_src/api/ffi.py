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

from __future__ import annotations

import ctypes
import os

import numpy as np

from xjax._src.core.avals import ShapedArray
from xjax._src.runtime.live_executables import BoundedCache
from xjax._src.core.primitive import Absent, Primitive
from xjax._src.lax.operands import to_operand
from xjax._src import lax
from xjax._src.higher_order.callbacks import (_axis_size, _batch_sequential, _batched_avals,
                                              _move_to_front)
from xjax._src.core import dtypes
from xjax._src.core.ad_util import get_aval
from xjax._src.higher_order.jit_call import compile_closed_jaxpr
from xjax._src.interpreters.staging import trace_to_jaxpr
from xjax._src.lowering.stablehlo import aval_type, dense_layout, element_type
from xjax._src.runtime import ffi as runtime_ffi

__all__ = ["ffi_call", "ffi_lowering", "include_dir", "pycapsule", "register_ffi_target",
           "register_ffi_target_as_batch_partitionable", "register_ffi_type",
           "register_ffi_type_id", "build_ffi_lowering_function"]

_VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                 "legacy_vectorized")


# -- registration --

_registered: set = set()


def pycapsule(funcptr):
    """Wrap a ctypes function pointer (``ctypes.CDLL(path).Handler``) in a PyCapsule."""
    address = ctypes.cast(funcptr, ctypes.c_void_p).value
    if not address:
        raise ValueError("pycapsule: null function pointer")
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return new(address, None, None)


def _capsule_address(capsule) -> int:
    if isinstance(capsule, int):
        return capsule
    is_capsule = ctypes.pythonapi.PyCapsule_IsValid
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_void_p, [ctypes.py_object]
    name = get_name(capsule) if type(capsule).__name__ == "PyCapsule" else None
    is_capsule.restype, is_capsule.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_void_p]
    if type(capsule).__name__ != "PyCapsule" or not is_capsule(capsule, name):
        raise TypeError(f"expected a PyCapsule holding an XLA FFI handler (see "
                        f"xjax.ffi.pycapsule), got {type(capsule).__name__}")
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_void_p]
    return get(capsule, name)


def register_ffi_target(name: str, fn, platform: str = "cpu", api_version: int = 1,
                        **kwargs) -> None:
    """Register an XLA FFI handler as the custom-call target ``name``.

    Parameters
    ----------
    name : str
        The target name ``ffi_call`` refers to.
    fn : PyCapsule or dict
        The handler (``pycapsule(lib.Handler)`` of a symbol made by
        ``XLA_FFI_DEFINE_HANDLER_SYMBOL``), or ``{"execute": capsule}``.
    platform : str
        ``"cpu"`` (the only platform xjax registers handlers for).
    api_version : int
        1, the typed FFI (0, the legacy custom-call API, is not supported).
    """
    if api_version != 1:
        raise NotImplementedError("register_ffi_target: only api_version=1 (XLA's typed FFI) "
                                  "is supported by xjax; legacy custom calls (0) are not")
    if kwargs:
        raise NotImplementedError(f"register_ffi_target: unsupported options {sorted(kwargs)}")
    platform = platform.lower()
    if platform == "host":
        platform = "cpu"
    if isinstance(fn, dict):
        if set(fn) != {"execute"}:
            raise NotImplementedError("register_ffi_target: xjax registers the 'execute' stage "
                                      f"only; got stages {sorted(fn)}")
        fn = fn["execute"]
    runtime_ffi.register_handler_address(name, _capsule_address(fn), platform)
    _registered.add((platform, name))


def register_ffi_type_id(name: str, obj, platform: str = "cpu") -> None:
    """Not supported after jaxlib 0.8 (raises ValueError, as JAX 0.10 does)."""
    raise ValueError("register_ffi_type_id is not supported after jaxlib version 381.")


def register_ffi_type(name: str, type_registration, platform: str = "cpu") -> None:
    """Custom FFI types (user data): not supported by xjax."""
    raise NotImplementedError("register_ffi_type: custom FFI types are not supported by xjax")


def register_ffi_target_as_batch_partitionable(name: str) -> None:
    """Batch partitioning (SPMD) of FFI calls: not supported by xjax."""
    raise NotImplementedError("register_ffi_target_as_batch_partitionable: xjax does not "
                              "partition FFI calls")


# The newest FFI API version the xla-cpu-pjrt plugin accepts: it silently drops handlers
# that declare a newer one (registration succeeds; the call then finds no handler).
_PLUGIN_FFI_API_MINOR = 2
_HEADERS = ("c_api.h", "api.h", "ffi.h")


def include_dir() -> str:
    """A folder to compile FFI handlers against (``#include "xla/ffi/api/ffi.h"``).

    XLA's FFI headers come with jaxlib (``pip install jaxlib``; xla-cpu-pjrt ships none).
    jaxlib 0.10.2's declare FFI API 0.3, which the CPU plugin xjax runs on ignores, so this
    folder (generated once, in xjax's cache) holds one-line headers that include jaxlib's
    and declare the plugin's version 0.2 instead. Handlers built against it register.
    """
    source = _jaxlib_ffi_headers()
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    root = os.path.join(cache, "xjax", "ffi_include", f"api0.{_PLUGIN_FFI_API_MINOR}")
    target = os.path.join(root, "xla", "ffi", "api")
    os.makedirs(target, exist_ok=True)
    for name in _HEADERS:
        text = _shim_text(name, os.path.join(source, name))
        path = os.path.join(target, name)
        if not os.path.exists(path) or open(path).read() != text:
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w") as f:
                f.write(text)
            os.replace(tmp, path)
    return root


def _jaxlib_ffi_headers() -> str:
    import importlib.util
    spec = importlib.util.find_spec("jaxlib")  # found without importing it
    if spec is not None and spec.submodule_search_locations:
        folder = os.path.join(list(spec.submodule_search_locations)[0], "include", "xla",
                              "ffi", "api")
        if all(os.path.exists(os.path.join(folder, name)) for name in _HEADERS):
            return folder
    raise FileNotFoundError("XLA's FFI headers (xla/ffi/api/ffi.h) come with jaxlib, which is "
                            "not installed: `pip install jaxlib` to compile FFI handlers")


def _shim_text(name: str, original: str) -> str:
    """A header including ``original``; c_api.h's then redeclares the API version (jaxlib's
    api.h and ffi.h include c_api.h next to them, which its include guard then skips)."""
    lines = ["// Generated by xjax.ffi.include_dir(): jaxlib's XLA FFI header, declaring the",
             "// FFI API version the xla-cpu-pjrt plugin accepts.",
             f'#include "{original}"']
    if name == "c_api.h":
        lines += ["#undef XLA_FFI_API_MINOR", f"#define XLA_FFI_API_MINOR {_PLUGIN_FFI_API_MINOR}"]
    return "\n".join(lines) + "\n"


def ffi_lowering(*args, **kwargs):
    """JAX's MLIR lowering-rule builder: xjax has no MLIR Python objects (use ffi_call)."""
    raise NotImplementedError("ffi_lowering builds MLIR lowering rules for JAX primitives; "
                              "xjax has no MLIR Python objects. Use xjax.ffi.ffi_call.")


build_ffi_lowering_function = ffi_lowering


# -- attributes and the lowering --

def _hashable(value):
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            raise TypeError("ffi_call: array attributes must be one-dimensional, got shape "
                            f"{value.shape}")
        return ("__array__", value.dtype.str, tuple(value.tolist()))
    if isinstance(value, dict):
        return ("__dict__", tuple(sorted((k, _hashable(v)) for k, v in value.items())))
    try:
        hash(value)
    except TypeError as e:
        raise TypeError(f"ffi_call: attribute value {value!r} is not hashable") from e
    return value


def _scalar_attr(value: np.ndarray) -> str:
    ty = element_type(value.dtype)
    if value.dtype == np.bool_:
        return "true" if bool(value) else "false"
    if value.dtype.kind == "f":
        return f"{float(value)!r} : {ty}".replace("inf", "0x7FF0000000000000")
    if value.dtype.kind in "iu":
        return f"{int(value)} : {ty}"
    raise NotImplementedError(f"ffi_call: attributes of dtype {value.dtype} are not supported")


def _attr_text(value) -> str:
    if isinstance(value, tuple) and value and value[0] == "__array__":
        dtype = np.dtype(value[1])
        ty = element_type(dtype)
        if dtype.kind == "f":
            items = ", ".join(repr(float(v)) for v in value[2])
        else:
            items = ", ".join(str(int(v)) for v in value[2])
        return f"array<{ty}: {items}>" if items else f"array<{ty}>"
    if isinstance(value, tuple) and value and value[0] == "__dict__":
        return "{" + ", ".join(f"{k} = {_attr_text(v)}" for k, v in value[1]) + "}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value} : i64"
    if isinstance(value, float):
        return _scalar_attr(np.asarray(value, np.float64))
    if isinstance(value, (str, bytes)):
        text = value.decode() if isinstance(value, bytes) else value
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, np.generic):
        return _scalar_attr(np.asarray(value))
    raise NotImplementedError(f"ffi_call: attribute value {value!r} of type "
                              f"{type(value).__name__} is not supported")


def _layout_text(layout, ndim) -> str:
    if layout is None:
        minor_to_major = list(range(ndim - 1, -1, -1))
    else:
        minor_to_major = list(reversed(layout))
    return dense_layout(minor_to_major)


def _ffi_call_lower(ctx, *operands, result_avals, target_name, has_side_effect, vmap_method,
                    input_layouts, output_layouts, input_output_aliases, attributes):
    config = ", ".join(f"{k} = {_attr_text(v)}" for k, v in attributes)
    attrs = {"call_target_name": f'"{target_name}"', "api_version": "4 : i32",
             "has_side_effect": "true" if has_side_effect else "false",
             "backend_config": "{" + config + "}"}
    if any(layout is not None for layout in input_layouts + output_layouts):
        attrs["operand_layouts"] = "[" + ", ".join(
            _layout_text(lay, len(a.shape))
            for lay, a in zip(input_layouts, ctx.avals_in, strict=True)) + "]"
        attrs["result_layouts"] = "[" + ", ".join(
            _layout_text(lay, len(a.shape))
            for lay, a in zip(output_layouts, result_avals, strict=True)) + "]"
    if input_output_aliases:
        tuple_index = "[{o}]" if len(result_avals) > 1 else "[]"
        attrs["output_operand_aliases"] = "[" + ", ".join(
            "#stablehlo.output_operand_alias<output_tuple_indices = "
            f"{tuple_index.format(o=o)}, operand_index = {i}, operand_tuple_indices = []>"
            for i, o in input_output_aliases) + "]"
    result_types = [aval_type(a) for a in result_avals]
    return ctx.builder.op("stablehlo.custom_call", list(operands), result_types, attrs)


# -- the primitive --

def _ffi_call_abstract_eval(*avals, result_avals, **_):
    return list(result_avals)


_impl_cache = BoundedCache(128)


def _ffi_call_impl(*values, **params):
    """Eagerly: compile the call alone with XLA (cached by params and operand avals)."""
    in_avals = tuple(get_aval(to_operand(v)) for v in values)
    key = (tuple(sorted(params.items())), in_avals)
    compiled = _impl_cache.get(key)
    if compiled is None:
        closed = trace_to_jaxpr(lambda *xs: ffi_call_p.bind(*xs, **params), list(in_avals))
        compiled = _impl_cache[key] = compile_closed_jaxpr(closed, params["target_name"])
    return [b.to_numpy() for b in compiled.execute_flat(values)]


def _ffi_call_batch(args, dims, *, result_avals, vmap_method, input_layouts, output_layouts,
                    **params):
    size = _axis_size(args, dims)
    params = dict(params, result_avals=result_avals, vmap_method=vmap_method,
                  input_layouts=input_layouts, output_layouts=output_layouts)
    if vmap_method in ("sequential", "sequential_unrolled"):
        unroll = size if vmap_method == "sequential_unrolled" else 1
        return _batch_sequential(ffi_call_p, args, dims, params, max(unroll, 1))
    if vmap_method not in ("expand_dims", "broadcast_all", "legacy_vectorized"):
        raise NotImplementedError(
            "vmap is only supported for the ffi_call primitive when vmap_method is one of "
            "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            f"'legacy_vectorized'. Got vmap_method={vmap_method!r}.")
    moved = _move_to_front(args, dims)
    if vmap_method != "legacy_vectorized":
        width = size if vmap_method == "broadcast_all" else 1
        moved = [lax.broadcast(x, (width,)) if d is None else x
                 for x, d in zip(moved, dims, strict=True)]

    def shift(layout):  # the new leading axis is the slowest
        return None if layout is None else (0, *[n + 1 for n in layout])

    batched = [vmap_method != "legacy_vectorized" or d is not None for d in dims]
    params["input_layouts"] = tuple(shift(lay) if b else lay
                                    for lay, b in zip(input_layouts, batched, strict=True))
    params["output_layouts"] = tuple(shift(lay) for lay in output_layouts)
    params["result_avals"] = _batched_avals(size, result_avals)
    outs = ffi_call_p.bind(*moved, **params)
    return outs, [0] * len(outs)


def _ffi_call_jvp(primals, tangents, **params):
    raise NotImplementedError(
        "Differentiation rule for 'ffi_call' not implemented: wrap the call in "
        "jax.custom_jvp or jax.custom_vjp to differentiate it.")


ffi_call_p = Primitive(
    "ffi_call", abstract_eval=_ffi_call_abstract_eval, impl=_ffi_call_impl,
    lower=_ffi_call_lower, jvp=_ffi_call_jvp,
    transpose=Absent("a foreign function: use jax.custom_vjp to differentiate through it"),
    batch=_ffi_call_batch, multiple_results=True)


# -- the public call --

def _result_aval(x) -> ShapedArray:
    if not (hasattr(x, "shape") and hasattr(x, "dtype")):
        raise TypeError(f"ffi_call: result_shape_dtypes entries need shape and dtype, got "
                        f"{x!r}")
    dtype = np.dtype(x.dtype)
    if dtypes.canonicalize_dtype(dtype) != dtype:
        raise ValueError("result_shape_dtypes cannot specify 64-bit types when "
                         "`jax_enable_x64` is disabled")
    return ShapedArray(tuple(x.shape), dtype)


def _layouts(layouts, avals, what):
    if layouts is None:
        return (None,) * len(avals)
    if len(layouts) != len(avals):
        raise ValueError(f"The number of {what} ({len(avals)}) must equal the number of "
                         f"{what[:-1] if what.endswith('s') else what} layouts "
                         f"({len(layouts)}).")
    out = []
    for layout, aval in zip(layouts, avals, strict=True):
        if layout is None:
            out.append(None)
            continue
        layout = tuple(int(d) for d in layout)
        if sorted(layout) != list(range(len(aval.shape))):
            raise ValueError(f"Invalid layout {layout} for an array of shape {aval.shape}")
        out.append(layout)
    return tuple(out)


def ffi_call(target_name: str, result_shape_dtypes, *, has_side_effect: bool = False,
             vmap_method: str | None = None, input_layouts=None, output_layouts=None,
             input_output_aliases=None, custom_call_api_version: int = 4,
             legacy_backend_config: str | None = None):
    """A function that calls the registered FFI target ``target_name``.

    Parameters
    ----------
    target_name : str
        A target registered with :func:`register_ffi_target`.
    result_shape_dtypes : object with ``shape`` and ``dtype``, or a sequence of them
        The results' shapes and dtypes (``xjax.ShapeDtypeStruct``).
    has_side_effect : bool
        Keep the call even when its results are unused.
    vmap_method : str, optional
        How ``vmap`` batches the call: ``"sequential"`` (a loop of calls),
        ``"sequential_unrolled"``, ``"expand_dims"`` (unbatched operands get a leading
        axis of size 1, the target sees the batch axis first), ``"broadcast_all"`` (every
        operand broadcast to the batch), ``"legacy_vectorized"``. None: vmap raises.
    input_layouts, output_layouts : sequences of None or major-to-minor axis orders
    input_output_aliases : dict mapping input index to output index, optional
    custom_call_api_version : int
        4 (typed FFI); other versions raise NotImplementedError.
    legacy_backend_config : str, optional
        Only for ``custom_call_api_version < 4`` (not supported).

    Returns
    -------
    callable
        ``call(*args, **attributes)`` returning one array, or a list (a tuple when
        ``result_shape_dtypes`` is a tuple) of arrays.
    """
    if custom_call_api_version != 4:
        raise NotImplementedError("ffi_call: only custom_call_api_version=4 (the typed FFI) is "
                                  "supported by xjax")
    if legacy_backend_config is not None:
        raise ValueError("The use of the legacy_backend_config parameter requires "
                         f"custom_call_api_version < 4; got {custom_call_api_version}.")
    if vmap_method is not None and vmap_method not in _VMAP_METHODS:
        raise ValueError(f"vmap_method must be one of the allowed methods {_VMAP_METHODS}, "
                         f"but got: {vmap_method}")
    multiple = isinstance(result_shape_dtypes, (list, tuple))
    leaves = list(result_shape_dtypes) if multiple else [result_shape_dtypes]
    result_avals = tuple(_result_aval(x) for x in leaves)
    if output_layouts is not None and not multiple and (
            not output_layouts or not isinstance(output_layouts[0], (list, tuple))
            and output_layouts[0] is not None):
        output_layouts = [output_layouts]
    static_output_layouts = _layouts(output_layouts, result_avals, "outputs")

    def call(*args, **kwargs):
        operands = [to_operand(a) for a in args]
        in_avals = [get_aval(o) for o in operands]
        static_input_layouts = _layouts(input_layouts, in_avals, "input arguments")
        aliases = []
        for i, o in sorted((input_output_aliases or {}).items()):
            i, o = int(i), int(o)
            if not 0 <= i < len(args):
                raise ValueError(f"input_output_aliases contains the mapping '{i}:{o}' with "
                                 f"input index {i} outside the range [0, {len(args)}).")
            if not 0 <= o < len(result_avals):
                raise ValueError(f"input_output_aliases contains the mapping '{i}:{o}' with "
                                 f"output index {o} outside the range [0, "
                                 f"{len(result_avals)}).")
            a, r = in_avals[i], result_avals[o]
            if a.shape != r.shape or a.dtype != r.dtype:
                raise ValueError(f"input_output_aliases contains the mapping '{i}:{o}' "
                                 f"referring to an input with abstract value {a} and an "
                                 f"output with a different abstract value {r}.")
            aliases.append((i, o))
        attributes = tuple((k, _hashable(v)) for k, v in sorted(kwargs.items()))
        for _, v in attributes:
            _attr_text(v)  # unsupported attribute values fail here, not in XLA
        outs = ffi_call_p.bind(
            *operands, result_avals=result_avals, target_name=target_name,
            has_side_effect=bool(has_side_effect), vmap_method=vmap_method,
            input_layouts=static_input_layouts, output_layouts=static_output_layouts,
            input_output_aliases=tuple(aliases), attributes=attributes)
        if multiple:
            return tuple(outs) if isinstance(result_shape_dtypes, tuple) else list(outs)
        return outs[0]

    return call

