"""``dot_general``: contraction over paired dimensions with batch dimensions, and its
wrappers ``dot`` and ``batch_matmul``.

Result layout (StableHLO ``dot_general``): batch dims, then the lhs free dims, then the rhs
free dims. Mixed input dtypes follow XLA's rule (the "higher" type wins; JAX converts both
operands to the result type before lowering on CPU/GPU); ``preferred_element_type`` widens
the result. Spec: https://openxla.org/stablehlo/spec#dot_general
"""

from __future__ import annotations

import enum
import functools
import math

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.avals import ShapedArray
from xjax._src.core.config import config
from xjax._src.core.out_sharding import check_out_sharding
from xjax._src.core.primitive import Primitive
from xjax._src.lax import sharding_rules
from xjax._src.lax.ad_helpers import late_rule, operand_aval
from xjax._src.lax.ad_rules import get_aval, jvp_by_parts, transpose_by_parts
from xjax._src.lax.batch_rules import move_axis, not_mapped
from xjax._src.lax.convert import convert_element_type
from xjax._src.lax.naryop import scalar_region
from xjax._src.lax.shape import as_operand, index_tuple, transpose
from xjax._src.lowering.stablehlo import aval_type, i64_array


class Precision(enum.Enum):
    """Precision of a dot on accelerators: DEFAULT (fastest), HIGH, HIGHEST (float32).

    Also accepts JAX's strings: ``'default'``/``'fastest'``/``'bfloat16'``,
    ``'high'``/``'bfloat16_3x'``/``'tensorfloat32'``, ``'highest'``/``'float32'``.
    """

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        names = {"default": cls.DEFAULT, "fastest": cls.DEFAULT, "bfloat16": cls.DEFAULT,
                 "high": cls.HIGH, "bfloat16_3x": cls.HIGH, "tensorfloat32": cls.HIGH,
                 "highest": cls.HIGHEST, "float32": cls.HIGHEST}
        if isinstance(value, str) and value.lower() in names:
            return names[value.lower()]
        return None

    def __repr__(self) -> str:
        return f"Precision.{self.name}"

    def __str__(self) -> str:
        return self.name


def precision_config_attr(precision) -> str:
    """StableHLO's ``precision_config`` of a canonical pair of :class:`Precision`."""
    return "[" + ", ".join(f"#stablehlo<precision {p.name}>" for p in precision) + "]"


def _is_algorithm(precision) -> bool:
    """Whether a canonical precision is a dot algorithm (``xjax.lax.DotAlgorithm`` or
    ``DotAlgorithmPreset``, defined in ``dot_algorithms``) rather than None or a pair."""
    return precision is not None and type(precision) is not tuple


def canonicalize_precision(precision):
    """None, a pair of :class:`Precision` (one per operand), or a dot algorithm."""
    if precision is None:  # jax_default_matmul_precision (its values checked when set)
        default = config.jax_default_matmul_precision
        return None if default is None else canonicalize_precision(default)
    if isinstance(precision, Precision):
        return (precision, precision)
    if isinstance(precision, str):
        if Precision._missing_(precision) is not None:
            p = Precision(precision)
            return (p, p)
        preset = dot_algorithms.preset_by_name(precision)
        if preset is not None:
            return preset
    elif isinstance(precision, (dot_algorithms.DotAlgorithm, dot_algorithms.DotAlgorithmPreset)):
        return precision
    elif (isinstance(precision, (tuple, list)) and len(precision) == 2
          and all(isinstance(p, (str, Precision)) for p in precision)):
        return tuple(Precision(p) for p in precision)
    raise ValueError("Precision argument must be one of:\n- None,\n- a string in "
                     "['highest', 'float32', 'high', 'bfloat16_3x', 'tensorfloat32', "
                     "'default', 'bfloat16', 'fastest', None],\n- a lax.Precision value,\n"
                     "- a tuple of two lax.Precision values or strings,\n"
                     "- a lax.DotAlgorithmPreset or the name of one of these presets, or\n"
                     f"- a lax.DotAlgorithm value;\nbut got {precision}.")


class DotDimensionNumbers(tuple):
    """``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))`` as a plain tuple of
    tuples that prints with lists, as JAX's jaxprs show it: ``(([1], [0]), ([], []))``."""

    __slots__ = ()

    def __new__(cls, dimension_numbers):
        (lc, rc), (lb, rb) = dimension_numbers
        return super().__new__(cls, ((index_tuple(lc), index_tuple(rc)),
                                     (index_tuple(lb), index_tuple(rb))))

    def __repr__(self) -> str:
        (lc, rc), (lb, rb) = self
        return f"(({list(lc)}, {list(rc)}), ({list(lb)}, {list(rb)}))"


