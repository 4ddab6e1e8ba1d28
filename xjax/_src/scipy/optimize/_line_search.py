"""An inexact line search satisfying the strong Wolfe conditions (Nocedal & Wright,
*Numerical Optimization*, Algorithms 3.5 and 3.6), written with ``lax.while_loop`` so that it
runs under ``jit`` and ``vmap``.

The choices that decide step sizes follow JAX's ``line_search`` (itself close to SciPy's
``scalar_search_wolfe2``), so that minimizers built on it take the same steps as JAX's:
the first trial step comes from the previous decrease (capped at 1), later trials double,
and the zoom phase tries a cubic, then a quadratic interpolant, then bisection.
"""

from __future__ import annotations

from typing import NamedTuple

from xjax._src import higher_order as control_flow
from xjax._src.transformations.grad import value_and_grad
import xjax._src.numpy as jnp
from xjax._src import lax
from xjax._src.numpy._promotion import promote_dtypes_inexact


def _dot(a, b):
    return jnp.dot(a, b, precision=lax.Precision.HIGHEST)


def _is_low_precision(x) -> bool:
    """Whether ``x`` is narrower than 64 bits (float32 and below take looser floors)."""
    return jnp.finfo(jnp.asarray(x).dtype).bits < 64


def _cubic_minimizer(a, fa, fpa, b, fb, c, fc):
    """The minimizer of the cubic through (a, fa) with slope fpa at a, (b, fb) and (c, fc).

    Writing the cubic as ``fa + fpa t + B t^2 + A t^3`` with ``t = x - a``, the two other
    points give a 2x2 linear system for (A, B), solved with its explicit inverse (SciPy's
    form; the same rounding as JAX's, which keeps float32 searches step for step alike).
    """
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    adjugate = jnp.stack([jnp.stack([dc ** 2, -db ** 2]), jnp.stack([-dc ** 3, db ** 3])])
    residuals = jnp.stack([fb - fa - fpa * db, fc - fa - fpa * dc])
    cubic, square = _dot(adjugate, residuals) / denom
    radical = square * square - 3. * cubic * fpa
    return a + (-square + jnp.sqrt(radical)) / (3. * cubic)


def _quadratic_minimizer(a, fa, fpa, b, fb):
    """The minimizer of the quadratic through (a, fa) with slope fpa at a, and (b, fb)."""
    db = b - a
    curvature = (fb - fa - fpa * db) / (db ** 2)
    return a - fpa / (2. * curvature)


def _select(pred, new, old):
    """``new`` where ``pred`` holds, else ``old``, field by field (NamedTuples of arrays)."""
    return type(old)(*[jnp.where(pred, n, o) for n, o in zip(new, old, strict=True)])


class _Bracket(NamedTuple):
    """One end of the zoom interval: step, value, directional derivative."""
    a: object
    phi: object
    dphi: object


class _Accepted(NamedTuple):
    """The step accepted so far: step, value, directional derivative, gradient."""
    a: object
    phi: object
    dphi: object
    g: object


class _ZoomState(NamedTuple):
    done: object
    failed: object
    j: object
    lo: _Bracket
    hi: _Bracket
    # the point dropped most recently from the interval, for the cubic interpolant
    a_prev: object
    phi_prev: object
    star: _Accepted
    nfev: object


_ZOOM_MAXITER = 30  # as JAX: more than SciPy's 10, which float32 searches often exhaust
_CUBIC_MARGIN = 0.2
_QUADRATIC_MARGIN = 0.1


