"""Eigendecomposition of general (non-Hermitian) matrices: ``eig``, on the CPU only.

LAPACK ``?geev`` from the OpenBLAS that NumPy bundles, called by the ``xjax_lapack_geev`` XLA
FFI handler (``xjax/runtime/_pjrt_ffi.c``), as JAX calls geev from jaxlib: under ``jit``, and
eagerly too (the primitive compiled alone, cached per shape: ~25 ms to compile, then 0.4 ms
for a 50x50 float32 matrix where SciPy's ``eig`` took 4.7 ms). Eager and ``jit`` thus agree
bit for bit; SciPy's geev (its own OpenBLAS build) rounds differently and (at n = 130 in our
checks) orders the eigenvalues differently. Only without NumPy's OpenBLAS: SciPy's geev
when importable, else ``numpy.linalg.eig`` with left eigenvectors from the inverse of the
right ones (and ``jit`` raises NotImplementedError). As in JAX, every output is complex,
each eigenvector has unit 2-norm with its largest-magnitude component real (geev's
normalization, which the derivative rule differentiates through), and a matrix with a
non-finite entry (or on which geev fails) gives NaN outputs.
"""

from __future__ import annotations

import numpy as np

from xjax._src.core.avals import ShapedArray
from xjax._src.core.primitive import NONLINEAR, Primitive
from xjax._src.lax.ad_helpers import late_rule
from xjax._src.higher_order.linalg.common import (batch_leading, bcast, check_inexact,
                                                  check_lapack_dtype, complex_dtype, dtype,
                                                  eye_like, lapack_target_missing,
                                                  lower_lapack_call, matmul, mH, mT, per_matrix,
                                                  run_compiled, scipy_linalg, shape, where)
from xjax._src.runtime.ffi import GEEV_TARGET
from xjax._src.lax.ad_rules import instantiate
from xjax._src.lax.convert import convert_element_type
from xjax._src.higher_order.linalg.common import take_rows
from xjax._src.higher_order.linalg.lu import lu
from xjax._src.higher_order.linalg.triangular import triangular_solve
from xjax._src.lax.operands import to_operand
from xjax._src import lax


class EigImplementation:
    """Names of JAX's eig implementations; xjax has one (LAPACK on the CPU)."""

    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


def _eig_abstract_eval(x, *, compute_left_eigenvectors, compute_right_eigenvectors,
                       enable_eigvec_derivs, implementation):
    check_inexact("eig", x.dtype)
    if x.ndim < 2:
        raise TypeError(f"Input 0 to eig must have rank at least 2, but got shape={x.shape}")
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"The input to eig must be a square matrix. Got shape {x.shape}.")
    dt = complex_dtype(x.dtype)
    outs = [ShapedArray(x.shape[:-1], dt)]
    if compute_left_eigenvectors:
        outs.append(ShapedArray(x.shape, dt))
    if compute_right_eigenvectors:
        outs.append(ShapedArray(x.shape, dt))
    return outs


def normalize_columns(v):
    """Unit 2-norm columns whose largest-magnitude component is real (and positive)."""
    norms = np.linalg.norm(v, axis=-2, keepdims=True)
    v = v / np.where(norms == 0, 1, norms)
    k = np.argmax(np.abs(v), axis=-2)[..., None, :]
    largest = np.take_along_axis(v, k, axis=-2)
    phase = np.where(largest == 0, 1, np.conj(largest) / np.where(largest == 0, 1,
                                                                  np.abs(largest)))
    return v * phase