@functools.lru_cache(maxsize=1024)
def _cached_dimension_numbers(dimension_numbers):
    return DotDimensionNumbers(dimension_numbers)


def _dimension_numbers(dimension_numbers):
    """:class:`DotDimensionNumbers`, cached for the hashable (tuple) spellings."""
    try:
        return _cached_dimension_numbers(dimension_numbers)
    except TypeError:  # lists (unhashable) or invalid: build (and validate) uncached
        return DotDimensionNumbers(dimension_numbers)


# -- shape and dtype rules --

def _check_dims(side, ndim, contracting, batch):
    if not all(0 <= d < ndim for d in contracting + batch):
        raise TypeError(f"dot_general requires {side} dimension numbers to be nonnegative and "
                        f"less than the number of axes of the {side} value, got {side}_batch "
                        f"of {batch} and {side}_contracting of {contracting} for {side} of "
                        f"rank {ndim}")


def _check_distinct(side, contracting, batch):
    if len(set(batch)) != len(batch):
        raise TypeError(f"dot_general requires {side} batch dimensions to be distinct, got "
                        f"{side}_batch {batch}.")
    if len(set(contracting)) != len(contracting):
        raise TypeError(f"dot_general requires {side} contracting dimensions to be distinct, "
                        f"got {side}_contracting {contracting}.")


@functools.lru_cache(maxsize=4096)
def _dot_shape(lhs_shape, rhs_shape, dimension_numbers):
    """The result shape; cached because eager loops ask the same question many times."""
    (lc, rc), (lb, rb) = dimension_numbers
    _check_dims("lhs", len(lhs_shape), lc, lb)
    _check_dims("rhs", len(rhs_shape), rc, rb)
    if len(lb) != len(rb):
        raise TypeError("dot_general requires equal numbers of lhs_batch and rhs_batch "
                        f"dimensions, got lhs_batch {lb} and rhs_batch {rb}.")
    _check_distinct("lhs", lc, lb)
    _check_distinct("rhs", rc, rb)
    for side, contracting, batch in (("lhs", lc, lb), ("rhs", rc, rb)):
        if set(contracting) & set(batch):
            raise TypeError(f"dot_general requires {side} batch dimensions to be disjoint from "
                            f"contracting dimensions, got {side}_batch {batch} and "
                            f"{side}_contracting {contracting}.")
    lhs_batch = tuple(lhs_shape[d] for d in lb)
    rhs_batch = tuple(rhs_shape[d] for d in rb)
    if lhs_batch != rhs_batch:
        raise TypeError("dot_general requires lhs batch dimensions and rhs batch dimensions to "
                        f"have the same shape, got {lhs_batch} and {rhs_batch}.")
    lhs_contract = tuple(lhs_shape[d] for d in lc)
    rhs_contract = tuple(rhs_shape[d] for d in rc)
    if lhs_contract != rhs_contract:
        raise TypeError("dot_general requires contracting dimensions to have the same shape, "
                        f"got {lhs_contract} and {rhs_contract}.")
    lhs_free = tuple(s for d, s in enumerate(lhs_shape) if d not in lc and d not in lb)
    rhs_free = tuple(s for d, s in enumerate(rhs_shape) if d not in rc and d not in rb)
    return lhs_batch + lhs_free + rhs_free


def _bit_width(dtype) -> int:
    return 1 if dtype == np.bool_ else dtype.itemsize * 8


@functools.lru_cache(maxsize=None)
def _type_properties(dtype):
    """XLA's ordering of element types for mixed-type dots (primitive_util's
    HigherPrecisionType): complex, exponent range, mantissa, width, signedness."""
    real = np.finfo(dtype).dtype if dtypes.is_complex(dtype) else dtype
    is_float = dtypes.is_float(real)
    return (dtypes.is_complex(dtype),
            int(dtypes.finfo(real).maxexp) if is_float else -1,
            int(dtypes.finfo(real).nmant) if is_float else -1,
            _bit_width(real), not dtypes.is_unsigned(real))


def _input_result_dtype(lhs_dtype, rhs_dtype):
    if lhs_dtype == rhs_dtype:
        return lhs_dtype
    lhs_prop, rhs_prop = _type_properties(lhs_dtype), _type_properties(rhs_dtype)
    if lhs_prop > rhs_prop:
        return lhs_dtype
    if rhs_prop > lhs_prop:
        return rhs_dtype
    if lhs_dtype != rhs_dtype:
        raise TypeError(f"lax.dot_general argument type error: {lhs_dtype}, {rhs_dtype}")
    return lhs_dtype


