"""Rule-check records of the elementwise arithmetic primitives, and the input generators and
precision-split helpers the other elementwise families' records share."""

import numpy as np

from xjax import lax
from xjax._src.core import dtypes
from op_table import (BOOL, COMPLEX, FLOATS, INTS, SIGNED, OpRecord, random_args,
                                        random_array)
from xjax._src.lax.elementwise import add_any_p

F32 = (np.float32,)
F16 = (np.float16,)
BF16 = (dtypes.bfloat16,)
# tolerances of impl vs XLA by precision: transcendental functions differ by a few ulps
TOL = {"f32": 1e-5, "f16": 2e-3, "bf16": 2e-2}


# The harness compares tol=0 records with assert_array_equal, which does not see NaN == NaN
# in bfloat16 arrays; a vanishing tolerance routes them through assert_allclose(equal_nan).
BF16_EXACT = 1e-300


def no_grad(records):
    """``records`` left out of the derivative check (grad_order 0): their operands (IEEE
    specials, huge values, integer results) are no place for finite differences; each
    such primitive has a ``grad`` record on a smooth domain instead."""
    for record in records:
        record.grad_order = 0
    return records


def grad_record(primitive, fun, shapes, make_args=None, tol=0.0, name="grad", dtype_list=None,
                **grad):
    """A float32 record made for ``tests/lax/test_primitive_grads.py``: operands where the
    function is smooth at the finite-difference step (``grad``: grad_tol, grad_modes,
    grad_order)."""
    return OpRecord(primitive, fun, shapes, dtype_list or F32, make_args, tol, name, **grad)


def exact(primitive, fun, shapes, dtype_list, make_args=None, name=""):
    """Records of an exact op: tolerance 0, except the bfloat16 workaround above."""
    bf16 = tuple(d for d in dtype_list if np.dtype(d) == dtypes.bfloat16)
    rest = tuple(d for d in dtype_list if np.dtype(d) != dtypes.bfloat16)
    records = [OpRecord(primitive, fun, shapes, rest, make_args, 0.0, name)] if rest else []
    if bf16:
        records.append(OpRecord(primitive, fun, shapes, bf16, make_args, BF16_EXACT, name))
    return records


def by_precision(primitive, fun, shapes, make_args=None, tol=TOL, with_complex=True,
                 name=""):
    """One record per float precision (float32 [+ complex64], float16, bfloat16), each with
    its tolerance."""
    prefix = f"{name}-" if name else ""
    groups = {"f32": F32 + (COMPLEX if with_complex else ()), "f16": F16, "bf16": BF16}
    return [OpRecord(primitive, fun, shapes, groups[key], make_args, tol[key], prefix + key)
            for key in ("f32", "f16", "bf16")]


def uniform(low, high):
    """Operands uniform in [low, high) (complex: both parts)."""

    def make(rng, shapes, dtype):
        out = []
        for shape in shapes:
            if dtypes.is_complex(dtype):
                value = rng.uniform(low, high, shape) + 1j * rng.uniform(low, high, shape)
            else:
                value = rng.uniform(low, high, shape)
            out.append(np.asarray(value).astype(dtype))
        return out

    return make


_FLOAT_SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5]


def with_specials(rng, shapes, dtype):
    """Random operands with IEEE specials (±0, ±inf, NaN, halves) and, for integers, the
    extremes of the range, sprinkled in."""
    out = []
    for shape in shapes:
        x = random_array(rng, shape, dtype)
        flat = x.reshape(-1)
        if dtypes.is_float(dtype) or dtypes.is_complex(dtype):
            specials = np.array(_FLOAT_SPECIALS).astype(dtype)
        elif dtype == np.bool_:
            specials = np.array([True, False])
        else:
            info = np.iinfo(dtype)
            specials = np.array([info.min, info.max, 0, 1, info.max - 1]).astype(dtype)
            if info.min < 0:
                specials = np.concatenate([specials, np.array([-1], dtype)])
        mask = rng.random(flat.shape) < 0.4
        flat[mask] = rng.choice(specials, size=int(mask.sum()))
        if dtypes.is_complex(dtype):  # specials in imaginary parts too
            mask = rng.random(flat.shape) < 0.3
            flat[mask] = flat[mask].real + 1j * rng.choice(specials.real, size=int(mask.sum()))
        out.append(flat.reshape(shape))
    return out


def full_range_ints(rng, shapes, dtype):
    """Integers over the dtype's whole range (bit patterns uniformly at random)."""
    dtype = np.dtype(dtype)
    return [rng.integers(0, 256, shape + (dtype.itemsize,), dtype=np.uint8)
            .view(dtype).reshape(shape) for shape in shapes]


