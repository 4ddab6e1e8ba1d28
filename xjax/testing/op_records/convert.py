"""Rule-check records of convert_element_type, bitcast_convert_type and reduce_precision."""

import numpy as np

from xjax import lax
from xjax.core import dtypes
from xjax.testing.op_records.elementwise import BF16_EXACT, with_specials
from xjax.testing.op_table import ALL, FLOATS, OpRecord, random_array


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


RECORDS = [
    *[_convert_record(d) for d in ALL],
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
