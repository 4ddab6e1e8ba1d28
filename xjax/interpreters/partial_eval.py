"""Partial evaluation: computing what is known now and staging what is not.

``PartialStagingTrace`` is a staging trace that forwards every primitive whose operands are
all known (none is one of its own tracers) to its parent trace, and stages the rest. Under
a JVP trace whose tangents are its tracers, it splits a program into the primal computation
(done now, by the parent) and the linear tangent computation (a jaxpr whose constvars are
the residuals): that is ``linearize``.

``partial_eval_jaxpr`` does the same split on a jaxpr, for higher-order primitives (``jit``,
control flow) met with some operands known and some not.

JAX's names for this (``PartialVal``, ``trace_to_jaxpr_nounits``, ``dce_jaxpr``) are mapped
onto that machinery.
"""

from xjax._src.core.jaxpr import (  # noqa: F401
    ClosedJaxpr as ClosedJaxpr, DropVar as DropVar, Jaxpr as Jaxpr, JaxprEqn as JaxprEqn,
    Literal as Literal, Var as Var,
)
from xjax._src.interpreters.partial_eval import (  # noqa: F401
    Offloadable as Offloadable, PartialStagingTrace as PartialStagingTrace,
    Recompute as Recompute, RecomputeType as RecomputeType, Saveable as Saveable,
    SaveableType as SaveableType, annotations as annotations, closed as closed,
    dce_eqns as dce_eqns, ensure_enum as ensure_enum,
    everything_saveable as everything_saveable, inline_calls as inline_calls,
    nothing_saveable as nothing_saveable, partial_eval_jaxpr as partial_eval_jaxpr,
    partial_eval_jaxpr_policy as partial_eval_jaxpr_policy,
    partial_eval_jaxpr_rules as partial_eval_jaxpr_rules,
    partial_eval_rules as partial_eval_rules,
)
from xjax._src.jax_adapters.interpreters_partial_eval import (  # noqa: F401
    PartialVal as PartialVal, dce_jaxpr as dce_jaxpr,
    trace_to_jaxpr_nounits as trace_to_jaxpr_nounits,
)
from xjax._src.interpreters.staging import (  # noqa: F401
    StagingTrace as StagingTrace, StagingTracer as StagingTracer,
)
from xjax._src.core.trace import (  # noqa: F401
    set_current_trace as set_current_trace,
)
