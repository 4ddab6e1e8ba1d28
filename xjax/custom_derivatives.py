"""``custom_jvp``, ``custom_vjp``, ``checkpoint`` (``remat``) and ``linear_transpose``.

Outside any transformation a custom-derivative function simply runs. Under one, it binds a
primitive holding the function's jaxpr and the user's rule (xjax/interpreters/
custom_derivatives.py), so staging keeps the primal and differentiation uses the rule.
"""

from xjax._src.transformations.custom_derivatives import (  # noqa: F401
    CustomVJPPrimal as CustomVJPPrimal, SymbolicZero as SymbolicZero,
    custom_vjp_primal_tree_values as custom_vjp_primal_tree_values,
    zero_from_primal as zero_from_primal,
    DotsSaveable as DotsSaveable, SaveAnyNamesButThese as SaveAnyNamesButThese,
    SaveOnlyTheseNames as SaveOnlyTheseNames, annotations as annotations,
    checkpoint as checkpoint, checkpoint_policies as checkpoint_policies,
    closure_convert as closure_convert, custom_gradient as custom_gradient,
    custom_jvp as custom_jvp, custom_vjp as custom_vjp, dots_saveable as dots_saveable,
    dots_with_no_batch_dims_saveable as dots_with_no_batch_dims_saveable,
    linear_transpose as linear_transpose,
    offload_dot_with_no_batch_dims as offload_dot_with_no_batch_dims, remat as remat,
    save_and_offload_only_these_names as save_and_offload_only_these_names,
    save_any_names_but_these as save_any_names_but_these,
    save_anything_except_these_names as save_anything_except_these_names,
    save_from_both_policies as save_from_both_policies,
    save_only_these_names as save_only_these_names, trace_ctx as trace_ctx,
)
from xjax._src.interpreters.eval import (  # noqa: F401
    EvalTrace as EvalTrace,
)
from xjax._src.interpreters.partial_eval import (  # noqa: F401
    Offloadable as Offloadable, Recompute as Recompute, Saveable as Saveable,
    everything_saveable as everything_saveable, nothing_saveable as nothing_saveable,
)
from xjax._src.core.trace import (  # noqa: F401
    Tracer as Tracer,
)
from xjax._src.core.ad_util import (  # noqa: F401
    UndefinedPrimal as UndefinedPrimal, get_aval as get_aval, tangent_aval as tangent_aval,
)
from xjax._src.interpreters.transpose import (  # noqa: F401
    backward_pass as backward_pass,
)
from xjax._src.higher_order.custom_derivatives import (  # noqa: F401
    checkpoint_p as checkpoint_p, custom_jvp_call_p as custom_jvp_call_p,
    custom_vjp_call_p as custom_vjp_call_p,
)
from xjax._src.higher_order.jit_call import (  # noqa: F401
    consts_as_args as consts_as_args,
)
from xjax._src.lax.convolution import (  # noqa: F401
    conv_general_dilated_p as conv_general_dilated_p,
)
from xjax._src.lax.dot import (  # noqa: F401
    dot_general_p as dot_general_p,
)
from xjax._src.core.jaxpr import (  # noqa: F401
    eval_jaxpr as eval_jaxpr,
)
from xjax._src.lax.ad_rules import (  # noqa: F401
    instantiate as instantiate,
)
from xjax._src.lax.checkpoint_name import (  # noqa: F401
    name_p as name_p,
)
from xjax._src.core.pytree import (  # noqa: F401
    prefix_leaves as prefix_leaves, register_pytree_node as register_pytree_node,
    tree_unflatten as tree_unflatten,
)
from xjax._src.core.tree_util import (  # noqa: F401
    tree_flatten as tree_flatten,
)
from xjax._src.lax.operands import (  # noqa: F401
    to_operand as to_operand,
)
from xjax._src.interpreters.staging import (  # noqa: F401
    trace_to_jaxpr as trace_to_jaxpr,
)
