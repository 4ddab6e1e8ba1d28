"""Tokens (``create_token``, ``after_all``), ``composite``, ``dce_sink``,
``platform_dependent`` and ``stage``: operations about staging and ordering rather than values.

Tokens. JAX gives tokens their own abstract type (``Tok`` in jaxprs). xjax's core has only
array avals, so a token is a :class:`Token` object holding an empty ``bool[0]`` array: the
buffer JAX's ``Token`` holds at run time. ``Token`` is a pytree with that one leaf, so tokens
pass in and out of ``jit``, ``grad`` and ``vmap`` as JAX's do; ``create_token_p`` and
``after_all_p`` are primitives, and jaxprs show their values as ``bool[0]`` (JAX: ``Tok``).
User tokens order nothing in xjax (its host callbacks are ordered by the lowering's own token
chain, ``xjax.lowering.effects``), as in JAX, where they only feed the removed infeed/outfeed.

Lowering a composite: JAX emits ``stablehlo.composite``; xjax inlines the decomposition, which
the composite's semantics define (a compiler may only replace it by an equivalent).
"""

from __future__ import annotations

import functools

import numpy as np

from xjax._src.core import errors
from xjax._src.core.ad_util import Zero, get_aval, tangent_aval
from xjax._src.core.array import Array
from xjax._src.core.avals import ShapedArray
from xjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, eval_jaxpr
from xjax._src.core.primitive import NOT_DIFFERENTIABLE, Absent, Primitive
from xjax._src.core.pytree import register_pytree_node, tree_flatten, tree_unflatten
from xjax._src.core.trace import Tracer
from xjax._src.lax.batch_rules import not_mapped
from xjax._src.lax.operands import to_operand
from xjax._src.core.primitive import registry
from xjax._src.lowering.lower_jaxpr import lower_jaxpr_body
from xjax._src.runtime.client import default_backend

# -- tokens --

TOKEN_AVAL = ShapedArray((0,), np.bool_)
_NOT_A_TOKEN = "Arguments to after_all must be tokens"


class Token:
    """A token: a value with no data, which orders side effects in XLA programs.

    Holds an empty ``bool[0]`` array (or a tracer of one): see the module docstring.
    """

    __slots__ = ("_buf",)

    def __init__(self, buf):
        self._buf = buf

    def block_until_ready(self):
        """Wait for the computation that made this token."""
        if isinstance(self._buf, Array):
            self._buf.block_until_ready()
        return self


register_pytree_node(Token, lambda t: ((t._buf,), None), lambda _, children: Token(*children))


def _token_buffer():
    return np.zeros((0,), np.bool_)


def _token_lower(ctx, *operands, **params):
    return ctx.builder.constant(_token_buffer())


def _token_jvp(name):
    def jvp(primals, tangents, **params):
        out = registry[name].bind(*primals, **params)
        return out, Zero(tangent_aval(get_aval(out)))
    return jvp


def _token_batch(name):
    def batch(args, dims, **params):  # a token carries no data: one token for the batch
        unbatched = [a for a, d in zip(args, dims, strict=True) if d is not_mapped]
        return registry[name].bind(*unbatched, **params), not_mapped
    return batch


create_token_p = Primitive(
    "create_token", abstract_eval=lambda: TOKEN_AVAL, impl=_token_buffer, lower=_token_lower,
    jvp=_token_jvp("create_token"), transpose=Absent("no operands"),
    batch=_token_batch("create_token"))


def _after_all_abstract_eval(*avals):
    if any(a != TOKEN_AVAL for a in avals):
        raise TypeError(_NOT_A_TOKEN)
    return TOKEN_AVAL


after_all_p = Primitive(
    "after_all", abstract_eval=_after_all_abstract_eval, impl=lambda *_: _token_buffer(),
    lower=_token_lower, jvp=_token_jvp("after_all"), transpose=NOT_DIFFERENTIABLE,
    batch=_token_batch("after_all"))


def create_token(_=None):
    """A token with no preconditions (the argument is ignored, as in JAX).

    Examples
    --------
    >>> from xjax import lax
    >>> type(lax.create_token()).__name__
    'Token'
    """
    return Token(create_token_p.bind())


def after_all(*operands):
    """A token that comes after all the given tokens.

    Examples
    --------
    >>> from xjax import lax
    >>> type(lax.after_all(lax.create_token(), lax.create_token())).__name__
    'Token'
    """
    if not all(isinstance(t, Token) for t in operands):
        raise TypeError(_NOT_A_TOKEN)
    return Token(after_all_p.bind(*[t._buf for t in operands]))


# -- stage --


def _stage_lower(ctx, x):
    return x


def _stage_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return stage_p.bind(x), t if type(t) is Zero else stage_p.bind(t)