def _int_division_args(rng, shapes, dtype):
    x, y = with_specials(rng, shapes, dtype)
    y[..., 0] = 0  # division by zero
    if np.iinfo(dtype).min < 0:  # INT_MIN / -1
        x[..., 1], y[..., 1] = np.iinfo(dtype).min, -1
    return [x, y]


def _halves(rng, shapes, dtype):
    """Values at and near .5 boundaries, where rounding modes differ."""
    (shape,) = shapes
    base = rng.integers(-8, 8, shape) / 2.0
    jitter = rng.choice([0.0, 0.0, 0.25, -0.25, 1e-3], size=shape)
    return [(base + jitter).astype(dtype)]


def _positive(rng, shapes, dtype):
    return uniform(0.1, 3.0)(rng, shapes, dtype)


def _integer_pow_records(y):
    fun = (lambda x: lax.integer_pow(x, y))
    records = by_precision("integer_pow", fun, [(3, 4)], name=f"y{y}",
                           tol={"f32": 1e-6, "f16": 1e-3, "bf16": 1e-2})
    if y >= 0:
        records.append(OpRecord("integer_pow", fun, [(3, 4)], INTS, make_args=full_range_ints,
                                name=f"y{y}"))
    return records


def _int_exponent(rng, shapes, dtype):
    x = random_array(rng, shapes[0], dtype)
    return [x, rng.integers(-4, 5, shapes[1]).astype(np.int32)]


def _away_from_zero(low, high):
    """Magnitudes in [low, high) with random signs (divisors, kinks at 0)."""

    def make(rng, shapes, dtype):
        return [(rng.choice([-1.0, 1.0], shape) * rng.uniform(low, high, shape)).astype(dtype)
                for shape in shapes]

    return make


def _quotient(rng, shapes, dtype):
    """x / y random, y away from zero."""
    (x,) = random_args(rng, shapes[:1], dtype)
    (y,) = _away_from_zero(0.5, 3.0)(rng, shapes[1:], dtype)
    return [x, y]


def _rem_smooth(rng, shapes, dtype):
    """x = y * (k + f) with f in [0.2, 0.8]: rem is smooth there (trunc(x / y) constant)."""
    (y,) = _away_from_zero(0.5, 2.0)(rng, shapes[1:], dtype)
    whole = rng.integers(-3, 4, shapes[0]) + rng.uniform(0.2, 0.8, shapes[0])
    return [(y * whole).astype(dtype), y]


def _between_integers(offset_low, offset_high):
    """Integers plus an offset in [offset_low, offset_high): away from floor/ceil/round
    jumps."""

    def make(rng, shapes, dtype):
        return [(rng.integers(-4, 4, shape) + rng.uniform(offset_low, offset_high, shape))
                .astype(dtype) for shape in shapes]

    return make


def _distinct_pairs(rng, shapes, dtype):
    """x, y at least 0.1 apart (max/min are smooth away from ties)."""
    x = rng.uniform(-3.0, 3.0, shapes[0])
    gap = rng.choice([-1.0, 1.0], shapes[1]) * rng.uniform(0.1, 2.0, shapes[1])
    return [x.astype(dtype), (x + gap).astype(dtype)]




def _add_any(x, y):
    return add_any_p.bind(x, y)


