"""Rule-check records of the Threefry-2x32 hash: exact (wrapping uint32 arithmetic), with
full-range words, equal shapes and lax's implicit broadcasting (a rank-0 key, size-1 dims);
and of ``random_gamma`` (Gamma variates per key)."""

import numpy as np

from xjax import lax
from xjax._src.random.random_gamma import random_gamma
from op_records.elementwise import full_range_ints
from op_table import OpRecord

_U32 = (np.uint32,)

RECORDS = [
    OpRecord("threefry2x32", lax.threefry2x32, [(4, 5)] * 4, _U32, make_args=full_range_ints),
    OpRecord("threefry2x32", lax.threefry2x32, [(), (), (3, 7), (3, 7)], _U32,
             make_args=full_range_ints, name="scalar_key"),
    OpRecord("threefry2x32", lax.threefry2x32, [(1, 6), (4, 1), (4, 6), (1, 1)], _U32,
             make_args=full_range_ints, name="size1_dims"),
]


def _keys_and_shapes(rng, shapes, dtype):
    """Full-range uint32 key data of ``shapes[0]`` and ``a`` in [0.2, 4) of ``shapes[1]``."""
    keys = rng.integers(0, 2**32, shapes[0], dtype=np.uint64).astype(np.uint32)
    return [keys, rng.uniform(0.2, 4.0, shapes[1]).astype(dtype)]


def _gamma(log_space):
    return lambda keys, a: random_gamma(keys, a, log_space=log_space)


# random_gamma's derivative in a is the implicit reparameterization gradient (the sample's
# change at a fixed CDF value), not the derivative of the rejection sampler's transform at a
# fixed key that finite differences measure: grad_order 0 here; tests/random/test_gamma_grads.py
# checks it against JAX and against the CDF.
RECORDS += [
    OpRecord("random_gamma", _gamma(False), [(2, 3, 2), (2, 3)], (np.float32,),
             make_args=_keys_and_shapes, tol=1e-6, grad_order=0),
    OpRecord("random_gamma", _gamma(True), [(4, 2), (4,)], (np.float32,),
             make_args=_keys_and_shapes, tol=1e-6, name="log_space", grad_order=0),
]
