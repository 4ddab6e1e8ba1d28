"""``lax.reduce`` and the generic ``reduce`` primitive: reductions of one or several operands
over ``dimensions`` with a computation traced to a jaxpr on scalars.

``lax.reduce`` binds the dedicated monoid primitives (``reduce_sum``, ``reduce_max``, ...
in ``xjax.lax.reduce``) when there is one operand, the computation is ``lax.add``,
``lax.mul``, ``lax.max``, ``lax.min`` or a bitwise ``lax`` function, and the init value is
its concrete identity, as JAX's ``_get_monoid_reducer`` decides; otherwise it binds
``reduce_p``, which holds the jaxpr and so lives above the interpreters.

Its jvp is JAX's: the reduced axes are flattened and reduced by halving, each step applying
the computation elementwise (vmapped), all under ``jvp``. The tangent program is made of
ordinary primitives, so reverse mode works though ``reduce`` itself has no transpose.
Lowered to ``stablehlo.reduce``: https://openxla.org/stablehlo/spec#reduce
"""

from __future__ import annotations

import operator
import re
import weakref

import numpy as np

from xjax._src.core.array import as_numpy
from xjax._src.core import dtypes
from xjax._src.core.ad_util import Zero, get_aval, tangent_aval
from xjax._src.core.avals import ShapedArray
from xjax._src.core.jaxpr import ClosedJaxpr, eval_jaxpr
from xjax._src.core.primitive import NONLINEAR
from xjax._src.higher_order.primitive import ALL_UNKNOWN, HigherOrderPrimitive
from xjax._src.core.pytree import tree_flatten, tree_unflatten
from xjax._src.core.trace import Tracer
from xjax._src.higher_order.common import trace_function
from xjax._src.higher_order.reduce_window import _closed_with_consts, computation_region
from xjax._src.lax.batch_rules import bdim_at_front, batch_size, not_mapped
from xjax._src.lax.operands import to_operand
from xjax._src.lowering.stablehlo import aval_type, i64_array, tensor_type
from xjax._src import lax
from xjax._src.core.config import config
from xjax._src.interpreters.batching import batch_flat
from xjax._src.interpreters.jvp import jvp_flat
from xjax._src.lax.convert import _convert_element_type
from xjax._src.lax.concat_pad import pad
from xjax._src.lax.shape import broadcast_in_dim, squeeze, reshape
from xjax._src.lax.slicing import slice_in_dim


def _split(args):
    n = len(args) // 2
    return list(args[:n]), list(args[n:])


class _Computation:
    """The user's computation as a param: compared and hashed as the function, printed as
    JAX prints it (``<function f at 0xXXXXXXXXXXXX>``, the address masked)."""

    __slots__ = ("fun",)

    def __init__(self, fun):
        self.fun = fun

    def __call__(self, *args):
        return self.fun(*args)

    def __eq__(self, other):
        return type(other) is _Computation and other.fun == self.fun

    def __hash__(self):
        return hash(self.fun)

    def __repr__(self):
        return re.sub(r" at 0x([0-9a-fA-F]+)", lambda m: " at 0x" + "X" * len(m.group(1)),
                      str(self.fun))


# -- the rules -------------------------------------------------------------------------------

def _check_dimensions(ndim, dimensions):
    """JAX's errors: its shape rule (``np.delete``) raises IndexError past the rank; the
    StableHLO verifier rejects negative and repeated dimensions with a ValueError."""
    for d in dimensions:
        if not -ndim <= d < ndim:
            raise IndexError(f"index {d} is out of bounds for axis 0 with size {ndim}")
        if d < 0:
            raise ValueError(f"Out-of-bounds dimension {d}, expected to be in range "
                             f"[0, {ndim})")
    seen = set()
    for d in dimensions:
        if d in seen:
            raise ValueError(f"Duplicate reduction dimension: {d}")
        seen.add(d)


def _check_computation(jaxpr: ClosedJaxpr, init_avals):
    """The computation maps two lists of scalars of the init values' dtypes to one (JAX's
    verifier messages)."""
    in_avals, out_avals = jaxpr.in_avals, jaxpr.out_avals
    m = len(init_avals)
    if len(in_avals) != 2 * m:
        raise ValueError(f"reduce computation takes {len(in_avals)} scalars, expected "
                         f"{2 * m} (accumulators and elements of {m} operands)")
    if len(out_avals) != m:
        raise ValueError(f"Reduction-region here must produce {m} tensors, but produces "
                         f"{len(out_avals)} instead")
    for i, (init, a, b, out) in enumerate(zip(init_avals, in_avals[:m], in_avals[m:],
                                              out_avals, strict=True)):
        want = tensor_type((), init.dtype)
        for got in (a, b, out):
            if got.shape != () or got.dtype != init.dtype:
                raise ValueError("The type of reduction-region's parameter at index "
                                 f"{i} is different than the corresponding result type: "
                                 f"'{want}' vs '{tensor_type(got.shape, got.dtype)}'")


