"""Schur decomposition of general square matrices: ``schur``, on the CPU only (as in JAX).

``x = Z T Z^H`` with ``Z`` unitary and ``T`` upper triangular (complex input) or
quasi-triangular with 2x2 blocks for complex-conjugate eigenvalue pairs (real input).

LAPACK ``?gees`` (no eigenvalue ordering) from the OpenBLAS that NumPy bundles, called by the
``xjax_lapack_gees`` XLA FFI handler (``xjax/runtime/_pjrt_ffi.c``), as JAX calls gees from
jaxlib: under ``jit`` and eagerly (the primitive compiled alone, cached per shape), so eager
and ``jit`` agree bit for bit. Where NumPy's OpenBLAS is not found: SciPy's gees eagerly
when SciPy is importable, else NotImplementedError (NumPy has no Schur decomposition).
A matrix with a non-finite entry (or on which gees fails) gives NaN outputs. As in JAX:
no derivative, and ``sort_eig_vals`` raises NotImplementedError (``select_callable`` is
ignored).
"""

from __future__ import annotations

import numpy as np

from xjax._src.core.avals import ShapedArray
from xjax._src.core.primitive import NONLINEAR, Absent, Primitive
from xjax._src.lax.ad_helpers import late_rule
from xjax._src.higher_order.linalg.common import (batch_leading, check_inexact, check_lapack_dtype,
                                                  lapack_target_missing, lower_lapack_call,
                                                  per_matrix, run_compiled, scipy_linalg)
from xjax._src.runtime.ffi import GEES_TARGET
from xjax._src.lax.operands import to_operand


def _schur_abstract_eval(x, *, compute_schur_vectors, sort_eig_vals, select_callable):
    check_inexact("schur", x.dtype)
    if x.ndim < 2:
        raise TypeError(f"Input 0 to schur must have rank at least 2, but got shape={x.shape}")
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"The input to schur must be a square matrix. Got shape {x.shape}.")
    out = ShapedArray(x.shape, x.dtype)
    return [out, out] if compute_schur_vectors else [out]


def _check_sort(sort_eig_vals):
    if sort_eig_vals:
        raise NotImplementedError("The sort feature of LAPACK's gees routine is not "
                                  "implemented.")


def _gees_missing(aval):
    return lapack_target_missing("schur", GEES_TARGET, "gees", aval)


def _scipy_gees(scipy, compute_vectors):
    """One matrix through SciPy's gees wrapper (optimal workspace, as the C handler)."""
    def kernel(a):
        nan = np.full(a.shape, np.nan, a.dtype)
        if not np.isfinite(a).all():
            return nan, nan
        gees, = scipy.get_lapack_funcs(("gees",), (a,))
        select = lambda *args: None  # noqa: E731  (unused: sort=0)
        lwork = gees(select, a, lwork=-1)[-2][0]
        out = gees(select, a, compute_v=int(compute_vectors), sort_t=0,
                   lwork=max(1, int(np.real(lwork))), overwrite_a=0)
        if out[-1] != 0:
            return nan, nan
        return out[0], out[-3]
    return kernel


def _schur_impl(x, *, compute_schur_vectors, sort_eig_vals, select_callable):
    check_lapack_dtype(x.dtype)
    _check_sort(sort_eig_vals)
    x = np.asarray(x)
    n_out = 2 if compute_schur_vectors else 1
    if x.size == 0:
        return [np.zeros(x.shape, x.dtype) for _ in range(n_out)]
    missing = _gees_missing(x)
    if missing is None:  # the jit kernel: eager == jit exactly
        return run_compiled(schur_p, [x], compute_schur_vectors=compute_schur_vectors,
                            sort_eig_vals=sort_eig_vals, select_callable=select_callable)
    scipy = scipy_linalg()
    if scipy is None:
        raise missing
    t, z = per_matrix(_scipy_gees(scipy, compute_schur_vectors), [x], [2], 2)
    return [t, z][:n_out]


def _schur_lower(ctx, x, *, compute_schur_vectors, sort_eig_vals, select_callable):
    _check_sort(sort_eig_vals)
    missing = _gees_missing(ctx.avals_in[0])
    if missing is not None:
        raise missing
    return lower_lapack_call(ctx, GEES_TARGET, x, {"vectors": compute_schur_vectors})


schur_p = Primitive("schur", abstract_eval=_schur_abstract_eval, impl=_schur_impl,
                    lower=_schur_lower,
                    jvp=Absent("JAX defines no derivative of the Schur decomposition"),
                    transpose=NONLINEAR, batch=late_rule(batch_leading, "schur"),
                    multiple_results=True)


def schur(x, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable=None):
    """Schur decomposition ``x = Z T Z^H`` of (batches of) square matrices (CPU only).

    Parameters
    ----------
    x : array (..., n, n)
        Floating or complex matrices.
    compute_schur_vectors : bool
        Also return the unitary ``Z``.
    sort_eig_vals : bool
        Must be False: ordering the eigenvalues is not implemented (as in JAX).
    select_callable : callable, optional
        Ignored (as in JAX).

    Returns
    -------
    list
        ``[T, Z]`` if ``compute_schur_vectors``, else ``[T]`` (a list, as JAX returns):
        ``T`` upper (quasi-)triangular.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> t, z = lax.linalg.schur(jnp.array([[1., 2.], [0., 3.]]))
    >>> t
    Array([[1., 2.],
           [0., 3.]], dtype=float32)
    """
    return list(schur_p.bind(to_operand(x), compute_schur_vectors=bool(compute_schur_vectors),
                             sort_eig_vals=bool(sort_eig_vals), select_callable=select_callable))
