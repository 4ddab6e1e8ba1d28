"""``custom_vmap`` and ``sequential_vmap``: functions with a user-defined vmap rule.

Outside any transformation a ``custom_vmap`` function simply runs. Under one it binds
``custom_vmap_call``, a primitive holding the function's jaxpr (its consts as leading operands)
and the user's rule, wrapped to work on flat lists:

- evaluated, staged (``jit``, ``make_jaxpr``) or lowered, it is the function's jaxpr;
- under ``vmap`` its batching rule calls ``rule(axis_size, in_batched, *args)`` with the
  batched arguments' batch axes moved first; outputs the rule marks batched have their batch
  axis first. Under nested vmaps the rule runs under the outer ones like any other code;
- under ``jvp`` it becomes a ``custom_vmap_call`` of the function's jvp, whose rule is the jvp
  of the user's rule (so ``vmap(jvp(f))`` and ``jvp(vmap(f))`` both use the rule). Arguments
  whose primal is batched but whose tangent is not (or the reverse) are broadcast first, so
  the rule always sees a primal and its tangent batched alike;
- reverse mode (``grad``, ``vjp``, ``linearize``) is not supported, as in JAX: it raises JAX's
  ``ValueError`` ("Linearization failed to produce known values for all output primals...").
  Wrap the function in ``custom_vjp`` to give it a reverse-mode rule.
"""

from xjax._src.transformations.custom_batching import (  # noqa: F401
    custom_vmap as custom_vmap, sequential_vmap as sequential_vmap,
)
from xjax._src.transformations.custom_batching import __all__ as __all__  # noqa: F401