stage_p = Primitive(
    "stage", abstract_eval=lambda x: x, impl=np.asarray, lower=_stage_lower, jvp=_stage_jvp,
    transpose=lambda ct, x: [ct], batch=lambda args, dims: (stage_p.bind(*args), dims[0]))


def stage(x, /):
    """Lift a value into the active trace: the identity, returning an array (outside any
    transformation) or a tracer of the current transformation.

    Examples
    --------
    >>> import numpy as np
    >>> from xjax import lax
    >>> lax.stage(np.ones(2))
    Array([1., 1.], dtype=float32)
    """
    if isinstance(x, Tracer):
        return x  # already a value of a trace: lifting it is the identity
    out = stage_p.bind(to_operand(x))
    if type(out) is Array and type(x) is Array:
        return x  # outside any transformation an Array is returned as it is, as in JAX
    return out


# -- dce_sink --


def _dce_sink_jvp(primals, tangents, *, prevent_mlir_dce):
    (x,), (t,) = primals, tangents
    dce_sink_p.bind(x, prevent_mlir_dce=prevent_mlir_dce)
    if type(t) is not Zero:
        dce_sink_p.bind(t, prevent_mlir_dce=prevent_mlir_dce)
    return [], []


def _dce_sink_transpose(ct, x, *, prevent_mlir_dce):
    return [Zero(x.aval)]


def _dce_sink_batch(args, dims, *, prevent_mlir_dce):
    dce_sink_p.bind(*args, prevent_mlir_dce=prevent_mlir_dce)
    return [], []


dce_sink_p = Primitive(
    "dce_sink", abstract_eval=lambda x, **_: [], impl=lambda x, **_: [],
    lower=lambda ctx, x, **_: [],  # marks a value used while tracing; nothing to compute
    jvp=_dce_sink_jvp, transpose=_dce_sink_transpose, batch=_dce_sink_batch,
    multiple_results=True)


def dce_sink(val, *, prevent_mlir_dce: bool = False):
    """Mark every leaf of ``val`` as used, so that dead-code elimination of jaxprs keeps
    the computation making it. Returns None.

    ``prevent_mlir_dce`` asks JAX to keep the value in the compiled program too (a custom
    call); xjax's lowering emits nothing for ``dce_sink`` and XLA may still drop an unused
    value, which changes no result.

    Examples
    --------
    >>> from xjax import lax
    >>> lax.dce_sink(1.0) is None
    True
    """
    leaves, _ = tree_flatten(val)
    for i, leaf in enumerate(leaves):
        try:
            if not isinstance(leaf, (Array, Tracer)) and np.asarray(leaf).dtype.kind in "OUSMm":
                raise TypeError  # strings, objects, dates: not array types
            operand = to_operand(leaf)
        except TypeError:
            raise TypeError("Error interpreting argument to dce_sink as a JAX value. The "
                            f"problematic value is of type {type(leaf)} and was passed to "
                            f"dce_sink at position {i}.") from None
        dce_sink_p.bind(operand, prevent_mlir_dce=bool(prevent_mlir_dce))


# -- composite --


def _composite_abstract_eval(*avals, name, attributes, version, jaxpr):
    return list(jaxpr.out_avals)


def _composite_impl(*args, name, attributes, version, jaxpr):
    return [np.asarray(o) for o in eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)]


def _composite_lower(ctx, *args, name, attributes, version, jaxpr):
    consts = [ctx.builder.constant(np.asarray(c)) for c in jaxpr.consts]
    return lower_jaxpr_body(ctx.builder, jaxpr.jaxpr, consts, list(args))


def _composite_jvp(*_, **__):
    raise ValueError("JVP rule for composite not implemented. You can use `jax.custom_jvp` "
                     "to add support. See "
                     "https://docs.jax.dev/en/latest/_autosummary/jax.custom_jvp.html")


def _composite_transpose(*_, **__):
    raise ValueError("Transpose rule for composite not implemented. You can use"
                     "`jax.custom_jvp` or `jax.custom_vjp` to add support. See "
                     "https://docs.jax.dev/en/latest/_autosummary/jax.custom_jvp.html")


def _composite_batch(*_, **__):
    raise NotImplementedError("Batching rule for 'composite' not implemented")


composite_p = Primitive(
    "composite", abstract_eval=_composite_abstract_eval, impl=_composite_impl,
    lower=_composite_lower, jvp=_composite_jvp, transpose=_composite_transpose,
    batch=_composite_batch, multiple_results=True)


