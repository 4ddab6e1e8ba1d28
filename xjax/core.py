"""The core layer: abstract values, arrays, jaxprs, traces, primitives, pytrees, dtypes and
configuration. It imports only the runtime. The public ``xjax.core`` (JAX's ``jax.core``
names) re-exports from here and from the interpreters.
"""

from xjax._src.core.jaxpr import (  # noqa: F401
    ClosedJaxpr as ClosedJaxpr, DropVar as DropVar, Jaxpr as Jaxpr, JaxprEqn as JaxprEqn,
    Literal as Literal, Var as Var, check_jaxpr as check_jaxpr, eval_jaxpr as eval_jaxpr,
)
from xjax._src.interpreters.staging import (  # noqa: F401
    DebugInfo as DebugInfo,
)
from xjax._src.core.errors import (  # noqa: F401
    JaxprTypeError as JaxprTypeError,
)
from xjax._src.core.avals import (  # noqa: F401
    ShapedArray as ShapedArray,
)
from xjax._src.core.trace import (  # noqa: F401
    Trace as Trace, Tracer as Tracer,
)
from xjax._src.transformations.eval_shape import (  # noqa: F401
    ensure_compile_time_eval as ensure_compile_time_eval,
)
from xjax._src.core.ad_util import (  # noqa: F401
    pytype_aval_mappings as pytype_aval_mappings,
)
from xjax._src.core.avals import (  # noqa: F401
    AbstractValue as AbstractValue,
)
from xjax._src.core.jaxpr import (  # noqa: F401
    Atom as Atom,
)
