"""Differentiation: ``jvp``, ``linearize``, ``vjp``, ``grad``, ``value_and_grad``, ``jacfwd``,
``jacrev``, ``hessian`` (DESIGN.md §5).

Forward mode is the JVP interpreter. Reverse mode is linearize (jvp under a partial-staging
trace, which computes primals now and stages the linear tangent computation into a jaxpr)
followed by the transpose of that jaxpr. Only jvp and transpose rules are ever written.
"""

from __future__ import annotations


import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.array import Array
from xjax._src.core.avals import ShapedArray
from xjax._src.core.ref_avals import AbstractRef
from xjax._src.core.pytree import tree_flatten, tree_map, tree_structure, tree_unflatten
from xjax._src.core.tree_util import Partial, tree_leaves as user_leaves
from xjax._src.core.trace import current_trace, set_current_trace
from xjax._src.interpreters.jvp import (JVPTrace, Zero, get_aval, instantiate, is_differentiable,
                                        jvp_flat, tangent_aval, zeros_like_aval)
from xjax._src.interpreters.batching import BatchTrace
from xjax._src.interpreters.partial_eval import PartialStagingTrace
from xjax._src.interpreters.staging import StagingTrace
from xjax._src.interpreters.refs import RefArgs, arg_aval, arg_operand, read_value, write_back
from xjax._src.interpreters.transpose import UndefinedPrimal, backward_pass
from xjax._src.lax.operands import to_operand
from xjax._src.transformations.ref import Ref
from xjax._src import lax
from xjax._src.core.jaxpr import eval_jaxpr
from xjax._src.interpreters.jvp import JVPTracer
from xjax._src.transformations.vmap import vmap
from xjax._src.transformations.wrapping import wraps


def _as_operand_tree(tree):
    return tree_map(arg_operand, tree)


def _inner_aval(x):
    """The aval of a flat argument, a Ref's being the aval of the array it holds."""
    return x._aval.inner_aval if type(x) is Ref else get_aval(x)


def _ref_args(flat_primals):
    """The Refs among ``flat_primals`` (a :class:`RefArgs`), or None when there are none."""
    positions = [i for i, p in enumerate(flat_primals) if type(p) is Ref]
    return RefArgs(flat_primals, positions) if positions else None


def _write_back(refs, finals):
    """Store the final values of the Refs the function wrote."""
    for ref, value in zip(refs.written_refs(), finals, strict=True):
        write_back(ref, value)


# -- jvp --

