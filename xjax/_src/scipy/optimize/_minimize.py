"""``minimize`` and ``OptimizeResults`` (JAX's ``jax.scipy.optimize``)."""

from __future__ import annotations

from typing import Any, NamedTuple

import xjax._src.numpy as jnp
from xjax._src.scipy.optimize._bfgs import minimize_bfgs
from xjax._src.scipy.optimize._lbfgs import _minimize_lbfgs

# JAX's name for its L-BFGS: experimental, and named so that nobody relies on it by accident.
_LBFGS_METHOD = "l-bfgs-experimental-do-not-rely-on-this"


class OptimizeResults(NamedTuple):
    """The result of :func:`minimize`.

    Attributes
    ----------
    x : Array
        The solution found.
    success : bool or Array
        Whether the optimization converged.
    status : int or Array
        The solver's end state: 0 converged, 1 maximum iterations reached, 3 line search
        zoom failed, 4 saddle point, 5 maximum line search iterations reached, -1 undefined
        (L-BFGS: 2 maxfun, 3 maxgrad, 4 insufficient progress, 5 line search failed).
    fun : Array
        The objective at ``x``.
    jac : Array
        Its gradient at ``x``.
    hess_inv : Array or None
        The inverse Hessian estimate (BFGS; None for L-BFGS).
    nfev, njev, nit : int or Array
        Objective evaluations, gradient evaluations, iterations.
    """
    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


def minimize(fun, x0, args=(), *, method, tol=None, options=None):
    """Minimize a scalar function of one or more variables (SciPy's API, JAX's subset).

    Gradients come from automatic differentiation; ``method`` is required; ``minimize``
    works under :func:`xjax.jit` and :func:`xjax.vmap` (over starting points or ``args``).
    Results may differ from SciPy's, whose line search differs.

    Parameters
    ----------
    fun : callable
        ``fun(x, *args) -> scalar`` with ``x`` of shape ``(n,)``, differentiable with xjax.
    x0 : Array
        The starting point, shape ``(n,)``.
    args : tuple
        Extra arguments of ``fun``.
    method : str
        ``"BFGS"`` (any case), or JAX's experimental
        ``"l-bfgs-experimental-do-not-rely-on-this"``.
    tol : float, optional
        Accepted and ignored, as in JAX: use ``options={"gtol": ...}``.
    options : dict, optional
        Solver options: ``maxiter``, ``norm``, ``gtol``, ``line_search_maxiter`` (BFGS);
        ``maxiter``, ``norm``, ``maxcor``, ``ftol``, ``gtol``, ``maxfun``, ``maxgrad``,
        ``maxls`` (L-BFGS).

    Returns
    -------
    OptimizeResults

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.optimize import minimize
    >>> res = minimize(lambda x: jnp.sum((x - 3.) ** 2), jnp.zeros(2), method="BFGS")
    >>> res.x, bool(res.success)
    (Array([3., 3.], dtype=float32), True)
    """
    if options is None:
        options = {}
    if not isinstance(args, tuple):
        raise TypeError("args argument to jax.scipy.optimize.minimize must be a tuple, "
                        f"got {args}")

    def fun_with_args(x):
        return fun(x, *args)

    name = method.lower()
    if name == "bfgs":
        res = minimize_bfgs(fun_with_args, x0, **options)
        hess_inv = res.H_k
    elif name == _LBFGS_METHOD:
        res = _minimize_lbfgs(fun_with_args, x0, **options)
        hess_inv = None
    else:
        raise ValueError(f"Method {method} not recognized")
    return OptimizeResults(x=res.x_k, success=res.converged & jnp.logical_not(res.failed),
                           status=res.status, fun=res.f_k, jac=res.g_k, hess_inv=hess_inv,
                           nfev=res.nfev, njev=res.ngev, nit=res.k)
