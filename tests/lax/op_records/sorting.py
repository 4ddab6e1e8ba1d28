"""Rule-check records of the sorting primitives (sort, top_k)."""

import numpy as np

from xjax import lax
from xjax._src.core import dtypes
from op_table import ALL, BOOL, FLOATS, INTS, OpRecord, random_array


def _with_specials(rng, shapes, dtype):
    """Random values with NaNs of both signs, signed zeros and infinities for floats (JAX's
    order puts -0.0 beside 0.0 and NaNs last); small-integer ties otherwise."""
    out = []
    for shape in shapes:
        if dtypes.is_float(dtype) or dtypes.is_complex(dtype):
            x = rng.integers(-3, 4, shape).astype(np.float32)
            flat = x.reshape(-1)
            flat[:6] = [np.nan, -np.nan, -0.0, 0.0, np.inf, -np.inf]
            rng.shuffle(flat)
            if dtypes.is_complex(dtype):
                imag = rng.integers(-2, 3, shape).astype(np.float32)
                x = x + 1j * imag
            out.append(x.astype(dtype))
        else:
            out.append(random_array(rng, shape, dtype, 0, 3) if dtype != np.bool_
                       else rng.random(shape) < 0.5)
    return out


def _keys_and_values(rng, shapes, dtype):
    """Two tie-heavy keys and a distinct-valued payload (so every order is checked)."""
    (k1, k2, _) = shapes
    first = _with_specials(rng, [k1], dtype)[0]
    second = random_array(rng, k2, dtype, 0, 2) if dtype != np.bool_ else \
        rng.random(k2) < 0.5
    payload = np.arange(int(np.prod(shapes[2])), dtype=np.int32).reshape(shapes[2])
    return [first, second.astype(dtype), payload]


def _distinct(rng, shapes, dtype):
    """Distinct values (a permutation), so finite differences never cross a tie."""
    n = int(np.prod(shapes[0]))
    values = rng.permutation(n).astype(np.float32) * 0.5 + rng.uniform(-0.1, 0.1, n)
    return [values.reshape(shapes[0]).astype(dtype)]


# exact in effect, but compared with allclose's equal_nan (NumPy's array_equal does not see
# bfloat16 NaNs as equal)
_EXACT_NAN = 1e-30

RECORDS = [
    OpRecord("sort", lambda x: lax.sort(x, dimension=1), [(4, 6)], ALL,
             make_args=_with_specials, tol=_EXACT_NAN, name="specials", grad_order=0),
    OpRecord("sort", lambda x: lax.sort(x, dimension=0), [(5, 3)], ALL, name="axis0",
             grad_order=0),
    OpRecord("sort", lambda x: lax.sort(x, dimension=0), [(6, 3)], FLOATS,
             make_args=_distinct, name="distinct"),
    OpRecord("sort", lambda a, b, c: lax.sort((a, b, c), dimension=1, num_keys=2),
             [(3, 8), (3, 8), (3, 8)], FLOATS + INTS + BOOL, make_args=_keys_and_values,
             tol=_EXACT_NAN, name="two-keys", grad_order=0),
    OpRecord("sort", lambda k, v: lax.sort_key_val(k, v, dimension=0), [(6, 3), (6, 3)],
             FLOATS, make_args=lambda rng, shapes, dtype: _distinct(rng, shapes[:1], dtype) +
             [random_array(rng, shapes[1], dtype)], name="key-val"),
    OpRecord("top_k", lambda x: lax.top_k(x, 3), [(4, 7)], FLOATS + INTS + BOOL,
             make_args=_with_specials, tol=_EXACT_NAN, name="specials", grad_order=0),
    OpRecord("top_k", lambda x: lax.top_k(x, 2, axis=0), [(5, 3, 2)], FLOATS + INTS,
             name="axis0", grad_order=0),
    OpRecord("top_k", lambda x: lax.top_k(x, 4)[0], [(3, 6)], FLOATS, make_args=_distinct,
             name="values"),
]

