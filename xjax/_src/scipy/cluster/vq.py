"""``xjax.scipy.cluster.vq``: vector quantization (JAX's ``jax.scipy.cluster.vq``)."""

from __future__ import annotations

from xjax._src.numpy._promotion import check_arraylike, promote_dtypes_inexact
import xjax._src.numpy as jnp

__all__ = ["vq"]


def vq(obs, code_book, check_finite: bool = True):
    """Assign each observation to its nearest code (Euclidean distance).

    xjax's (and JAX's) version of :func:`scipy.cluster.vq.vq`.

    Parameters
    ----------
    obs : array_like
        Observations, shape ``(M, N)``; a 1-D array is ``M`` observations of length 1.
    code_book : array_like
        Codes, shape ``(K, N)`` (1-D: ``K`` codes of length 1); same rank as ``obs``.
    check_finite : bool, optional
        Accepted and ignored (no value-dependent checks under ``jit``), as in JAX.

    Returns
    -------
    code : Array
        Integer array of shape ``(M,)``: the index of the nearest code (the first one on
        ties).
    dist : Array
        Shape ``(M,)``: the distance from each observation to its code.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> obs = jnp.array([[1.0, 1.0], [4.0, 5.0]])
    >>> code_book = jnp.array([[0.0, 0.0], [4.0, 4.0]])
    >>> code, dist = vq(obs, code_book)
    >>> code
    Array([0, 1], dtype=int32)
    >>> dist
    Array([1.4142135, 1.       ], dtype=float32)
    """
    del check_finite  # value checks are impossible under jit

    check_arraylike("scipy.cluster.vq.vq", obs, code_book)
    obs, code_book = promote_dtypes_inexact(obs, code_book)
    if obs.ndim != code_book.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs.ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    if obs.ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    # (M, K) distances from every observation to every code.
    distances = jnp.linalg.norm(obs[:, None, :] - code_book[None, :, :], axis=-1)
    code = jnp.argmin(distances, axis=-1)
    nearest = jnp.take_along_axis(distances, code[:, None], axis=-1)[:, 0]
    return code, nearest
