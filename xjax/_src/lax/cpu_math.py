"""CPU lowerings written out as the XLA inside JAX 0.10 evaluates them.

The XLA build xjax runs on the CPU vectorizes some functions with other algorithms than
JAX's XLA: ``log_plus_one`` runs 3.5x slower than JAX's and its last bits differ. Written
out here from plain StableHLO ops (which both XLAs emit alike), a lowering computes JAX's
bits at JAX's speed. Used only when the module is compiled for the CPU
(``ModuleBuilder.platform``); other platforms and portable exports keep the single op.

JAX's XLA evaluates float32 ``log1p(x)`` as a Cephes rational function for
``|x| < sqrt(2) - 1`` and as ``log(1 + x)`` above; each polynomial step ``p * x + c``
becomes one fused multiply-add, and ``-0.5 * x**2`` (exact) is fused into the add that
follows it, while ``x**3 * ratio`` is rounded on its own.
"""

from __future__ import annotations

import numpy as np

from xjax._src.core import dtypes
from xjax._src.lax.naryop import Emitter, broadcast_args
from xjax._src.lax.special_numpy import GILES_CENTRAL, GILES_TAIL

_F32 = np.dtype(np.float32)
_U32 = np.dtype(np.uint32)
_HANDLED = frozenset([_F32, np.dtype(np.float16), dtypes.bfloat16])

# Cephes log1p: numerator and denominator coefficients, highest degree first
LOG1P_NUMERATOR = (4.5270000862445199635215e-5, 4.9854102823193375972212e-1,
                   6.5787325942061044846969e0, 2.9911919328553073277375e1,
                   6.0949667980987787057556e1, 5.7112963590585538103336e1,
                   2.0039553499201281259648e1)
LOG1P_DENOMINATOR = (1.0, 1.5062909083469192043167e1, 8.3047565967967209469434e1,
                     2.2176239823732856465394e2, 3.0909872225312059774938e2,
                     2.1642788614495947685003e2, 6.0118660497603843919306e1)
SQRT2_MINUS_1 = 0.41421356237309504880


def _op(em: Emitter, name: str, *args, dtype=_F32) -> str:
    return em.op(f"stablehlo.{name}", args, dtype)


def _horner(em: Emitter, x: str, coefficients) -> str:
    p = em.const(coefficients[0], _F32)
    for c in coefficients[1:]:
        p = _op(em, "add", _op(em, "multiply", p, x), em.const(c, _F32))
    return p


def _rounded_apart(em: Emitter, product: str, square: str) -> str:
    """``product`` unchanged, in a form no compiler fuses into a following add: its bits
    or-ed with the sign bit of ``square`` (``x * x``: 0 unless NaN, which nothing proves)."""
    sign = _op(em, "shift_right_logical", _op(em, "bitcast_convert", square, dtype=_U32),
               em.const(31, _U32), dtype=_U32)
    bits = _op(em, "or", _op(em, "bitcast_convert", product, dtype=_U32), sign, dtype=_U32)
    return _op(em, "bitcast_convert", bits)


def log1p_float32(em: Emitter, x: str) -> str:
    """Float32 ``log(1 + x)`` as JAX's XLA computes it on the CPU."""
    large = _op(em, "log", _op(em, "add", x, em.const(1.0, _F32)))
    x_sq = _op(em, "multiply", x, x)
    ratio = _op(em, "divide", _horner(em, x, LOG1P_NUMERATOR),
                _horner(em, x, LOG1P_DENOMINATOR))
    cubic = _rounded_apart(em, _op(em, "multiply", _op(em, "multiply", x, x_sq), ratio), x_sq)
    half_sq = _op(em, "multiply", em.const(-0.5, _F32), x_sq)
    small = _op(em, "add", x, _op(em, "add", half_sq, cubic))
    is_small = em.compare(_op(em, "abs", x), em.const(SQRT2_MINUS_1, _F32), "LT", "FLOAT")
    return em.select(is_small, small, large, _F32)


def atanh_float32(em: Emitter, x: str) -> str:
    """``0.5 * (log1p(x) - log1p(-x))``, NaN where ``|x| > 1`` (CHLO's expansion)."""
    half_difference = _op(em, "multiply", _op(em, "subtract", log1p_float32(em, x),
                                              log1p_float32(em, _op(em, "negate", x))),
                          em.const(0.5, _F32))
    outside = em.compare(_op(em, "abs", x), em.const(1.0, _F32), "GT", "FLOAT")
    return em.select(outside, em.const(np.nan, _F32), half_difference, _F32)


