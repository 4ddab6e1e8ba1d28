"""Seed 001 (JIT basics): norm jitted or not, and the three programs jit refuses."""

from functools import partial

import numpy as np

import xjax as jax
import xjax.numpy as jnp
from xjax import jit


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
print(get_negatives(x).shape[0] == int((np.asarray(x) < 0).sum()))
try:
    jit(get_negatives)(x)
except IndexError as e:
    print(f"{type(e).__name__}: {str(e).splitlines()[0]}")


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
    return x.reshape((np.prod(x.shape),))


print(repr(f(x)))