class _Hashable:
    """A NumPy array attribute as a hashable param (compared by value)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return type(other) is _Hashable and np.array_equal(self.value, other.value) and \
            self.value.dtype == other.value.dtype

    def __hash__(self):
        return hash((self.value.shape, self.value.dtype.str, self.value.tobytes()))

    def __repr__(self):
        return repr(self.value)


def composite(decomposition, name: str, version: int = 0):
    """Wrap ``decomposition`` as a composite operation called ``name``: the function
    returned computes ``decomposition(*args, **kwargs)``, with ``args`` its operands and
    ``kwargs`` static attributes. A compiler may recognise the name and attributes and
    substitute an equivalent kernel; xjax compiles the decomposition.

    As in JAX, a composite has no derivative (``grad``/``jvp`` raise ``ValueError``: wrap it
    in ``custom_jvp``) and no batching rule (``vmap`` raises ``NotImplementedError``).

    Parameters
    ----------
    decomposition : callable
    name : str
    version : int, optional

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> tangent = lax.composite(lambda x: lax.sin(x) / lax.cos(x), name="my.tangent")
    >>> tangent(jnp.array([0.0]))
    Array([0.], dtype=float32)
    """

    @functools.wraps(decomposition)
    def call(*args, **kwargs):
        from xjax._src.interpreters.staging import trace_to_jaxpr  # staging lives above lax
        if any(isinstance(v, Tracer) for v in kwargs.values()):
            raise errors.UnexpectedTracerError(
                "Found a JAX Tracer as an attribute in the decomposition for the composite "
                f"op '{name}'. This means that the decomposition function closes over a "
                "value that is involved in a JAX transformation. Any values that aren't "
                "explicitly known at compile time must be explicitly passed as arguments to "
                "the composite.\n\nNote: If you are passing jax arrays as attributes, use "
                "numpy arrays instead.")
        flat, in_tree = tree_flatten(args)
        flat = [to_operand(x) for x in flat]
        out_tree = []

        def flat_fun(*xs):
            out = decomposition(*tree_unflatten(in_tree, list(xs)), **kwargs)
            leaves, tree = tree_flatten(out)
            out_tree.append(tree)
            return [to_operand(x) for x in leaves]

        closed = trace_to_jaxpr(flat_fun, [get_aval(x) for x in flat])
        # the decomposition's constants become leading operands (they may be tracers)
        inner = closed.jaxpr
        jaxpr = ClosedJaxpr(Jaxpr([], list(inner.constvars) + list(inner.invars),
                                  inner.outvars, inner.eqns, inner.debug_info), [])
        attributes = []
        for key, value in kwargs.items():
            leaves, treedef = tree_flatten(value)
            leaves = tuple(_Hashable(v) if isinstance(v, np.ndarray) else v for v in leaves)
            attributes.append((key, leaves, treedef))
        outs = composite_p.bind(*[to_operand(c) for c in closed.consts], *flat, name=name,
                                attributes=tuple(attributes), version=version, jaxpr=jaxpr)
        return tree_unflatten(out_tree[0], list(outs))

    return call


# -- platform_dependent --


def _current_platform() -> str:
    """The platform name of computations here: 'cpu', or 'cuda' for xjax's GPU backend."""
    backend = default_backend()
    return "cuda" if backend == "gpu" else backend


def platform_dependent(*args, default=None, **per_platform):
    """``per_platform[platform](*args)`` for the platform the computation runs on (``cpu``,
    or ``cuda`` with xjax's GPU backend), else ``default(*args)``.

    xjax knows the platform while tracing (one backend per process), so only the chosen
    branch is traced; JAX traces every branch into a ``cond`` resolved when lowering.

    Examples
    --------
    >>> from xjax import lax
    >>> lax.platform_dependent(1.0, cpu=lambda x: x + 1, default=lambda x: x - 1)
    2.0
    """
    platforms: list[tuple[list[str], object]] = []
    for pname, branch in per_platform.items():
        if not callable(branch):
            raise TypeError(f"lax.platform_dependent: the '{pname}' branch must be a callable.")
        if pname == "gpu":
            raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
        for names, b in platforms:
            if b == branch:
                names.append(pname)
                break
        else:
            platforms.append(([pname], branch))
    if default is not None and not callable(default):
        raise TypeError("lax.platform_dependent: the 'default' branch must be a callable.")
    platform = _current_platform()
    for names, branch in platforms:
        if platform in names:
            return branch(*args)
    if default is not None:
        return default(*args)
    described = tuple(tuple(names) for names, _ in platforms)
    raise NotImplementedError(f"MLIR translation rule for primitive 'platform_index(platforms="
                              f"{described})' not found for platform {platform}")


__all__ = ["create_token", "create_token_p", "after_all", "after_all_p", "composite",
           "dce_sink", "dce_sink_p", "platform_dependent", "stage", "stage_p"]
