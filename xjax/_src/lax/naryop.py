"""The n-ary elementwise family's factory (DESIGN.md §4): dtype classes, abstract eval, the
``naryop`` primitive factory and the public wrappers, and the lowering helpers shared by
``elementwise``, ``transcendental``, ``special``, ``bitwise``, ``compare`` and ``convert``
(and the reduction regions of ``reduce`` and its relatives). One fix here reaches every
member; the per-operand jvp rules (``parts``) are in ``elementwise``.

Abstract eval is on the eager hot path, so it avoids allocation where it can: a unary op
whose result has its operand's dtype returns the operand's aval itself.
"""

from __future__ import annotations

import warnings

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.ad_util import get_aval
from xjax._src.core.array import Array
from xjax._src.core.avals import ShapedArray
from xjax._src.core.primitive import NONLINEAR, Primitive, compiled_when_large, registry
from xjax._src.lax import sharding_rules
from xjax._src.core.trace import Tracer
from xjax._src.lax.ad_helpers import late_rule
from xjax._src.lax.batch_rules import batch_elementwise, not_mapped
from xjax._src.lax.operands import to_operand
from xjax._src.lowering.stablehlo import aval_type, i64_array, tensor_type

# NumPy warns on overflow, division by zero and invalid values; XLA (and so JAX) computes the
# same IEEE results silently. Impls run inside xjax modules, so silence RuntimeWarnings raised
# from those frames only: user code keeps NumPy's behaviour, and the hot path pays nothing.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"xjax\.")
warnings.filterwarnings("ignore", category=np.exceptions.ComplexWarning, module=r"xjax\.")

# -- dtype classes, named as JAX's error messages name them --

_FLOATS = (dtypes.bfloat16, np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))
_CLASSES = {
    "bool": (np.dtype(np.bool_),),
    "signedinteger": tuple(np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64)),
    "unsignedinteger": tuple(np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)),
    "floating": _FLOATS,
    "complexfloating": (np.dtype(np.complex64), np.dtype(np.complex128)),
    "float32": (np.dtype(np.float32),),
    "float64": (np.dtype(np.float64),),
}
_CLASSES["integer"] = _CLASSES["signedinteger"] + _CLASSES["unsignedinteger"]


class DtypeClass:
    """A set of accepted dtypes with the names JAX's errors list (``floating, ...``)."""

    __slots__ = ("names", "dtypes")

    def __init__(self, *names: str):
        self.names = names
        self.dtypes = frozenset(d for n in names for d in _CLASSES[n])

    def __contains__(self, dtype) -> bool:
        return dtype in self.dtypes

    def __str__(self) -> str:
        return ", ".join(self.names)


FLOATING = DtypeClass("floating")
INEXACT = DtypeClass("floating", "complexfloating")
INTEGER = DtypeClass("integer")
INTEGRAL_OR_BOOL = DtypeClass("integer", "bool")
NUMERIC = DtypeClass("integer", "floating", "complexfloating")
REAL_NUMERIC = DtypeClass("integer", "floating")
SIGNED_OR_INEXACT = DtypeClass("floating", "complexfloating", "signedinteger")
ORDERED = DtypeClass("integer", "floating", "bool")
ANY = DtypeClass("integer", "floating", "complexfloating", "bool")
COMPLEX = DtypeClass("complexfloating")
F32_F64 = DtypeClass("float32", "float64")
F32_COMPLEX_F64 = DtypeClass("float32", "complexfloating", "float64")

# numpy-style names of the lax ops, for the promotion tip in dtype-mismatch errors
_NUMPY_NAMES = {"sub": "subtract", "mul": "multiply", "div": "divide", "rem": "remainder",
                "pow": "power", "max": "maximum", "min": "minimum", "eq": "equal",
                "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",
                "ge": "greater_equal", "and": "bitwise_and", "or": "bitwise_or",
                "xor": "bitwise_xor", "shift_left": "left_shift",
                "shift_right_arithmetic": "right_shift", "shift_right_logical": "right_shift",
                "select_n": "where", "atan2": "arctan2", "nextafter": "nextafter"}


def _dtype_kind(dtype) -> str:
    if dtype == np.bool_:
        return "bool"
    if dtypes.is_complex(dtype):
        return "complexfloating"
    if dtypes.is_float(dtype):
        return "floating"
    return "integer"


def check_dtype(name: str, dtype, accepted: DtypeClass) -> None:
    """JAX's TypeError when ``dtype``'s kind (bool, integer, floating or complexfloating:
    any float, float8 included, is floating) is not among ``accepted``'s names."""
    if _dtype_kind(dtype) not in accepted.names:
        raise TypeError(f"{name} does not accept dtype {np.dtype(dtype).name}. Accepted dtypes "
                        f"are subtypes of {accepted}.")