def jvp(fun, primals, tangents, has_aux=False):
    """Forward-mode Jacobian-vector product: ``(fun(*primals), J @ tangents)``.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.jvp(jnp.sin, (0.0,), (1.0,))
    (Array(0., dtype=float32, weak_type=True), Array(1., dtype=float32, weak_type=True))
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("primal and tangent arguments to jax.jvp must be tuples or lists; "
                        f"found {type(primals).__name__} and {type(tangents).__name__}.")
    flat_primals, in_tree = tree_flatten(tuple(primals))
    flat_tangents, tangent_tree = tree_flatten(tuple(tangents))
    if in_tree != tangent_tree:
        raise TypeError("primal and tangent arguments to jax.jvp must have the same tree "
                        f"structure; primals have tree structure {in_tree} whereas tangents "
                        f"have tree structure {tangent_tree}.")
    flat_primals = [_valid_argument(p) for p in flat_primals]
    checked = []
    has_refs = False
    for p, t in zip(flat_primals, flat_tangents, strict=True):
        if type(p) is Ref or type(t) is Ref:
            checked.append(_check_ref_tangent(p, t))
            has_refs = True
        else:
            checked.append(_check_tangent(get_aval(p), t))
    trees = []  # the output's tree and (with has_aux) the aux's

    def flat_fun(*xs):
        out = fun(*tree_unflatten(in_tree, xs))
        aux = None
        if has_aux:
            out, aux = out
        flat_out, out_tree = tree_flatten(out)
        flat_aux, aux_tree = tree_flatten(aux)
        # array aux leaves go through the JVP trace too, so they come back as plain values;
        # other leaves (Python numbers, strings, NumPy arrays) are returned as they are
        traced = [i for i, a in enumerate(flat_aux) if isinstance(a, Array)]
        trees[:] = [out_tree, aux_tree, len(flat_out), flat_aux, traced]
        return [_valid_argument(o) for o in flat_out] + [flat_aux[i] for i in traced]

    if not has_refs:
        outs, out_tangents = jvp_flat(flat_fun, flat_primals, checked)
    else:
        outs, out_tangents = _jvp_with_refs(_ref_args(flat_primals), flat_fun, flat_primals,
                                            flat_tangents, checked)
    out_tree, aux_tree, n_out, aux_leaves, traced = trees
    out_tangents = [instantiate(t) for t in out_tangents[:n_out]]
    result = (tree_unflatten(out_tree, outs[:n_out]), tree_unflatten(out_tree, out_tangents))
    if not has_aux:
        return result
    aux_leaves = list(aux_leaves)
    for i, value in zip(traced, outs[n_out:], strict=True):
        aux_leaves[i] = value
    return result + (tree_unflatten(aux_tree, aux_leaves),)


def _check_ref_tangent(primal, tangent):
    """A Ref primal's tangent is a Ref of the same type (its tangent value is read from it
    and the new one written to it); returns that value."""
    if type(primal) is not Ref:
        raise TypeError("primal and tangent arguments to jax.jvp do not match; got a mutable "
                        f"array reference of type {tangent.aval} as the tangent of a primal "
                        f"of type {get_aval(to_operand(primal)).str_short()}")
    if type(tangent) is not Ref:
        # JAX's error, which it raises when the function reads the tangent as a Ref
        t_aval = get_aval(tangent if not isinstance(tangent, (int, float, complex)) else
                          to_operand(tangent))
        raise ValueError(f"`get` must be called on `Ref` types: {t_aval.str_short()}.")
    return _check_tangent(primal.aval.inner_aval, read_value(tangent))


def _jvp_with_refs(refs, flat_fun, flat_primals, flat_tangents, checked):
    """``jvp_flat`` with Ref primals bound to their values (the tangents their tangent Refs'
    values); the final values and tangents of the Refs it wrote are stored back into the
    Refs and their tangent Refs."""
    outs, out_tangents = jvp_flat(refs.threading(flat_fun), refs.values(flat_primals),
                                  checked)
    outs, finals = refs.split(outs)
    out_tangents, final_tangents = refs.split(out_tangents)
    _write_back(refs, finals)
    for k, tangent in zip(refs.written, final_tangents, strict=True):
        tangent = instantiate(tangent)
        if get_aval(tangent).dtype != dtypes.float0:  # integer Refs have no tangent to keep
            write_back(flat_tangents[refs.positions[k]], tangent)
    return outs, out_tangents


def _check_tangent(primal_aval, tangent):
    expected = tangent_aval(primal_aval)
    if type(tangent) is Zero:
        return tangent
    t_aval = get_aval(tangent) if not isinstance(tangent, (int, float, complex)) else \
        get_aval(to_operand(tangent))
    if expected.dtype == dtypes.float0:
        if t_aval.dtype != dtypes.float0:
            raise TypeError(
                "primal and tangent arguments to jax.jvp do not match; dtypes must be equal, "
                "or in case of int/bool primal dtype the tangent dtype must be float0. Got "
                f"primal dtype {primal_aval.dtype.name} and so expected tangent dtype float0, "
                f"but got tangent dtype {t_aval.dtype.name} instead.")
        return Zero(expected)
    if t_aval.dtype != expected.dtype:
        raise TypeError(
            "primal and tangent arguments to jax.jvp do not match; dtypes must be equal, or "
            "in case of int/bool primal dtype the tangent dtype must be float0. Got primal "
            f"dtype {primal_aval.dtype.name} and so expected tangent dtype "
            f"{expected.dtype.name}, but got tangent dtype {t_aval.dtype.name} instead.")
    if t_aval.shape != primal_aval.shape:
        raise ValueError("jvp called with different primal and tangent shapes;Got primal "
                         f"shape {primal_aval.shape} and tangent shape as {t_aval.shape}")
    return _valid_argument(tangent)


def _valid_argument(x):
    """``x`` itself once checked to be a valid JAX value (a Ref stays a Ref). jvp keeps
    Python scalars and NumPy arrays as they are, as JAX does: a function's rules see them
    unconverted, and an output that is an input (or a constant) comes back unchanged."""
    arg_operand(x)  # raises JAX's TypeError for values that are not arrays
    return x


# -- linearize and vjp --

class _Linearized:
    """What linearizing a flat function at a point gives: the primal outputs and the linear
    tangent jaxpr (residuals as its consts)."""

    def __init__(self, primal_outs, linear_jaxpr, residuals, in_avals, diff_mask, out_avals):
        self.primal_outs = primal_outs
        self.linear_jaxpr = linear_jaxpr
        self.residuals = residuals
        self.in_avals = in_avals
        self.diff_mask = diff_mask
        self.out_avals = out_avals

    def transpose(self, cts):
        """Input cotangents (one per flat primal; float0 zeros for non-differentiable)."""
        linear_args = [UndefinedPrimal(tangent_aval(a))
                       for a, d in zip(self.in_avals, self.diff_mask, strict=True) if d]
        results = backward_pass(self.linear_jaxpr, self.residuals, linear_args, cts)
        results = iter(results)
        return [instantiate(next(results)) if d else zeros_like_aval(tangent_aval(a))
                for a, d in zip(self.in_avals, self.diff_mask, strict=True)]


def linearize_flat(flat_fun, primals) -> _Linearized:
    in_avals = [get_aval(p) for p in primals]
    diff_mask = [is_differentiable(a) for a in in_avals]
    staging = PartialStagingTrace(current_trace())
    tangents = [staging.new_arg(tangent_aval(a)) if d else Zero(tangent_aval(a))
                for a, d in zip(in_avals, diff_mask, strict=True)]
    jvp_trace = JVPTrace(staging)
    tracers = [jvp_trace.wrap(p, t) for p, t in zip(primals, tangents, strict=True)]
    try:
        with set_current_trace(jvp_trace):
            outs = flat_fun(*tracers)
        primal_outs, tangent_outs = [], []
        for out in outs:
            p, t = jvp_trace.unpack(out)
            primal_outs.append(p)
            tangent_outs.append(t)
        # Tangent outputs that are zero or known (no dependence on the inputs) are zeros.
        tangent_outs = [_as_staged(staging, t) for t in tangent_outs]
        with set_current_trace(staging):
            closed = staging.to_jaxpr(tangent_outs)
    finally:
        jvp_trace.active = False
        staging.active = False
    return _Linearized(primal_outs, closed.jaxpr, closed.consts, in_avals, diff_mask,
                       [get_aval(p) for p in primal_outs])


def _as_staged(staging, tangent):
    if type(tangent) is Zero:
        with set_current_trace(staging.parent):
            return zeros_like_aval(tangent.aval)
    return tangent


def _flatten_fun(fun, in_tree, has_aux, box):
    def flat_fun(*xs):
        out = fun(*tree_unflatten(in_tree, xs))
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError("has_aux=True requires the function to return a pair "
                                f"(output, auxiliary data), got {type(out).__name__}")
            out, aux = out
            box["aux"] = aux
        flat_out, out_tree = tree_flatten(out)
        box["out_tree"] = out_tree
        return [to_operand(o) for o in flat_out]
    return flat_fun


def _strip_tracers(tree, trace):
    """Auxiliary outputs leave the transformation as their primal values."""

    def strip(x):
        while type(x) is JVPTracer:
            x = x.primal
        return x
    return tree_map(strip, tree)


def vjp(fun, *primals, has_aux=False):
    """Reverse-mode vector-Jacobian product.

    Returns ``(fun(*primals), vjp_fun)`` (and the auxiliary data with ``has_aux``), where
    ``vjp_fun(ct)`` gives the cotangents of ``primals`` as a tuple.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> y, f_vjp = xjax.vjp(jnp.sin, 0.0)
    >>> f_vjp(1.0)
    (Array(1., dtype=float32, weak_type=True),)
    """
    flat_primals, in_tree = tree_flatten(primals)
    flat_primals = [arg_operand(p) for p in flat_primals]
    box = {}
    refs = _ref_args(flat_primals)
    lin, primal_outs = _linearize_flat_with_refs(
        _flatten_fun(fun, in_tree, has_aux, box), flat_primals, refs)
    out_tree = box["out_tree"]
    primal_out = tree_unflatten(out_tree, primal_outs)

    def vjp_fun(ct):
        flat_cts, ct_tree = tree_flatten(ct)
        if ct_tree != out_tree:
            raise TypeError("Tree structure of cotangent input "
                            f"{ct_tree}, does not match structure of primal output {out_tree}.")
        cts = []
        for c, aval in zip(flat_cts, lin.out_avals[:len(primal_outs)], strict=True):
            c = to_operand(c)
            expected = tangent_aval(aval)
            c_aval = get_aval(c)
            if c_aval.shape != expected.shape:
                raise ValueError(f"Shape of cotangent input to vjp pullback function "
                                 f"{c_aval.shape} must be the same as the shape of "
                                 f"corresponding primal input {aval.shape}.")
            cts.append(Zero(expected) if expected.dtype == dtypes.float0 else c)
        if refs is not None:
            # JAX's error: a Ref input would need a Ref cotangent, which it does not make
            ref = refs.refs[0]
            raise ValueError(f"Expected cotangent type {ref.aval} but got "
                             f"{ref.aval.inner_aval.str_short()}")
        return tree_unflatten(in_tree, lin.transpose(cts))

    if has_aux:
        return primal_out, vjp_fun, _strip_tracers(box["aux"], None)
    return primal_out, vjp_fun


def linearize(fun, *primals, has_aux=False):
    """``(fun(*primals), f_jvp)`` where ``f_jvp(*tangents)`` is the linear map at primals,
    evaluated from a jaxpr without re-running ``fun``."""
    flat_primals, in_tree = tree_flatten(primals)
    flat_primals = [arg_operand(p) for p in flat_primals]
    box = {}
    refs = _ref_args(flat_primals)
    lin, primal_outs = _linearize_flat_with_refs(
        _flatten_fun(fun, in_tree, has_aux, box), flat_primals, refs)
    out_tree = box["out_tree"]
    primal_avals = [arg_aval(p) for p in flat_primals]
    # f_jvp takes the residuals as arguments and keeps no reference to ``lin`` (under vmap
    # its residuals are tracers that end with the trace).
    n_residuals, linear_jaxpr, diff_mask = len(lin.residuals), lin.linear_jaxpr, lin.diff_mask

    def f_jvp(*residuals_and_tangents):
        residuals = residuals_and_tangents[:n_residuals]
        flat_t, t_tree = tree_flatten(residuals_and_tangents[n_residuals:])
        if t_tree != in_tree:
            raise TypeError(f"linearized function called with tangents of structure {t_tree}, "
                            f"expected {in_tree}")
        diff = []
        for t, p_aval, d in zip(flat_t, primal_avals, diff_mask, strict=True):
            if d:
                diff.append(_linear_tangent(t, p_aval))
            elif type(p_aval) is AbstractRef or type(t) is Ref:
                _linear_tangent(t, p_aval)  # checked only: an integer Ref has no tangent
        outs = eval_jaxpr(linear_jaxpr, residuals, *diff)
        if refs is None:
            return tree_unflatten(out_tree, outs)
        outs, final_tangents = refs.split(outs)
        for k, tangent in zip(refs.written, final_tangents, strict=True):
            write_back(flat_t[refs.positions[k]], tangent)
        return tree_unflatten(out_tree, outs)

    # A pytree whose leaves are the residuals, as JAX's: it can leave jit and vmap.
    linear_fun = Partial(f_jvp, *lin.residuals)
    result = (tree_unflatten(out_tree, primal_outs), linear_fun)
    return result + (_strip_tracers(box["aux"], None),) if has_aux else result


def _linearize_flat_with_refs(flat_fun, flat_primals, refs):
    """``linearize_flat``, with Ref primals bound to their values (the final values of the
    Refs written are stored back now); also returns the function's own primal outputs."""
    if refs is None:
        lin = linearize_flat(flat_fun, flat_primals)
        return lin, lin.primal_outs
    lin = linearize_flat(refs.threading(flat_fun), refs.values(flat_primals))
    primal_outs, finals = refs.split(lin.primal_outs)
    _write_back(refs, finals)
    return lin, primal_outs


