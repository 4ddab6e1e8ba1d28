"""Smoke use of JAX's libraries on xjax: each imports, an MLP trains with flax.linen,
flax.nnx and equinox (with optax) and its loss falls, chex assertions pass and fail as they
should, distrax samples and scores, jaxtyping checks shapes.

Run under the import hook: ``python -m xjax.run ecosystem/smoke.py`` (``ecosystem/run.py
--smoke`` does it). Exits non-zero on the first failure.
"""

import math
import sys

import numpy as np

import jax
import jax.numpy as jnp
import xjax

assert jax.numpy is xjax.numpy, "jax is not xjax: run under python -m xjax.run"

import chex  # noqa: E402
import distrax  # noqa: E402
import equinox as eqx  # noqa: E402
import flax.linen as linen  # noqa: E402
import jaxtyping  # noqa: E402
import optax  # noqa: E402
from flax import nnx  # noqa: E402

STEPS = 60


def regression_data():
    """y = sin(3x) on 64 points: a target an MLP fits in a few dozen Adam steps."""
    x = np.linspace(-1, 1, 64, dtype=np.float32)[:, None]
    return jnp.asarray(x), jnp.asarray(np.sin(3 * x))


def train(loss_fn, params, steps=STEPS):
    """Adam on ``loss_fn(params)``; the first and last losses."""
    optimizer = optax.adam(1e-2)
    state = optimizer.init(params)

    @jax.jit
    def step(params, state):
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, state = optimizer.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss

    losses = []
    for _ in range(steps):
        params, state, loss = step(params, state)
        losses.append(float(loss))
    return losses[0], losses[-1]


def check_falls(name, first, last):
    print(f"{name}: loss {first:.4f} -> {last:.4f}")
    assert math.isfinite(last) and last < 0.5 * first, f"{name}: the loss did not fall"


def smoke_flax_linen(x, y):
    class MLP(linen.Module):
        @linen.compact
        def __call__(self, x):
            x = linen.tanh(linen.Dense(32)(x))
            return linen.Dense(1)(x)

    model = MLP()
    params = model.init(jax.random.key(0), x)
    first, last = train(lambda p: jnp.mean((model.apply(p, x) - y) ** 2), params)
    check_falls("flax.linen MLP", first, last)


def smoke_flax_nnx(x, y):
    class MLP(nnx.Module):
        def __init__(self, rngs):
            self.hidden = nnx.Linear(1, 32, rngs=rngs)
            self.out = nnx.Linear(32, 1, rngs=rngs)

        def __call__(self, x):
            return self.out(jnp.tanh(self.hidden(x)))

    model = MLP(nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)

    @nnx.jit
    def step(model, optimizer):
        def loss_fn(model):
            return jnp.mean((model(x) - y) ** 2)
        loss, grads = nnx.value_and_grad(loss_fn)(model)
        optimizer.update(model, grads)
        return loss

    losses = [float(step(model, optimizer)) for _ in range(STEPS)]
    check_falls("flax.nnx MLP", losses[0], losses[-1])


def smoke_equinox(x, y):
    model = eqx.nn.MLP(1, 1, 32, 1, activation=jnp.tanh, key=jax.random.key(0))
    params, static = eqx.partition(model, eqx.is_inexact_array)

    def loss_fn(params):
        model = eqx.combine(params, static)
        return jnp.mean((jax.vmap(model)(x) - y) ** 2)

    first, last = train(loss_fn, params)
    check_falls("equinox MLP", first, last)


def smoke_chex():
    chex.assert_shape(jnp.zeros((2, 3)), (2, 3))
    chex.assert_trees_all_close({"a": jnp.ones(3)}, {"a": jnp.ones(3) + 1e-7})
    chex.assert_type(jnp.arange(3), int)
    try:
        chex.assert_shape(jnp.zeros((2, 3)), (3, 2))
    except AssertionError:
        pass
    else:
        raise AssertionError("chex.assert_shape accepted a wrong shape")

    @chex.chexify
    @jax.jit
    def positive_sqrt(v):
        chex.assert_tree_all_finite(v)
        return jnp.sqrt(v)

    chex.assert_trees_all_close(positive_sqrt(jnp.array(4.0)), jnp.array(2.0))
    chex.block_until_chexify_assertions_complete()
    print("chex: assertions pass and fail as they should")


def smoke_distrax():
    normal = distrax.Normal(loc=1.0, scale=2.0)
    samples = normal.sample(seed=jax.random.key(0), sample_shape=(4000,))
    value = 0.3
    expected = -0.5 * ((value - 1.0) / 2.0) ** 2 - math.log(2.0) - 0.5 * math.log(2 * math.pi)
    np.testing.assert_allclose(float(normal.log_prob(value)), expected, rtol=1e-5)
    assert abs(float(jnp.mean(samples)) - 1.0) < 0.15, "distrax: the sample mean is off"
    assert abs(float(jnp.std(samples)) - 2.0) < 0.15, "distrax: the sample spread is off"
    print(f"distrax: log_prob({value}) = {float(normal.log_prob(value)):.5f}, "
          f"sample mean {float(jnp.mean(samples)):.3f}")


def smoke_jaxtyping():
    from jaxtyping import Array, Float
    assert isinstance(jnp.zeros((2, 3)), Float[Array, "2 3"])
    assert not isinstance(jnp.zeros((2, 3)), Float[Array, "3 3"])
    assert not isinstance(jnp.zeros((2, 3), jnp.int32), Float[Array, "2 3"])
    print(f"jaxtyping {jaxtyping.__name__}: shape and dtype checks work")


def main():
    x, y = regression_data()
    smoke_flax_linen(x, y)
    smoke_flax_nnx(x, y)
    smoke_equinox(x, y)
    smoke_chex()
    smoke_distrax()
    smoke_jaxtyping()
    print("ecosystem smoke: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
