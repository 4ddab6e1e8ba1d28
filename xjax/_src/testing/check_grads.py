"""``check_grads``: derivatives checked against finite differences and each other.

Forward mode: ``jvp`` against central finite differences along a random direction.
Reverse mode: ``vjp`` against ``jvp`` by the dot-product identity, in JAX's convention
(``jax.test_util.check_vjp``): JAX's vjp of a complex-linear map ``t -> a t`` is
``ct -> a ct`` (the transpose, not the adjoint), so the cotangent is conjugated in and out,
``ct_in = conj(vjp(conj(ct)))``, and ``<t, ct_in> == <J t, ct>`` with the real inner product
``<x, y> = Re(sum(conj(x) * y))``. Higher orders recurse on the derivative functions.
"""

from __future__ import annotations

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.pytree import tree_flatten, tree_map, tree_unflatten
from xjax._src.transformations.grad import jvp, vjp

_DEFAULT_TOL = {np.dtype(np.float16): 1e-1, np.dtype(dtypes.bfloat16): 1e-1,
                np.dtype(np.float32): 2e-2, np.dtype(np.float64): 1e-5,
                np.dtype(np.complex64): 2e-2, np.dtype(np.complex128): 1e-5}
_DEFAULT_EPS = {np.dtype(np.float16): 1e-1, np.dtype(dtypes.bfloat16): 1e-1,
                np.dtype(np.float32): 1e-2, np.dtype(np.float64): 1e-5,
                np.dtype(np.complex64): 1e-2, np.dtype(np.complex128): 1e-5}


def _numpy(x):
    return np.asarray(x)


def _random_like(rng, x):
    x = np.asarray(x)
    if np.iscomplexobj(x):
        return (rng.standard_normal(x.shape) + 1j * rng.standard_normal(x.shape)).astype(x.dtype)
    return rng.standard_normal(x.shape).astype(x.dtype)


def _conj(x):
    x = np.asarray(x)
    return np.conj(x) if np.iscomplexobj(x) else x


def _inner(xs, ys):
    total = 0.0
    for x, y in zip(xs, ys, strict=True):
        x = np.asarray(x, dtype=np.complex128)
        y = np.asarray(y, dtype=np.complex128)
        total += np.sum(np.conj(x) * y).real
    return total


def _tol(values, given, table):
    if given is not None:
        return given
    worst = 0.0
    for v in values:
        worst = max(worst, table.get(np.asarray(v).dtype, 1e-5))
    return worst or 1e-5


def _assert_close(got, want, atol, rtol, what):
    for g, w in zip(got, want, strict=True):
        g, w = np.asarray(g, np.complex128), np.asarray(w, np.complex128)
        np.testing.assert_allclose(g, w, atol=atol, rtol=rtol, err_msg=what)


def _numerical_jvp(f, flat_args, tree, tangents, eps):
    """Central finite differences of ``f`` along ``tangents`` (flat output leaves)."""

    def shifted(sign):
        moved = [np.asarray(a) + sign * eps * t for a, t in zip(flat_args, tangents, strict=True)]
        moved = [m.astype(np.asarray(a).dtype) for m, a in zip(moved, flat_args, strict=True)]
        return tree_flatten(f(*tree_unflatten(tree, moved)))[0]

    plus, minus = shifted(1.0), shifted(-1.0)
    return [(np.asarray(p, np.complex128) - np.asarray(m, np.complex128)) / (2 * eps)
            for p, m in zip(plus, minus, strict=True)]


def check_jvp(f, args, atol=None, rtol=None, eps=None, rng=None):
    """``jvp`` of ``f`` at ``args`` against central finite differences."""
    rng = rng or np.random.default_rng(0)
    flat_args, tree = tree_flatten(tuple(args))
    tangents = [_random_like(rng, a) for a in flat_args]
    eps = _tol(flat_args, eps, _DEFAULT_EPS)
    out, out_tangent = jvp(f, tuple(args), tuple(tree_unflatten(tree, tangents)))
    numeric = _numerical_jvp(f, flat_args, tree, tangents, eps)
    leaves = tree_flatten(out_tangent)[0]
    tol = _tol(leaves, atol, _DEFAULT_TOL)
    _assert_close(leaves, numeric, tol, _tol(leaves, rtol, _DEFAULT_TOL),
                  "jvp disagrees with finite differences")


def check_vjp(f, args, atol=None, rtol=None, rng=None, eps=None):
    """``vjp`` of ``f`` against ``jvp`` by the dot-product identity (JAX's convention for
    complex values: see the module docstring).

    Where ``f`` has no forward mode (a ``custom_vjp`` function), ``J t`` comes from central
    finite differences instead, as ``jax.test_util.check_vjp`` always computes it.
    """
    rng = rng or np.random.default_rng(1)
    flat_args, tree = tree_flatten(tuple(args))
    tangents = [_random_like(rng, a) for a in flat_args]
    out, f_vjp = vjp(f, *args)
    flat_out, out_tree = tree_flatten(out)
    cts = [_random_like(rng, o) for o in flat_out]
    conj_cts = [_conj(ct) for ct in cts]
    ct_in = [_conj(c) for c in tree_flatten(f_vjp(tree_unflatten(out_tree, conj_cts)))[0]]
    try:
        _, out_tangent = jvp(f, tuple(args), tuple(tree_unflatten(tree, tangents)))
        out_tangent, against = tree_flatten(out_tangent)[0], "jvp"
    except TypeError as e:
        if "custom_vjp" not in str(e):
            raise
        eps = _tol(flat_args, eps, _DEFAULT_EPS)
        out_tangent = _numerical_jvp(f, flat_args, tree, tangents, eps)
        against = "finite differences"
    lhs = _inner(out_tangent, cts)
    rhs = _inner(tangents, ct_in)
    tol = _tol(flat_args, atol, _DEFAULT_TOL)
    scale = max(1.0, abs(lhs), abs(rhs))
    if not abs(lhs - rhs) <= tol * scale:
        raise AssertionError(f"vjp disagrees with {against}: <J t, ct> = {lhs} but "
                             f"<t, conj(vjp(conj(ct)))> = {rhs}")


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """Check derivatives of ``f`` at ``args`` up to ``order``, in the given modes.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.test_util import check_grads
    >>> check_grads(jnp.sin, (0.5,), order=2)
    """
    args = tuple(args)
    rng = np.random.default_rng(0)

    def recurse(fun, order_left):
        if "fwd" in modes:
            check_jvp(fun, args, atol, rtol, eps, rng)
        if "rev" in modes:
            check_vjp(fun, args, atol, rtol, rng, eps)
        if order_left > 1:
            flat_args, tree = tree_flatten(args)
            tangents = tuple(tree_unflatten(tree, [_random_like(rng, a) for a in flat_args]))
            if "fwd" in modes:
                recurse(lambda *xs: jvp(fun, xs, tangents)[1], order_left - 1)
            if "rev" in modes:
                out = fun(*args)
                cts = tree_map(lambda o: _random_like(rng, o), out)
                recurse(lambda *xs: vjp(fun, *xs)[1](cts), order_left - 1)

    recurse(f, order)
