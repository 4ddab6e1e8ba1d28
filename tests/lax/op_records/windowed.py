"""Rule-check records of the window reductions (reduce_window_sum/max/min and the generic
reduce_window)."""

import numpy as np

from xjax import lax
import xjax._src.higher_order.reduce_window  # noqa: F401  (registers the generic primitive)
from op_records.shape import by_precision
from op_table import BOOL, FLOATS, INTS, OpRecord
from xjax._src.lax.reduce import max_identity, min_identity


def _window(computation, init, dims, strides=None, padding="VALID", base=None, wdil=None):
    def fun(x):
        return lax.reduce_window(x, init(x.dtype), computation, dims, strides, padding,
                                 base, wdil)
    return fun


def _zero(dtype):
    return np.zeros((), dtype)


def _low(dtype):
    return max_identity(np.dtype(dtype))


def _high(dtype):
    return min_identity(np.dtype(dtype))


def _distinct(rng, shapes, dtype):
    """Distinct values, so a window's maximum has no tie for finite differences to cross."""
    n = int(np.prod(shapes[0]))
    values = rng.permutation(n).astype(np.float32) * 0.5 + rng.uniform(-0.1, 0.1, n)
    return [values.reshape(shapes[0]).astype(dtype)]


def _near_one(rng, shapes, dtype):
    return [rng.uniform(0.5, 1.5, s).astype(dtype) for s in shapes]


_CONFIGS = {
    "pool": dict(dims=(2, 2), strides=(2, 1)),
    "same": dict(dims=(3, 2), strides=(1, 1), padding="SAME"),
    "dilated": dict(dims=(2, 2), strides=(2, 1), padding=((1, 0), (2, -1)), base=(2, 1),
                    wdil=(1, 2)),
}


def _sum_records():
    records = []
    for label, config in _CONFIGS.items():
        records += by_precision("reduce_window_sum", _window(lax.add, _zero, **config),
                                [(5, 6)], name=label, exact_dtypes=INTS)
    return records


def _chooser_records(name, computation, init):
    records = []
    for label, config in _CONFIGS.items():
        fun = _window(computation, init, **config)
        records.append(OpRecord(name, fun, [(5, 6)], FLOATS + INTS + BOOL, name=label,
                                grad_order=0))
        records.append(OpRecord(name, fun, [(5, 6)], (np.float32,), make_args=_distinct,
                                name=label + "-distinct"))
    return records


def _two_operands(x):
    """A variadic window reduction: sums and products together."""
    return lax.reduce_window((x, x), (np.zeros((), x.dtype), np.ones((), x.dtype)),
                             lambda a, b: (lax.add(a[0], b[0]), lax.mul(a[1], b[1])),
                             (2, 3), (1, 2), "SAME")


RECORDS = [
    *_sum_records(),
    *_chooser_records("reduce_window_max", lax.max, _low),
    *_chooser_records("reduce_window_min", lax.min, _high),
    # the generic primitive: forward mode only, as in JAX (no transpose)
    OpRecord("reduce_window", _window(lax.mul, lambda d: np.ones((), d), (2, 2), (1, 1)),
             [(4, 5)], (np.float32,), make_args=_near_one, tol=1e-5, name="mul",
             grad_modes=("fwd",)),
    OpRecord("reduce_window", _window(lax.mul, lambda d: np.ones((), d), (2, 2), (1, 1)),
             [(4, 5)], INTS, name="mul-int"),
    OpRecord("reduce_window", _two_operands, [(4, 5)], (np.float32,), make_args=_near_one,
             tol=1e-5, name="variadic", grad_modes=("fwd",)),
    OpRecord("reduce_window", _window(lax.add, lambda d: np.ones((), d), (2, 2), (1, 1),
                                      ((1, 1), (0, 1)), (1, 2)),
             [(3, 4)], FLOATS + INTS, tol=1e-2, name="add-init1", grad_modes=("fwd",)),
]