def _linear_tangent(tangent, primal_aval):
    """A tangent given to a linearized function, as a value; JAX's error when its type does
    not match the primal's (a Ref primal takes a Ref tangent, read here)."""
    t_aval = arg_aval(tangent) if type(tangent) is Ref or not isinstance(
        tangent, (int, float, complex)) else get_aval(to_operand(tangent))
    if type(primal_aval) is AbstractRef:
        expected = primal_aval
        matches = type(t_aval) is AbstractRef and _same_type(t_aval.inner_aval,
                                                             primal_aval.inner_aval)
    else:
        expected = tangent_aval(primal_aval)
        matches = type(t_aval) is not AbstractRef and _same_type(t_aval, expected)
    if not matches:
        raise ValueError("linearized function called on tangent values inconsistent with the "
                         "original primal values:\n"
                         f"Got tangent aval {t_aval.str_short()} for primal aval "
                         f"{primal_aval.str_short()} but expected {expected.str_short()}.")
    return read_value(tangent) if type(tangent) is Ref else to_operand(tangent)


def _same_type(a, b) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype


# -- grad --

def _argnums_tuple(argnums, n_args, fun_name):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not -n_args <= i < n_args:
            raise TypeError(f"differentiating with respect to argnums={argnums} requires at "
                            f"least {max(nums) + 1} positional arguments to be passed by the "
                            f"caller, but got only {n_args} positional arguments.")
    return tuple(i % n_args for i in nums)