def check_accepted(name: str, avals, accepted) -> None:
    """JAX's TypeError when an operand's dtype is outside its accepted class."""
    if len(avals) == 1:
        if avals[0].dtype not in accepted[0]:
            raise TypeError(f"{name} does not accept dtype {avals[0].dtype.name}. Accepted "
                            f"dtypes are subtypes of {accepted[0]}.")
        return
    for i, (aval, ok) in enumerate(zip(avals, accepted, strict=True)):
        if aval.dtype not in ok:
            raise TypeError(f"{name} does not accept dtype {aval.dtype.name} at position {i}. "
                            f"Accepted dtypes at position {i} are subtypes of {ok}.")


def check_same_dtypes(name: str, avals, tip_name: str | None = None) -> None:
    dtype = avals[0].dtype
    for aval in avals[1:]:
        if aval.dtype != dtype:
            got = ", ".join(a.dtype.name for a in avals)
            tip = tip_name or _NUMPY_NAMES.get(name, name)
            raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                            f"{got}. (Tip: jnp.{tip} is a similar function that does "
                            "automatic type promotion on inputs).")


# -- shapes and abstract eval --


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


def result_shape(name: str, avals) -> tuple:
    """The broadcast shape of the operands (rank-0 operands and size-1 dims broadcast)."""
    shape = avals[0].shape
    for aval in avals[1:]:
        if aval.shape != shape:  # rare: skip the general rule when all shapes agree
            return broadcast_shapes(name, *(a.shape for a in avals))
    return shape


def naryop_aval(name: str, accepted, result_dtype=None, same_dtypes: bool = True):
    """Abstract eval of an elementwise primitive.

    ``accepted`` is one :class:`DtypeClass` per operand (or one for all); the result is
    weak only when every operand is; ``result_dtype(dtype)`` maps the operand dtype to the
    result's (default: the same). Shapes are checked before dtypes, as in JAX.
    """
    per_position = tuple(accepted) if isinstance(accepted, (list, tuple)) else None
    cache: dict = {}

    def abstract_eval(*avals, **params):
        # eager execution evaluates this on every call: remember answers per signature
        key = (avals, tuple(sorted(params.items()))) if params else avals
        out = cache.get(key)
        if out is None:
            out = cache[key] = compute(*avals)
        return out

    def compute(*avals):
        shape = result_shape(name, avals)
        check_accepted(name, avals, per_position or (accepted,) * len(avals))
        if same_dtypes:
            check_same_dtypes(name, avals)
        return elementwise_result(avals, shape, result_dtype)

    return abstract_eval


def elementwise_result(avals, shape, result_dtype=None) -> ShapedArray:
    """The result aval of elementwise ``avals`` of broadcast ``shape``: weak when all are."""
    first = avals[0]
    weak = first.weak_type
    for aval in avals[1:]:
        weak = weak and aval.weak_type
    dtype = first.dtype if result_dtype is None else result_dtype(first.dtype)
    if shape == first.shape and weak == first.weak_type and dtype == first.dtype:
        return first  # avals are immutable: reuse rather than allocate
    return ShapedArray(shape, dtype, weak)


# -- the factory and the wrappers --


def naryop(name: str, accepted, *, impl, lower, jvp, batch, transpose=NONLINEAR,
           result_dtype=None, abstract_eval=None, **kwargs) -> Primitive:
    """A primitive of the elementwise family. Its ``jvp`` and ``batch`` rules are required
    (``parts(name, ...)`` and ``batch_naryop(name)`` for most members); the default
    ``transpose`` says the primitive is not linear."""
    aval_rule = abstract_eval or naryop_aval(name, accepted, result_dtype)
    kwargs.setdefault("sharding_rule", sharding_rules.elementwise(name))
    primitive = Primitive(name, abstract_eval=aval_rule, impl=impl, lower=lower, jvp=jvp,
                          transpose=transpose, batch=batch, **kwargs)
    compiled_when_large.add(primitive)
    return primitive


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


# -- rules shared by the family (the per-operand jvp rules, ``parts``, are in elementwise) --


def scalar_like(x, value):
    """A rank-0 constant of ``x``'s dtype, for use beside ``x`` in lax ops, which never
    promote. As JAX's ``lax._const`` (which gives a Python scalar only for a weak scalar),
    it is weak only when ``x`` is weak and of rank 0: beside a weak array of higher rank it
    is strong, and so is what it meets (``grad(lambda x: cbrt(tile(x, 2)).sum())(1.)``)."""
    aval = get_aval(x)
    dtype = aval.dtype
    weak = aval.weak_type and not aval.shape
    return Array._from_numpy(np.asarray(value, dtype), ShapedArray((), dtype, weak))


