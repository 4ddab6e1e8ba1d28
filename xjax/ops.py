"""Segment reductions (``jax.ops``): ``segment_sum``, ``segment_prod``, ``segment_min``,
``segment_max``.

Each reduces the rows of ``data`` that share a segment id into one output row. They are
scatters (``lax.scatter_add`` and friends) into an output filled with the reduction's
identity, so ``jit``, ``vmap``, ``grad`` and ``jvp`` go through the scatter rules. As in JAX:

- ids outside ``[0, num_segments)``, negative ones included, are dropped (``mode=None``);
  ``mode='clip'`` clamps them into range instead;
- an empty segment holds the identity: 0, 1, the dtype's largest value (``+inf`` for
  inexact types, True for bool) for ``min``, its smallest for ``max``;
- without ``num_segments`` the output length is ``max(segment_ids) + 1``, read from the
  concrete ids; traced ids then raise :class:`xjax.errors.ConcretizationTypeError`.
"""

from xjax._src.api.ops import (  # noqa: F401
    segment_max as segment_max, segment_min as segment_min, segment_prod as segment_prod,
    segment_sum as segment_sum,
)
from xjax._src.api.ops import __all__ as __all__  # noqa: F401
