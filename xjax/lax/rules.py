"""Family factories for lax primitives (DESIGN.md §4): one fix here reaches every member.

A lax wrapper converts its operands with :func:`to_operand` (Python scalars become weakly
typed arrays of the canonical dtype; lax never promotes), then binds its primitive.
"""

from __future__ import annotations

import numpy as np

from xjax.core import dtypes
from xjax.core.array import Array, frozen_value
from xjax.core.avals import ShapedArray, python_scalar_aval
from xjax.core.primitive import (BATCH_TODO, JVP_TODO, NONLINEAR, TRANSPOSE_TODO,  # noqa: F401
                                 Absent, Primitive)
from xjax.core.trace import Tracer
from xjax.lowering.stablehlo import aval_type, i64_array

_PY_SCALARS = (bool, int, float, complex)


def to_operand(x):
    """An operand a primitive accepts: Arrays and tracers pass through; Python scalars become
    weakly typed arrays; NumPy values and other array-likes become arrays of canonical dtype."""
    t = type(x)
    if t is Array or isinstance(x, Tracer):
        return x
    if t in _PY_SCALARS:
        aval = python_scalar_aval(x)
        return Array._from_numpy(np.asarray(x, aval.dtype), aval)
    if isinstance(x, (list, tuple)):
        raise TypeError(f"lax operations do not accept Python lists or tuples, got {x!r}; "
                        "convert with jnp.asarray first")
    npy = np.asarray(x)
    if npy.dtype == object:
        raise TypeError(f"Value {x!r} of type {type(x)} is not a valid JAX array type")
    dtype = dtypes.canonicalize_dtype(npy.dtype)
    if npy.dtype != dtype:
        npy = npy.astype(dtype)
    return Array._from_numpy(frozen_value(npy, x), ShapedArray(npy.shape, dtype, False))


# -- dtype classes accepted by elementwise families, named as JAX's errors name them --
FLOATING = ("floating",)
INEXACT = ("floating", "complexfloating")
INTEGER = ("integer",)
INTEGRAL_OR_BOOL = ("integer", "bool")
NUMERIC = ("integer", "floating", "complexfloating")
ANY = ("integer", "floating", "complexfloating", "bool")
REAL_NUMERIC = ("integer", "floating")


def _dtype_class(dtype: np.dtype) -> str:
    if dtype == np.bool_:
        return "bool"
    if dtypes.is_complex(dtype):
        return "complexfloating"
    if dtypes.is_float(dtype):
        return "floating"
    return "integer"


def check_dtype(name: str, dtype, accepted) -> None:
    if _dtype_class(dtype) not in accepted:
        raise TypeError(f"{name} does not accept dtype {np.dtype(dtype).name}. Accepted dtypes "
                        f"are subtypes of {', '.join(accepted)}.")


def broadcast_shapes(name: str, *shapes) -> tuple:
    """Shapes lax elementwise ops accept: rank-0 operands, or equal ranks whose dims agree or
    are 1 (JAX 0.10 semantics)."""
    ranked = [s for s in shapes if len(s)]
    if not ranked:
        return ()
    ranks = {len(s) for s in ranked}
    if len(ranks) != 1:
        raise TypeError(f"{name}: arrays must have the same number of dimensions, got "
                        f"{{{', '.join(str(r) for r in sorted(ranks))}}}")
    out = []
    for dims in zip(*ranked, strict=True):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                            f"{', '.join(str(s) for s in shapes)}.")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def elementwise_aval(name: str, accepted, result_dtype=None):
    """Abstract eval of an n-ary elementwise primitive: same dtypes, broadcastable shapes;
    the result is weak only if every operand is."""

    cache: dict = {}

    def abstract_eval(*avals, **params):
        # Eager execution evaluates this on every call: remember answers per signature.
        key = (avals, tuple(sorted(params.items()))) if params else avals
        out = cache.get(key)
        if out is None:
            out = cache[key] = compute(*avals)
        return out

    def compute(*avals):
        dtype = avals[0].dtype
        for aval in avals:
            check_dtype(name, aval.dtype, accepted)
        if any(a.dtype != dtype for a in avals[1:]):
            got = ", ".join(a.dtype.name for a in avals)
            raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got {got}. "
                            f"(Tip: jnp.{_numpy_name(name)} is a similar function that does "
                            "automatic type promotion on inputs).")
        if len(avals) == 1:
            shape = avals[0].shape
        else:
            shape = broadcast_shapes(name, *(a.shape for a in avals))
        weak = all(a.weak_type for a in avals)
        out_dtype = dtype if result_dtype is None else result_dtype(dtype)
        return ShapedArray(shape, out_dtype, weak if result_dtype is None else False)

    return abstract_eval


