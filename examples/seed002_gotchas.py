"""Seed 002 (gotchas): pure functions and jit's cache, immutable arrays, lists refused.

The fori_loop and grad parts of the seed arrive with control flow (issue 6) and autodiff
(issue 3).
"""

import xjax as jax
import xjax.numpy as jnp
from xjax import jit

g = 0.


def impure_uses_globals(x):
    return x + g


print("First call: ", jit(impure_uses_globals)(4.))
g = 10.  # Update the global

print("Second call: ", jit(impure_uses_globals)(5.))

print("Third call, different type: ", jit(impure_uses_globals)(jnp.array([4.])))

jax_array = jnp.zeros((3, 3), dtype=jnp.float32)
try:
    jax_array[1, :] = 1.0
except Exception as e:
    print("Exception {}".format(e))
print(jax_array.at[1, :].set(1.0))

try:
    jnp.sum([1, 2, 3])
except TypeError as e:
    print(f"TypeError: {e}")
print(jnp.sum(jnp.array([1, 2, 3])))