def _zoom(phi_and_grad, sufficient_decrease_fails, curvature_holds, lo, hi, g_0, skip):
    """Algorithm 3.6: shrink ``[lo, hi]`` until a step satisfies the strong Wolfe
    conditions. ``skip`` (a boolean array) makes it return at once with nothing done."""
    state = _ZoomState(
        done=jnp.asarray(False), failed=jnp.asarray(False), j=0, lo=lo, hi=hi,
        a_prev=(lo.a + hi.a) / 2., phi_prev=(lo.phi + hi.phi) / 2.,
        star=_Accepted(1., lo.phi, lo.dphi, g_0), nfev=0)

    def trial_step(s):
        width = s.hi.a - s.lo.a
        left, right = jnp.minimum(s.hi.a, s.lo.a), jnp.maximum(s.hi.a, s.lo.a)
        cubic = _cubic_minimizer(s.lo.a, s.lo.phi, s.lo.dphi, s.hi.a, s.hi.phi,
                                 s.a_prev, s.phi_prev)
        cubic_ok = ((s.j > 0) & (cubic > left + _CUBIC_MARGIN * width)
                    & (cubic < right - _CUBIC_MARGIN * width))
        quad = _quadratic_minimizer(s.lo.a, s.lo.phi, s.lo.dphi, s.hi.a, s.hi.phi)
        quad_ok = (~cubic_ok & (quad > left + _QUADRATIC_MARGIN * width)
                   & (quad < right - _QUADRATIC_MARGIN * width))
        bisect = (s.lo.a + s.hi.a) / 2.
        # the cubic is sometimes NaN; its bounds check then fails and another step is used
        return jnp.where(cubic_ok, cubic, jnp.where(quad_ok, quad, bisect))

    def body(s):
        width = s.hi.a - s.lo.a
        floor = jnp.where(_is_low_precision(width), 1e-5, 1e-10)
        failed = s.failed | (width <= floor)  # an interval this narrow cannot improve
        a_j = trial_step(s)
        phi_j, dphi_j, g_j = phi_and_grad(a_j)
        phi_j = phi_j.astype(s.lo.phi.dtype)
        dphi_j = dphi_j.astype(s.lo.dphi.dtype)
        g_j = g_j.astype(s.star.g.dtype)
        new = _Bracket(a_j, phi_j, dphi_j)

        becomes_hi = sufficient_decrease_fails(a_j, phi_j) | (phi_j >= s.lo.phi)
        accepted = curvature_holds(dphi_j) & ~becomes_hi
        becomes_lo = ~becomes_hi & ~accepted
        flip = becomes_lo & (dphi_j * (s.hi.a - s.lo.a) >= 0.)

        # The point that leaves the interval is remembered for the next cubic fit.
        a_prev = jnp.where(becomes_hi | flip, s.hi.a, jnp.where(becomes_lo, s.lo.a, s.a_prev))
        phi_prev = jnp.where(becomes_hi | flip, s.hi.phi,
                             jnp.where(becomes_lo, s.lo.phi, s.phi_prev))
        hi = _select(becomes_hi, new, _select(flip, s.lo, s.hi))
        lo = _select(becomes_lo, new, s.lo)
        star = _select(accepted, _Accepted(a_j, phi_j, dphi_j, g_j), s.star)
        j = s.j + 1
        return _ZoomState(done=s.done | accepted, failed=failed | (j >= _ZOOM_MAXITER),
                          j=j, lo=lo, hi=hi, a_prev=a_prev, phi_prev=phi_prev, star=star,
                          nfev=s.nfev + 1)

    return control_flow.while_loop(lambda s: ~s.done & ~skip & ~s.failed, body, state)


class _LineSearchResults(NamedTuple):
    """What a line search found.

    failed: whether no step satisfying the strong Wolfe conditions was found.
    nit: iterations of the outer (bracketing) loop.
    nfev, ngev: objective and gradient evaluations.
    k: the iteration counter at exit (``nit + 1``).
    a_k: the step size.
    f_k, g_k: the objective's value and gradient at the step.
    status: 0 found, 1 zoom failed, 3 too many bracketing iterations.
    """
    failed: object
    nit: object
    nfev: object
    ngev: object
    k: object
    a_k: object
    f_k: object
    g_k: object
    status: object


class _SearchState(NamedTuple):
    done: object
    failed: object
    i: object
    prev: _Bracket
    nfev: object
    star: _Accepted


