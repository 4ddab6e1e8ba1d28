"""``jax._src.core`` under the import hook: JAX's core names from xjax's own core (what
:mod:`xjax.extend.core` has, and the internal names libraries use)."""

from xjax._src.jax_adapters.extend.core import *  # noqa: F401,F403
from xjax._src.jax_adapters.extend.core import (  # noqa: F401
    ClosedJaxpr, Jaxpr, JaxprEqn, Literal, ShapedArray, Var, find_top_trace,
    get_opaque_trace_state, valid_jaxtype)
from xjax._src.core.ad_util import get_aval  # noqa: F401
from xjax._src.core.errors import ShardingTypeError  # noqa: F401
from xjax._src.core.ref_avals import AbstractRef  # noqa: F401
from xjax._src.core.trace import Trace, Tracer  # noqa: F401


def physical_aval(aval):
    """The aval of ``aval``'s storage: the same for every dtype xjax stores directly."""
    return aval
