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

from xjax._src.random.keys import (  # noqa: F401
    KeyDType as KeyDType, PRNGKey as PRNGKey, PRNGKeyArray as PRNGKeyArray,
    PRNGSpec as PRNGSpec, clone as clone, key as key, key_data as key_data,
    key_dtype as key_dtype, key_impl as key_impl, wrap_key_data as wrap_key_data,
)
from xjax._src.random.gamma_family import (  # noqa: F401
    ball as ball, beta as beta, chisquare as chisquare, dirichlet as dirichlet, f as f,
    gamma as gamma, generalized_normal as generalized_normal, loggamma as loggamma,
    poisson as poisson, t as t,
)
from xjax._src.random.basic import (  # noqa: F401
    bernoulli as bernoulli, bits as bits, fold_in as fold_in, normal as normal,
    randint as randint, split as split, uniform as uniform,
)
from xjax._src.random.binomial import (  # noqa: F401
    binomial as binomial, multinomial as multinomial,
)
from xjax._src.random.sorting import (  # noqa: F401
    categorical as categorical, choice as choice, permutation as permutation,
)
from xjax._src.random.distributions import (  # noqa: F401
    cauchy as cauchy, double_sided_maxwell as double_sided_maxwell, exponential as exponential,
    geometric as geometric, gumbel as gumbel, laplace as laplace, logistic as logistic,
    lognormal as lognormal, maxwell as maxwell, pareto as pareto, rademacher as rademacher,
    rayleigh as rayleigh, triangular as triangular, truncated_normal as truncated_normal,
    wald as wald, weibull_min as weibull_min,
)
from xjax._src.random.multivariate import (  # noqa: F401
    multivariate_normal as multivariate_normal, orthogonal as orthogonal,
)
from xjax._src.random.random_gamma import (  # noqa: F401
    random_gamma_p as random_gamma_p,
)
from xjax._src.random import __all__ as __all__  # noqa: F401
