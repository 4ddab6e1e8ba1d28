"""Seed 000 (JAX quickstart): the random-number, jnp and jit parts.

The grad and vmap parts of the seed arrive with their issues (autodiff: 3, vmap: 4); this
file grows as they land.
"""

import time

import numpy as np

import xjax as jax
import xjax.numpy as jnp
from xjax import device_put, jit, random

# Random numbers: the seed printed these values with JAX's legacy Threefry layout (the default
# before JAX 0.5); JAX 0.10 and xjax default to the partitionable layout.
jax.config.update("jax_threefry_partitionable", False)
key = random.PRNGKey(0)
x = random.normal(key, (10,))
print(x)
jax.config.update("jax_threefry_partitionable", True)


def timeit(label, fn, repeat=5):
    fn()  # warm up (compiles when jitted)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    print(f"{label}: {np.median(times) * 1e3:.3f} ms")


# Multiplying matrices: NumPy arrays work with jnp, device_put moves them once.
size = 3000
x = np.random.normal(size=(size, size)).astype(np.float32)
timeit("jnp.dot of a NumPy array", lambda: jnp.dot(x, x.T).block_until_ready())
x = device_put(x)
timeit("jnp.dot after device_put", lambda: jnp.dot(x, x.T).block_until_ready())


def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


x = jnp.asarray(np.random.default_rng(0).standard_normal(1000000).astype(np.float32))
timeit("selu eager", lambda: selu(x).block_until_ready())
selu_jit = jit(selu)
timeit("selu jit", lambda: selu_jit(x).block_until_ready())
print("selu eager == jit:", bool(np.allclose(selu(x), selu_jit(x), atol=1e-6)))
