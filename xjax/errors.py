"""``xjax.errors``: JAX's error classes (defined in xjax.core.errors).
"""

from xjax._src.core.errors import (  # noqa: F401
    ConcretizationTypeError as ConcretizationTypeError,
    InconclusiveDimensionOperation as InconclusiveDimensionOperation,
    JAXIndexError as JAXIndexError, JAXTypeError as JAXTypeError,
    JaxRuntimeError as JaxRuntimeError, JaxprTypeError as JaxprTypeError,
    KeyReuseError as KeyReuseError,
    NonConcreteBooleanIndexError as NonConcreteBooleanIndexError,
    TracerArrayConversionError as TracerArrayConversionError,
    TracerBoolConversionError as TracerBoolConversionError,
    TracerIntegerConversionError as TracerIntegerConversionError,
    UnexpectedTracerError as UnexpectedTracerError,
)
from xjax._src.core.purity import ImpureFunctionWarning as ImpureFunctionWarning  # noqa: F401