def _naryop_batch(primitive):
    general = batch_elementwise(primitive)

    def batch(args, dims, **params):
        rank = dim = None
        for x, d in zip(args, dims, strict=True):
            ndim = len(get_aval(x).shape)
            if d is not_mapped:
                if ndim:
                    return general(args, dims, **params)
            elif dim is None:
                rank, dim = ndim, d
            elif d != dim or ndim != rank:
                return general(args, dims, **params)
        return primitive.bind(*args, **params), dim

    return batch


def batch_naryop(name: str):
    """The vmap rule of the elementwise primitive ``name``: applied to the batched operands
    as they are when every mapped operand has the same rank and batch axis and the unmapped
    ones are rank 0 (no transpose, the batch axis stays); else ``batch_elementwise``."""
    return late_rule(_naryop_batch, name)


def batch_unary(name: str):
    """The vmap rule of a one-operand primitive acting on each element alone (and keeping
    shape): applied to the batched operand; the batch axis stays where it is."""

    def batch(args, dims, **params):
        (x,), (dim,) = args, dims
        return registry[name].bind(x, **params), dim

    return batch


# -- impl helpers --

_LOW_FLOATS = frozenset([dtypes.bfloat16, np.dtype(np.float16)])


def via_float32(fn):
    """An impl computing ``fn`` in float32 for float16/bfloat16 operands, as XLA's CPU backend
    does for composite expressions (it keeps intermediates in float32 and rounds once)."""

    def impl(*args, **params):
        dtype = args[0].dtype
        if dtype in _LOW_FLOATS:
            out = fn(*(np.asarray(a, np.float32) for a in args), **params)
            return np.asarray(out).astype(dtype)
        return fn(*args, **params)

    impl.__name__ = getattr(fn, "__name__", "impl")
    return impl


def by_kind(real_impl, complex_impl):
    """A unary impl dispatching on complex operands (XLA's complex conventions)."""

    def impl(x):
        return complex_impl(x) if x.dtype.kind == "c" else real_impl(x)

    impl.__name__ = getattr(real_impl, "__name__", "impl")
    return impl


# -- lowering helpers: one value per SSA name, all of the result's shape --


def broadcast_operand(ctx, value: str, aval: ShapedArray, shape) -> str:
    """``value`` broadcast to ``shape`` (no-op when it already has it); size-1 dims are
    expanded by ``broadcast_in_dim`` directly."""
    if tuple(aval.shape) == tuple(shape):
        return value
    dims = [] if aval.shape == () else list(range(len(shape)))
    out_type = aval_type(ShapedArray(shape, aval.dtype))
    return ctx.builder.op1("stablehlo.broadcast_in_dim", [value], out_type,
                           {"broadcast_dimensions": i64_array(dims)})


class Emitter:
    """Emits elementwise StableHLO on values of one shape, for lowering composite rules.

    Each method takes and returns SSA names; ``dtype`` arguments name element dtypes.
    """

    def __init__(self, ctx, shape):
        self.ctx = ctx
        self.b = ctx.builder
        self.shape = tuple(shape)

    def type(self, dtype) -> str:
        return tensor_type(self.shape, dtype)

    def const(self, value, dtype) -> str:
        scalar = self.b.constant(np.asarray(value, dtype=dtype))
        if not self.shape:
            return scalar
        return self.b.op1("stablehlo.broadcast_in_dim", [scalar], self.type(dtype),
                          {"broadcast_dimensions": "array<i64>"})

    def op(self, name, args, dtype, attrs=None) -> str:
        return self.b.op1(name, list(args), self.type(dtype), attrs)

    def compare(self, x, y, direction, compare_type) -> str:
        attrs = {"comparison_direction": f"#stablehlo<comparison_direction {direction}>",
                 "compare_type": f"#stablehlo<comparison_type {compare_type}>"}
        return self.op("stablehlo.compare", [x, y], np.bool_, attrs)

    def select(self, pred, on_true, on_false, dtype) -> str:
        return self.op("stablehlo.select", [pred, on_true, on_false], dtype)

    def convert(self, x, dtype) -> str:
        return self.op("stablehlo.convert", [x], dtype)


def broadcast_args(ctx, operands, shape=None):
    """Operands broadcast to the result's shape."""
    shape = ctx.avals_out[0].shape if shape is None else shape
    return [broadcast_operand(ctx, v, a, shape)
            for v, a in zip(operands, ctx.avals_in, strict=True)]