def line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9,
                maxiter=20):
    """Find a step along ``pk`` from ``xk`` satisfying the strong Wolfe conditions.

    Parameters
    ----------
    f : callable
        ``f(x) -> scalar``, differentiable with xjax.
    xk : Array
        The starting point.
    pk : Array
        The search direction (assumed a descent direction).
    old_fval, gfk : Array, optional
        ``f(xk)`` and its gradient, if already known (else computed here).
    old_old_fval : Array, optional
        The value at the previous iterate: sets the first trial step (else it is 1).
    c1, c2 : float
        The sufficient-decrease and curvature constants.
    maxiter : int
        Bracketing iterations allowed.

    Returns
    -------
    _LineSearchResults

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.optimize._line_search import line_search
    >>> res = line_search(lambda x: jnp.sum(x ** 2), jnp.array([1., 1.]),
    ...                   jnp.array([-1., -1.]))
    >>> float(res.a_k), bool(res.failed)
    (1.0, False)
    """
    xk, pk = promote_dtypes_inexact(xk, pk)

    def phi_and_grad(t):
        value, grad = value_and_grad(f)(xk + jnp.asarray(t, dtype=pk.dtype) * pk)
        return value, jnp.real(_dot(grad, pk)), grad

    evaluate_start = old_fval is None or gfk is None
    if evaluate_start:
        phi_0, dphi_0, gfk = phi_and_grad(0)
    else:
        phi_0, dphi_0 = old_fval, jnp.real(_dot(gfk, pk))
    if old_old_fval is None:
        first_step = 1
    else:
        # Nocedal & Wright (3.60): the step that repeats the last decrease, at most 1
        guess = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        first_step = jnp.where(guess > 1, 1.0, guess)

    def sufficient_decrease_fails(a, phi):
        return phi > phi_0 + c1 * a * dphi_0

    def curvature_holds(dphi):
        return jnp.abs(dphi) <= -c2 * dphi_0

    state = _SearchState(
        done=jnp.asarray(False), failed=jnp.asarray(False),
        i=1,  # Nocedal & Wright count from 1 (SciPy from 0, scipy/scipy#12157)
        prev=_Bracket(0., phi_0, dphi_0), nfev=1 if evaluate_start else 0,
        star=_Accepted(0., phi_0, dphi_0, gfk))

    def body(s):
        a_i = jnp.where(s.i == 1, first_step, s.prev.a * 2.)  # no amax: keep doubling
        phi_i, dphi_i, g_i = phi_and_grad(a_i)
        current = _Bracket(a_i, phi_i, dphi_i)
        overshot = sufficient_decrease_fails(a_i, phi_i) | ((phi_i >= s.prev.phi) & (s.i > 1))
        accept = curvature_holds(dphi_i) & ~overshot
        uphill = (dphi_i >= 0.) & ~overshot & ~accept
        # Overshooting brackets [prev, current]; going uphill brackets [current, prev].
        lo = _select(overshot, s.prev, current)
        hi = _select(overshot, current, s.prev)
        zoom = _zoom(phi_and_grad, sufficient_decrease_fails, curvature_holds, lo, hi, gfk,
                     ~(overshot | uphill))
        zoomed = overshot | uphill
        star = _select(zoomed, zoom.star,
                       _select(accept, _Accepted(a_i, phi_i, dphi_i, g_i), s.star))
        return _SearchState(done=s.done | zoomed | accept,
                            failed=s.failed | (zoomed & zoom.failed), i=s.i + 1,
                            prev=current, nfev=s.nfev + 1 + zoom.nfev, star=star)

    state = control_flow.while_loop(lambda s: ~s.done & (s.i <= maxiter) & ~s.failed, body, state)
    status = jnp.where(state.failed, 1, jnp.where(state.i > maxiter, 3, 0))
    step = jnp.asarray(state.star.a)
    # Below 64 bits a step this small stalls the search with a zero move: floor it.
    step = jnp.where(_is_low_precision(step) & (jnp.abs(step) < 1e-8),
                     jnp.sign(step) * 1e-8, step)
    return _LineSearchResults(failed=state.failed | ~state.done, nit=state.i - 1,
                              nfev=state.nfev, ngev=state.nfev, k=state.i, a_k=step,
                              f_k=state.star.phi, g_k=state.star.g, status=status)
