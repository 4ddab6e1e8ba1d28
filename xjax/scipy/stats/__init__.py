"""``xjax.scipy.stats``: probability distributions and summary statistics as in
``jax.scipy.stats``.

One module per distribution (``norm``, ``beta``, ``poisson``, ...) holds its densities or mass
functions, distribution functions and quantiles with SciPy's parametrization; besides them
:class:`gaussian_kde`, :func:`mode`, :func:`rankdata` and :func:`sem`.
"""

from xjax.scipy.stats import bernoulli as bernoulli
from xjax.scipy.stats import beta as beta
from xjax.scipy.stats import betabinom as betabinom
from xjax.scipy.stats import binom as binom
from xjax.scipy.stats import cauchy as cauchy
from xjax.scipy.stats import chi2 as chi2
from xjax.scipy.stats import dirichlet as dirichlet
from xjax.scipy.stats import expon as expon
from xjax.scipy.stats import gamma as gamma
from xjax.scipy.stats import gennorm as gennorm
from xjax.scipy.stats import geom as geom
from xjax.scipy.stats import gumbel_l as gumbel_l
from xjax.scipy.stats import gumbel_r as gumbel_r
from xjax.scipy.stats import laplace as laplace
from xjax.scipy.stats import logistic as logistic
from xjax.scipy.stats import multinomial as multinomial
from xjax.scipy.stats import multivariate_normal as multivariate_normal
from xjax.scipy.stats import nbinom as nbinom
from xjax.scipy.stats import norm as norm
from xjax.scipy.stats import pareto as pareto
from xjax.scipy.stats import poisson as poisson
from xjax.scipy.stats import t as t
from xjax.scipy.stats import truncnorm as truncnorm
from xjax.scipy.stats import uniform as uniform
from xjax.scipy.stats import vonmises as vonmises
from xjax.scipy.stats import wrapcauchy as wrapcauchy
from xjax.scipy.stats._core import mode as mode, rankdata as rankdata, sem as sem
from xjax.scipy.stats._kde import gaussian_kde as gaussian_kde
