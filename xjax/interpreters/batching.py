"""Batching: the vmap interpreter (DESIGN.md §5).

A ``BatchTracer`` carries a value of the parent trace and the axis of it that is mapped
(or ``not_mapped``). Applying a primitive runs its ``batch`` rule with the parent trace
current; the rule returns the batched output and where its batch axis is.
"""

from xjax._src.core.array import (  # noqa: F401
    Array as Array,
)
from xjax._src.interpreters.batching import (  # noqa: F401
    BatchTrace as BatchTrace, BatchTracer as BatchTracer,
    axis_primitive_batchers as axis_primitive_batchers, batch_flat as batch_flat,
    broadcast as broadcast, defbroadcasting as defbroadcasting, defreducer as defreducer,
    defvectorized as defvectorized, fancy_primitive_batchers as fancy_primitive_batchers,
    primitive_batchers as primitive_batchers, register_vmappable as register_vmappable,
    unregister_vmappable as unregister_vmappable,
)
from xjax._src.lax.batch_rules import (  # noqa: F401
    bdim_at_front as bdim_at_front, not_mapped as not_mapped,
)
from xjax._src.interpreters.batching import __all__ as __all__  # noqa: F401
