"""Shape evaluation and tracing helpers of ``jax``: ``eval_shape``, ``typeof``,
``ensure_compile_time_eval``, ``named_call``, ``named_scope``."""

from __future__ import annotations

import contextlib

from xjax._src.core import dtypes
from xjax._src.core.ad_util import get_aval
from xjax._src.core.avals import ShapedArray
from xjax._src.core.ref_avals import AbstractRef
from xjax._src.core.trace import Trace, Tracer, _Context, current_trace, set_current_trace
from xjax._src.transformations.jit import make_jaxpr


def eval_shape(fun, *args, **kwargs):
    """The shapes and dtypes ``fun`` would return for these arguments, without computing.

    Arguments may be arrays or anything with ``shape`` and ``dtype`` (``ShapeDtypeStruct``).

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.eval_shape(lambda x: jnp.dot(x, x.T), xjax.ShapeDtypeStruct((3, 4), jnp.float32))
    ShapeDtypeStruct(shape=(3, 3), dtype=float32)
    """
    _, shapes = make_jaxpr(lambda *a: fun(*a, **kwargs), return_shape=True)(*args)
    return shapes


class CompileTimeEvalTrace(Trace):
    """The trace of an ``ensure_compile_time_eval`` block: a primitive whose operands are all
    concrete is evaluated at once; one with an operand traced outside the block is handed to
    the trace that was current (JAX's eager constant folding)."""

    __slots__ = ()

    def process_primitive(self, primitive, args, params):
        traced = any(isinstance(a, Tracer) and a._trace.active for a in args)
        with set_current_trace(self.parent if traced else _Context.trace):
            return primitive.bind(*args, **params)


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Evaluate operations on concrete values eagerly inside the block, even while tracing;
    operations on traced values are traced as outside it.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> @xjax.jit
    ... def f(x):
    ...     with xjax.ensure_compile_time_eval():
    ...         table = jnp.arange(3.0) * 2  # computed now, a constant of the jaxpr
    ...         y = x * table                # x is traced: staged as usual
    ...     return y
    >>> f(jnp.ones(3))
    Array([0., 2., 4.], dtype=float32)
    """
    with set_current_trace(CompileTimeEvalTrace(current_trace())):
        yield


def named_call(fun, *, name=None):
    """``fun`` itself (xjax does not record call names in jaxprs)."""
    return fun


@contextlib.contextmanager
def named_scope(name: str):
    """A no-op context (xjax does not annotate compiled programs with scope names)."""
    yield


def typeof(x):
    """The abstract value (``ShapedArray``, or ``AbstractRef`` for a Ref) of ``x``."""
    aval = getattr(x, "aval", None)
    if type(aval) is AbstractRef:
        return aval
    dtype = getattr(x, "dtype", None)
    if isinstance(dtype, dtypes.ExtendedDType):  # a key array: ShapedArray(key<fry>[...])
        return ShapedArray(x.shape, dtype)
    return get_aval(x)


__all__ = ["eval_shape", "ensure_compile_time_eval", "named_call", "named_scope", "typeof"]
