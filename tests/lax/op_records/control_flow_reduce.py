"""Rule-check records of the generic ``reduce`` primitive (``lax.reduce`` with a computation
that is not a monoid ``lax`` function with its identity).

The computations are associative and commutative, so the NumPy fold and XLA's reduction
order agree (exactly for integers and selections, to rounding for floats); their derivatives
go through JAX's jvp rule (a reduction tree), in both modes.
"""

import numpy as np

from xjax import lax
import xjax._src.higher_order.reduce  # noqa: F401  (registers the primitive)
from op_records.shape import by_precision
from op_table import FLOATS, INTS, OpRecord, random_array
from xjax._src.lax.reduce import max_identity


def _lowest(dtype):
    return max_identity(np.dtype(dtype))


def _argmax_pair(a, b):
    """(value, index) pairs: the larger value wins; ties keep the lower index."""
    (av, ai), (bv, bi) = a, b
    pick = lax.bitwise_or(lax.gt(av, bv), lax.bitwise_and(lax.eq(av, bv), lax.lt(ai, bi)))
    return lax.select(pick, av, bv), lax.select(pick, ai, bi)


def argmax_by_reduce(x, axis=1):
    """The maximum along ``axis`` and its first index, by a two-operand reduce."""
    index = lax.broadcasted_iota(np.int32, x.shape, axis)
    return lax.reduce((x, index), (_lowest(x.dtype), np.int32(0)), _argmax_pair, (axis,))


def _max_value(x):
    return argmax_by_reduce(x, 0)[0]


def _plus_product(a, b):
    """``a + b + a b``, i.e. ``(1 + a)(1 + b) - 1``: associative, commutative, identity 0,
    and no lax monoid."""
    return lax.add(lax.add(a, b), lax.mul(a, b))


def _plus_product_reduce(x):
    return lax.reduce(x, np.zeros((), x.dtype), _plus_product, (0, 2))


def _product_reduce(x):
    return lax.reduce(x, np.ones((), x.dtype), lambda a, b: lax.mul(a, b), (1,))


def _ties(rng, shapes, dtype):
    """Small integers (as the dtype), so rows have ties for the index to break."""
    return [rng.integers(0, 4, s).astype(dtype) for s in shapes]


def _distinct(rng, shapes, dtype):
    """Distinct values, so finite differences never cross a tie."""
    n = int(np.prod(shapes[0]))
    values = rng.permutation(n).astype(np.float32) * 0.5 + rng.uniform(-0.1, 0.1, n)
    return [values.reshape(shapes[0]).astype(dtype)]


def _small(rng, shapes, dtype):
    """Values near 0 (floats) or small integers, so products stay well conditioned."""
    if np.dtype(dtype).kind == "c":
        return [(rng.uniform(-0.3, 0.3, s) + 1j * rng.uniform(-0.3, 0.3, s)).astype(dtype)
                for s in shapes]
    if np.dtype(dtype).kind in "fV":
        return [random_array(rng, s, dtype, -0.4, 0.4) for s in shapes]
    return [random_array(rng, s, dtype, -3, 3) for s in shapes]


RECORDS = [
    OpRecord("reduce", argmax_by_reduce, [(4, 5)], FLOATS + INTS, make_args=_ties,
             name="argmax-ties", grad_order=0),
    OpRecord("reduce", _max_value, [(4, 5)], (np.float32,), make_args=_distinct,
             name="argmax-value"),
    *by_precision("reduce", _plus_product_reduce, [(3, 2, 4)], _small, name="plus-product",
                  exact_dtypes=INTS),
    *by_precision("reduce", _product_reduce, [(2, 5)], _small, name="product",
                  exact_dtypes=INTS),
]
