"""Seed 002 (gotchas): pure functions and jit's cache, iterators in loop bodies, immutable
arrays, lists refused.

The grad part of the seed arrives with autodiff (issue 3).
"""

import xjax as jax
import xjax.numpy as jnp
from xjax import jit, lax

g = 0.


def impure_uses_globals(x):
    return x + g


print("First call: ", jit(impure_uses_globals)(4.))
g = 10.  # Update the global

print("Second call: ", jit(impure_uses_globals)(5.))

print("Third call, different type: ", jit(impure_uses_globals)(jnp.array([4.])))

# lax.fori_loop: the body is traced once, so a Python iterator yields one value.
array = jnp.arange(10)
print(lax.fori_loop(0, 10, lambda i, x: x + array[i], 0))  # expected result 45
iterator = iter(range(10))
print(lax.fori_loop(0, 10, lambda i, x: x + next(iterator), 0))  # unexpected result 0

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