def _dot_dtype(lhs_dtype, rhs_dtype, preferred_element_type, check_bit_width=True):
    result = _input_result_dtype(lhs_dtype, rhs_dtype)
    if preferred_element_type is None or preferred_element_type == result:
        return result
    if check_bit_width and not dtypes.is_float(result) and \
            _bit_width(preferred_element_type) < _bit_width(result):
        raise TypeError("`preferred_element_type` must not be narrower than the original "
                        f"type, got preferred_element_type of {preferred_element_type} for "
                        f"result type of {result}.")
    return preferred_element_type


def _dot_general_abstract_eval(lhs, rhs, *, dimension_numbers, precision,
                               preferred_element_type, out_sharding):
    shape = _dot_shape(lhs.shape, rhs.shape, dimension_numbers)
    dtype = _dot_dtype(lhs.dtype, rhs.dtype, preferred_element_type,
                       check_bit_width=not _is_algorithm(precision))
    return ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type)


# -- NumPy --

def _compute_dtype(out_dtype, lhs_dtype, rhs_dtype):
    """The NumPy dtype to multiply and accumulate in (wide enough to round only once, or
    wrapping exactly like the result's integer type)."""
    if dtypes.is_complex(out_dtype) or dtypes.is_complex(lhs_dtype):
        wide = np.complex128 if np.dtype(np.complex128) in (out_dtype, lhs_dtype, rhs_dtype) \
            else np.complex64
        return np.dtype(wide)
    if dtypes.is_float(out_dtype) or dtypes.is_float(lhs_dtype) or dtypes.is_float(rhs_dtype):
        return np.dtype(np.float64 if np.dtype(np.float64) in (out_dtype, lhs_dtype, rhs_dtype)
                        else np.float32)
    return np.dtype(np.int64)  # integers wrap modulo 2**64, then modulo the result's width


# dtypes BLAS multiplies in directly (``_compute_dtype`` is the identity on them)
_BLAS_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.complex64,
                                              np.complex128))


def _dot_general_impl(lhs, rhs, *, dimension_numbers, precision, preferred_element_type,
                      out_sharding):
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    if _is_algorithm(precision):
        out_dtype = _dot_dtype(lhs.dtype, rhs.dtype, preferred_element_type, False)
        return dot_algorithms.algorithm_impl(lhs, rhs, dimension_numbers=dimension_numbers,
                                        precision=precision,
                                        preferred_element_type=preferred_element_type,
                                        out_dtype=out_dtype)
    out_dtype = _dot_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    (lc, rc), (lb, rb) = dimension_numbers
    if (not lb and lc == (lhs.ndim - 1,) and rhs.ndim <= 2 and rc == (0,)
            and lhs.dtype == rhs.dtype == out_dtype and out_dtype in _BLAS_DTYPES):
        # NumPy's own contraction: the common eager case, with no transposes or copies
        return np.asarray(np.dot(lhs, rhs))
    work = _compute_dtype(out_dtype, lhs.dtype, rhs.dtype)
    lhs_free = [d for d in range(lhs.ndim) if d not in lc and d not in lb]
    rhs_free = [d for d in range(rhs.ndim) if d not in rc and d not in rb]
    batch_shape = [lhs.shape[d] for d in lb]
    lhs_free_shape = [lhs.shape[d] for d in lhs_free]
    rhs_free_shape = [rhs.shape[d] for d in rhs_free]
    k = math.prod(lhs.shape[d] for d in lc)
    b = math.prod(batch_shape)
    a = np.transpose(lhs, list(lb) + lhs_free + list(lc)).astype(work, copy=False)
    c = np.transpose(rhs, list(rb) + list(rc) + rhs_free).astype(work, copy=False)
    m, n = math.prod(lhs_free_shape), math.prod(rhs_free_shape)
    if lb:
        out = np.matmul(a.reshape(b, m, k), c.reshape(b, k, n))
    else:  # NumPy's 2-D matmul is several times faster than a batch of one
        out = np.matmul(a.reshape(m, k), c.reshape(k, n))
    out = out.reshape(batch_shape + lhs_free_shape + rhs_free_shape)
    if out_dtype == np.bool_:
        return out != 0
    if dtypes.is_complex(out.dtype) and not dtypes.is_complex(out_dtype):
        out = out.real
    return out.astype(out_dtype)


