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

from xjax._src.random.keys import (KeyDType, PRNGKey, PRNGKeyArray, PRNGSpec, clone, key, key_data,
                                   key_dtype, key_impl, wrap_key_data)
from xjax._src.random.basic import bernoulli, bits, fold_in, normal, randint, split, uniform
from xjax._src.random.sorting import categorical, choice, permutation
from xjax._src.random.distributions import (cauchy, double_sided_maxwell, exponential, geometric,
                                            gumbel, laplace, logistic, lognormal, maxwell, pareto,
                                            rademacher, rayleigh, triangular, truncated_normal,
                                            wald, weibull_min)
from xjax._src.random.gamma_family import (ball, beta, chisquare, dirichlet, f, gamma,
                                           generalized_normal, loggamma, poisson, t)
from xjax._src.random.multivariate import multivariate_normal, orthogonal
from xjax._src.random.binomial import binomial, multinomial
from xjax._src.random.random_gamma import random_gamma_p

__all__ = ["KeyDType", "PRNGKey", "PRNGKeyArray", "PRNGSpec", "ball", "bernoulli", "beta",
           "binomial", "bits", "categorical", "cauchy", "chisquare", "choice", "clone", "dirichlet",
           "double_sided_maxwell", "exponential", "f", "fold_in", "gamma", "generalized_normal",
           "geometric", "gumbel", "key", "key_data", "key_dtype", "key_impl", "laplace", "logistic",
           "loggamma", "lognormal", "maxwell", "multinomial", "multivariate_normal", "normal",
           "orthogonal", "pareto", "permutation", "poisson", "rademacher", "randint",
           "random_gamma_p", "rayleigh", "split", "t", "triangular", "truncated_normal", "uniform",
           "wald", "weibull_min", "wrap_key_data"]