def _abstract_eval(*args, computation, jaxpr, dimensions):
    operands, inits = _split(args)
    if not operands or len(args) % 2:
        raise TypeError(f"reduce takes operands and as many init values, got {len(args)} "
                        "arrays")
    if any(i.shape != () for i in inits):
        raise ValueError(f"reduce found non-scalar initial value: {[i.shape for i in inits]}")
    if [x.dtype for x in operands] != [i.dtype for i in inits]:
        raise TypeError("reduce operand dtypes should match corresponding initial value "
                        f"dtypes, got operands={operands} and initial_values={inits}")
    shape = operands[0].shape
    if any(x.shape != shape for x in operands):
        raise ValueError("reduce expects all inputs to have compatible shapes, got "
                         f"{[x.shape for x in operands]}")
    _check_dimensions(len(shape), dimensions)
    _check_computation(jaxpr, inits)
    out_shape = tuple(s for d, s in enumerate(shape) if d not in dimensions)
    return [ShapedArray(out_shape, x.dtype, x.weak_type and i.weak_type)
            for x, i in zip(operands, inits, strict=True)]


def _impl(*args, computation, jaxpr, dimensions):
    """Per output element, fold the reduced elements (row-major) into the init values with
    the computation: plain and exact, though slow (jit compiles it)."""
    operands, inits = _split(args)
    operands = [np.asarray(x) for x in operands]
    if not dimensions:  # nothing to fold: XLA returns the operands (init is an identity)
        return operands
    shape = operands[0].shape
    kept = tuple(d for d in range(len(shape)) if d not in dimensions)
    order = tuple(dimensions) + kept
    out_shape = tuple(shape[d] for d in kept)
    n = int(np.prod([shape[d] for d in dimensions], dtype=np.int64))
    flat = [np.transpose(x, order).reshape((n, *out_shape)) for x in operands]
    outs = [np.empty(out_shape, x.dtype) for x in operands]
    for index in np.ndindex(*out_shape):
        acc = [np.asarray(i) for i in inits]
        for k in range(n):
            elements = [x[(k, *index)] for x in flat]
            acc = [as_numpy(a) for a in
                   eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *acc, *elements)]
        for out, a in zip(outs, acc, strict=True):
            out[index] = a
    return outs


def _lower(ctx, *args, computation, jaxpr, dimensions):
    b = ctx.builder
    operands, inits = _split(args)
    region = computation_region(b, jaxpr, ctx.avals_in[len(operands):])
    return b.op("stablehlo.reduce", operands + inits, [aval_type(a) for a in ctx.avals_out],
                {"dimensions": i64_array(dimensions)}, regions=[region])


def _elementwise(fun, ndim):
    """``fun`` on scalars (flat lists in and out) applied elementwise to arrays of rank
    ``ndim``: vmapped over each axis in turn, as JAX's jvp vmaps the reducer."""
    if ndim == 0:
        return fun
    inner = _elementwise(fun, ndim - 1)

    def batched(*args):
        size = get_aval(args[0]).shape[0]
        outs, dims = batch_flat(inner, list(args), [0] * len(args), None, size)
        return [bdim_at_front(o, d, size) for o, d in zip(outs, dims, strict=True)]

    return batched


def _reduce_tree(reducer, inits, kept_shape):
    """Reduce flat operands of shape ``(n, *kept_shape)`` along axis 0 by halving: each step
    combines the first half with the second (padded with the init values)."""
    combine = _elementwise(reducer, 1 + len(kept_shape))

    def tree(*xs):
        while get_aval(xs[0]).shape[0] > 1:
            n = get_aval(xs[0]).shape[0]
            n1 = (n + 1) // 2
            xs1 = [slice_in_dim(x, 0, n1) for x in xs]
            xs2 = [slice_in_dim(x, n1, n) for x in xs]
            if n - n1 != n1:
                config = ((0, 1, 0),) + ((0, 0, 0),) * len(kept_shape)
                xs2 = [pad(x2, i, config) for x2, i in zip(xs2, inits, strict=True)]
            xs = combine(*xs1, *xs2)
        if get_aval(xs[0]).shape[0] == 0:
            return [broadcast_in_dim(i, kept_shape, ()) for i in inits]
        return [squeeze(x, (0,)) for x in xs]

    return tree


