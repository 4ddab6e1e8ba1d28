"""``random.multivariate_normal`` with ``method='eigh'`` and ``'svd'`` (and 'cholesky' beside
them): samples are ``mean + F z`` with ``F F^T = cov`` and ``z`` the key's standard normals.

Eigenvector / singular-vector signs are a convention, so the checks use what does not
depend on it: the Mahalanobis norm ``|F^-1 (x - mean)| = |z|`` and the absolute projections
``|v_i . (x - mean)| = sqrt(w_i) |z_i|`` on NumPy's eigenvectors.
"""

import numpy as np
import pytest

import xjax
from xjax import random

_COV = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.3], [0.1, 0.3, 0.5]])
_MEAN = np.array([1.0, -2.0, 0.5])
METHODS = ["eigh", "svd", "cholesky"]


def _mahalanobis(x, mean, cov):
    d = np.asarray(x, np.float64) - mean
    return np.sqrt(np.einsum("...i,ij,...j->...", d, np.linalg.inv(cov), d))


def _abs_eigen_projections(x, mean, cov):
    """``|v_i . (x - mean)| / sqrt(w_i)`` for NumPy's eigenpairs (sign-free)."""
    w, v = np.linalg.eigh(cov)
    return np.abs((np.asarray(x, np.float64) - mean) @ v) / np.sqrt(w)


@pytest.mark.parametrize("method", METHODS)
def test_samples_are_mean_plus_factor_times_the_keys_normals(method):
    key = random.PRNGKey(3)
    x = random.multivariate_normal(key, _MEAN.astype(np.float32), _COV.astype(np.float32),
                                   (50,), method=method)
    assert x.shape == (50, 3) and x.dtype == np.float32
    z = np.asarray(random.normal(key, (50, 3)), np.float64)
    np.testing.assert_allclose(_mahalanobis(x, _MEAN, _COV), np.linalg.norm(z, axis=-1),
                               rtol=2e-5)
    if method != "cholesky":  # eigenvalues distinct: each column is an eigenvector
        np.testing.assert_allclose(np.sort(_abs_eigen_projections(x, _MEAN, _COV), axis=-1),
                                   np.sort(np.abs(z), axis=-1), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("method", ["eigh", "svd"])
def test_sample_mean_and_covariance(method):
    x = np.asarray(random.multivariate_normal(random.PRNGKey(7), _MEAN, _COV, (40000,),
                                              method=method), np.float64)
    standard_error = np.sqrt(np.diag(_COV) / x.shape[0])
    assert np.all(np.abs(x.mean(0) - _MEAN) < 5 * standard_error)
    # The sample covariance of n normals has entries with standard deviation
    # sqrt((c_ii c_jj + c_ij^2) / n).
    cov_error = np.sqrt((np.outer(np.diag(_COV), np.diag(_COV)) + _COV ** 2) / x.shape[0])
    assert np.all(np.abs(np.cov(x.T) - _COV) < 5 * cov_error)


def test_float64_eigh_matches_cholesky_in_distribution_of_norms():
    with xjax.config.override(jax_enable_x64=True):
        key = random.PRNGKey(11)
        for method in ("eigh", "svd"):
            x = random.multivariate_normal(key, _MEAN, _COV, (20,), method=method)
            assert x.dtype == np.float64
            z = np.asarray(random.normal(key, (20, 3)))
            np.testing.assert_allclose(_mahalanobis(x, _MEAN, _COV),
                                       np.linalg.norm(z, axis=-1), rtol=1e-10)


def test_svd_accepts_a_singular_covariance():
    # Rank 2: every sample lies in the plane orthogonal to (1, -1, 0) through the mean.
    basis = np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]).T
    cov = basis @ np.diag([2.0, 0.5]) @ basis.T
    x = np.asarray(random.multivariate_normal(random.PRNGKey(1), np.zeros(3), cov, (200,),
                                              method="svd"))
    assert np.all(np.isfinite(x))
    np.testing.assert_allclose(x[:, 0] - x[:, 1], 0.0, atol=1e-5)
    assert np.std(x[:, 0]) > 0.5


@pytest.mark.parametrize("method", ["eigh", "svd"])
def test_batched_covariances_and_jit(method):
    covs = np.stack([_COV, np.diag([3.0, 2.0, 1.0])]).astype(np.float32)
    means = np.zeros((2, 3), np.float32)
    key = random.PRNGKey(5)
    sample = xjax.jit(lambda k: random.multivariate_normal(k, means, covs, (4, 2),
                                                           method=method))
    x = sample(key)
    assert x.shape == (4, 2, 3)
    np.testing.assert_allclose(x, random.multivariate_normal(key, means, covs, (4, 2),
                                                             method=method), rtol=1e-6)
    z = np.asarray(random.normal(key, (4, 2, 3)), np.float64)
    for b in range(2):
        np.testing.assert_allclose(_mahalanobis(x[:, b], means[b], covs[b]),
                                   np.linalg.norm(z[:, b], axis=-1), rtol=2e-5)


@pytest.mark.parametrize("method", METHODS)
def test_against_jax_for_the_same_key(method):
    jax = pytest.importorskip("jax")
    cov, mean = _COV.astype(np.float32), _MEAN.astype(np.float32)
    ours = random.multivariate_normal(random.PRNGKey(2), mean, cov, (30,), method=method)
    theirs = jax.random.multivariate_normal(jax.random.PRNGKey(2), mean, cov, (30,),
                                            method=method)
    np.testing.assert_allclose(_mahalanobis(ours, _MEAN, _COV),
                               _mahalanobis(np.asarray(theirs), _MEAN, _COV), rtol=1e-4)
    np.testing.assert_allclose(_abs_eigen_projections(ours, _MEAN, _COV),
                               _abs_eigen_projections(np.asarray(theirs), _MEAN, _COV),
                               rtol=1e-3, atol=1e-4)


def test_bad_method_and_shapes_raise_as_jax():
    key = random.PRNGKey(0)
    with pytest.raises(ValueError, match="method must be one of"):
        random.multivariate_normal(key, np.zeros(2), np.eye(2), method="qr")
    with pytest.raises(ValueError, match=r"cov.shape == \(..., n, n\) for n=2"):
        random.multivariate_normal(key, np.zeros(2), np.eye(3), method="eigh")
