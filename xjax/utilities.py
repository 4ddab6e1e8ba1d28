"""Top-level conveniences of ``jax``: configuration context managers, host transfers,
process information and shape evaluation."""

from __future__ import annotations

import contextlib
import functools


import numpy as np

from xjax.core.config import config
from xjax.core.stubs import not_implemented
from xjax.core.pytree import tree_map


def eval_shape(fun, *args, **kwargs):
    """The shapes and dtypes ``fun`` would return for these arguments, without computing.

    Arguments may be arrays or anything with ``shape`` and ``dtype`` (``ShapeDtypeStruct``).

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.eval_shape(lambda x: jnp.dot(x, x.T), xjax.ShapeDtypeStruct((3, 4), jnp.float32))
    ShapeDtypeStruct(shape=(3, 3), dtype=float32)
    """
    from xjax.api import make_jaxpr
    _, shapes = make_jaxpr(lambda *a: fun(*a, **kwargs), return_shape=True)(*args)
    return shapes


def device_get(x):
    """Copy the arrays of the pytree ``x`` to the host as NumPy arrays."""
    return tree_map(lambda leaf: np.asarray(leaf) if hasattr(leaf, "__array__") else leaf, x)


@contextlib.contextmanager
def disable_jit(disable: bool = True):
    """Run ``jit``-decorated functions as plain Python inside the block (for debugging)."""
    with config.override(jax_disable_jit=disable):
        yield


def enable_x64(new_val: bool = True):
    """Context manager turning 64-bit types on (or off) inside the block."""
    return config.override(jax_enable_x64=new_val)


def threefry_partitionable(new_val: bool = True):
    """Context manager choosing the Threefry layout inside the block."""
    return config.override(jax_threefry_partitionable=new_val)


def numpy_rank_promotion(new_val: str):
    """Context manager for ``jax_numpy_rank_promotion`` ("allow", "warn", "raise")."""
    return config.override(jax_numpy_rank_promotion=new_val)


def debug_nans(new_val: bool = True):
    return config.override(jax_debug_nans=new_val)


def default_matmul_precision(new_val):
    return config.override(jax_default_matmul_precision=new_val)


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Evaluate operations on concrete values eagerly inside the block, even while tracing."""
    from xjax.core.trace import _Context, set_current_trace
    with set_current_trace(_Context.trace):
        yield


def named_call(fun, *, name=None):
    """``fun`` itself (xjax does not record call names in jaxprs)."""
    return fun


@contextlib.contextmanager
def named_scope(name: str):
    """A no-op context (xjax does not annotate compiled programs with scope names)."""
    yield


def clear_caches():
    """Forget every compiled executable and traced jaxpr."""
    from xjax import api
    from xjax.interpreters import eval as eval_interpreter, jit_call
    api._caches.clear()
    api._strong_caches.clear()
    jit_call._impl_cache.clear()
    jit_call._derived_cache.clear()
    eval_interpreter._xla_primitive_cache.clear()


def typeof(x):
    """The abstract value (``ShapedArray``) of ``x``."""
    from xjax.core.ad_util import get_aval
    return get_aval(x)


def effects_barrier():
    """Wait for every dispatched computation (results are awaited when read)."""


def process_count() -> int:
    return 1


def process_index() -> int:
    return 0


def process_indices():
    return [0]


host_count = process_count
host_id = process_index
host_ids = process_indices


def default_device():
    from xjax.runtime import devices
    return devices()[0]


def print_environment_info(return_string: bool = False):
    import platform
    import sys

    import xjax
    from xjax.runtime import plugin_version
    text = (f"xjax:    {xjax.__version__}\nnumpy:   {np.__version__}\n"
            f"python:  {sys.version}\nplatform: {platform.platform()}\n"
            f"backend: {xjax.default_backend()} ({plugin_version()})\n")
    if return_string:
        return text
    print(text)


def _live_arrays(platform=None):
    """Not tracked: xjax arrays are ordinary Python objects freed by reference counting."""


live_arrays = not_implemented("live_arrays", "xjax does not track live arrays; use gc or "
                              "tracemalloc", like=_live_arrays)


def pure_callback(callback, result_shape_dtypes, *args, vmap_method=None, **kwargs):
    """Call a Python function on host values. Eagerly it simply runs; inside jit (host
    callbacks from compiled code) it is not supported yet."""
    from xjax.core.trace import Tracer
    from xjax.core.pytree import tree_leaves
    if any(isinstance(leaf, Tracer) for leaf in tree_leaves((args, kwargs))):
        raise NotImplementedError("pure_callback under a transformation needs host callbacks "
                                  "from compiled code, which xjax does not support yet")
    return tree_map(np.asarray, callback(*args, **kwargs))



__all__ = ["eval_shape", "device_get", "disable_jit", "enable_x64", "threefry_partitionable",
           "numpy_rank_promotion", "debug_nans", "default_matmul_precision",
           "ensure_compile_time_eval", "named_call", "named_scope", "clear_caches", "typeof",
           "effects_barrier", "process_count", "process_index", "process_indices",
           "host_count", "host_id", "host_ids", "default_device", "print_environment_info",
           "live_arrays", "pure_callback"]
del functools
