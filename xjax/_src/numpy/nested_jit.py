"""jnp functions staged as a nested ``jit`` call, where JAX stages them so.

JAX defines many jnp functions under ``jax.jit`` (``clip``, ``sort``, ``cumsum``, the nan
reductions, ...), so ``make_jaxpr`` and lowered modules show them as ``jit[name=clip ...]``
equations. :func:`jit_when_staged` gives xjax's functions the same form whenever a jaxpr is
being built (``make_jaxpr``, ``jit``, a loop body, under any transformation over one), with
JAX's static arguments and name. Eagerly, on small arrays, the function runs directly, with
the NumPy kernels, and a nested call met by an eager higher-order primitive is evaluated the
same way (``jit_call.inline_when_eager``); with an array of ``LARGE_ELEMENTS`` or more it
runs compiled, as JAX's does.

:func:`inline_jit` is the same for the functions JAX jits with ``inline=True`` (``mean``,
``sum``, the other reductions, the binary ufuncs' promoting path): no equation of their own
when staged, compiled when eager on large arrays.
"""

from __future__ import annotations

import functools

import numpy as np

from xjax._src.core.array import Array
from xjax._src.core.trace import ctx as trace_ctx
from xjax._src.interpreters.eval import LARGE_ELEMENTS, EvalTrace
from xjax._src.interpreters.staging import StagingTrace
from xjax._src.transformations.jit import PjitFunction


def _building_a_jaxpr(trace) -> bool:
    while trace is not None:
        if isinstance(trace, StagingTrace):
            return True
        trace = trace.parent
    return False


def _large(args) -> bool:
    """An argument of ``eval.LARGE_ELEMENTS`` or more elements: the threshold of the eager
    primitives that run compiled, shared so that both paths switch together."""
    for x in args:
        if type(x) is Array or isinstance(x, np.ndarray):
            if x.size >= LARGE_ELEMENTS:
                return True
    return False


def _jitted_or_direct(jitted, fun, args, kwargs):
    """``jitted(*args, **kwargs)``, or ``fun``'s direct call for arguments a trace cannot
    take (a non-hashable static, a Python value xjax's implementation needs concrete),
    which raises the user's error if the call is wrong."""
    try:
        return jitted(*args, **kwargs)
    except Exception:  # noqa: BLE001
        return fun(*args, **kwargs)


def jit_when_staged(name: str | None = None, static_argnames: tuple = (),
                    eager_direct: bool = False):
    """Decorate a jnp function that JAX defines under ``jit(static_argnames=...)``; ``name``
    is the name JAX's jaxprs give the call (JAX's private helper's name, at times).
    ``eager_direct``: an eager call runs directly at every size (where the primitives'
    NumPy kernels beat XLA's CPU kernels, as NumPy's sort does), not compiled when large."""
    def decorate(fun):
        jitted = PjitFunction(fun, static_argnames=static_argnames or None,
                              _eager_inline=True)
        jitted._name = name or fun.__name__

        @functools.wraps(fun)
        def staged_or_direct(*args, **kwargs):
            trace = trace_ctx.trace
            if type(trace) is EvalTrace:
                if eager_direct or not _large(args):
                    return fun(*args, **kwargs)
                # eager on large arrays: compiled, as JAX runs it (one fused kernel)
            elif not _building_a_jaxpr(trace):
                return fun(*args, **kwargs)
            return _jitted_or_direct(jitted, fun, args, kwargs)
        return staged_or_direct
    return decorate


def inline_jit(static_argnames: tuple = ()):
    """Decorate a jnp function that JAX defines under ``jit(inline=True, static_argnames=...)``
    (``mean``, ``sum`` and the other reductions): staged inline, as JAX's is, and run
    directly on small arrays; an eager call with a large array runs compiled, as JAX's
    does (one XLA program instead of NumPy passes)."""
    def decorate(fun):
        jitted = PjitFunction(fun, static_argnames=static_argnames or None, inline=True)

        @functools.wraps(fun)
        def direct_or_compiled(*args, **kwargs):
            if type(trace_ctx.trace) is not EvalTrace or not _large(args):
                return fun(*args, **kwargs)
            return _jitted_or_direct(jitted, fun, args, kwargs)
        return direct_or_compiled
    return decorate
