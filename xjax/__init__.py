"""xjax: NumPy on CPU and GPU with composable transformations, compiled by XLA.

>>> import xjax as jax
>>> import xjax.numpy as jnp
"""

# Loaded first for what loading them sets up: the root (eager) trace, and the operators
# and methods that the numpy layer gives Array and Tracer.
import xjax._src.interpreters.eval  # noqa: F401
import xjax._src.numpy  # noqa: F401

from xjax._src.core.version import __version__ as __version__  # noqa: F401
from xjax._src.core.array import (  # noqa: F401
    Array as Array,
)
from xjax._src.runtime.client import (  # noqa: F401
    Device as Device, default_backend as default_backend,
)
from xjax._src.core.sharding_types import (  # noqa: F401
    NamedSharding as NamedSharding, P as P, Shard as Shard, set_mesh as set_mesh,
)
from xjax._src.transformations.ref import (  # noqa: F401
    Ref as Ref, ds as ds, empty_ref as empty_ref, free_ref as free_ref, freeze as freeze,
    new_ref as new_ref,
)
from xjax._src.transformations.jit import (  # noqa: F401
    ShapeDtypeStruct as ShapeDtypeStruct, device_put as device_put, jit as jit,
    make_jaxpr as make_jaxpr,
)
from xjax._src.api.ad_markers import (  # noqa: F401
    ad as ad,
)
from xjax._src.transformations.config_contexts import (  # noqa: F401
    allow_f16_reductions as allow_f16_reductions,
    array_garbage_collection_guard as array_garbage_collection_guard, auto_pcast as auto_pcast,
    check_tracer_leaks as check_tracer_leaks, checking_leaks as checking_leaks,
    debug_infs as debug_infs, debug_key_reuse as debug_key_reuse, debug_nans as debug_nans,
    default_matmul_precision as default_matmul_precision,
    default_prng_impl as default_prng_impl, disable_jit as disable_jit,
    enable_checks as enable_checks, enable_custom_prng as enable_custom_prng,
    enable_x64 as enable_x64, explain_cache_misses as explain_cache_misses,
    jax2tf_associative_scan_reductions as jax2tf_associative_scan_reductions,
    legacy_prng_key as legacy_prng_key, log_compiles as log_compiles,
    no_execution as no_execution, no_tracing as no_tracing,
    numpy_dtype_promotion as numpy_dtype_promotion,
    numpy_rank_promotion as numpy_rank_promotion,
    remove_size_one_mesh_axis_from_type as remove_size_one_mesh_axis_from_type,
    softmax_custom_jvp as softmax_custom_jvp, thread_guard as thread_guard,
    threefry_partitionable as threefry_partitionable, transfer_guard as transfer_guard,
    transfer_guard_device_to_device as transfer_guard_device_to_device,
    transfer_guard_device_to_host as transfer_guard_device_to_host,
    transfer_guard_host_to_device as transfer_guard_host_to_device,
)
from xjax._src.api.devices import (  # noqa: F401
    block_until_ready as block_until_ready, clear_caches as clear_caches,
    default_device as default_device, device_count as device_count, device_get as device_get,
    devices as devices,
    effects_barrier as effects_barrier, host_count as host_count, host_id as host_id,
    host_ids as host_ids, live_arrays as live_arrays, local_device_count as local_device_count,
    local_devices as local_devices, print_environment_info as print_environment_info,
    process_count as process_count, process_index as process_index,
    process_indices as process_indices,
)
from xjax._src.transformations.custom_derivatives import (  # noqa: F401
    checkpoint as checkpoint, checkpoint_policies as checkpoint_policies,
    closure_convert as closure_convert, custom_gradient as custom_gradient,
    custom_jvp as custom_jvp, custom_vjp as custom_vjp, linear_transpose as linear_transpose,
    remat as remat,
)
from xjax._src.core.config import (  # noqa: F401
    config as config,
)
from xjax._src.api.array_creation import (  # noqa: F401
    copy_to_host_async as copy_to_host_async,
    make_array_from_callback as make_array_from_callback,
    make_array_from_process_local_data as make_array_from_process_local_data,
    make_array_from_single_device_arrays as make_array_from_single_device_arrays,
)
from xjax._src.transformations.eval_shape import (  # noqa: F401
    ensure_compile_time_eval as ensure_compile_time_eval, eval_shape as eval_shape,
    named_call as named_call, named_scope as named_scope, typeof as typeof,
)
from xjax._src.core.dtypes import (  # noqa: F401
    float0 as float0,
)
from xjax._src.transformations.fwd_and_bwd import (  # noqa: F401
    fwd_and_bwd as fwd_and_bwd,
)
from xjax._src.transformations.grad import (  # noqa: F401
    grad as grad, hessian as hessian, jacfwd as jacfwd, jacobian as jacobian, jacrev as jacrev,
    jvp as jvp, linearize as linearize, value_and_grad as value_and_grad, vjp as vjp,
)
from xjax._src.transformations.pmap import (  # noqa: F401
    make_mesh as make_mesh, pmap as pmap, reshard as reshard,
)
from xjax._src.api.user_context import (  # noqa: F401
    make_user_context as make_user_context,
)
from xjax._src.api.memory import (  # noqa: F401
    memory as memory,
)
from xjax._src.higher_order.callbacks import (  # noqa: F401
    pure_callback as pure_callback,
)
from xjax._src.transformations.shard_map import (  # noqa: F401
    shard_map as shard_map, smap as smap,
)
from xjax._src.transformations.vmap import (  # noqa: F401
    vmap as vmap,
)
from xjax import ad_checkpoint as ad_checkpoint  # noqa: F401
from xjax import api_util as api_util  # noqa: F401
from xjax import core as core  # noqa: F401
from xjax import custom_batching as custom_batching  # noqa: F401
from xjax import custom_derivatives as custom_derivatives  # noqa: F401
from xjax import debug as debug  # noqa: F401
from xjax import distributed as distributed  # noqa: F401
from xjax import dlpack as dlpack  # noqa: F401
from xjax import dtypes as dtypes  # noqa: F401
from xjax import errors as errors  # noqa: F401
from xjax import experimental as experimental  # noqa: F401
from xjax import export as export  # noqa: F401
from xjax import ffi as ffi  # noqa: F401
from xjax import image as image  # noqa: F401
from xjax import interpreters as interpreters  # noqa: F401
from xjax import lax as lax  # noqa: F401
from xjax import lib as lib  # noqa: F401
from xjax import monitoring as monitoring  # noqa: F401
from xjax import nn as nn  # noqa: F401
from xjax import numpy as numpy  # noqa: F401
from xjax import ops as ops  # noqa: F401
from xjax import profiler as profiler  # noqa: F401
from xjax import random as random  # noqa: F401
from xjax import ref as ref  # noqa: F401
from xjax import scipy as scipy  # noqa: F401
from xjax import sharding as sharding  # noqa: F401
from xjax import stages as stages  # noqa: F401
from xjax import tree as tree  # noqa: F401
from xjax import tree_util as tree_util  # noqa: F401
from xjax import typing as typing  # noqa: F401
from xjax import version as version  # noqa: F401
