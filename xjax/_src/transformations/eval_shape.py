"""Shape evaluation and tracing helpers of ``jax``: ``eval_shape``, ``typeof``,
``ensure_compile_time_eval``, ``named_call``, ``named_scope``."""

from __future__ import annotations

from __future__ import annotations

import contextlib


from xjax._src.core.ad_util import get_aval
from xjax._src.core.ref_avals import AbstractRef
from xjax._src.core.trace import _Context, set_current_trace
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


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Evaluate operations on concrete values eagerly inside the block, even while tracing."""
    with set_current_trace(_Context.trace):
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
    return get_aval(x)


__all__ = ["eval_shape", "ensure_compile_time_eval", "named_call", "named_scope", "typeof"]
