"""Segment reductions (``jax.ops``): placeholder, being built."""

from xjax.core.stubs import not_implemented

__all__ = ["segment_sum", "segment_prod", "segment_min", "segment_max"]

_WHY = "xjax.ops is not implemented yet"
segment_sum = not_implemented("segment_sum", _WHY)
segment_prod = not_implemented("segment_prod", _WHY)
segment_min = not_implemented("segment_min", _WHY)
segment_max = not_implemented("segment_max", _WHY)