def _check_input_dtype(dtype, holomorphic, allow_int, api):
    """JAX 0.10.2's checks of a reverse-mode input's dtype (grad, vjp, jacrev)."""
    if holomorphic and not dtypes.is_complex(dtype):
        raise TypeError(f"{api} with holomorphic=True requires inputs with complex dtype, "
                        f"but got {dtype.name}.")
    if (isinstance(dtype, dtypes.ExtendedDType) or dtypes.is_integer(dtype)
            or dtype == np.bool_):
        if not allow_int:
            raise TypeError(f"{api} requires real- or complex-valued inputs (input dtype that "
                            f"is a sub-dtype of np.inexact), but got {dtype.name}. If you want "
                            "to use Boolean- or integer-valued inputs, use vjp or set "
                            "allow_int to True.")
    elif not (dtypes.is_float(dtype) or dtypes.is_complex(dtype)):
        raise TypeError(f"{api} requires numerical-valued inputs (input dtype that is a "
                        f"sub-dtype of np.bool_ or np.number), but got {dtype.name}.")


def _check_jacfwd_input(dtype, holomorphic):
    """JAX 0.10.2's checks of a forward-mode Jacobian's input dtype."""
    if isinstance(dtype, dtypes.ExtendedDType):
        raise TypeError(f"jacfwd with input element type {dtype.name}")
    if holomorphic:
        if not dtypes.is_complex(dtype):
            raise TypeError("jacfwd with holomorphic=True requires inputs with complex dtype, "
                            f"but got {dtype.name}.")
    elif not dtypes.is_float(dtype):
        raise TypeError("jacfwd requires real-valued inputs (input dtype that is a sub-dtype "
                        f"of np.floating), but got {dtype.name}. For holomorphic "
                        "differentiation, pass holomorphic=True. For differentiation of "
                        "non-holomorphic functions involving complex inputs or integer "
                        "inputs, use jax.jvp directly.")


