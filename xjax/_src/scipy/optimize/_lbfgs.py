"""Limited-memory BFGS (Nocedal & Wright, *Numerical Optimization*, Algorithms 7.4 and 7.5),
with the complex-variable form of Sorber, Van Barel & De Lathauwer (SIAM J. Optim. 22(3),
2012) for complex ``x``; one ``lax.while_loop`` over iterations."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from xjax._src import higher_order as control_flow
from xjax._src.transformations.grad import value_and_grad
import xjax._src.numpy as jnp
from xjax._src import lax
from xjax._src.core import dtypes
from xjax._src.scipy.optimize._line_search import line_search


def _dot(a, b):
    return jnp.dot(a, b, precision=lax.Precision.HIGHEST)


class LBFGSResults(NamedTuple):
    """The loop state, and the result.

    converged: the gradient norm fell below ``gtol``.
    failed: stopped for another reason than convergence (``status > 0``).
    k: iterations done. nfev, ngev: evaluations of f and of its gradient.
    x_k, f_k, g_k: the iterate, its value and gradient.
    s_history, y_history, rho_history: the last ``maxcor`` steps, gradient changes and
      ``1 / y.s`` (oldest first; zeros until filled).
    gamma: the scale ``s.y / y.y`` of the initial inverse Hessian (N&W 7.20).
    status: 0 converged, 1 maxiter, 2 maxfun, 3 maxgrad reached, 4 insufficient progress
      (``ftol``), 5 line search failed.
    ls_status: the last line search's status.
    """
    converged: object
    failed: object
    k: object
    nfev: object
    ngev: object
    x_k: object
    f_k: object
    g_k: object
    s_history: object
    y_history: object
    rho_history: object
    gamma: object
    status: object
    ls_status: object


def _minimize_lbfgs(fun, x0, maxiter=None, norm=np.inf, maxcor=10,
                    ftol=2.220446049250313e-09, gtol=1e-05, maxfun=None, maxgrad=None,
                    maxls=20):
    """Minimize ``fun`` from ``x0`` with L-BFGS.

    Parameters
    ----------
    fun : callable
        ``fun(x) -> real scalar`` for a 1-D ``x`` (real or complex).
    x0 : Array
        The starting point.
    maxiter, maxfun, maxgrad : int, optional
        Limits on iterations and on evaluations of f and of its gradient (with none given,
        ``maxiter = 200 * n``). The limits are tested before each iteration's update, so the
        loop may run one iteration past them, as JAX's does.
    norm : float
        The order of the gradient norm tested against ``gtol``.
    maxcor : int
        How many corrections the history keeps.
    ftol : float
        Stop when an iteration decreases f by less than this.
    gtol : float
        Stop once the gradient's norm is below this.
    maxls : int
        Bracketing iterations allowed per line search.

    Returns
    -------
    LBFGSResults
    """
    n = len(x0)
    dtype = dtypes.dtype(x0)
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = n * 200
    maxiter, maxfun, maxgrad = (np.inf if v is None else v for v in (maxiter, maxfun, maxgrad))

    f_0, g_0 = value_and_grad(fun)(x0)
    state = LBFGSResults(
        converged=jnp.asarray(False), failed=jnp.asarray(False), k=0, nfev=1, ngev=1,
        x_k=x0, f_k=f_0, g_k=g_0, s_history=jnp.zeros((maxcor, n), dtype=dtype),
        y_history=jnp.zeros((maxcor, n), dtype=dtype),
        rho_history=jnp.zeros((maxcor,), dtype=dtype), gamma=1., status=0, ls_status=0)

    def step(s):
        direction = _two_loop_recursion(s)
        found = line_search(fun, s.x_k, direction, old_fval=s.f_k, gfk=s.g_k, maxiter=maxls)
        s_k = jnp.asarray(found.a_k).astype(direction.dtype) * direction
        y_k = found.g_k - s.g_k
        curvature = jnp.real(_dot(y_k, s_k))
        rho_k = jnp.reciprocal(curvature).astype(y_k.dtype)
        gamma = curvature / jnp.real(_dot(jnp.conj(y_k), y_k))

        # the last matching reason wins: line search, maxiter, maxfun, maxgrad, ftol
        status = jnp.where(found.failed, 5,
                           jnp.where(s.k >= maxiter, 1,
                                     jnp.where(s.nfev >= maxfun, 2,
                                               jnp.where(s.ngev >= maxgrad, 3,
                                                         jnp.where(s.f_k - found.f_k < ftol,
                                                                   4, 0)))))
        converged = jnp.linalg.norm(found.g_k, ord=norm) < gtol
        return LBFGSResults(
            converged=converged, failed=(status > 0) & ~converged, k=s.k + 1,
            nfev=s.nfev + found.nfev, ngev=s.ngev + found.ngev,
            x_k=(s.x_k + s_k).astype(s.x_k.dtype), f_k=found.f_k.astype(s.f_k.dtype),
            g_k=found.g_k.astype(s.g_k.dtype), s_history=_push(s.s_history, s_k),
            y_history=_push(s.y_history, y_k), rho_history=_push(s.rho_history, rho_k),
            gamma=gamma.astype(s.g_k.dtype), status=jnp.where(converged, 0, status),
            ls_status=found.status)

    return control_flow.while_loop(lambda s: ~s.converged & ~s.failed, step, state)


def _push(history, new):
    """Drop the oldest entry (row 0) and append ``new`` as the last row."""
    return jnp.concatenate([history[1:], jnp.expand_dims(new, 0).astype(history.dtype)])


def _two_loop_recursion(state: LBFGSResults):
    """Algorithm 7.4: the direction ``-H g`` from the stored corrections, newest first on
    the way down, oldest first on the way back, with ``H_0 = gamma I``."""
    dtype = state.rho_history.dtype
    size = state.rho_history.shape[0]
    used = jnp.minimum(state.k, size)  # corrections stored so far, the last `used` rows
    q = -jnp.conj(state.g_k)

    def newest_first(j, carry):
        q, alphas = carry
        i = size - 1 - j
        alpha = state.rho_history[i] * _dot(jnp.conj(state.s_history[i]), q).real.astype(dtype)
        return q - alpha * jnp.conj(state.y_history[i]), alphas.at[i].set(alpha)

    q, alphas = control_flow.fori_loop(0, used, newest_first, (q, jnp.zeros_like(state.rho_history)))
    r = state.gamma * q

    def oldest_first(j, r):
        i = size - used + j
        beta = state.rho_history[i] * _dot(state.y_history[i], r).real.astype(dtype)
        return r + (alphas[i] - beta) * state.s_history[i]

    return control_flow.fori_loop(0, used, oldest_first, r)
