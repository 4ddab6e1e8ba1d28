"""Spherical harmonics ``Y_n^m(theta, phi)`` (SciPy's ``sph_harm_y`` argument order).

The fully normalized associated Legendre functions ``Pbar_n^|m|(cos theta)`` (normalized so
that ``Y = Pbar exp(i m phi)`` is orthonormal on the sphere, Condon-Shortley phase included)
come from the standard stable recurrences: the sectoral start
``Pbar_m^m = (-1)^m sqrt((2m+1)!! / (4 pi (2m)!!)) sin^m theta`` built one factor
``-sqrt((2k+1)/(2k)) sin theta`` at a time, then, in the degree,
``Pbar_l^m = a_lm (cos theta Pbar_{l-1}^m - Pbar_{l-2}^m / a_{l-1,m})`` with
``a_lm = sqrt((4l^2 - 1) / (l^2 - m^2))``. Each element runs every step up to the static
``n_max`` with the steps outside its own ``|m| < l <= n`` masked, so the result jits, vmaps
and differentiates in ``theta`` and ``phi`` (``sin theta`` is used directly, so the
derivative is finite at the poles).
"""

from __future__ import annotations

import math

import numpy as np

from xjax._src import lax, numpy as jnp
from xjax._src.core import dtypes, errors
from xjax._src.numpy._promotion import promote_args_inexact

_SIXTEEN_BIT = (np.dtype(np.float16), np.dtype(dtypes.bfloat16))


def _sectoral(abs_m, sin_theta, n_max):
    """``Pbar_|m|^|m|(cos theta)``, the products masked beyond each element's ``|m|``."""
    value = jnp.full_like(sin_theta, 1 / math.sqrt(4 * math.pi))
    for k in range(1, n_max + 1):
        factor = -math.sqrt((2 * k + 1) / (2 * k)) * sin_theta
        value = jnp.where(k <= abs_m, value * factor, value)
    return value


def _legendre_normalized(n, abs_m, cos_theta, sin_theta, n_max):
    """``Pbar_n^|m|(cos theta)``, 0 where ``|m| > n``."""
    previous = jnp.zeros_like(cos_theta)   # Pbar_{l-2}^m
    current = _sectoral(abs_m, sin_theta, n_max)  # Pbar_{l-1}^m
    m2 = (abs_m * abs_m).astype(cos_theta.dtype)
    for l in range(1, n_max + 1):
        active = (l > abs_m) & (l <= n)
        # Safe denominators off the active steps keep NaN out of the derivatives.
        a_l = jnp.sqrt((4 * l * l - 1) / jnp.where(active, l * l - m2, 1.0))
        prior_ok = active & ((l - 1) > abs_m)
        a_prior = jnp.sqrt((4 * (l - 1) ** 2 - 1)
                           / jnp.where(prior_ok, (l - 1) ** 2 - m2, 1.0))
        step = a_l * (cos_theta * current - jnp.where(prior_ok, previous / a_prior, 0.0))
        previous, current = (jnp.where(active, current, previous),
                             jnp.where(active, step, current))
    return jnp.where(abs_m <= n, current, jnp.zeros_like(current))


def _check_integer(name, v):
    if not dtypes.issubdtype(v.dtype, np.integer):
        raise TypeError(f"sph_harm_y: {name} must be an array of integers, got dtype "
                        f"{v.dtype}")


def _static_n_max(n, n_max):
    if n_max is not None:
        return int(n_max)
    try:
        return int(jnp.max(n)) if np.size(n) else 0
    except (errors.ConcretizationTypeError, errors.TracerArrayConversionError):
        raise errors.ConcretizationTypeError(
            n, "The `n_max` argument of `jnp.scipy.special.sph_harm_y` must be statically "
               "specified to use `sph_harm_y` within JAX transformations.") from None


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """Spherical harmonics ``Y_n^m(theta, phi) = N_n^m P_n^m(cos theta) exp(i m phi)``, with
    ``N_n^m = sqrt((2n+1) (n-m)! / (4 pi (n+m)!))`` and the Condon-Shortley phase, as
    :obj:`scipy.special.sph_harm_y`.

    Parameters
    ----------
    n, m : integer arrays
        Degree ``n >= 0`` and order ``|m| <= n`` (the result is 0 where ``|m| > n``, as
        SciPy; JAX leaves that case undefined).
    theta, phi : real arrays
        Polar (colatitude, in ``[0, pi]``) and azimuthal angles.
    diff_n : None or 0
        Derivatives of the harmonics are not supported (NotImplementedError for others).
    n_max : int, optional
        A static bound on ``n`` (required under ``jit`` when ``n`` is traced); as in JAX,
        degrees and orders above it are clipped to it.

    Returns
    -------
    The complex harmonics, broadcast over the four arguments (complex64 unless ``theta`` or
    ``phi`` is float64).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.special import sph_harm_y
    >>> sph_harm_y(jnp.array([0, 1]), jnp.array([0, 1]), 0.5, 0.)
    Array([ 0.2820948 +0.j, -0.16563873-0.j], dtype=complex64)
    """
    if diff_n not in (None, 0):
        raise NotImplementedError("The 'diff_n' argument to xjax.scipy.special.sph_harm_y is "
                                  "not supported (only the harmonics themselves, diff_n=0).")
    n, m = jnp.asarray(n), jnp.asarray(m)
    _check_integer("n", n)
    _check_integer("m", m)
    n_max = _static_n_max(n, n_max)
    theta, phi = promote_args_inexact("sph_harm_y", theta, phi)
    dtype = np.dtype(theta.dtype)
    if dtype in _SIXTEEN_BIT:
        theta, phi = theta.astype(np.float32), phi.astype(np.float32)
    outside = jnp.abs(m) > n
    # As JAX, degrees and orders above n_max are clipped to it in the Legendre function.
    n_clipped = jnp.minimum(n, n_max)
    abs_m = jnp.abs(m)
    m_clipped = jnp.minimum(abs_m, n_max)
    n_clipped, m_clipped, abs_m, m, theta, phi, outside = jnp.broadcast_arrays(
        n_clipped, m_clipped, abs_m, m, theta, phi, outside)
    legendre = _legendre_normalized(n_clipped, m_clipped, jnp.cos(theta), jnp.sin(theta),
                                    n_max)
    legendre = jnp.where(outside, jnp.zeros_like(legendre), legendre)
    angle = abs_m.astype(phi.dtype) * phi
    harmonic = lax.complex(legendre * jnp.cos(angle), legendre * jnp.sin(angle))
    # Y_n^-m = (-1)^m conj(Y_n^m)
    odd = (abs_m % 2) == 1
    negative = lax.complex(jnp.where(odd, -1.0, 1.0) * jnp.real(harmonic),
                           jnp.where(odd, 1.0, -1.0) * jnp.imag(harmonic))
    return jnp.where(m < 0, negative, harmonic)
