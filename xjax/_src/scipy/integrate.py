"""``xjax.scipy.integrate``: integration of sampled data (JAX's ``jax.scipy.integrate``).

JAX 0.10.2 exposes only :func:`trapezoid` here (SciPy's ODE solvers and quadrature
routines are not part of its API).
"""

from __future__ import annotations
import xjax._src.numpy as jnp

__all__ = ["trapezoid"]


def trapezoid(y, x=None, dx=1.0, axis: int = -1):
    r"""Integrate ``y`` along ``axis`` with the composite trapezoidal rule.

    SciPy's :func:`scipy.integrate.trapezoid` on xjax arrays (the same computation as
    :func:`xjax.numpy.trapezoid`).

    Parameters
    ----------
    y : array_like
        Samples to integrate.
    x : array_like, optional
        Sample points: 1-D of length ``y.shape[axis]``, or an array of ``y``'s rank.
        Without it the samples are ``dx`` apart.
    dx : scalar or array_like
        Spacing of the samples when ``x`` is None (default 1.0); broadcasts against the
        result.
    axis : int
        Axis to integrate along (default last).

    Returns
    -------
    Array
        :math:`\sum_i (x_{i+1} - x_i) (y_i + y_{i+1}) / 2` along ``axis``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.integrate import trapezoid
    >>> trapezoid(jnp.array([1, 2, 3, 2, 3, 2, 1]))
    Array(13., dtype=float32)
    >>> trapezoid(jnp.array([1, 2, 3, 2, 3, 2, 1]), jnp.array([0, 2, 5, 7, 10, 15, 20]))
    Array(43., dtype=float32)
    """
    return jnp.trapezoid(y, x, dx, axis)
