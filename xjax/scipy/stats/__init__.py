"""``xjax.scipy.stats``: probability distributions as in ``jax.scipy.stats`` (so far the
normal distribution, :mod:`xjax.scipy.stats.norm`)."""

from xjax.scipy.stats import norm  # noqa: F401