def _leaf_dtype(leaf):
    """The dtype a differentiated leaf shows its user (a key's, not its data's)."""
    dtype = getattr(leaf, "dtype", None)
    return dtype if isinstance(dtype, dtypes.ExtendedDType) else _inner_aval(leaf).dtype


def _check_scalar_output(aval, holomorphic, api):
    if aval.shape != ():
        raise TypeError(f"Gradient only defined for scalar-output functions. Output had shape: "
                        f"{aval.shape}.")
    _check_output_dtype(aval.dtype, holomorphic, api)


def _check_output_dtype(dtype, holomorphic, api):
    """JAX's errors for outputs reverse mode cannot seed: keys, integers and booleans,
    and complex numbers unless ``holomorphic``."""
    if isinstance(dtype, dtypes.ExtendedDType):
        raise TypeError(f"{api} with output element type {dtype.name}")
    if holomorphic:
        if not dtypes.is_complex(dtype):
            raise TypeError(f"{api} with holomorphic=True requires outputs with complex dtype, "
                            f"but got {dtype.name}.")
    elif dtypes.is_complex(dtype):
        raise TypeError(f"{api} requires real-valued outputs (output dtype that is a sub-dtype "
                        f"of np.floating), but got {dtype.name}. For holomorphic "
                        "differentiation, pass holomorphic=True. For differentiation of "
                        "non-holomorphic functions involving complex outputs, use jax.vjp "
                        "directly.")
    elif not dtypes.is_float(dtype):
        raise TypeError(f"{api} requires real-valued outputs (output dtype that is a sub-dtype "
                        f"of np.floating), but got {dtype.name}. For differentiation of "
                        "functions with integer outputs, use jax.vjp directly.")


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False,
                   reduce_axes=()):
    """A function returning ``(fun(*args), gradient)``, the gradient taken with respect to
    the arguments ``argnums``.

    Examples
    --------
    >>> import xjax
    >>> xjax.value_and_grad(lambda x: x ** 2)(3.0)
    (Array(9., dtype=float32, weak_type=True), Array(6., dtype=float32, weak_type=True))
    """

    @wraps(fun)
    def value_and_grad_fun(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args), getattr(fun, "__name__", "fun"))
        for leaf in user_leaves(tuple(args[i] for i in nums)):  # a key array is one leaf
            if type(leaf) is not Ref:  # JAX does not check a Ref's dtype here
                _check_input_dtype(_leaf_dtype(leaf), holomorphic, allow_int, "grad")
        diff_args = tuple(_as_operand_tree(args[i]) for i in nums)

        def partial_fun(*dyn):
            full = list(args)
            for i, value in zip(nums, dyn, strict=True):
                full[i] = value
            return fun(*full, **kwargs)

        if has_aux:
            out, f_vjp, aux = vjp(partial_fun, *diff_args, has_aux=True)
        else:
            out, f_vjp = vjp(partial_fun, *diff_args)
        out_leaves = tree_flatten(out)[0]
        if len(out_leaves) != 1:
            raise TypeError("Gradient only defined for scalar-output functions. Output was "
                            f"{out!r}.")
        out_aval = get_aval(out_leaves[0])
        _check_scalar_output(out_aval, holomorphic, "grad")  # JAX's name for both
        one = _cotangent_seed(out_aval)
        grads = f_vjp(tree_unflatten(tree_structure(out), [one]))
        grads = grads[0] if isinstance(argnums, int) else tuple(grads)
        if has_aux:
            return (out, aux), grads
        return out, grads

    return value_and_grad_fun


