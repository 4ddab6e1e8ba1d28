"""Rule-check records of convert_element_type, bitcast_convert_type and reduce_precision."""

import numpy as np

from xjax import lax
from xjax._src.core import dtypes
from op_records.elementwise import (BF16_EXACT, grad_record, no_grad,
                                                      with_specials)
from op_table import ALL, COMPLEX, FLOATS, OpRecord, random_array


def _wide_values(rng, shapes, dtype):
    """Values spanning many magnitudes (saturation, overflow to inf, denormals) plus specials."""
    (x,) = with_specials(rng, shapes, dtype)
    if dtypes.is_float(dtype) or dtypes.is_complex(dtype):
        scale = 10.0 ** rng.integers(-10, 12, shapes[0])
        big = (random_array(rng, shapes[0], np.float32) * scale)
        if dtypes.is_complex(dtype):
            big = big + 1j * (random_array(rng, shapes[0], np.float32) * scale)
        mask = rng.random(shapes[0]) < 0.4
        x = np.where(mask, big.astype(dtype), x)
    return [x]


def _convert_record(new_dtype):
    target = np.dtype(new_dtype)
    fun = (lambda x: lax.convert_element_type(x, target))
    # Results in bfloat16 go through the harness's NaN workaround.
    tol = BF16_EXACT if target == dtypes.bfloat16 else 0.0
    return OpRecord("convert_element_type", fun, [(6, 7)], ALL, make_args=_wide_values,
                    tol=tol, name=f"to_{target.name}")


def _bitcast_record(source, target, shape):
    fun = (lambda x: lax.bitcast_convert_type(x, target))
    return OpRecord("bitcast_convert_type", fun, [shape], (source,),
                    name=f"to_{np.dtype(target).name}", tol=BF16_EXACT)


def _reduce_precision_record(exponent_bits, mantissa_bits, dtype_list):
    fun = (lambda x: lax.reduce_precision(x, exponent_bits, mantissa_bits))
    return OpRecord("reduce_precision", fun, [(6, 7)], dtype_list, make_args=_wide_values,
                    tol=BF16_EXACT, name=f"e{exponent_bits}m{mantissa_bits}")


def _convert_grad_record(source, target, grad_tol=None):
    """Conversion between inexact dtypes on ordinary values (the derivative check)."""
    target = np.dtype(target)
    return grad_record("convert_element_type", lambda x: lax.convert_element_type(x, target),
                       [(6, 7)], tol=BF16_EXACT, name=f"to_{target.name}-grad",
                       dtype_list=(source,), grad_tol=grad_tol)


# Derivatives: integer and boolean results have none (float0 tangents, checked in
# tests/lax/test_grads_elementwise.py); bit reinterpretation has none. bfloat16 results are
# too coarse for finite differences (an ulp exceeds the step): checked against JAX there.
RECORDS = [
    *no_grad([_convert_record(d) for d in ALL]),
    _convert_grad_record(np.float32, np.float16, grad_tol=0.1),
    _convert_grad_record(np.float32, np.complex64),
    _convert_grad_record(COMPLEX[0], np.float32),
    _bitcast_record(np.float32, np.int32, (3, 4)),
    _bitcast_record(np.uint32, np.float32, (3, 4)),
    _bitcast_record(np.float32, np.uint8, (3, 4)),
    _bitcast_record(np.float32, dtypes.bfloat16, (3, 4)),
    _bitcast_record(np.int16, np.float16, (3, 4)),
    _bitcast_record(np.uint8, np.int32, (3, 4)),
    _bitcast_record(np.float16, np.float32, (3, 2)),
    _bitcast_record(np.int8, np.uint8, (3, 4)),
    *[_reduce_precision_record(e, m, FLOATS)
      for e, m in ((5, 10), (8, 7), (5, 0), (3, 2), (4, 3), (5, 2), (8, 23), (11, 52))],
]
no_grad([r for r in RECORDS if r.primitive in ("bitcast_convert_type", "reduce_precision")])
RECORDS += [
    # rounded like the values, the tangents are exact to a float16 ulp (~1e-3) over the
    # finite-difference step (1e-2): a looser tolerance
    grad_record("reduce_precision", lambda x: lax.reduce_precision(x, 5, 10), [(6, 7)],
                name="e5m10-grad", grad_tol=0.1),
]