def compare_type(dtype) -> str:
    """StableHLO's comparison type for ``dtype`` (bool compares as unsigned, as in JAX)."""
    if dtypes.is_float(dtype) or dtypes.is_complex(dtype):
        return "FLOAT"
    if dtypes.is_signed_integer(dtype):
        return "SIGNED"
    return "UNSIGNED"


def lower_single(op_name: str, attributes=None):
    """Lowering to one StableHLO/CHLO op on broadcast operands."""

    def lower(ctx, *operands, **params):
        out = ctx.avals_out[0]
        attrs = attributes(ctx, **params) if callable(attributes) else attributes
        return ctx.builder.op1(op_name, broadcast_args(ctx, operands), aval_type(out), attrs)

    return lower


def lower_single_in_float32(op_name: str):
    """Lowering to one op, computed in float32 for float16/bfloat16 operands: XLA's CPU
    backend evaluates some ops (rsqrt, cbrt, log1p) natively in float16, rounding differently
    from JAX's (and from the NumPy impls, which round once from float32)."""
    plain = lower_single(op_name)

    def lower(ctx, *operands, **params):
        dtype = ctx.avals_in[0].dtype
        if dtype not in _LOW_FLOATS:
            return plain(ctx, *operands, **params)
        out = ctx.avals_out[0]
        em = Emitter(ctx, out.shape)
        args = [em.convert(a, np.float32) for a in broadcast_args(ctx, operands)]
        return em.convert(em.op(op_name, args, np.float32), out.dtype)

    return lower


def lower_composite(build):
    """Lowering by ``build(emitter, dtype, *broadcast_operands, **params) -> value``."""

    def lower(ctx, *operands, **params):
        em = Emitter(ctx, ctx.avals_out[0].shape)
        return build(em, ctx.avals_in[0].dtype, *broadcast_args(ctx, operands), **params)

    return lower


# -- reduction regions (reductions, scatters, cumulative and windowed ops, dot algorithms) --

_COMBINER_OPS = {"add": "stablehlo.add", "sub": "stablehlo.subtract",
                 "mul": "stablehlo.multiply", "max": "stablehlo.maximum",
                 "min": "stablehlo.minimum", "and": "stablehlo.and", "or": "stablehlo.or",
                 "xor": "stablehlo.xor"}


def combiner_body(kind: str, dtype):
    """The body ``(fb, [a, b]) -> [a <kind> b]`` of a reduction region over scalars of
    ``dtype``. Boolean max/min are or/and; complex max/min compare lexicographically by
    (real, imag) with explicit compares, as JAX lowers them (XLA's complex max is not)."""
    scalar = tensor_type((), dtype)
    if dtype == np.bool_ and kind in ("max", "min"):
        kind = "or" if kind == "max" else "and"
    if kind in ("max", "min") and dtypes.is_complex(dtype):
        return lambda fb, args: [_complex_extremum(fb, *args, dtype, kind == "max")]
    name = _COMBINER_OPS[kind]
    return lambda fb, args: [fb.op1(name, args, scalar)]


def _complex_extremum(fb, a, c, dtype, is_max) -> str:
    part = tensor_type((), np.finfo(dtype).dtype)
    bool_t = tensor_type((), np.bool_)
    ar, cr = fb.op1("stablehlo.real", [a], part), fb.op1("stablehlo.real", [c], part)
    ai, ci = fb.op1("stablehlo.imag", [a], part), fb.op1("stablehlo.imag", [c], part)
    direction = "GT" if is_max else "LT"

    def cmp(x, y, how):
        return fb.op1("stablehlo.compare", [x, y], bool_t,
                      {"comparison_direction": f"#stablehlo<comparison_direction {how}>",
                       "compare_type": "#stablehlo<comparison_type FLOAT>"})

    pick_a = fb.op1("stablehlo.select", [cmp(ar, cr, "EQ"), cmp(ai, ci, direction),
                                         cmp(ar, cr, direction)], bool_t)
    return fb.op1("stablehlo.select", [pick_a, a, c], tensor_type((), dtype))


def scalar_region(builder, dtype, kind: str) -> str:
    """The region ``(a, b) -> a <kind> b`` over scalars of ``dtype`` (see combiner_body)."""
    scalar = tensor_type((), dtype)
    return builder.region([scalar, scalar], combiner_body(kind, dtype))


# -- dtypes --


def real_dtype(dtype) -> np.dtype:
    """float32 for complex64, float64 for complex128; other dtypes unchanged."""
    if dtype == np.complex64:
        return np.dtype(np.float32)
    if dtype == np.complex128:
        return np.dtype(np.float64)
    return dtype


def complex_dtype(dtype) -> np.dtype:
    return np.dtype(np.complex128) if dtype == np.float64 else np.dtype(np.complex64)


__all__: list[str] = []