def _cotangent_seed(aval):
    """The cotangent seed: one with the (scalar) output's aval, weak type included, as JAX's
    ``full_like`` makes it (so gradients of weakly typed inputs stay weakly typed). JAX makes
    it with an operation, so under ``jit`` it is a tracer (a ``custom_vjp``'s bwd sees one)
    that its constant folding leaves as a literal; traces that would hand a constant on to
    their parent are skipped to find the one that stages it."""
    seed_aval = ShapedArray(aval.shape, aval.dtype, aval.weak_type)
    one = Array._from_numpy(np.ones(aval.shape, aval.dtype), seed_aval)
    trace = current_trace()
    while type(trace) in (JVPTrace, BatchTrace, PartialStagingTrace):
        trace = trace.parent
    return trace.literal(one) if type(trace) is StagingTrace else one


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """The gradient of scalar-valued ``fun`` with respect to the arguments ``argnums``.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.grad(lambda x: jnp.sum(x ** 2))(jnp.arange(3.0))
    Array([0., 2., 4.], dtype=float32)
    """
    value_and_grad_fun = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @wraps(fun)
    def grad_fun(*args, **kwargs):
        result = value_and_grad_fun(*args, **kwargs)
        if has_aux:
            (_, aux), g = result
            return g, aux
        return result[1]

    return grad_fun


