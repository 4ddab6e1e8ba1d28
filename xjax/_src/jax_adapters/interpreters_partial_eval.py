"""JAX's partial-evaluation API (``jax.interpreters.partial_eval``) on xjax's own machinery.

:class:`PartialVal` is a value that is either known (a constant) or unknown (only its aval).
:func:`trace_to_jaxpr_nounits` runs a flat function on such values with xjax's
:class:`~xjax._src.interpreters.partial_eval.PartialStagingTrace`: what depends only on known
inputs is computed now, the rest is staged into a jaxpr. :func:`dce_jaxpr` prunes a jaxpr
with xjax's ``dce_eqns``.

>>> import numpy as np, xjax.numpy as jnp
>>> from xjax.core import ShapedArray
>>> from xjax.extend import linear_util as lu
>>> from xjax.interpreters import partial_eval as pe
>>> f = lambda x, y: [jnp.sin(x), x * y]
>>> pvals = [pe.PartialVal.known(np.float32(0.0)), pe.PartialVal.unknown(ShapedArray((), np.float32))]
>>> jaxpr, out_pvals, consts = pe.trace_to_jaxpr_nounits(lu.wrap_init(f), pvals)
>>> [p.is_known() for p in out_pvals]
[True, False]
>>> out_pvals[0].get_known()
Array(0., dtype=float32)
"""

from __future__ import annotations

import copy

from xjax._src.core.jaxpr import Jaxpr
from xjax._src.core.trace import current_trace, set_current_trace
from xjax._src.interpreters.partial_eval import PartialStagingTrace, dce_eqns
from xjax._src.interpreters.staging import DebugInfo
from xjax._src.numpy import extended
from xjax._src.transformations.eval_shape import typeof

__all__ = ["PartialVal", "dce_jaxpr", "trace_to_jaxpr_nounits"]


class PartialVal(tuple):
    """A known or unknown value: the pair ``(None, value)`` or ``(aval, None)``, as JAX's
    ``partial_eval.PartialVal``.

    Examples
    --------
    >>> from xjax.core import ShapedArray
    >>> PartialVal.known(2.0).get_aval()
    ShapedArray(float32[], weak_type=True)
    >>> PartialVal.unknown(ShapedArray((3,), "float32")).is_known()
    False
    """

    __slots__ = ()

    def __new__(cls, xs):
        aval, const = xs
        return tuple.__new__(cls, (aval, const))

    @classmethod
    def known(cls, const) -> PartialVal:
        """A known value."""
        return cls((None, const))

    @classmethod
    def unknown(cls, aval) -> PartialVal:
        """An unknown value of abstract value ``aval``."""
        return cls((aval, None))

    def is_known(self) -> bool:
        """Whether the value is known."""
        return self[0] is None

    def get_known(self):
        """The known value, or None when it is unknown."""
        return self[1] if self[0] is None else None

    def get_aval(self):
        """The abstract value: the unknown one's, or the known value's."""
        return typeof(self[1]) if self[0] is None else self[0]


def trace_to_jaxpr_nounits(fun, pvals, instantiate=False):
    """Run ``fun`` on partially known arguments: compute what the known ones determine and
    stage the rest.

    Parameters
    ----------
    fun : WrappedFun
        A flat function (``xjax.extend.linear_util.wrap_init``): one argument per entry of
        ``pvals``, a list or tuple of arrays out.
    pvals : sequence of PartialVal
    instantiate : bool or sequence of bool
        Per output (or for all), stage it even when it is known.

    Returns
    -------
    jaxpr : Jaxpr
        Maps the unknown arguments to the unknown outputs; its constvars are the known
        values it reads.
    out_pvals : list of PartialVal
        One per output: known ones with their value, unknown ones with their aval.
    consts : tuple
        The values of ``jaxpr``'s constvars.
    """
    in_knowns = [pval.is_known() for pval in pvals]
    trace = PartialStagingTrace(current_trace(), _unknown_args_info(fun, in_knowns))
    args = [pval.get_known() if pval.is_known() else _new_arg(trace, pval.get_aval())
            for pval in pvals]
    try:
        with set_current_trace(trace):
            outs = list(getattr(fun, "call_wrapped", fun)(*args))
        if isinstance(instantiate, bool):
            instantiate = [instantiate] * len(outs)
        # a key array is staged as its data
        data = [extended.data_of(out) if extended.is_extended(out) else out for out in outs]
        staged = [inst or trace.is_unknown(out)
                  for out, inst in zip(data, instantiate, strict=True)]
        with set_current_trace(trace):
            closed = trace.to_jaxpr([out for out, s in zip(data, staged) if s])
    finally:
        trace.active = False
    out_pvals = [PartialVal.unknown(typeof(out)) if s else PartialVal.known(out)
                 for out, s in zip(outs, staged)]
    return closed.jaxpr, out_pvals, tuple(closed.consts)


def _new_arg(trace, aval):
    """An unknown argument of ``aval``; a key array over its data for a key aval (xjax's
    jaxprs hold key data, as JAX's lowered programs do)."""
    if extended.is_extended_dtype(aval.dtype):
        return extended.wrap_data(aval.dtype, trace.new_arg(extended.physical_aval(aval)))
    return trace.new_arg(aval)


def _unknown_args_info(fun, in_knowns):
    """``fun``'s debug info, naming only the unknown arguments (the jaxpr's inputs)."""
    info = getattr(fun, "debug_info", None)
    if not isinstance(info, DebugInfo):
        return None
    return _keep_arg_names(info, [not known for known in in_knowns])


def _keep_arg_names(info, keep):
    """A copy of ``info`` whose argument names are those where ``keep`` is true."""
    if not isinstance(info, DebugInfo):
        return info
    kept = copy.copy(info)
    names = info.arg_names
    kept.arg_names = ([n for n, k in zip(names, keep) if k] if len(names) == len(keep)
                      else [])
    return kept


def dce_jaxpr(jaxpr: Jaxpr, used_outputs, instantiate=False):
    """``jaxpr`` without the outputs not in ``used_outputs`` and the equations and inputs
    they alone needed (side-effecting equations stay).

    Parameters
    ----------
    jaxpr : Jaxpr
    used_outputs : bool or sequence of bool
        Per output (or for all), whether it is kept.
    instantiate : bool or sequence of bool
        Per input (or for all), keep it even when unused.

    Returns
    -------
    (Jaxpr, list of bool)
        The pruned jaxpr (same constvars) and, per input of ``jaxpr``, whether it kept it.
    """
    if isinstance(used_outputs, bool):
        used_outputs = [used_outputs] * len(jaxpr.outvars)
    if isinstance(instantiate, bool):
        instantiate = [instantiate] * len(jaxpr.invars)
    outvars = [v for v, used in zip(jaxpr.outvars, used_outputs, strict=True) if used]
    eqns, needed = dce_eqns(jaxpr.eqns, outvars)
    used_inputs = [bool(inst) or v in needed
                   for v, inst in zip(jaxpr.invars, instantiate, strict=True)]
    invars = [v for v, used in zip(jaxpr.invars, used_inputs) if used]
    info = _keep_arg_names(jaxpr.debug_info, used_inputs)
    return Jaxpr(jaxpr.constvars, invars, outvars, eqns, info), used_inputs
