"""BFGS (Nocedal & Wright, *Numerical Optimization*, Algorithm 6.1) on a dense inverse
Hessian estimate, as one ``lax.while_loop``."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from xjax._src import higher_order as control_flow
from xjax._src.transformations.grad import value_and_grad
import xjax._src.numpy as jnp
from xjax._src import lax
from xjax._src.scipy.optimize._line_search import line_search


class _BFGSResults(NamedTuple):
    """The loop state, and the result.

    converged: the gradient norm fell below ``gtol``.
    failed: the last line search failed.
    k: iterations done. nfev, ngev, nhev: evaluations of f, its gradient, its Hessian.
    x_k, f_k, g_k: the iterate, its value and gradient.
    H_k: the inverse Hessian estimate.
    old_old_fval: the previous iterate's value (sets the next line search's first step).
    status: 0 converged, 1 maxiter reached, 2 + the line search's status if it failed
      (3 zoom failed, 5 too many line search iterations), -1 otherwise.
    line_search_status: the last line search's status.
    """
    converged: object
    failed: object
    k: object
    nfev: object
    ngev: object
    nhev: object
    x_k: object
    f_k: object
    g_k: object
    H_k: object
    old_old_fval: object
    status: object
    line_search_status: object


def _matmul(a, b):
    return jnp.matmul(a, b, precision=lax.Precision.HIGHEST)


def _inverse_hessian_update(H, s, y):
    """``(I - rho s y^T) H (I - rho y s^T) + rho s s^T`` with ``rho = 1 / y.s`` (N&W 6.17);
    kept unchanged when ``y.s`` is zero (``rho`` not finite)."""
    rho = jnp.reciprocal(jnp.dot(y, s, precision=lax.Precision.HIGHEST))
    left = jnp.eye(H.shape[0], dtype=rho.dtype) - rho * jnp.outer(s, y)
    # W H W^T as one contraction (opt_einsum picks the order, as in JAX: same rounding)
    updated = (jnp.einsum("ij,jk,lk->il", left, H, left, precision=lax.Precision.HIGHEST)
               + rho * s[:, None] * s[None, :])
    return jnp.where(jnp.isfinite(rho), updated, H)


def minimize_bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    """Minimize ``fun`` from ``x0`` with BFGS.

    Parameters
    ----------
    fun : callable
        ``fun(x) -> scalar`` for a 1-D ``x``, differentiable with xjax.
    x0 : Array
        The starting point, shape ``(n,)``.
    maxiter : int, optional
        Iterations allowed (default ``200 * n``).
    norm : float
        The order of the gradient norm tested against ``gtol`` (default infinity).
    gtol : float
        Stop once the gradient's norm is below this.
    line_search_maxiter : int
        Bracketing iterations allowed per line search.

    Returns
    -------
    _BFGSResults
    """
    if maxiter is None:
        maxiter = np.size(x0) * 200
    n = x0.shape[0]
    f_0, g_0 = value_and_grad(fun)(x0)
    state = _BFGSResults(
        converged=jnp.linalg.norm(g_0, ord=norm) < gtol, failed=False, k=0, nfev=1, ngev=1,
        nhev=0, x_k=x0, f_k=f_0, g_k=g_0, H_k=jnp.eye(n, dtype=x0.dtype),
        # a fictitious previous value whose decrease makes the first step |g|-sized
        old_old_fval=f_0 + jnp.linalg.norm(g_0) / 2, status=0, line_search_status=0)

    def keep_going(s):
        return ~s.converged & ~s.failed & (s.k < maxiter)

    def step(s):
        direction = -_matmul(s.H_k, s.g_k)
        found = line_search(fun, s.x_k, direction, old_fval=s.f_k, old_old_fval=s.old_old_fval,
                            gfk=s.g_k, maxiter=line_search_maxiter)
        s_k = found.a_k * direction
        H = _inverse_hessian_update(s.H_k, s_k, found.g_k - s.g_k)
        return s._replace(
            converged=jnp.linalg.norm(found.g_k, ord=norm) < gtol, failed=found.failed,
            k=s.k + 1, nfev=s.nfev + found.nfev, ngev=s.ngev + found.ngev, x_k=s.x_k + s_k,
            f_k=found.f_k, g_k=found.g_k, H_k=H, old_old_fval=s.f_k,
            line_search_status=found.status)

    state = control_flow.while_loop(keep_going, step, state)
    status = jnp.where(state.converged, 0,
                       jnp.where(state.k == maxiter, 1,
                                 jnp.where(state.failed, 2 + state.line_search_status, -1)))
    return state._replace(status=status)
