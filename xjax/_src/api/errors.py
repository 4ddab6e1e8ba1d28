"""``xjax.errors``: JAX's error classes (defined in xjax.core.errors)."""

from xjax._src.core.errors import (ConcretizationTypeError, InconclusiveDimensionOperation,  # noqa
                              JAXIndexError, JaxprTypeError, JaxRuntimeError, JAXTypeError,
                              KeyReuseError, NonConcreteBooleanIndexError,
                              TracerArrayConversionError, TracerBoolConversionError,
                              TracerIntegerConversionError, UnexpectedTracerError)
