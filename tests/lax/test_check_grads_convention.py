"""``xjax.test_util.check_vjp`` pairs cotangents as ``jax.test_util.check_vjp`` does: JAX's vjp
of a complex-linear map ``t -> a t`` is ``ct -> a ct`` (not the adjoint ``conj(a) ct``), so
the check must accept the former and reject the latter."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src.testing import check_grads as check_grads_module
from xjax.test_util import check_grads, check_vjp

A = np.complex64(0.6 - 1.3j)


def _z():
    return jnp.asarray(np.array([0.3 + 0.2j, -1.1 + 0.7j, 2.0 - 0.5j], np.complex64))


def test_jax_convention_accepted():
    check_vjp(lambda z: A * z, (_z(),))
    check_grads(lambda z: A * z, (_z(),), order=2)
    check_grads(lambda z: jnp.sin(z) * jnp.conj(z), (_z(),), order=2, modes=("rev",))


def test_adjoint_convention_rejected(monkeypatch):
    true_vjp = xjax.vjp

    def adjoint_vjp(f, *primals):
        out, pullback = true_vjp(f, *primals)
        # the adjoint of J instead of its transpose: conj(a) ct for t -> a t
        return out, lambda ct: tuple(np.conj(np.asarray(c)) for c in pullback(np.conj(ct)))

    check_vjp(lambda z: A * z, (_z(),))
    monkeypatch.setattr(check_grads_module, "vjp", adjoint_vjp)
    with pytest.raises(AssertionError, match="vjp disagrees with jvp"):
        check_vjp(lambda z: A * z, (_z(),))
    check_vjp(lambda z: 2.5 * z, (_z(),))  # real coefficients: both conventions agree


def test_matches_jax_test_util_on_complex_functions():
    jax = pytest.importorskip("jax")
    import jax.test_util  # noqa: F401  (a submodule jax does not import)
    z = np.array([0.3 + 0.2j, -1.1 + 0.7j], np.complex64)
    for name in ("sin", "exp", "conj", "abs", "real", "imag"):
        ours = getattr(jnp, name)
        theirs = getattr(jax.numpy, name)
        # both checks accept each library's own vjp rule for these functions
        check_grads(ours, (jnp.asarray(z),), order=1, modes=("rev",))
        jax.test_util.check_grads(theirs, (z,), order=1, modes=("rev",), atol=2e-2,
                                  rtol=2e-2)
        # and the two vjps agree
        _, ours_vjp = xjax.vjp(ours, jnp.asarray(z))
        _, theirs_vjp = jax.vjp(theirs, z)
        ct = np.array([1.0 - 0.5j, 0.25 + 2.0j], np.complex64)
        if name in ("abs", "real", "imag"):
            ct = ct.real.astype(np.float32)
        np.testing.assert_allclose(np.asarray(ours_vjp(jnp.asarray(ct))[0]),
                                   np.asarray(theirs_vjp(ct)[0]), rtol=1e-5, atol=1e-6)


def _sin_with_vjp(bwd):
    @xjax.custom_vjp
    def f(x):
        return jnp.sin(x)

    f.defvjp(lambda x: (jnp.sin(x), x), bwd)
    return f


def test_custom_vjp_functions_checked_in_reverse_mode():
    # no forward mode: J t comes from finite differences, as in jax.test_util.check_vjp
    x = jnp.asarray(np.array([0.5, 1.0, -2.0], np.float32))
    check_grads(_sin_with_vjp(lambda x, ct: (ct * jnp.cos(x),)), (x,), order=2,
                modes=("rev",))
    with pytest.raises(AssertionError, match="vjp disagrees with finite differences"):
        check_grads(_sin_with_vjp(lambda x, ct: (ct * jnp.sin(x),)), (x,), order=1,
                    modes=("rev",))
