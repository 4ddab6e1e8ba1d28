"""Rule-check records of the reductions (reduce_*, argmax/argmin) and the cumulative
reductions (cumsum, cumprod, cummax, cummin, cumlogsumexp)."""

import numpy as np

from xjax import lax
from xjax._src.core import dtypes
from op_records.shape import by_precision
from op_table import BOOL, COMPLEX, FLOATS, INTS, OpRecord, random_array

_INTS_BOOL = INTS + BOOL
# JAX's rule for max/min over an empty axis divides 0 by 0 locations: NaN tangents, as the
# finite differences of -inf. Forward, first order only: reverse mode's dot-product identity
# weighs NaN against an empty input, and a second order differentiates a constant NaN.
_NAN_TANGENT = ("fwd",)


def _with_nans(rng, shapes, dtype):
    """Floats with NaNs at a few places, and ties (small integers as floats)."""
    x = rng.integers(-3, 4, shapes[0]).astype(np.float32)
    x[0, 1] = x[2, 1] = x[3, 3] = np.nan
    return [x.astype(dtype)]


def _ties(rng, shapes, dtype):
    """Values from a tiny set so every row and column has ties."""
    if dtype == np.bool_:
        return [rng.random(shapes[0]) < 0.5]
    return [rng.integers(0, 3, shapes[0]).astype(dtype)]


def _small(rng, shapes, dtype):
    """Values near 1 so long products stay finite and well conditioned."""
    if dtypes.is_float(dtype) or dtypes.is_complex(dtype):
        return [(rng.uniform(0.5, 1.5, s)).astype(dtype) for s in shapes]
    return [random_array(rng, s, dtype, -3, 3) for s in shapes]


def _argminmax(fun):
    return [
        OpRecord(fun.__name__, lambda x: fun(x, 1, np.int32), [(3, 5)], FLOATS + INTS + BOOL,
                 make_args=_ties, name="ties"),
        OpRecord(fun.__name__, lambda x: fun(x, 0, np.int32), [(4, 5)], FLOATS,
                 make_args=_with_nans, name="nan"),
        OpRecord(fun.__name__, lambda x: fun(x, 1, np.uint8), [(4, 5)], FLOATS + INTS,
                 name="uint8-index"),
    ]


def _cumulative(prim, fun, floats=True, exact=INTS, make_args=None, with_complex=True):
    records = []
    for reverse in (False, True):
        label = "reverse" if reverse else "forward"
        f = (lambda x, reverse=reverse: fun(x, 1, reverse))
        if floats:
            records += by_precision(prim, f, [(3, 6)], make_args, name=label, f32_tol=1e-5,
                                    with_complex=with_complex)
        if exact:
            records.append(OpRecord(prim, f, [(3, 6)], exact, make_args, 0.0, label + "-exact"))
    return records


RECORDS = [
    *by_precision("reduce_sum", lambda x: lax.reduce_sum(x, (0, 2)), [(3, 4, 5)],
                  exact_dtypes=INTS),
    OpRecord("reduce_sum", lambda x: lax.reduce_sum(x, ()), [(2, 3)], INTS, name="no-axes"),
    *by_precision("reduce_prod", lambda x: lax.reduce_prod(x, (1,)), [(3, 4)],
                  make_args=_small, exact_dtypes=INTS),
    OpRecord("reduce_max", lambda x: lax.reduce_max(x, (0, 1)), [(3, 4)],
             FLOATS + COMPLEX + INTS + BOOL),
    OpRecord("reduce_max", lambda x: lax.reduce_max(x, (0,)), [(0, 3)], FLOATS + INTS + BOOL,
             name="empty", grad_modes=_NAN_TANGENT, grad_order=1),
    # ties (small integers) have no derivative for finite differences to check: the tie
    # splitting is compared with JAX in tests/lax/test_grads_structural.py
    OpRecord("reduce_max", lambda x: lax.reduce_max(x, (1,)), [(4, 5)], FLOATS,
             make_args=_with_nans, tol=1e-7, name="nan", grad_order=0),
    OpRecord("reduce_min", lambda x: lax.reduce_min(x, (1,)), [(3, 4)],
             FLOATS + COMPLEX + INTS + BOOL),
    OpRecord("reduce_min", lambda x: lax.reduce_min(x, (0,)), [(0, 3)], FLOATS + INTS + BOOL,
             name="empty", grad_modes=_NAN_TANGENT, grad_order=1),
    OpRecord("reduce_and", lambda x: lax.reduce_and(x, (1,)), [(3, 4)], _INTS_BOOL),
    OpRecord("reduce_and", lambda x: lax.reduce_and(x, (0,)), [(0, 3)], _INTS_BOOL,
             name="empty"),
    OpRecord("reduce_or", lambda x: lax.reduce_or(x, (0, 1)), [(3, 4)], _INTS_BOOL),
    OpRecord("reduce_xor", lambda x: lax.reduce_xor(x, (0,)), [(3, 4)], _INTS_BOOL),
    *_argminmax(lax.argmax),
    *_argminmax(lax.argmin),
    *_cumulative("cumsum", lax.cumsum),
    *_cumulative("cumprod", lax.cumprod, make_args=_small),
    *_cumulative("cummax", lax.cummax),
    *_cumulative("cummin", lax.cummin),
    *_cumulative("cumlogsumexp", lax.cumlogsumexp, exact=(), with_complex=False),
]