def _jvp(primals, tangents, *, computation, jaxpr, dimensions):
    operands, inits = _split(primals)
    operand_dots, init_dots = _split(tangents)
    if any(type(t) is not Zero for t in init_dots):
        raise NotImplementedError("Gradient of general lax.reduce with non-zero tangents for "
                                  "initial values to reduction not implemented")
    shape = get_aval(operands[0]).shape
    kept = tuple(d for d in range(len(shape)) if d not in dimensions)
    kept_shape = tuple(shape[d] for d in kept)
    n = int(np.prod([shape[d] for d in dimensions], dtype=np.int64))
    new_shape, order = (n, *kept_shape), tuple(dimensions) + kept

    def flat(x):
        if type(x) is Zero:
            return Zero(tangent_aval(ShapedArray(new_shape, x.aval.dtype)))
        if new_shape == shape and order == tuple(range(len(shape))):
            return x  # as JAX's reshape, a no-op stages nothing
        return reshape(x, new_shape, order)

    xs = [flat(x) for x in operands]
    ts = [flat(t) for t in operand_dots]

    def reducer(*args):
        return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)

    return jvp_flat(_reduce_tree(reducer, inits, kept_shape), xs, ts)


def _batch(args, dims, *, computation, jaxpr, dimensions):
    operands, inits = _split(args)
    operand_dims, init_dims = _split(dims)
    if any(d is not not_mapped for d in init_dims):
        raise NotImplementedError("lax.reduce batching with batched init values is not "
                                  "implemented (JAX raises NotImplementedError too)")
    size = batch_size(operands, operand_dims)
    moved = [bdim_at_front(x, d, size) for x, d in zip(operands, operand_dims, strict=True)]
    outs = reduce_p.bind(*moved, *inits, computation=computation, jaxpr=jaxpr,
                         dimensions=tuple(d + 1 for d in dimensions))
    return outs, [0] * len(outs)


reduce_p = HigherOrderPrimitive(
    "reduce", abstract_eval=_abstract_eval, impl=_impl, lower=_lower, jvp=_jvp,
    transpose=NONLINEAR,  # the jvp's tangent program is made of transposable primitives
    batch=_batch, multiple_results=True,
    partial_eval=ALL_UNKNOWN, partial_eval_jaxpr=ALL_UNKNOWN)


# -- the public function ---------------------------------------------------------------------

def _supports_inf(dtype) -> bool:
    if dtypes.is_complex(dtype):
        return True
    with np.errstate(invalid="ignore", over="ignore"):
        return bool(np.isinf(np.asarray(np.inf).astype(dtype).astype(np.float64)))


def _max_identity(dtype):
    if dtypes.is_inexact(dtype):
        value = -np.inf if _supports_inf(dtype) else dtypes.finfo(dtype).min
        return np.asarray(value).astype(dtype)
    if dtypes.is_integer(dtype):
        return np.asarray(dtypes.iinfo(dtype).min, dtype)
    return np.asarray(False)


def _min_identity(dtype):
    if dtypes.is_inexact(dtype):
        value = np.inf if _supports_inf(dtype) else dtypes.finfo(dtype).max
        return np.asarray(value).astype(dtype)
    if dtypes.is_integer(dtype):
        return np.asarray(dtypes.iinfo(dtype).max, dtype)
    return np.asarray(True)


def _monoid_reducer(computation, flat_inits):
    """The monoid reduction (``lax.reduce_sum``, ...) for ``computation`` when its one init
    value is concrete and its identity, else None: JAX's ``_get_monoid_reducer``."""
    if len(flat_inits) != 1:
        return None
    (x,) = flat_inits
    if isinstance(x, Tracer) or np.shape(x) != ():
        return None
    dtype = dtypes.dtype(x, canonicalize=True)
    value = np.asarray(x)
    intlike = dtype == np.bool_ or dtypes.is_integer(dtype)
    identities = {lax.add: (lax.reduce_sum, lambda: np.zeros((), dtype)),
                  lax.mul: (lax.reduce_prod, lambda: np.ones((), dtype)),
                  lax.max: (lax.reduce_max, lambda: _max_identity(dtype)),
                  lax.min: (lax.reduce_min, lambda: _min_identity(dtype))}
    if intlike:
        identities.update({lax.bitwise_or: (lax.reduce_or, lambda: np.zeros((), dtype)),
                           lax.bitwise_and: (lax.reduce_and,
                                             lambda: np.asarray(-1).astype(dtype)),
                           lax.bitwise_xor: (lax.reduce_xor, lambda: np.zeros((), dtype))})
    for op, (reducer, identity) in identities.items():
        if computation is op:
            return reducer if np.equal(value, identity()) else None
    return None


