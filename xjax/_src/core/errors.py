"""JAX's error classes and hierarchy (``xjax.errors``).

Each concreteness error names the traced function and the argument a value came from, so
the user knows which input to mark static or which operation to move out of ``jit``.
"""

from __future__ import annotations

from xjax._src.runtime.client import XlaRuntimeError

_DOCS = "https://docs.jax.dev/en/latest/errors.html"


class _JAXErrorMixin:
    """Adds the link to JAX's documentation of the error class."""

    _error_page = ""

    def __init__(self, message: str):
        name = type(self).__name__
        super().__init__(f"{message}\n\nSee {_DOCS}#jax.errors.{name}")


class JAXTypeError(_JAXErrorMixin, TypeError):
    pass


class JAXIndexError(_JAXErrorMixin, IndexError):
    pass


class ConcretizationTypeError(JAXTypeError):
    """A traced value was used where Python needs a concrete one."""

    def __init__(self, tracer=None, context: str = ""):
        if tracer is None:
            super().__init__(context)
            return
        message = f"Abstract tracer value encountered where concrete value is expected: {tracer}\n"
        if context:
            message += context + "\n"
        message += _tracer_origin(tracer)
        super().__init__(message)


class TracerBoolConversionError(ConcretizationTypeError):
    def __init__(self, tracer):
        message = (f"Attempted boolean conversion of traced array with shape "
                   f"{tracer.aval.str_short()}.\n" + _tracer_origin(tracer))
        JAXTypeError.__init__(self, message)


class TracerIntegerConversionError(JAXTypeError):
    def __init__(self, tracer):
        message = (f"The __index__() method was called on traced array with shape "
                   f"{tracer.aval.str_short()}.\n" + _tracer_origin(tracer))
        super().__init__(message)


class TracerArrayConversionError(JAXTypeError):
    def __init__(self, tracer):
        message = (f"The numpy.ndarray conversion method __array__() was called on traced "
                   f"array with shape {tracer.aval.str_short()}.\n" + _tracer_origin(tracer))
        super().__init__(message)


class NonConcreteBooleanIndexError(JAXIndexError):
    def __init__(self, tracer):
        super().__init__(f"Array boolean indices must be concrete; got {tracer.aval.str_short()}"
                         "\n" + _tracer_origin(tracer))


class UnexpectedTracerError(_JAXErrorMixin, Exception):
    pass


class KeyReuseError(JAXTypeError):
    pass


class ShardingTypeError(Exception):
    """An operation whose operands' sharded types give no valid result type (JAX's
    ``jax._src.core.ShardingTypeError``): operands split over different axes, a contracted
    dimension split on both sides, an axis used twice in the result."""


class JaxprTypeError(TypeError):
    pass


class InconclusiveDimensionOperation(Exception):
    pass


# XLA's run-time errors and xjax's own (transfer guards, ...) are one class, as in JAX
# (where JaxRuntimeError is jaxlib's XlaRuntimeError).
JaxRuntimeError = XlaRuntimeError


def _tracer_origin(tracer) -> str:
    """Say which traced function and which argument a tracer's value depends on."""
    describe = getattr(getattr(tracer, "_trace", None), "describe", None)
    return describe(tracer) if describe is not None else ""
