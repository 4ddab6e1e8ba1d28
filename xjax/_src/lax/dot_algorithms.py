"""Dot algorithms (``DotAlgorithm``, ``DotAlgorithmPreset``) accepted by ``precision=``, and
the accuracy types of transcendental functions (``AccuracyMode``, ``Tolerance``).

A dot algorithm fixes the types the operands are rounded to and the accumulation type. On
the CPU, as in JAX, only the presets XLA's CPU backend supports are accepted (others raise
JAX's ValueError when the dot runs or compiles): the operands are converted to the preset's
types, contracted in its accumulation type, and the result converted to the output dtype.
XLA's CPU backend ignores the multi-pass decompositions (``_X3``, ``_X6``), so they compute
as one float32 dot there, as in JAX.
"""

from __future__ import annotations

import enum
from typing import NamedTuple, Union

import numpy as np

from xjax._src.core import dtypes
from xjax._src.lax.dot import (Precision, _dot_general_impl,
                          dot_dimension_numbers_attr)
from xjax._src.lowering.stablehlo import aval_type, element_type
from xjax._src.runtime.client import default_backend


# -- accuracy of transcendental functions --


class Tolerance:
    """The tolerances a unary function's implementation must meet: at most two of
    ``atol``, ``rtol`` and ``ulps`` (``atol`` with ``rtol``, or ``atol`` with ``ulps``).

    Examples
    --------
    >>> from xjax import lax
    >>> lax.Tolerance(atol=1e-6, rtol=1e-6).rtol
    1e-06
    """

    def __init__(self, atol: float = 0.0, rtol: float = 0.0, ulps: int = 0):
        if atol < 0.0 or rtol < 0.0 or ulps < 0.0:
            raise ValueError("Tolerances must be non-negative.")
        if atol == 0.0 and rtol == 0.0 and ulps == 0:
            raise ValueError("At least one of atol, rtol, or ulps must be set.")
        self.atol = atol
        self.rtol = rtol
        self.ulps = ulps


class AccuracyMode(enum.Enum):
    """The accuracy a unary function's implementation is chosen for."""

    HIGHEST = 1
    DEFAULT = 2


# -- dot algorithms --


class DotAlgorithm(NamedTuple):
    """The algorithm of a dot product: the types the operands are rounded to, the
    accumulation type, and how many components and operations emulate a higher precision.

    Passed as ``precision=`` to :func:`~xjax.lax.dot_general` and friends. Support is
    platform dependent: on the CPU a ``DotAlgorithm`` raises ``ValueError`` when the dot
    runs, as in JAX (use a supported :class:`DotAlgorithmPreset`).

    Examples
    --------
    >>> import numpy as np
    >>> from xjax import lax
    >>> lax.DotAlgorithm(np.float16, np.float16, np.float32).accumulation_type
    <class 'numpy.float32'>
    """

    lhs_precision_type: object
    rhs_precision_type: object
    accumulation_type: object
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


