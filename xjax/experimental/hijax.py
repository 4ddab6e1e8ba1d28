"""``xjax.experimental.hijax``: JAX's higher-level types API by name (not implemented:
binding its primitives raises NotImplementedError)."""

from xjax._src.experimental.hijax import AbstractRef as AbstractRef  # noqa: F401
from xjax._src.experimental.hijax import AbstractValue as AbstractValue  # noqa: F401
from xjax._src.experimental.hijax import AvalMutableQDD as AvalMutableQDD  # noqa: F401
from xjax._src.experimental.hijax import AvalQDD as AvalQDD  # noqa: F401
from xjax._src.experimental.hijax import HiPrimitive as HiPrimitive  # noqa: F401
from xjax._src.experimental.hijax import HiType as HiType  # noqa: F401
from xjax._src.experimental.hijax import MutableHiType as MutableHiType  # noqa: F401
from xjax._src.experimental.hijax import ShapedArray as ShapedArray  # noqa: F401
from xjax._src.experimental.hijax import VJPHiPrimitive as VJPHiPrimitive  # noqa: F401
from xjax._src.experimental.hijax import Zero as Zero  # noqa: F401
from xjax._src.experimental.hijax import aval_method as aval_method  # noqa: F401
from xjax._src.experimental.hijax import aval_property as aval_property  # noqa: F401
from xjax._src.experimental.hijax import control_flow_allowed_effects as control_flow_allowed_effects  # noqa: F401
from xjax._src.experimental.hijax import instantiate_zeros as instantiate_zeros  # noqa: F401
from xjax._src.experimental.hijax import is_undefined_primal as is_undefined_primal  # noqa: F401
from xjax._src.experimental.hijax import register_hitype as register_hitype  # noqa: F401
