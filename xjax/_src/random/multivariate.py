"""Samplers that factor matrices: ``multivariate_normal`` (a factor of the covariance times
standard normals) and ``orthogonal`` (the Q factor of a Gaussian matrix, made unique).

Both factor with ``xjax.numpy.linalg`` (cholesky, eigh, svd, qr), as JAX does.
"""

from __future__ import annotations

import operator

import numpy as np

from xjax._src.core import dtypes
from xjax._src.random._common import canonical_shape, check_shape, float_dtype, sampler_jit
from xjax._src.random.basic import normal_impl
from xjax._src.random.keys import check_prng_key
from xjax._src.random._common import numpy_module as _jnp


def _covariance_factor(cov, method):
    """A matrix ``F`` (..., n, n) with ``F @ F^H == cov``: the Cholesky factor, or the
    eigenvectors (``eigh``) / left singular vectors (``svd``) scaled by the square roots of
    the eigenvalues / singular values. The latter two also accept a singular ``cov``."""
    linalg = _jnp().linalg
    if method == "svd":
        u, s, _ = linalg.svd(cov)
        return u * _jnp().sqrt(s[..., None, :])
    if method == "eigh":
        w, v = linalg.eigh(cov)
        return v * _jnp().sqrt(w[..., None, :])
    return linalg.cholesky(cov)


# -- multivariate normal --

@sampler_jit(static_argnames=("shape", "dtype", "method"))
def _multivariate_normal(key, mean, cov, *, shape, dtype, method):
    jnp = _jnp()
    n = mean.shape[-1]
    if np.shape(cov)[-2:] != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {np.shape(cov)}.")
    if shape is None:
        shape = tuple(np.broadcast_shapes(mean.shape[:-1], cov.shape[:-2]))
    else:
        check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
    factor = _covariance_factor(cov, method)
    samples = normal_impl(key, (*shape, n), dtype)
    return mean + jnp.matmul(factor, samples[..., None])[..., 0]


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method: str = "cholesky", *,
                        out_sharding=None):
    """Multivariate normal random vectors with ``mean`` (..., n) and covariance ``cov``
    (..., n, n).

    Parameters
    ----------
    key : a PRNG key
    mean, cov : arrays
    shape : tuple of ints, optional
        The batch shape of the result (default: ``mean`` and ``cov``'s broadcast batch
        shape); the result has shape ``shape + (n,)``.
    dtype : float dtype, optional (default: the dtype of ``mean`` and ``cov``)
    method : "cholesky" (default), "svd" or "eigh"
        How ``cov`` is factored.

    Examples
    --------
    >>> import numpy as np
    >>> from xjax import random
    >>> x = random.multivariate_normal(random.PRNGKey(0), np.zeros(2), np.eye(2), (5,))
    >>> x.shape
    (5, 2)
    """
    jnp = _jnp()
    data, _ = check_prng_key("multivariate_normal", key)
    mean, cov = jnp.asarray(mean), jnp.asarray(cov)
    inexact = dtypes.to_inexact_dtype(dtypes.result_type(mean, cov))
    mean, cov = mean.astype(inexact), cov.astype(inexact)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dtype = mean.dtype if dtype is None else float_dtype("multivariate_normal", dtype)
    if not dtypes.is_float(dtype):
        raise ValueError(f"dtype argument to `multivariate_normal` must be a float dtype, got "
                         f"{dtype}")
    if mean.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{mean.ndim}")
    if cov.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{cov.ndim}")
    shape = None if shape is None else canonical_shape(shape)
    return _multivariate_normal(data, mean, cov, shape=shape, dtype=dtype, method=method)


# -- orthogonal --

@sampler_jit(static_argnames=("n", "m", "shape", "dtype"))
def _orthogonal(key, *, n, m, shape, dtype):
    z = normal_impl(key, (*shape, max(n, m), min(n, m)), dtype)
    jnp = _jnp()
    q, r = jnp.linalg.qr(z)
    # Make the factorization unique (R's diagonal positive), so Q is Haar distributed.
    d = jnp.diagonal(r, 0, -2, -1)
    q = q * jnp.expand_dims(d / jnp.abs(d).astype(d.dtype), -2)
    return q.mT if n < m else q


def orthogonal(key, n: int, shape=(), dtype=None, m: int | None = None, *,
               out_sharding=None):
    """Random matrices uniform (Haar) on the orthogonal group O(n) (unitary for complex
    dtypes); ``m`` columns instead of ``n`` give semi-orthogonal matrices.

    Returns an array of shape ``(*shape, n, m)``.

    Examples
    --------
    >>> import numpy as np
    >>> from xjax import random
    >>> q = random.orthogonal(random.PRNGKey(0), 3)
    >>> bool(np.allclose(q @ q.T, np.eye(3), atol=1e-5))
    True
    """
    data, _ = check_prng_key("orthogonal", key)
    dtype = float_dtype("orthogonal", dtype, allow_complex=True)
    n = operator.index(n)
    m = n if m is None else operator.index(m)
    return _orthogonal(data, n=n, m=m, shape=canonical_shape(shape), dtype=dtype)