_FP8_NAMES = ("float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
              "float8_e5m2fnuz", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu")


class DotAlgorithmPreset(enum.Enum):
    """Named dot algorithms, ``LHS_RHS_ACCUM`` (``_X3``/``_X6``/``_X9``: that many passes
    emulate a higher precision). Pass a member, or its name as a string, as ``precision=``.

    On the CPU, ``DEFAULT``, ``F16_F16_F16``, ``F32_F32_F32``, ``F64_F64_F64``,
    ``BF16_BF16_F32``, ``BF16_BF16_F32_X3`` and ``BF16_BF16_F32_X6`` are supported; the
    others raise ``ValueError`` when the dot runs, as in JAX.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> x = jnp.array([1.0, 2.0, 3.0, 4.0], dtype=jnp.float16)
    >>> lax.dot(x, x, precision="F32_F32_F32")
    Array(30., dtype=float16)
    """

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __str__(self) -> str:
        return self.name

    @property
    def supported_lhs_types(self):
        """The operand types the algorithm computes in (an operand of another type is
        converted to the first), or None for any."""
        name = self.name
        if name == "DEFAULT" or name.startswith("ANY_F8"):
            return None
        if name.startswith("F16_"):
            return (np.dtype(np.float16),)
        if name in ("BF16_BF16_BF16", "BF16_BF16_F32"):
            return (np.dtype(dtypes.bfloat16), np.dtype(np.float32))
        if name == "F64_F64_F64":
            return (np.dtype(np.float64),)
        return (np.dtype(np.float32),)  # the emulating (_X3...) and tf32 algorithms

    @property
    def supported_rhs_types(self):
        return self.supported_lhs_types

    @property
    def accumulation_type(self):
        """The accumulation type, or None where the output type decides."""
        name = self.name
        if name in ("DEFAULT", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM"):
            return None
        return np.dtype({"F16_F16_F16": np.float16, "BF16_BF16_BF16": dtypes.bfloat16,
                         "F64_F64_F64": np.float64}.get(name, np.float32))

    def supported_output_types(self, lhs_dtype, rhs_dtype):
        """The output types the algorithm can produce for these operand types."""
        name = self.name
        if name in ("ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM"):
            return tuple(np.dtype(t) for t in (np.float32, np.float16, dtypes.bfloat16,
                                               *(getattr(dtypes, n) for n in _FP8_NAMES[:5])))
        # a 16-bit output only from operands both of that type
        promoted = np.dtype(lhs_dtype) if np.dtype(lhs_dtype) == np.dtype(rhs_dtype) else None
        if name == "F16_F16_F32":
            return ((np.dtype(np.float32), np.dtype(np.float16))
                    if promoted == np.float16 else (np.dtype(np.float32),))
        if name == "BF16_BF16_F32":
            return ((np.dtype(np.float32), np.dtype(dtypes.bfloat16))
                    if promoted == dtypes.bfloat16 else (np.dtype(np.float32),))
        acc = self.accumulation_type
        return None if acc is None else (acc,)


PrecisionLike = Union[None, str, Precision, tuple[str, str], tuple[Precision, Precision],
                      DotAlgorithm, DotAlgorithmPreset]

# The presets XLA's CPU backend computes (JAX checks the same set before lowering).
_CPU_PRESETS = frozenset({
    DotAlgorithmPreset.DEFAULT, DotAlgorithmPreset.F16_F16_F16,
    DotAlgorithmPreset.F32_F32_F32, DotAlgorithmPreset.F64_F64_F64,
    DotAlgorithmPreset.BF16_BF16_F32, DotAlgorithmPreset.BF16_BF16_F32_X3,
    DotAlgorithmPreset.BF16_BF16_F32_X6})


def preset_by_name(name: str):
    """The preset called ``name``, or None (used by ``canonicalize_precision``)."""
    return DotAlgorithmPreset.__members__.get(name)


def check_supported(algorithm, platform: str = "cpu") -> None:
    """JAX's ValueError for an algorithm the platform's dot cannot compute."""
    if platform == "cpu" and algorithm not in _CPU_PRESETS:
        raise ValueError(f"The precision '{algorithm}' is not supported by dot_general on CPU")


def compute_types(algorithm, lhs_dtype, rhs_dtype, out_dtype):
    """(lhs type, rhs type, accumulation type) of ``algorithm`` for these operand and
    output types (JAX's ``get_algorithm_compute_types``)."""
    if isinstance(algorithm, DotAlgorithm):
        return tuple(np.dtype(t) for t in (algorithm.lhs_precision_type,
                                           algorithm.rhs_precision_type,
                                           algorithm.accumulation_type))

    def pick(dtype, supported):
        dtype = np.dtype(dtype)
        if supported is None or dtype in supported:
            return dtype
        return supported[0]

    lhs_t = pick(lhs_dtype, algorithm.supported_lhs_types)
    rhs_t = pick(rhs_dtype, algorithm.supported_rhs_types)
    return lhs_t, rhs_t, pick(out_dtype, algorithm.supported_output_types(lhs_t, rhs_t))


def _platform() -> str:
    return default_backend()


def algorithm_impl(lhs, rhs, *, dimension_numbers, precision, preferred_element_type,
                   out_dtype):
    """NumPy dot with a dot algorithm: operands rounded to its types, contracted in its
    accumulation type, converted to ``out_dtype``."""
    check_supported(precision, "cpu")  # NumPy kernels run on the CPU
    lhs_t, rhs_t, acc = compute_types(precision, lhs.dtype, rhs.dtype, out_dtype)
    out = _dot_general_impl(lhs.astype(lhs_t), rhs.astype(rhs_t),
                                 dimension_numbers=dimension_numbers, precision=None,
                                 preferred_element_type=acc, out_sharding=None)
    return np.asarray(out).astype(out_dtype, copy=False)


def _algorithm_attr(algorithm, lhs_t, rhs_t) -> str | None:
    if algorithm is DotAlgorithmPreset.DEFAULT:
        return None
    if isinstance(algorithm, DotAlgorithm):
        fields = (element_type(algorithm.lhs_precision_type),
                  element_type(algorithm.rhs_precision_type),
                  element_type(algorithm.accumulation_type), algorithm.lhs_component_count,
                  algorithm.rhs_component_count, algorithm.num_primitive_operations,
                  algorithm.allow_imprecise_accumulation)
    else:
        name = algorithm.name
        if name.startswith("ANY_F8"):
            if lhs_t.name not in _FP8_NAMES or rhs_t.name not in _FP8_NAMES:
                raise ValueError(f"The dot algorithm '{algorithm}' requires both inputs to "
                                 f"have float8 dtypes. Got {lhs_t} and {rhs_t} instead.")
            fields = (element_type(lhs_t), element_type(rhs_t), "f32", 1, 1, 1,
                      name.endswith("FAST_ACCUM"))
        else:
            parts = name.split("_")
            ops = int(parts[3][1:]) if len(parts) > 3 else 1
            types = [p.lower() for p in parts[:3]]
            fields = (*types, 1, 1, ops, False)
    names = ("lhs_precision_type", "rhs_precision_type", "accumulation_type",
             "lhs_component_count", "rhs_component_count", "num_primitive_operations",
             "allow_imprecise_accumulation")
    body = ", ".join(f"{n} = {str(v).lower() if isinstance(v, bool) else v}"
                     for n, v in zip(names, fields, strict=True))
    return f"#stablehlo.dot_algorithm<{body}>"


def algorithm_lower(ctx, lhs, rhs, *, dimension_numbers, precision):
    """StableHLO of a dot with a dot algorithm (JAX's ``_handle_dot_precision``)."""
    platform = _platform()
    check_supported(precision, platform)
    lhs_aval, rhs_aval = ctx.avals_in
    out_aval = ctx.avals_out[0]
    b = ctx.builder
    lhs_t, rhs_t, acc = compute_types(precision, lhs_aval.dtype, rhs_aval.dtype,
                                      out_aval.dtype)
    # XLA's CPU backend computes a supported preset as the plain dot of its types, but
    # rejects some of them as attributes (on vectors, depending on its version): left off
    attr = None if platform == "cpu" else _algorithm_attr(precision, lhs_t, rhs_t)
    if lhs_t != rhs_t:  # mixed operand types: both in the accumulation type, exactly
        lhs_t = rhs_t = acc
    if lhs_t != lhs_aval.dtype:
        lhs = b.op1("stablehlo.convert", [lhs], aval_type(lhs_aval.update(dtype=lhs_t)))
    if rhs_t != rhs_aval.dtype:
        rhs = b.op1("stablehlo.convert", [rhs], aval_type(rhs_aval.update(dtype=rhs_t)))
    attrs = {"dot_dimension_numbers": dot_dimension_numbers_attr(dimension_numbers)}
    if attr is not None:
        attrs["algorithm"] = attr
    acc_aval = out_aval.update(dtype=acc)
    out = b.op1("stablehlo.dot_general", [lhs, rhs], aval_type(acc_aval), attrs)
    if acc != out_aval.dtype:
        out = b.op1("stablehlo.convert", [out], aval_type(out_aval))
    return out


__all__ = ["AccuracyMode", "Tolerance", "DotAlgorithm", "DotAlgorithmPreset", "PrecisionLike"]
