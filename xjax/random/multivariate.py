"""Samplers that factor matrices: ``multivariate_normal`` (a factor of the covariance times
standard normals) and ``orthogonal`` (the Q factor of a Gaussian matrix, made unique).

``xjax.numpy.linalg`` is used where it exists; until it does, the Cholesky factor and the
QR factorization are computed here column by column with ordinary array operations (exact
algorithms, unrolled over the static matrix size), and the ``svd``/``eigh`` methods of
``multivariate_normal`` raise NotImplementedError.
"""

from __future__ import annotations

import operator

import numpy as np

from xjax.core import dtypes
from xjax.random._common import canonical_shape, check_shape, float_dtype, sampler_jit
from xjax.random.basic import normal_impl
from xjax.random.keys import check_prng_key
from xjax.random._common import numpy_module as _jnp


def _linalg_function(name):
    return getattr(getattr(_jnp(), "linalg", None), name, None)


# -- factorizations --

def _cholesky_columns(a):
    """Lower Cholesky factor of the Hermitian positive definite ``a`` (..., n, n), one
    column at a time (NaN where ``a`` is not positive definite, as LAPACK-backed JAX)."""
    jnp = _jnp()
    n = a.shape[-1]
    rows = jnp.arange(n)
    columns = []
    for j in range(n):
        column = a[..., :, j]
        if columns:
            previous = jnp.stack(columns, axis=-1)  # (..., n, j)
            column = column - jnp.sum(previous * jnp.conj(previous[..., j:j + 1, :]), axis=-1)
        pivot = jnp.sqrt(jnp.real(column[..., j:j + 1]).astype(column.dtype))
        column = jnp.where(rows >= j, column / pivot, jnp.zeros((), column.dtype))
        columns.append(column)
    return jnp.stack(columns, axis=-1)


def _cholesky(cov):
    cholesky = _linalg_function("cholesky")
    return cholesky(cov) if cholesky is not None else _cholesky_columns(cov)


def _orthonormal_columns(z):
    """The Q of ``z = QR`` (..., m, n), m >= n, with R's diagonal positive: classical
    Gram-Schmidt with a second orthogonalization pass (orthogonal to rounding)."""
    jnp = _jnp()
    columns = []
    for j in range(z.shape[-1]):
        v = z[..., :, j]
        for _ in range(2):
            for q in columns:
                v = v - jnp.sum(jnp.conj(q) * v, axis=-1, keepdims=True) * q
        norm = jnp.sqrt(jnp.sum(jnp.real(jnp.conj(v) * v), axis=-1, keepdims=True))
        columns.append(v / norm.astype(v.dtype))
    return jnp.stack(columns, axis=-1)


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
    if method == "svd":
        svd = _linalg_function("svd")
        if svd is None:
            raise NotImplementedError("multivariate_normal(method='svd') needs "
                                      "xjax.numpy.linalg.svd, which xjax does not have yet; "
                                      "use method='cholesky'")
        u, s, _ = svd(cov)
        factor = u * jnp.sqrt(s[..., None, :])
    elif method == "eigh":
        eigh = _linalg_function("eigh")
        if eigh is None:
            raise NotImplementedError("multivariate_normal(method='eigh') needs "
                                      "xjax.numpy.linalg.eigh, which xjax does not have yet; "
                                      "use method='cholesky'")
        w, v = eigh(cov)
        factor = v * jnp.sqrt(w[..., None, :])
    else:
        factor = _cholesky(cov)
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
    qr = _linalg_function("qr")
    if qr is not None:
        jnp = _jnp()
        q, r = qr(z)
        d = jnp.diagonal(r, 0, -2, -1)
        q = q * jnp.expand_dims(d / jnp.abs(d).astype(d.dtype), -2)
    else:
        q = _orthonormal_columns(z)  # R's diagonal is already positive
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