# -- StableHLO --

def dot_dimension_numbers_attr(dimension_numbers) -> str:
    """The ``#stablehlo.dot<...>`` attribute of dot_general's dimension numbers."""
    (lc, rc), (lb, rb) = dimension_numbers
    fields = [("lhs_batching_dimensions", lb), ("rhs_batching_dimensions", rb),
              ("lhs_contracting_dimensions", lc), ("rhs_contracting_dimensions", rc)]
    dnums = ", ".join(f"{name} = {_dims(dims)}" for name, dims in fields if dims)
    return f"#stablehlo.dot<{dnums}>"


def _dims(values) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def _dot_general_lower(ctx, lhs, rhs, *, dimension_numbers, precision, preferred_element_type,
                       out_sharding):
    if _is_algorithm(precision):
        return dot_algorithms.algorithm_lower(ctx, lhs, rhs, dimension_numbers=dimension_numbers,
                                         precision=precision)
    lhs_aval, rhs_aval = ctx.avals_in
    out_aval = ctx.avals_out[0]
    b = ctx.builder
    # As JAX on CPU/GPU: operands of two types both go to the result type. On the GPU
    # also integer operands of a float result: XLA's GPU backend crashes compiling an
    # integer dot with a float result (seen with jax-cuda13-pjrt 0.11.2 on an H200).
    if lhs_aval.dtype != rhs_aval.dtype or (
            ctx.module.platform == "gpu" and dtypes.issubdtype(out_aval.dtype, np.inexact)
            and not dtypes.issubdtype(lhs_aval.dtype, np.inexact)):
        lhs = b.op1("stablehlo.convert", [lhs], aval_type(lhs_aval.update(dtype=out_aval.dtype)))
        rhs = b.op1("stablehlo.convert", [rhs], aval_type(rhs_aval.update(dtype=out_aval.dtype)))
    operands_in_out_dtype = lhs_aval.dtype != rhs_aval.dtype or lhs_aval.dtype == out_aval.dtype
    if (out_aval.dtype in _STRENGTH_REDUCED and operands_in_out_dtype
            and _only_batch_and_contracting(lhs_aval, rhs_aval, dimension_numbers)):
        return _lower_as_multiply_reduce(ctx, lhs, rhs, dimension_numbers)
    attrs = {"dot_dimension_numbers": dot_dimension_numbers_attr(dimension_numbers)}
    if precision is not None:
        attrs["precision_config"] = precision_config_attr(precision)
    return b.op1("stablehlo.dot_general", [lhs, rhs], aval_type(out_aval), attrs)


# jaxlib's algebraic simplifier rewrites a dot whose operands have no free dimensions (a
# vector-vector dot, batched or not) as reduce(multiply): XLA then fuses it and its loop
# accumulates with fused multiply-adds. The xla-cpu-pjrt plugin keeps the dot (a kernel
# without FMA), whose float results differ from JAX's in the last bits; emitting the
# multiply and reduce ourselves gives JAX's numbers.
_STRENGTH_REDUCED = {np.dtype(np.float32), np.dtype(np.float64)}


def _only_batch_and_contracting(lhs_aval, rhs_aval, dimension_numbers) -> bool:
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    return (len(lhs_contract) + len(lhs_batch) == lhs_aval.ndim
            and len(rhs_contract) + len(rhs_batch) == rhs_aval.ndim)


def _lower_as_multiply_reduce(ctx, lhs, rhs, dimension_numbers):
    """``dot_general`` of operands with only batch and contracting dims: both transposed to
    (batch..., contracting...), multiplied, and summed over the contracting dims."""
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    b = ctx.builder
    lhs_aval = ctx.avals_in[0]
    out_aval = ctx.avals_out[0]
    order = {"lhs": (*lhs_batch, *lhs_contract), "rhs": (*rhs_batch, *rhs_contract)}
    shape = tuple(lhs_aval.shape[d] for d in order["lhs"])
    joint = aval_type(ShapedArray(shape, out_aval.dtype))
    operands = []
    for value, perm in ((lhs, order["lhs"]), (rhs, order["rhs"])):
        if list(perm) != sorted(perm):
            value = b.op1("stablehlo.transpose", [value], joint, {"permutation": i64_array(perm)})
        operands.append(value)
    product = b.op1("stablehlo.multiply", operands, joint)
    init = b.constant(np.zeros((), out_aval.dtype))
    axes = tuple(range(len(lhs_batch), len(shape)))
    return b.op1("stablehlo.reduce", [product, init], aval_type(out_aval),
                 {"dimensions": i64_array(axes)},
                 regions=[scalar_region(b, out_aval.dtype, "add")])


