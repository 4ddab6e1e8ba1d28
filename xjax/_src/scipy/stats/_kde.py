"""``xjax.scipy.stats.gaussian_kde``: kernel density estimation with Gaussian kernels, as
``scipy.stats.gaussian_kde`` (a pytree, so it passes through ``jit``, ``vmap`` and ``grad``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from xjax._src import numpy as jnp, random
from xjax._src.transformations.jit import jit
from xjax._src.transformations.vmap import vmap
from xjax._src.core import dtypes
from xjax._src.numpy._promotion import check_arraylike, promote_dtypes_inexact
from xjax._src.scipy import linalg
from xjax._src.scipy.special import logsumexp, ndtr
from xjax._src.core.tree_util import register_pytree_node_class

_FIELDS = ("neff", "dataset", "weights", "covariance", "inv_cov")


def _is_complex(x):
    return dtypes.issubdtype(jnp.result_type(x), np.complexfloating)


@register_pytree_node_class
@dataclass(frozen=True, init=False, slots=True)
class gaussian_kde:
    """A Gaussian kernel density estimate of ``d``-dimensional data.

    Parameters
    ----------
    dataset : array_like
        The ``n`` data points, shape ``(d, n)`` (or ``(n,)`` for one dimension).
    bw_method : 'scott', 'silverman', scalar or callable, optional
        The bandwidth factor: Scott's rule ``neff**(-1/(d+4))`` (the default), Silverman's
        rule, a given factor, or a function of the (partially built) estimate.
    weights : array_like, optional
        Weights of the data points (normalized to sum 1); equal weights by default.

    Attributes
    ----------
    dataset, weights, neff
        The data (inexact dtype), normalized weights and effective number of points.
    covariance, inv_cov
        The kernel covariance (data covariance times the squared factor) and its inverse.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.stats import gaussian_kde
    >>> kde = gaussian_kde(jnp.array([-1., 0., 0.5, 2.]))
    >>> kde.integrate_box_1d(-jnp.inf, jnp.inf)
    Array(1., dtype=float32)
    """

    neff: Any
    dataset: Any
    weights: Any
    covariance: Any
    inv_cov: Any

    def __init__(self, dataset, bw_method=None, weights=None):
        check_arraylike("gaussian_kde", dataset)
        dataset = jnp.atleast_2d(dataset)
        if _is_complex(dataset):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not dataset.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = dataset.shape
        if weights is None:
            dataset, = promote_dtypes_inexact(dataset)
            weights = jnp.full(n, 1.0 / n, dtype=dataset.dtype)
        else:
            check_arraylike("gaussian_kde", weights)
            dataset, weights = promote_dtypes_inexact(dataset, weights)
            weights = jnp.atleast_1d(weights)
            weights = weights / jnp.sum(weights)
            if weights.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if len(weights) != n:
                raise ValueError("`weights` input should be of length n")
        self._set("dataset", dataset)
        self._set("weights", weights)
        neff = self._set("neff", 1 / jnp.sum(weights ** 2))
        factor = self._bandwidth_factor(bw_method, neff, d)
        data_covariance = jnp.atleast_2d(jnp.cov(dataset, rowvar=1, bias=False,
                                                 aweights=weights))
        self._set("covariance", data_covariance * factor ** 2)
        self._set("inv_cov", jnp.linalg.inv(data_covariance) / factor ** 2)

    def _bandwidth_factor(self, bw_method, neff, d):
        if bw_method is None or isinstance(bw_method, str) and bw_method == "scott":
            return jnp.power(neff, -1.0 / (d + 4))
        if isinstance(bw_method, str) and bw_method == "silverman":
            return jnp.power(neff * (d + 2) / 4.0, -1.0 / (d + 4))
        if jnp.isscalar(bw_method) and not isinstance(bw_method, str):
            return bw_method
        if callable(bw_method):
            return bw_method(self)
        raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a callable.")

    def _set(self, name, value):
        object.__setattr__(self, name, value)  # the dataclass is frozen
        return value

    def tree_flatten(self):
        return tuple(getattr(self, name) for name in _FIELDS), None

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        del aux_data
        kde = cls.__new__(cls)
        for name, value in zip(_FIELDS, children, strict=True):
            kde._set(name, value)
        return kde

    @property
    def d(self):
        """The dimension of the data."""
        return self.dataset.shape[0]

    @property
    def n(self):
        """The number of data points."""
        return self.dataset.shape[1]

    def evaluate(self, points):
        """The estimated density at ``points`` (shape ``(d, m)``, or ``(d,)`` for one point).
        """
        check_arraylike("evaluate", points)
        points = self._reshape_points(points)
        return _kernel_sum(False, self.dataset.T, self.weights, points.T, self.inv_cov)

    def __call__(self, points):
        return self.evaluate(points)

    def pdf(self, x):
        """Same as :meth:`evaluate`."""
        return self.evaluate(x)

    def logpdf(self, x):
        """The log of the estimated density, summed in log space (no underflow far out)."""
        check_arraylike("logpdf", x)
        x = self._reshape_points(x)
        return _kernel_sum(True, self.dataset.T, self.weights, x.T, self.inv_cov)

    def integrate_gaussian(self, mean, cov):
        """The integral of the estimate times the normal density ``N(mean, cov)``."""
        mean = jnp.atleast_1d(jnp.squeeze(mean))
        cov = jnp.atleast_2d(cov)
        if mean.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        chol = linalg.cho_factor(self.covariance + cov)
        norm = _normal_norm(chol, self.d)
        return _convolved_sum(chol, norm, self.dataset, self.weights, mean)

    @jit
    def integrate_box_1d(self, low, high):
        """The estimated probability of ``[low, high]`` (one-dimensional data, scalar limits).
        """
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be scalars")
        sigma = jnp.squeeze(jnp.sqrt(self.covariance))
        z_low = jnp.squeeze((low - self.dataset) / sigma)
        z_high = jnp.squeeze((high - self.dataset) / sigma)
        return jnp.sum(self.weights * (ndtr(z_high) - ndtr(z_low)))

    def integrate_kde(self, other):
        """The integral of the product of this estimate and ``other``."""
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        chol = linalg.cho_factor(self.covariance + other.covariance)
        norm = _normal_norm(chol, self.d)
        # one convolution per point of the smaller set against the whole larger set
        small, large = (self, other) if self.n < other.n else (other, self)
        per_point = vmap(partial(_convolved_sum, chol, norm, large.dataset, large.weights),
                         in_axes=1)(small.dataset)
        return jnp.sum(per_point * small.weights)

    @jit(static_argnames=("shape",))
    def resample(self, key, shape=()):
        """Draws from the estimate: ``(d,) + shape`` samples (a data point picked by weight
        plus kernel noise)."""
        pick_key, noise_key = random.split(key)
        picked = random.choice(pick_key, self.n, shape=shape, p=self.weights)
        noise = random.multivariate_normal(
            noise_key, jnp.zeros(self.d, self.covariance.dtype), self.covariance,
            shape=shape, dtype=self.dataset.dtype)
        return self.dataset[:, picked] + jnp.moveaxis(noise, -1, 0)

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        """Not supported (as in JAX); one-dimensional data have :meth:`integrate_box_1d`."""
        del low_bounds, high_bounds, maxpts
        raise NotImplementedError(
            "only 1D box integrations are supported; use `integrate_box_1d`")

    def set_bandwidth(self, bw_method=None):
        """Not supported (as in JAX): the estimate is immutable; build a new one."""
        del bw_method
        raise NotImplementedError("dynamically changing the bandwidth method is not supported")

    def _reshape_points(self, points):
        if _is_complex(points):
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        points = jnp.atleast_2d(points)
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:  # a single point given as a row
                return jnp.reshape(points, (self.d, 1))
            raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return points


def _normal_norm(chol, d):
    """``1 / sqrt((2 pi)**d det(C))`` from the Cholesky factor of ``C``."""
    return 1.0 / (math.sqrt(2 * math.pi) ** d * jnp.prod(jnp.diag(chol[0])))


def _convolved_sum(chol, norm, targets, weights, mean):
    diff = targets - mean[:, None]
    quad = jnp.sum(diff * linalg.cho_solve(chol, diff), axis=0)
    return norm * jnp.sum(jnp.exp(-0.5 * quad) * weights)


@partial(jit, static_argnums=0)
def _kernel_sum(in_log, data, weights, points, precision):
    """``sum_j w_j N(x_i; data_j, precision^-1)`` for each row ``x_i`` of ``points`` (or its
    log)."""
    data, weights, points, precision = promote_dtypes_inexact(data, weights, points,
                                                              precision)
    d = data.shape[1]
    # whiten with a factor W of the precision (W W^T = P): the kernel becomes isotropic
    whitening = linalg.cholesky(precision, lower=True)
    data, points = data @ whitening, points @ whitening
    log_norm = jnp.sum(jnp.log(jnp.diag(whitening))) - 0.5 * d * math.log(2 * math.pi)
    sq_dist = jnp.sum(jnp.square(points[:, None, :] - data[None, :, :]), axis=-1)
    log_kernel = log_norm - 0.5 * sq_dist  # (points, data)
    if in_log:
        return logsumexp(log_kernel + jnp.log(weights), axis=1)
    return jnp.sum(weights * jnp.exp(log_kernel), axis=1)


__all__ = ["gaussian_kde"]
