"""Seed 003 (How to think in JAX), in full."""

from functools import partial

import numpy as np

import xjax as jax
import xjax.numpy as jnp
from xjax import jit, lax, make_jaxpr

# jnp mirrors np
x_np = np.linspace(0, 10, 1000)
y_np = 2 * np.sin(x_np) * np.cos(x_np)
x_jnp = jnp.linspace(0, 10, 1000)
y_jnp = 2 * jnp.sin(x_jnp) * jnp.cos(x_jnp)
print(np.allclose(y_np, y_jnp, atol=1e-5))
print(type(x_np).__name__, type(x_jnp).__name__)

# NumPy arrays are mutable, JAX arrays are not
x = np.arange(10)
x[0] = 10
print(x)
x = jnp.arange(10)
try:
    x[0] = 10
except TypeError as e:
    print(f"TypeError: {e}")
y = x.at[0].set(10)
print(x)
print(y)

# jnp promotes, lax does not
print(repr(jnp.add(1, 1.0)))
try:
    lax.add(1, 1.0)
except TypeError as e:
    print(f"TypeError: {e}")
print(repr(lax.add(jnp.float32(1), 1.0)))

# convolution: jnp.convolve is lax.conv_general_dilated with full padding
x = jnp.array([1, 2, 1])
y = jnp.ones(10)
print(repr(jnp.convolve(x, y)))
result = lax.conv_general_dilated(
    x.reshape(1, 1, 3).astype(float),  # note: explicit promotion
    y.reshape(1, 1, 10),
    window_strides=(1,),
    padding=[(len(y) - 1, len(y) - 1)])  # equivalent of padding='full' in NumPy
print(repr(result[0, 0]))


# jit
def norm(X):
    X = X - X.mean(0)
    return X / X.std(0)


norm_compiled = jit(norm)
np.random.seed(1701)
X = jnp.array(np.random.rand(10000, 10))
print(np.allclose(norm(X), norm_compiled(X), atol=1E-6))


def get_negatives(x):
    return x[x < 0]


x = jnp.array(np.random.randn(10))
print(get_negatives(x).dtype, bool((get_negatives(x) < 0).all()))
try:
    jit(get_negatives)(x)
except IndexError as e:
    print(f"{type(e).__name__}: {str(e).splitlines()[0]}")


@jit
def f(x, y):
    print("Running f():")
    print(f"  x = {x}")
    print(f"  y = {y}")
    result = jnp.dot(x + 1, y + 1)
    print(f"  result = {result}")
    return result


x = np.random.randn(3, 4)
y = np.random.randn(4)
print(f(x, y).shape)
x2 = np.random.randn(3, 4)
y2 = np.random.randn(4)
print(f(x2, y2).shape)  # no retracing: nothing printed above this line


def f(x, y):
    return jnp.dot(x + 1, y + 1)


print(make_jaxpr(f)(x, y))


@jit
def f(x, neg):
    return -x if neg else x


try:
    f(1, True)
except TypeError as e:
    print(f"{type(e).__name__}: {str(e).splitlines()[0]}")


@partial(jit, static_argnums=(1,))
def f(x, neg):
    return -x if neg else x


print(repr(f(1, True)))
print(repr(f(1, False)))


@jit
def f(x):
    return x.reshape(jnp.array(x.shape).prod())


x = jnp.ones((2, 3))
try:
    f(x)
except TypeError as e:
    print(f"{type(e).__name__}: {str(e).splitlines()[0]}")


@jit
def f(x):
    print(f"x = {x}")
    print(f"x.shape = {x.shape}")
    print(f"jnp.array(x.shape).prod() = {jnp.array(x.shape).prod()}")


f(x)


@jit
def f(x):
    return x.reshape((np.prod(x.shape),))


print(repr(f(x)))