def _eig_kernel(compute_left):
    def kernel(a):
        dt = complex_dtype(a.dtype)
        nan = np.full(a.shape, complex(np.nan, np.nan), dt)
        if not np.isfinite(a).all():  # JAX's kernel: NaN outputs, not an error
            return nan[0], nan, nan
        scipy = scipy_linalg()
        try:
            if compute_left and scipy is not None:
                w, vl, vr = scipy.eig(a, left=True, right=True, check_finite=False)
            else:
                w, vr = np.linalg.eig(a)
                # rows of vr^-1 are left eigenvectors: scale them as geev would (its sign of
                # a real largest component is not reproduced)
                vl = normalize_columns(np.conj(np.linalg.inv(vr)).T) if compute_left else vr
        except np.linalg.LinAlgError:  # geev did not converge: NaN, as JAX
            return nan[0], nan, nan
        return w.astype(dt), vl.astype(dt), vr.astype(dt)
    return kernel


def _check_implementation(implementation):
    if getattr(implementation, "value", implementation) not in (None, EigImplementation.LAPACK):
        raise ValueError("Only the lapack implementation is supported on CPU.")


def _eig_impl(x, *, compute_left_eigenvectors, compute_right_eigenvectors,
              enable_eigvec_derivs, implementation):
    check_lapack_dtype(x.dtype)
    _check_implementation(implementation)
    x = np.asarray(x)
    params = dict(compute_left_eigenvectors=compute_left_eigenvectors,
                  compute_right_eigenvectors=compute_right_eigenvectors,
                  enable_eigvec_derivs=enable_eigvec_derivs, implementation=implementation)
    if x.size == 0:
        dt = complex_dtype(x.dtype)
        w, vl, vr = np.zeros(x.shape[:-1], dt), np.zeros(x.shape, dt), np.zeros(x.shape, dt)
    elif _geev_missing(x) is None:
        return run_compiled(eig_p, [x], **params)  # the jit kernel: eager == jit exactly
    else:
        w, vl, vr = per_matrix(_eig_kernel(compute_left_eigenvectors), [x], [2], 3)
    outs = [w]
    if compute_left_eigenvectors:
        outs.append(vl)
    if compute_right_eigenvectors:
        outs.append(vr)
    return outs


def _geev_missing(x):
    return lapack_target_missing("eig", GEEV_TARGET, "geev", x)


def _eig_lower(ctx, x, *, compute_left_eigenvectors, compute_right_eigenvectors,
               enable_eigvec_derivs, implementation):
    """LAPACK geev through the xjax_lapack_geev FFI custom call (CPU only, as in JAX)."""
    _check_implementation(implementation)
    missing = _geev_missing(ctx.avals_in[0])
    if missing is not None:
        raise missing
    return lower_lapack_call(ctx, GEEV_TARGET, x, {"left": compute_left_eigenvectors,
                                                   "right": compute_right_eigenvectors})


def _eigvec_jvp(w, v, a_dot):
    """Nondegenerate perturbation theory with geev's normalization, as JAX's rule:
    P = V^-1 A' V; w' = diag(P); V' = V (F * P) + V diag(c), with c fixing each column's norm
    and the phase of its largest component."""
    n = shape(w)[-1]
    nb = len(shape(w)) - 1
    square = shape(w) + (n,)
    eye = eye_like(lax.full(square, 0, dtype(w)))
    diff = lax.sub(bcast(w, square, tuple(range(nb)) + (nb + 1,)),
                   bcast(w, square, tuple(range(nb)) + (nb,)))
    f = lax.sub(lax.div(lax.full_like(eye, 1), lax.add(eye, diff)), eye)
    p = matmul(solve_square(v, a_dot), v)
    dw = _diag(p)
    u = matmul(v, lax.mul(f, p))
    k = lax.argmax(lax.abs(v), nb, np.int32)
    rows = lax.broadcasted_iota(np.int32, shape(v), nb)
    mask = lax.eq(rows, bcast(k, shape(v), tuple(range(nb)) + (nb + 1,)))
    zeros = lax.full_like(v, 0)
    re = lax.neg(lax.real(lax.reduce_sum(lax.mul(lax.conj(v), u), (nb,))))
    im = lax.neg(lax.div(lax.imag(lax.reduce_sum(where(mask, u, zeros), (nb,))),
                         lax.real(lax.reduce_sum(where(mask, v, zeros), (nb,)))))
    c = lax.complex(re, im)
    return dw, lax.add(u, lax.mul(v, bcast(c, shape(v), tuple(range(nb)) + (nb + 1,))))