# -- Jacobians and Hessians --

def _jacobian_setup(fun, argnums, args, kwargs, holomorphic, api, allow_int=False):
    """Check the differentiated arguments and close ``fun`` over the others."""
    nums = _argnums_tuple(argnums, len(args), "")
    for leaf in user_leaves(tuple(args[i] for i in nums)):  # a key array is one leaf
        if api == "jacfwd":
            _check_jacfwd_input(_leaf_dtype(leaf), holomorphic)
        else:
            _check_input_dtype(_leaf_dtype(leaf), holomorphic, allow_int, api)
    diff_args = tuple(_as_operand_tree(args[i]) for i in nums)

    def partial_fun(*dyn):
        full = list(args)
        for i, value in zip(nums, dyn, strict=True):
            full[i] = value
        return fun(*full, **kwargs)

    return partial_fun, diff_args


def _basis(avals):
    """The standard basis of the flattened leaves: one array per leaf, of shape
    (total size, *leaf shape), together the rows of an identity matrix. Each keeps its
    leaf's weak type, as JAX's basis does."""
    total = sum(a.size for a in avals)
    rows, start = [], 0
    for aval in avals:
        block = np.zeros((total, aval.size), dtype=tangent_aval(aval).dtype)
        block[start:start + aval.size] = np.eye(aval.size, dtype=block.dtype)
        start += aval.size
        shape = (total,) + tuple(aval.shape)
        rows.append(Array._from_numpy(block.reshape(shape),
                                      ShapedArray(shape, block.dtype, aval.weak_type)))
    return rows


def _blocks(stacked, row_avals, col_shape, forward, example):
    """Split ``stacked`` (basis rows first) into one block per row leaf, each of shape
    ``out + in``: forward mode rows are inputs (moved last), reverse mode rows are outputs.
    Each block takes the dtype and weak type of ``example`` (the output leaf in forward
    mode, the input leaf in reverse mode; a complex block of a real example keeps its real
    part), as JAX's Jacobians do."""
    blocks, start = [], 0
    col_rank = len(col_shape)
    for aval in row_avals:
        part = lax.slice_in_dim(stacked, start, start + aval.size, axis=0)
        start += aval.size
        if forward:
            moved = lax.transpose(part, tuple(range(1, col_rank + 1)) + (0,))
            block = lax.reshape(moved, tuple(col_shape) + tuple(aval.shape))
        else:
            block = lax.reshape(part, tuple(aval.shape) + tuple(col_shape))
        blocks.append(_like_example(block, example))
    return blocks