RECORDS = [
    *no_grad(exact("add", lax.add, [(3, 4), (3, 4)], FLOATS + INTS, make_args=with_specials)),
    grad_record("add", lax.add, [(3, 4), (3, 4)]),
    *no_grad(exact("add_any", _add_any, [(3, 4), (3, 4)], FLOATS + INTS,
                   make_args=with_specials)),
    grad_record("add_any", _add_any, [(3, 4), (3, 4)]),
    OpRecord("add", lax.add, [(3, 4), (3, 4)], COMPLEX, tol=1e-6, name="complex"),
    OpRecord("add", lax.add, [(3, 1), (1, 4)], F32 + SIGNED, name="broadcast"),
    OpRecord("add", lax.add, [(), (3, 4)], F32, name="rank0"),
    *no_grad(exact("sub", lax.sub, [(3, 4), (3, 4)], FLOATS + INTS, make_args=with_specials)),
    grad_record("sub", lax.sub, [(3, 4), (3, 1)]),
    OpRecord("sub", lax.sub, [(3, 4), (3, 4)], COMPLEX, tol=1e-6, name="complex"),
    *no_grad(exact("mul", lax.mul, [(3, 4), (3, 4)], FLOATS + INTS, make_args=with_specials)),
    grad_record("mul", lax.mul, [(), (3, 4)]),
    OpRecord("mul", lax.mul, [(3, 4), (3, 4)], COMPLEX, tol=1e-6, name="complex"),
    *no_grad(exact("neg", lax.neg, [(3, 4)], FLOATS + COMPLEX + INTS, make_args=with_specials)),
    grad_record("neg", lax.neg, [(3, 4)]),
    OpRecord("div", lax.div, [(4, 5), (4, 5)], INTS, make_args=_int_division_args),
    *no_grad(by_precision("div", lax.div, [(4, 5), (4, 5)], make_args=with_specials,
                          tol={"f32": 1e-6, "f16": 1e-3, "bf16": 1e-2})),
    grad_record("div", lax.div, [(4, 5), (1, 5)], make_args=_quotient, tol=1e-6),
    OpRecord("rem", lax.rem, [(4, 5), (4, 5)], INTS, make_args=_int_division_args),
    *no_grad([OpRecord("rem", lax.rem, [(4, 5), (4, 5)], FLOATS, make_args=with_specials,
                       tol=1e-6, name="float")]),
    grad_record("rem", lax.rem, [(4, 5), (4, 5)], make_args=_rem_smooth, tol=1e-6),
    *by_precision("pow", lax.pow, [(3, 4), (3, 4)], make_args=uniform(0.1, 3.0)),
    OpRecord("pow", lax.pow, [(3, 4), (3, 4)], F32 + COMPLEX, make_args=_int_exponent,
             tol=1e-6, name="int_exponent"),
    *[record for y in (0, 1, 2, 3, 5, -1, -2) for record in _integer_pow_records(y)],
    OpRecord("square", lax.square, [(3, 4)], FLOATS + COMPLEX + INTS, tol=1e-6),
    *no_grad([OpRecord("sign", lax.sign, [(3, 4)], FLOATS + COMPLEX + INTS,
                       make_args=with_specials, tol=1e-6)]),
    grad_record("sign", lax.sign, [(3, 4)], make_args=_away_from_zero(0.1, 3.0)),
    *no_grad([OpRecord("abs", lax.abs, [(3, 4)], FLOATS + COMPLEX + SIGNED,
                       make_args=with_specials, tol=1e-6)]),
    grad_record("abs", lax.abs, [(3, 4)], make_args=_away_from_zero(0.1, 3.0)),
    grad_record("abs", lax.abs, [(3, 4)], tol=1e-6, name="complex-grad", dtype_list=COMPLEX),
    *no_grad(exact("floor", lax.floor, [(3, 4)], FLOATS, make_args=with_specials)),
    grad_record("floor", lax.floor, [(3, 4)], make_args=_between_integers(0.1, 0.9)),
    *no_grad(exact("ceil", lax.ceil, [(3, 4)], FLOATS, make_args=with_specials)),
    grad_record("ceil", lax.ceil, [(3, 4)], make_args=_between_integers(0.1, 0.9)),
    *no_grad([OpRecord("round", lax.round, [(4, 4)], FLOATS, make_args=_halves, name="away"),
              OpRecord("round", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
                       [(4, 4)], FLOATS, make_args=_halves, name="even"),
              *exact("round", lax.round, [(4, 4)], FLOATS, make_args=with_specials,
                     name="specials")]),
    grad_record("round", lax.round, [(4, 4)], make_args=_between_integers(-0.4, 0.4)),
    OpRecord("is_finite", lax.is_finite, [(3, 4)], FLOATS, make_args=with_specials),
    *no_grad(exact("max", lax.max, [(4, 5), (4, 5)], FLOATS + INTS + BOOL + COMPLEX,
                   make_args=with_specials)),
    grad_record("max", lax.max, [(4, 5), (4, 5)], make_args=_distinct_pairs),
    *no_grad(exact("min", lax.min, [(4, 5), (4, 5)], FLOATS + INTS + BOOL + COMPLEX,
                   make_args=with_specials)),
    grad_record("min", lax.min, [(4, 5), (4, 5)], make_args=_distinct_pairs),
    *no_grad(exact("nextafter", lax.nextafter, [(4, 5), (4, 5)], FLOATS,
                   make_args=with_specials)),
    grad_record("nextafter", lax.nextafter, [(4, 5), (4, 5)]),
    OpRecord("conj", lax.conj, [(3, 4)], F32 + COMPLEX),
    grad_record("conj", lax.conj, [(3, 4)], name="complex-grad", dtype_list=COMPLEX),
    OpRecord("real", lax.real, [(3, 4)], COMPLEX),
    OpRecord("imag", lax.imag, [(3, 4)], COMPLEX),
    *no_grad(exact("copy", lax.copy_p.bind, [(3, 4)], FLOATS + COMPLEX + INTS + BOOL,
                   make_args=with_specials)),
    grad_record("copy", lax.copy_p.bind, [(3, 4)]),
    *no_grad([OpRecord("complex", lax.complex, [(3, 4), (3, 4)], F32,
                       make_args=with_specials)]),
    grad_record("complex", lax.complex, [(3, 4), (3, 1)]),
]