def solve_square(a, b):
    """``a^-1 b`` for square ``a`` through its LU decomposition (differentiable)."""
    lu_, _, perm = lu(a)
    x = take_rows(b, perm)
    x = triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True)
    return triangular_solve(lu_, x, left_side=True, lower=False)


def _diag(x):
    n = len(shape(x))
    rows = lax.broadcasted_iota(np.int32, shape(x), n - 2)
    cols = lax.broadcasted_iota(np.int32, shape(x), n - 1)
    return lax.reduce_sum(where(lax.eq(rows, cols), x, lax.full_like(x, 0)), (n - 1,))


def _eig_jvp(primals, tangents, *, compute_left_eigenvectors, compute_right_eigenvectors,
             enable_eigvec_derivs, implementation):
    (a,), (a_dot,) = primals, tangents
    if (compute_left_eigenvectors or compute_right_eigenvectors) and not enable_eigvec_derivs:
        raise NotImplementedError(
            "Derivatives of non-symmetric eigenvectors are only valid under assumptions on the "
            "input that JAX cannot check (see the enable_eigvec_derivs argument to "
            "jax.lax.linalg.eig). Pass enable_eigvec_derivs=True to jax.lax.linalg.eig to opt "
            "in. See https://github.com/jax-ml/jax/issues/2748 for discussion.")
    outs = eig_p.bind(a, compute_left_eigenvectors=compute_left_eigenvectors,
                      compute_right_eigenvectors=True,
                      enable_eigvec_derivs=enable_eigvec_derivs,
                      implementation=implementation)
    w, vr = outs[0], outs[-1]
    a_dot = convert_element_type(instantiate(a_dot), dtype(vr))
    if not (compute_left_eigenvectors or compute_right_eigenvectors):
        nb = len(shape(w)) - 1
        dw = lax.reduce_sum(lax.mul(solve_square(vr, a_dot), mT(vr)), (nb + 1,))
        return [w], [dw]
    dw, dvr = _eigvec_jvp(w, vr, a_dot)
    primal, tangent = [w], [dw]
    if compute_left_eigenvectors:
        vl = outs[1]
        _, dvl = _eigvec_jvp(lax.conj(w), vl, mH(a_dot))
        primal.append(vl)
        tangent.append(dvl)
    if compute_right_eigenvectors:
        primal.append(vr)
        tangent.append(dvr)
    return primal, tangent


eig_p = Primitive("eig", abstract_eval=_eig_abstract_eval, impl=_eig_impl, lower=_eig_lower,
                  jvp=_eig_jvp, transpose=NONLINEAR, batch=late_rule(batch_leading, "eig"),
                  multiple_results=True)


def eig(x, *, compute_left_eigenvectors: bool = True, compute_right_eigenvectors: bool = True,
        enable_eigvec_derivs: bool = False, implementation=None, use_magma=None):
    """Eigendecomposition of general square matrices (CPU only, as in JAX).

    Returns the list ``[w, vl, vr]`` (those asked for): complex eigenvalues, left
    eigenvectors (``vl^H x = w vl^H``) and right ones (``x vr = vr w``).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> w, = lax.linalg.eig(jnp.array([[0., 1.], [-1., 0.]]), compute_left_eigenvectors=False,
    ...                     compute_right_eigenvectors=False)
    >>> w
    Array([0.+1.j, 0.-1.j], dtype=complex64)
    """
    return list(eig_p.bind(to_operand(x),
                           compute_left_eigenvectors=bool(compute_left_eigenvectors),
                           compute_right_eigenvectors=bool(compute_right_eigenvectors),
                           enable_eigvec_derivs=bool(enable_eigvec_derivs),
                           implementation=implementation))