_TRACED = weakref.WeakKeyDictionary()  # computation -> {(avals, tree): (jaxpr, out_tree)}


def _traced_computation(computation, init_avals, init_tree):
    """The computation traced on two trees of scalars of ``init_avals``, cached per function
    as JAX caches it (so repeated reductions reuse one jaxpr and its executables)."""
    key = (tuple(init_avals), init_tree, config.jax_enable_x64,
           config.jax_threefry_partitionable)
    try:
        cache = _TRACED.setdefault(computation, {})
        hit = cache.get(key)
    except TypeError:  # neither weakly referenceable nor hashable: trace every time
        cache, hit = None, None
    if hit is not None:
        return hit
    pair_tree = tree_flatten((tree_unflatten(init_tree, list(init_avals)),) * 2)[1]
    traced = trace_function(computation, pair_tree, list(init_avals) * 2, "reduce comp")
    result = (_closed_with_consts(traced.jaxpr, traced.consts), traced.out_tree)
    if cache is not None:
        cache[key] = result
    return result


def reduce(operands, init_values, computation, dimensions, out_sharding=None):
    """Reduce ``operands`` over ``dimensions`` with ``computation`` (XLA's Reduce).

    ``init_values`` and ``computation`` must form a monoid: ``init_values`` an identity of
    ``computation``, and ``computation`` associative (XLA may reorder and regroup the
    reduction; otherwise the result is undefined).

    Parameters
    ----------
    operands : array or pytree of arrays
        Arrays of one shape.
    init_values : scalar or pytree of scalars
        Matching ``operands``' tree structure and dtypes.
    computation : callable
        ``(accumulated, element) -> accumulated`` on pytrees of scalars. ``lax.add``,
        ``lax.mul``, ``lax.max``, ``lax.min`` and the bitwise ``lax`` functions with their
        concrete identities as the one init value use the dedicated primitives
        (``reduce_sum``, ...).
    dimensions : sequence of int
        Distinct, non-negative axes to reduce.
    out_sharding : None
        Only for the ``reduce_sum`` case, as in JAX (xjax has one device per computation).

    Returns
    -------
    array or pytree of arrays
        The reductions, with ``computation``'s output tree structure.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.reduce(jnp.arange(6.).reshape(2, 3), 0., lax.add, (1,))
    Array([ 3., 12.], dtype=float32)
    >>> lax.reduce(jnp.arange(1., 5.), 0., lambda a, b: a + b + a * b, (0,))
    Array(119., dtype=float32)
    """
    flat_operands, operand_tree = tree_flatten(operands)
    flat_inits, init_tree = tree_flatten(init_values)
    if operand_tree != init_tree:
        raise ValueError("Operands must have the same tree structure as init_values: "
                         f"{operand_tree} vs. {init_tree}")
    if len(flat_operands) != len(flat_inits):
        raise ValueError("Must have same total number of operands as init_values: "
                         f" {len(flat_operands)} vs. {len(flat_inits)}")
    if not flat_operands:
        raise ValueError("lax.reduce needs at least one operand")
    dimensions = tuple(operator.index(d) for d in dimensions)
    monoid_reducer = _monoid_reducer(computation, flat_inits)
    if monoid_reducer is not None:
        # monoid reducers keep the operand's weak type; JAX sets it explicitly
        weak_type = (dtypes.is_weakly_typed(flat_operands[0]) and
                     dtypes.is_weakly_typed(flat_inits[0]))
        if out_sharding is not None and monoid_reducer.__name__ != "reduce_sum":
            raise NotImplementedError(f"lax.reduce: out_sharding with {monoid_reducer.__name__}"
                                      " is not supported (as in JAX)")
        extra = {"out_sharding": out_sharding} if out_sharding is not None else {}
        out = monoid_reducer(flat_operands[0], dimensions, **extra)
        return _convert_element_type(out, weak_type=weak_type)
    flat_operands = [to_operand(x) for x in flat_operands]
    flat_inits = [to_operand(x) for x in flat_inits]
    init_avals = [get_aval(i) for i in flat_inits]
    jaxpr, out_tree = _traced_computation(computation, init_avals, init_tree)
    outs = reduce_p.bind(*flat_operands, *flat_inits, computation=_Computation(computation),
                         jaxpr=jaxpr, dimensions=dimensions)
    return tree_unflatten(out_tree, outs)


__all__ = ["reduce", "reduce_p"]
