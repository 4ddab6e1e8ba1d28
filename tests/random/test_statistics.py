"""The samplers draw from the distributions they name: with fixed keys, the Kolmogorov-Smirnov
statistic of 10,000 samples against the exact CDF is below its 1% critical value (and for
Poisson the largest CDF gap at the integers, which is at most the KS statistic). Keys are
fixed, so these tests are deterministic; both Threefry layouts are checked."""

import math

import numpy as np
import pytest

import xjax
from xjax import random

N = 10_000
KS_CRITICAL_1PCT = 1.6276 / math.sqrt(N)  # asymptotic 1% critical value of sqrt(n) * D


@pytest.fixture(params=[True, False], ids=["partitionable", "legacy"])
def mode(request):
    old = xjax.config.jax_threefry_partitionable
    xjax.config.update("jax_threefry_partitionable", request.param)
    yield request.param
    xjax.config.update("jax_threefry_partitionable", old)


def ks_statistic(samples, cdf):
    x = np.sort(np.asarray(samples, np.float64))
    n = len(x)
    f = cdf(x)
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


def _normal_cdf(x):
    return 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def _scipy_special():
    return pytest.importorskip("scipy.special")


def test_uniform(mode):
    x = random.uniform(random.PRNGKey(11), (N,))
    assert ks_statistic(x, lambda v: v) < KS_CRITICAL_1PCT
    y = random.uniform(random.PRNGKey(12), (N,), minval=-2.0, maxval=3.0)
    assert float(y.min()) >= -2.0 and float(y.max()) < 3.0
    assert ks_statistic(y, lambda v: (v + 2) / 5) < KS_CRITICAL_1PCT


def test_normal(mode):
    x = random.normal(random.PRNGKey(13), (N,))
    assert ks_statistic(x, _normal_cdf) < KS_CRITICAL_1PCT
    assert abs(float(x.mean())) < 4 / math.sqrt(N)
    assert abs(float(x.std()) - 1) < 0.03


def test_exponential(mode):
    x = random.exponential(random.PRNGKey(14), (N,))
    assert float(x.min()) >= 0
    assert ks_statistic(x, lambda v: 1 - np.exp(-v)) < KS_CRITICAL_1PCT


@pytest.mark.parametrize("a", [0.3, 1.0, 4.5])
def test_gamma(a, mode):
    special = _scipy_special()
    x = random.gamma(random.PRNGKey(15), a, (N,))
    assert float(x.min()) >= 0
    assert ks_statistic(x, lambda v: special.gammainc(a, v)) < KS_CRITICAL_1PCT


def test_loggamma_is_the_log_of_gamma(mode):
    special = _scipy_special()
    a = 0.05  # small shapes: samples underflow as floats, their logs do not
    x = random.loggamma(random.PRNGKey(16), a, (N,))
    assert bool(np.isfinite(np.asarray(x)).all())
    assert ks_statistic(np.exp(np.asarray(x, np.float64)),
                        lambda v: special.gammainc(a, v)) < KS_CRITICAL_1PCT


@pytest.mark.parametrize("a,b", [(0.5, 2.0), (3.0, 3.0)])
def test_beta(a, b, mode):
    special = _scipy_special()
    x = random.beta(random.PRNGKey(17), a, b, (N,))
    assert float(x.min()) >= 0 and float(x.max()) <= 1
    assert ks_statistic(x, lambda v: special.betainc(a, b, v)) < KS_CRITICAL_1PCT


@pytest.mark.parametrize("lam", [3.0, 25.0])  # Knuth's algorithm, then transformed rejection
def test_poisson(lam, mode):
    special = _scipy_special()
    x = np.asarray(random.poisson(random.PRNGKey(18), lam, (N,)))
    assert x.dtype == np.int32 and x.min() >= 0
    ks = np.arange(x.max() + 1)
    empirical = np.searchsorted(np.sort(x), ks, side="right") / N
    exact = special.pdtr(ks, lam)
    assert np.max(np.abs(empirical - exact)) < KS_CRITICAL_1PCT
    assert abs(x.mean() - lam) < 4 * math.sqrt(lam / N)


@pytest.mark.parametrize("n,p", [(20, 0.3), (200, 0.4)])  # inversion, then BTRS
def test_binomial(n, p, mode):
    special = _scipy_special()
    x = np.asarray(random.binomial(random.PRNGKey(22), n, p, (N,)))
    ks = np.arange(n + 1)
    empirical = np.searchsorted(np.sort(x), ks, side="right") / N
    assert np.max(np.abs(empirical - special.bdtr(ks, n, p))) < KS_CRITICAL_1PCT


def test_randint_and_bernoulli_frequencies(mode):
    x = np.asarray(random.randint(random.PRNGKey(19), (N,), 0, 7))
    counts = np.bincount(x, minlength=7)
    expected = N / 7
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 16.81  # 1% critical value of chi-square with 6 degrees of freedom
    b = np.asarray(random.bernoulli(random.PRNGKey(20), 0.3, (N,)))
    assert abs(b.mean() - 0.3) < 4 * math.sqrt(0.3 * 0.7 / N)


def test_permutation_is_uniform(mode):
    """Every one of the 6 orders of 3 elements is about equally likely."""
    keys = random.split(random.PRNGKey(21), 3000)
    counts = {}
    for k in np.asarray(keys)[:3000]:
        order = tuple(int(v) for v in random.permutation(k, 3))
        counts[order] = counts.get(order, 0) + 1
    assert len(counts) == 6
    expected = 3000 / 6
    chi2 = sum((c - expected) ** 2 / expected for c in counts.values())
    assert chi2 < 15.09  # 1% critical value, 5 degrees of freedom