# -- derivatives: bilinear --

def _dot_jvp_lhs(t, ans, lhs, rhs, **params):
    return dot_general_p.bind(t, rhs, **params)


def _dot_jvp_rhs(t, ans, lhs, rhs, **params):
    return dot_general_p.bind(lhs, t, **params)


def _free_dims(ndim, contracting, batch):
    return [d for d in range(ndim) if d not in contracting and d not in batch]


def _contract_ct(ct, other, x_aval, x_dims, other_dims, x_first, params):
    """The cotangent of one operand ``x`` of a dot_general whose other operand is
    ``other``: contract ``ct``'s dims of ``other``'s free dims with them, keep the batch
    dims paired, then put the result's dims in ``x``'s order (and dtype)."""
    x_contract, x_batch = x_dims
    other_contract, other_batch = other_dims
    n_batch = len(x_batch)
    n_x_free = len(_free_dims(x_aval.ndim, x_contract, x_batch))
    other_free = _free_dims(operand_aval(other).ndim, other_contract, other_batch)
    # ct: batch dims, then lhs free dims, then rhs free dims
    if x_first:
        ct_other = list(range(n_batch + n_x_free, n_batch + n_x_free + len(other_free)))
    else:
        ct_other = list(range(n_batch, n_batch + len(other_free)))
    dims = ((tuple(ct_other), tuple(other_free)), (tuple(range(n_batch)), tuple(other_batch)))
    out = dot_general(ct, other, dims, precision=params["precision"],
                      preferred_element_type=params["preferred_element_type"])
    # out: batch dims, ct's dims of x's free dims, then other's contracting dims ascending
    pairs = sorted(zip(other_contract, x_contract, strict=True))
    as_x_dims = list(x_batch) + _free_dims(x_aval.ndim, x_contract, x_batch) + \
        [x_dim for _, x_dim in pairs]
    permutation = tuple(int(i) for i in np.argsort(as_x_dims))
    if permutation != tuple(range(len(permutation))):
        out = transpose(out, permutation)
    if out.dtype != x_aval.dtype:
        out = convert_element_type(out, x_aval.dtype)
    return out


def _dot_transpose_lhs(ct, lhs, rhs, *, dimension_numbers, **params):
    (lc, rc), (lb, rb) = dimension_numbers
    return _contract_ct(ct, rhs, lhs.aval, (lc, lb), (rc, rb), True, params)


def _dot_transpose_rhs(ct, lhs, rhs, *, dimension_numbers, **params):
    (lc, rc), (lb, rb) = dimension_numbers
    return _contract_ct(ct, lhs, rhs.aval, (rc, rb), (lc, lb), False, params)


def _skip(dims, d) -> tuple:
    """Per-example axes ``dims`` renumbered in an array with an extra axis at ``d``."""
    return tuple(a if a < d else a + 1 for a in dims)


def _dot_general_batch(args, dims, *, dimension_numbers, **params):
    """Both sides batched: a new leading batch-dimension pair. One side batched: its batch
    axis stays where it is as a free dimension, whose output position is tracked (the
    output is batch dims, lhs free dims, rhs free dims)."""
    (lhs, rhs), (dl, dr) = args, dims
    (lc, rc), (lb, rb) = dimension_numbers
    if dl is not not_mapped and dr is not not_mapped:
        lhs, rhs = move_axis(lhs, dl, 0), move_axis(rhs, dr, 0)
        dn = ((_skip(lc, 0), _skip(rc, 0)), ((0, *_skip(lb, 0)), (0, *_skip(rb, 0))))
        out_dim = 0
    elif dl is not not_mapped:
        lc, lb = _skip(lc, dl), _skip(lb, dl)
        lhs_free = [a for a in range(len(get_aval(lhs).shape)) if a not in lc + lb]
        out_dim = len(lb) + lhs_free.index(dl)
        dn = ((lc, rc), (lb, rb))
    else:
        rc, rb = _skip(rc, dr), _skip(rb, dr)
        rhs_free = [a for a in range(len(get_aval(rhs).shape)) if a not in rc + rb]
        lhs_rank = len(get_aval(lhs).shape)
        out_dim = lhs_rank - len(lc) + rhs_free.index(dr)  # batch + lhs free come first
        dn = ((lc, rc), (lb, rb))
    return dot_general_p.bind(lhs, rhs, dimension_numbers=DotDimensionNumbers(dn),
                              **params), out_dim


