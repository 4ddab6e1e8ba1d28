"""``xjax.random``: JAX's splittable, counter-based random numbers (Threefry-2x32).

Keys are values: every function takes a key and returns numbers (or new keys) without
hidden state, so the same key gives the same numbers eagerly, under ``jit`` and per key
under ``vmap``, and the same numbers as JAX 0.10 gives for that key. The counter layout
follows ``xjax.config.update("jax_threefry_partitionable", ...)`` (True by default, as in
JAX 0.10).

>>> from xjax import random
>>> key = random.key(0)
>>> key, subkey = random.split(key)
>>> random.normal(subkey, (2,)).shape
(2,)
"""

from xjax.random.keys import (KeyDType, PRNGKeyArray, PRNGKey, PRNGSpec, clone,  # noqa: F401
                              key, key_data, key_dtype, key_impl, wrap_key_data)
from xjax.random.basic import (bernoulli, bits, fold_in, normal, randint, split,  # noqa: F401
                               uniform)
from xjax.random.sorting import categorical, choice, permutation  # noqa: F401

__all__ = ["PRNGKey", "PRNGKeyArray", "bernoulli", "bits", "clone", "fold_in", "key",
           "key_data", "key_dtype", "key_impl", "normal", "randint", "split", "uniform",
           "wrap_key_data"]