_LOG2 = float(np.log(2.0))


def asinh_float32(em: Emitter, x: str) -> str:
    """``sign(x) * log1p(|x| + x**2 / (sqrt(x**2 + 1) + 1))``, and ``log(|x|) + log(2)``
    where ``x**2`` would overflow (CHLO's expansion)."""
    one = em.const(1.0, _F32)
    magnitude = _op(em, "abs", x)
    square = _op(em, "multiply", x, x)
    ratio = _op(em, "divide", square,
                _op(em, "add", _op(em, "sqrt", _op(em, "add", square, one)), one))
    moderate = log1p_float32(em, _op(em, "add", magnitude, ratio))
    huge = _op(em, "add", _op(em, "log", magnitude), em.const(_LOG2, _F32))
    is_huge = em.compare(magnitude, em.const(np.sqrt(np.finfo(np.float32).max), _F32), "GE",
                         "FLOAT")
    return _op(em, "multiply", _op(em, "sign", x), em.select(is_huge, huge, moderate, _F32))


def acosh_float32(em: Emitter, x: str) -> str:
    """``log1p(sqrt(x - 1) * (sqrt(x + 1) + sqrt(x - 1)))``, and ``log(x) + log(2)`` from
    half the largest float up (CHLO's expansion; NaN below 1 from the square root)."""
    one = em.const(1.0, _F32)
    root_below = _op(em, "sqrt", _op(em, "add", x, em.const(-1.0, _F32)))
    root_above = _op(em, "sqrt", _op(em, "add", x, one))
    moderate = log1p_float32(em, _op(em, "multiply", root_below,
                                     _op(em, "add", root_above, root_below)))
    huge = _op(em, "add", _op(em, "log", x), em.const(_LOG2, _F32))
    is_huge = em.compare(x, em.const(np.finfo(np.float32).max / 2, _F32), "GE", "FLOAT")
    return em.select(is_huge, huge, moderate, _F32)


def erf_inv_float32(em: Emitter, x: str) -> str:
    """Float32 ``erf_inv(x)`` as JAX's XLA computes it (Giles' single-precision expansion):
    ``w = -log1p(-x * x)``, a polynomial in ``w - 2.5`` (``w < 5``) or ``sqrt(w) - 3``, times
    ``x``; ``x * inf`` at ``|x| = 1``."""
    w = _op(em, "negate", log1p_float32(em, _op(em, "multiply", x, _op(em, "negate", x))))
    central = em.compare(w, em.const(5.0, _F32), "LT", "FLOAT")
    t = em.select(central, _op(em, "subtract", w, em.const(2.5, _F32)),
                  _op(em, "subtract", _op(em, "sqrt", w), em.const(3.0, _F32)), _F32)

    def coefficient(i):
        return em.select(central, em.const(GILES_CENTRAL[i], _F32),
                         em.const(GILES_TAIL[i], _F32), _F32)

    p = coefficient(0)
    for i in range(1, len(GILES_CENTRAL)):
        p = _op(em, "add", coefficient(i), _op(em, "multiply", p, t))
    at_one = em.compare(_op(em, "abs", x), em.const(1.0, _F32), "EQ", "FLOAT")
    return em.select(at_one, _op(em, "multiply", x, em.const(np.inf, _F32)),
                     _op(em, "multiply", p, x), _F32)


def cpu_float32_lowering(form, fallback, in_regions=True, low_floats=True):
    """A lowering by ``form(emitter, x)`` for real floats of at most 32 bits compiled for the
    CPU (float16 and bfloat16 through float32, as JAX's XLA computes them), else ``fallback``.
    With ``in_regions=False``, region bodies (loops, branches) keep ``fallback``: there the
    XLA build compiles the single op as JAX's XLA does, and the written-out form, contracted
    differently with its neighbours, may not be (erf_inv in the gamma sampler's loop).
    With ``low_floats=False`` float16 and bfloat16 keep ``fallback``: XLA expands those
    functions op by op in the narrow type, rounding each step."""

    def lower(ctx, x):
        dtype = ctx.avals_in[0].dtype
        handled = dtype in _HANDLED if low_floats else dtype == _F32
        if ctx.module.platform != "cpu" or not handled or (ctx.builder.region_depth
                                                           and not in_regions):
            return fallback(ctx, x)
        em = Emitter(ctx, ctx.avals_out[0].shape)
        (x,) = broadcast_args(ctx, [x])
        if dtype != _F32:
            return em.convert(form(em, em.convert(x, _F32)), dtype)
        return form(em, x)

    return lower
