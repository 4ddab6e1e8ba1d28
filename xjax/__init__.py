"""xjax: NumPy on CPU and GPU with composable transformations, compiled by XLA.

>>> import xjax as jax
>>> import xjax.numpy as jnp
"""

import warnings as _warnings

from xjax.core.config import config  # noqa: F401
from xjax.core.array import Array  # noqa: F401
from xjax import errors  # noqa: F401
from xjax.interpreters import eval as _eval  # noqa: F401  (installs the root eval trace)
from xjax import lax  # noqa: F401
from xjax import control_flow  # noqa: F401
from xjax import numpy  # noqa: F401  (installs Array's operators and methods)
from xjax import tree_util  # noqa: F401
from xjax.api import (ShapeDtypeStruct, device_put, jit, make_jaxpr)  # noqa: F401
from xjax.autodiff import (grad, hessian, jacfwd, jacobian, jacrev, jvp, linearize,  # noqa: F401
                           value_and_grad, vjp)
from xjax.mapping import vmap  # noqa: F401
from xjax.utilities import *  # noqa: F401,F403
from xjax.array_creation import *  # noqa: F401,F403
from xjax.core.dtypes import float0  # noqa: F401
from xjax import debug, dtypes, tree  # noqa: F401
from xjax.callback import pure_callback  # noqa: F401
from xjax import experimental  # noqa: F401
from xjax.custom_derivatives import (checkpoint, checkpoint_policies,  # noqa: F401
                                     closure_convert, custom_gradient, custom_jvp, custom_vjp,
                                     linear_transpose, remat)
from xjax.runtime import default_backend, devices  # noqa: F401
from xjax.runtime.client import Device  # noqa: F401
from xjax import dlpack, typing  # noqa: F401
from xjax import random  # noqa: F401
from xjax import nn  # noqa: F401
from xjax import scipy  # noqa: F401
from xjax import image  # noqa: F401
from xjax import (custom_batching, export, ffi, monitoring, profiler, sharding,  # noqa: F401
                  stages)
from xjax.parallel_api import *  # noqa: F401,F403
from xjax.transforms_extra import *  # noqa: F401,F403
from xjax import ad_checkpoint, ops, ref  # noqa: F401
from xjax.ref import Ref, ds, empty_ref, free_ref, freeze, new_ref  # noqa: F401
from xjax import api_util, distributed  # noqa: F401
from xjax.toplevel_extras import (ad, auto_pcast, make_user_context, memory,  # noqa: F401
                                  remove_size_one_mesh_axis_from_type)

__version__ = "0.1.0"
from xjax import version  # noqa: E402,F401  (jax.version.__version__)
from xjax import lib  # noqa: E402,F401  (jax.lib.__version__)

# NumPy kernels warn on invalid values (0/0, log(-1)); XLA and JAX compute them silently.
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"xjax\.")


def local_devices(process_index=None, backend=None):
    """The devices of this process."""
    return devices(backend)


def device_count(backend=None) -> int:
    return len(devices(backend))


def local_device_count(backend=None) -> int:
    return len(devices(backend))


def block_until_ready(x):
    """Wait until every array in the pytree ``x`` is computed; return ``x``."""
    from xjax.core.pytree import tree_leaves
    for leaf in tree_leaves(x):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return x