def _numpy_name(name: str) -> str:
    return {"sub": "subtract", "mul": "multiply", "div": "divide", "rem": "remainder",
            "pow": "power", "max": "maximum", "min": "minimum"}.get(name, name)


def broadcast_operand(ctx, value: str, aval: ShapedArray, shape) -> str:
    """``value`` broadcast to ``shape`` (no-op when it already has it)."""
    if tuple(aval.shape) == tuple(shape):
        return value
    if aval.shape == ():
        dims = []
    else:
        dims = list(range(len(shape)))
        if any(d != s for d, s in zip(aval.shape, shape, strict=True)):
            # size-1 dims are expanded by broadcast_in_dim directly
            pass
    out_type = aval_type(ShapedArray(shape, aval.dtype))
    return ctx.builder.op1("stablehlo.broadcast_in_dim", [value], out_type,
                           {"broadcast_dimensions": i64_array(dims)})


def hlo_elementwise(op_name: str, attributes=None):
    """Lowering of an elementwise primitive to one StableHLO (or CHLO) operation."""

    def lower(ctx, *operands, **params):
        out_aval = ctx.avals_out[0]
        args = [broadcast_operand(ctx, v, a, out_aval.shape)
                for v, a in zip(operands, ctx.avals_in, strict=True)]
        attrs = attributes(ctx, **params) if callable(attributes) else attributes
        return ctx.builder.op1(op_name, args, aval_type(out_aval), attrs)

    return lower


def elementwise_primitive(name: str, *, impl, lower, accepted, jvp=JVP_TODO,
                          transpose=NONLINEAR, batch=BATCH_TODO, result_dtype=None):
    """A Primitive of the elementwise family (unary or n-ary)."""
    return Primitive(name, abstract_eval=elementwise_aval(name, accepted, result_dtype),
                     impl=impl, lower=lower, jvp=jvp, transpose=transpose, batch=batch)


def unary_wrapper(primitive: Primitive, doc: str = ""):
    """The public ``lax.<name>(x)`` function of a unary primitive."""
    bind = primitive.bind

    def op(x):
        t = type(x)
        if t is not Array and not isinstance(x, Tracer):
            x = to_operand(x)
        return bind(x)

    op.bind_operand = bind  # for callers that already hold an Array or tracer
    op.__name__ = op.__qualname__ = primitive.name
    op.__doc__ = doc or f"Elementwise ``{primitive.name}``: the ``{primitive.name}`` primitive."
    return op


def binary_wrapper(primitive: Primitive, doc: str = "", name: str | None = None):
    """The public ``lax.<name>(x, y)`` function of a binary primitive."""
    bind = primitive.bind

    def op(x, y):
        if type(x) is not Array and not isinstance(x, Tracer):
            x = to_operand(x)
        if type(y) is not Array and not isinstance(y, Tracer):
            y = to_operand(y)
        return bind(x, y)

    op.bind_operands = bind  # for callers that already hold Arrays or tracers
    op.__name__ = op.__qualname__ = name or primitive.name
    op.__doc__ = doc or f"Elementwise ``{primitive.name}``: the ``{primitive.name}`` primitive."
    return op