def _like_example(block, example):
    aval = get_aval(block)
    if dtypes.is_complex(aval.dtype) and not dtypes.is_complex(example.dtype):
        block, aval = lax.real(block), None
    aval = aval or get_aval(block)
    if aval.dtype == dtypes.float0 and example.dtype != dtypes.float0:
        # an integer or boolean output's block in forward mode (an integer input's with
        # allow_int in reverse mode): zeros of its dtype, as JAX converts them
        return Array._from_numpy(np.zeros(aval.shape, example.dtype),
                                 ShapedArray(aval.shape, example.dtype, example.weak_type))
    if not (dtypes.is_inexact(aval.dtype) and dtypes.is_inexact(example.dtype)):
        return block
    if aval.dtype == example.dtype and aval.weak_type == example.weak_type:
        return block
    return lax.convert_element_type_p.bind(block, new_dtype=example.dtype,
                                           weak_type=example.weak_type, sharding=None)


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian of ``fun`` by forward mode: ``vmap`` of ``jvp`` over the standard basis.

    Each (output, input) leaf pair gives a block of shape ``out.shape + in.shape``.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.jacfwd(lambda x: x ** 2)(jnp.array([1.0, 2.0]))
    Array([[2., 0.],
           [0., 4.]], dtype=float32)
    """

    @wraps(fun)
    def jac_fun(*args, **kwargs):
        partial_fun, diff_args = _jacobian_setup(fun, argnums, args, kwargs, holomorphic,
                                                 "jacfwd")
        flat_in, in_tree = tree_flatten(diff_args)
        in_avals = [_inner_aval(x) for x in flat_in]

        primal_avals = []  # per-example avals of the outputs, read while vmap traces

        def pushfwd(*basis_leaves):
            result = jvp(partial_fun, diff_args, tuple(tree_unflatten(in_tree, basis_leaves)),
                         has_aux=has_aux)
            primal_avals[:] = [get_aval(y) for y in tree_flatten(result[0])[0]]
            return (result[1], result[2]) if has_aux else result[1]

        # aux does not depend on the basis, but a jit inside may batch it: take one row
        result = vmap(pushfwd, out_axes=(0, 0) if has_aux else 0)(*_basis(in_avals))
        tangents, aux = result if has_aux else (result, None)
        if has_aux:
            aux = tree_map(lambda a: a[0], aux)
        flat_t, out_tree = tree_flatten(tangents)
        jac = []
        for t, example in zip(flat_t, primal_avals, strict=True):
            out_shape = get_aval(t).shape[1:]
            blocks = _blocks(t, in_avals, out_shape, forward=True, example=example)
            tree = tree_unflatten(in_tree, blocks)
            jac.append(tree[0] if isinstance(argnums, int) else tree)
        jac = tree_unflatten(out_tree, jac)
        return (jac, aux) if has_aux else jac

    return jac_fun


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The Jacobian of ``fun`` by reverse mode: ``vmap`` of the ``vjp`` over the standard
    basis of the output.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.jacrev(lambda x: x ** 2)(jnp.array([1.0, 2.0]))
    Array([[2., 0.],
           [0., 4.]], dtype=float32)
    """

    @wraps(fun)
    def jac_fun(*args, **kwargs):
        partial_fun, diff_args = _jacobian_setup(fun, argnums, args, kwargs, holomorphic,
                                                 "jacrev", allow_int)
        result = vjp(partial_fun, *diff_args, has_aux=has_aux)
        out, f_vjp = result[0], result[1]
        flat_out, out_tree = tree_flatten(out)
        for leaf in user_leaves(out):  # a key array is one leaf
            _check_output_dtype(_leaf_dtype(leaf), holomorphic, "jacrev")
        out_avals = [get_aval(o) for o in flat_out]
        in_tree = tree_flatten(diff_args)[1]

        def pullback(*basis_leaves):
            return f_vjp(tree_unflatten(out_tree, basis_leaves))

        cts = vmap(pullback)(*_basis(out_avals))
        flat_cts = tree_flatten(cts)[0]
        in_avals = [get_aval(x) for x in tree_flatten(diff_args)[0]]
        per_input = [_blocks(c, out_avals, get_aval(c).shape[1:], forward=False, example=a)
                     for c, a in zip(flat_cts, in_avals, strict=True)]
        jac = []
        for j in range(len(out_avals)):
            tree = tree_unflatten(in_tree, [blocks[j] for blocks in per_input])
            jac.append(tree[0] if isinstance(argnums, int) else tree)
        jac = tree_unflatten(out_tree, jac)
        return (jac, result[2]) if has_aux else jac

    return jac_fun


jacobian = jacrev


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Hessian of scalar ``fun``: ``jacfwd(jacrev(fun))``."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                  has_aux=has_aux, holomorphic=holomorphic)