dot_general_p = Primitive(
    "dot_general", abstract_eval=_dot_general_abstract_eval, impl=_dot_general_impl,
    lower=_dot_general_lower,
    jvp=late_rule(lambda p: jvp_by_parts(p, _dot_jvp_lhs, _dot_jvp_rhs), "dot_general"),
    transpose=transpose_by_parts(_dot_transpose_lhs, _dot_transpose_rhs),
    batch=_dot_general_batch,
    # JAX prints neither unset precision/preferred type nor the sharding.
    hidden_params=("out_sharding", "precision", "preferred_element_type"),
    sharding_rule=sharding_rules.dot_general)


def _preferred(preferred_element_type):
    if preferred_element_type is None:
        return None
    return dtypes.check_and_canonicalize_user_dtype(preferred_element_type, "dot_general")


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None, *,
                out_sharding=None):
    """General dot product: contract ``lhs_contracting`` with ``rhs_contracting`` dimensions,
    batched over paired ``lhs_batch``/``rhs_batch`` dimensions.

    Parameters
    ----------
    lhs, rhs : array_like
    dimension_numbers : tuple
        ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``.
    precision : None, str, Precision, pair of them, DotAlgorithm or DotAlgorithmPreset
        A preset (or its name) fixes the operand and accumulation types; on the CPU only
        those XLA's CPU backend supports run (others raise ValueError, as in JAX).
    preferred_element_type : dtype, optional
        The result (accumulation) dtype, e.g. int32 for int8 inputs.

    Returns
    -------
    Array with the batch dims, then lhs free dims, then rhs free dims.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> x, y = jnp.ones((2, 3, 4)), jnp.ones((2, 4, 5))
    >>> lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))).shape
    (2, 3, 5)
    """
    return dot_general_p.bind(as_operand(lhs), as_operand(rhs),
                              dimension_numbers=_dimension_numbers(dimension_numbers),
                              precision=canonicalize_precision(precision),
                              preferred_element_type=_preferred(preferred_element_type),
                              out_sharding=check_out_sharding(out_sharding, "dot_general"))


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None,
        out_sharding=None):
    """Vector/matrix dot products (``dimension_numbers`` for anything more general).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.dot(jnp.ones((2, 3)), jnp.ones(3))
    Array([3., 3.], dtype=float32)
    """
    if dimension_numbers is not None:
        return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type,
                           out_sharding=out_sharding)
    lhs_shape, rhs_shape = np.shape(lhs), np.shape(rhs)
    if (1 <= len(lhs_shape) <= 2 and 1 <= len(rhs_shape) <= 2
            and lhs_shape[-1] == rhs_shape[0]):
        dims = (((len(lhs_shape) - 1,), (0,)), ((), ()))
        return dot_general(lhs, rhs, dims, precision, preferred_element_type,
                           out_sharding=out_sharding)
    raise ValueError("jax.lax.dot: dimension_numbers must be specified when not performing "
                     "simple un-batched matrix-matrix, matrix-vector, or vector-vector "
                     f"products; got lhs_shape={tuple(lhs_shape)} rhs_shape={tuple(rhs_shape)}")


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over matching leading batch dimensions: ``[..., m, k] @ [..., k, n]``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.batch_matmul(jnp.ones((2, 3, 4)), jnp.ones((2, 4, 5))).shape
    (2, 3, 5)
    """
    lhs_ndim, rhs_ndim = np.ndim(lhs), np.ndim(rhs)
    if min(lhs_ndim, rhs_ndim) < 2:
        raise ValueError(f"Arguments to batch_matmul must be at least 2D, got {lhs_ndim}, "
                         f"{rhs_ndim}")
    if lhs_ndim != rhs_ndim:
        raise ValueError(f"Arguments to batch_matmul must have same ndim, got {lhs_ndim}, "
                         f"{rhs_ndim}")
    batch = tuple(range(lhs_ndim - 2))
    dims = (((lhs_ndim - 1,), (rhs_ndim - 2,)), (batch, batch))
    return dot_general(lhs, rhs, dims, precision=precision)


__all__ = ["Precision", "DotDimensionNumbers", "dot_general", "dot", "batch_matmul",
           "dot_general_p"]


# The dot algorithms (presets, their impls and lowerings) import this module's names; they
# are used at call time only, so their module is imported last.
from xjax._src.lax import dot_algorithms  # noqa: E402
