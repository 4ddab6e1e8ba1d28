"""``xjax.scipy.stats``: probability distributions and summary statistics as in
``jax.scipy.stats``.

One module per distribution (``norm``, ``beta``, ``poisson``, ...) holds its densities or mass
functions, distribution functions and quantiles with SciPy's parametrization; besides them
:class:`gaussian_kde`, :func:`mode`, :func:`rankdata` and :func:`sem`.
"""

from xjax._src.scipy.stats import (bernoulli as bernoulli, beta as beta, betabinom as betabinom,
                                   binom as binom, cauchy as cauchy, chi2 as chi2, dirichlet as
                                   dirichlet, expon as expon, gamma as gamma, gennorm as gennorm,
                                   geom as geom, gumbel_l as gumbel_l, gumbel_r as gumbel_r,
                                   laplace as laplace, logistic as logistic, multinomial as
                                   multinomial, multivariate_normal as multivariate_normal, nbinom
                                   as nbinom, norm as norm, pareto as pareto, poisson as poisson, t
                                   as t, truncnorm as truncnorm, uniform as uniform, vonmises as
                                   vonmises, wrapcauchy as wrapcauchy)
from xjax._src.scipy.stats._core import mode as mode, rankdata as rankdata, sem as sem
from xjax._src.scipy.stats._kde import gaussian_kde as gaussian_kde
