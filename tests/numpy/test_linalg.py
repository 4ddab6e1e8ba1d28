"""xjax.numpy.linalg against numpy.linalg: values on batched, square and rectangular, real
and complex inputs; jit against eager; vmap against a loop; derivatives (check_grads, and
against JAX where installed); JAX's errors and edge cases."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax.test_util import check_grads

LA = jnp.linalg
rng = np.random.default_rng(0)


def _rand(shape, dtype=np.float32):
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _spd(shape, dtype=np.float32):
    a = _rand(shape, dtype)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def _close(got, want, tol=1e-4):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


DTYPES = [np.float32, np.complex64]
SQUARE = [(4, 4), (2, 3, 3)]

# -- values against NumPy --


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SQUARE)
def test_solve_inv_det_slogdet(shape, dtype):
    a = _rand(shape, dtype)
    b = _rand(shape[:-1] + (2,), dtype)
    _close(LA.solve(a, b), np.linalg.solve(a, b), 1e-3)
    _close(LA.solve(a, b[..., 0] if a.ndim == 2 else b[0, :, 0]),
           np.linalg.solve(a, b[..., 0] if a.ndim == 2 else b[0, :, 0]), 1e-3)
    _close(LA.inv(a), np.linalg.inv(a), 1e-3)
    _close(LA.det(a), np.linalg.det(a), 1e-3)
    sign, logdet = LA.slogdet(a)
    want_sign, want_logdet = np.linalg.slogdet(a)
    _close(sign, want_sign, 1e-4)
    _close(logdet, want_logdet, 1e-4)


def test_solve_broadcasts_batch_dims_and_rejects_numpy1_vectors():
    a, b = _rand((2, 1, 3, 3)), _rand((1, 4, 3, 2))
    _close(LA.solve(a, b), np.linalg.solve(a, b), 1e-3)
    with pytest.raises(ValueError, match="Prior to JAX v0.5.0"):
        LA.solve(_rand((2, 3, 3)), _rand((2, 3)))


def test_singular_matrices():
    z = np.zeros((2, 2), np.float32)
    assert float(LA.det(z)) == 0
    sign, logdet = LA.slogdet(z)
    assert float(sign) == 0 and float(logdet) == -np.inf
    assert not np.isfinite(np.asarray(LA.inv(z))).all()
    assert int(LA.matrix_rank(np.ones((3, 3), np.float32))) == 1


@pytest.mark.parametrize("dtype", DTYPES)
def test_decompositions(dtype):
    spd = _spd((2, 4, 4), dtype)
    _close(LA.cholesky(spd), np.linalg.cholesky(spd), 1e-3)
    _close(LA.cholesky(spd, upper=True), np.linalg.cholesky(spd, upper=True), 1e-3)
    w, v = LA.eigh(spd)
    _close(w, np.linalg.eigvalsh(spd), 1e-3)
    _close(LA.eigvalsh(spd, UPLO="U"), np.linalg.eigvalsh(spd, UPLO="U"), 1e-3)
    a = _rand((5, 3), dtype)
    q, r = LA.qr(a)
    want_q, want_r = np.linalg.qr(a)
    _close(q, want_q)
    _close(r, want_r)
    _close(LA.qr(a, mode="complete").Q, np.linalg.qr(a, mode="complete").Q)
    _close(LA.qr(a, mode="r"), np.linalg.qr(a, mode="r"))
    u, s, vh = LA.svd(a, full_matrices=False)
    _close(s, np.linalg.svd(a, compute_uv=False))
    _close((np.asarray(u) * np.asarray(s)) @ np.asarray(vh), a)
    _close(LA.svdvals(a), np.linalg.svd(a, compute_uv=False))


def test_eig_and_eigvals():
    a = _rand((4, 4))
    w, v = LA.eig(a)
    _close(np.asarray(a) @ np.asarray(v), np.asarray(v) * np.asarray(w), 1e-4)
    _close(np.sort_complex(np.asarray(LA.eigvals(a))), np.sort_complex(np.linalg.eigvals(a)))


def test_svd_hermitian_and_result_types():
    spd = _spd((4, 4))
    out = LA.svd(spd, hermitian=True)
    assert type(out).__name__ == "SVDResult"
    _close(out.S, np.linalg.svd(spd, compute_uv=False), 1e-3)
    _close((np.asarray(out.U) * np.asarray(out.S)) @ np.asarray(out.Vh), spd, 1e-3)
    assert type(LA.eigh(spd)).__name__ == "EighResult"
    assert type(LA.slogdet(spd)).__name__ == "SlogdetResult"
    assert type(LA.qr(spd)).__name__ == "QRResult"


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 3)])
def test_pinv_lstsq_rank(shape):
    a = _rand(shape)
    _close(LA.pinv(a), np.linalg.pinv(a), 1e-3)
    _close(LA.matrix_rank(a), np.linalg.matrix_rank(a))
    if len(shape) == 2:
        b = _rand((shape[0], 2))
        for got, want in zip(LA.lstsq(a, b), np.linalg.lstsq(a, b), strict=True):
            if np.size(want):
                _close(got, want, 1e-3)


def test_lstsq_of_a_rank_deficient_matrix():
    a = np.array([[1., 2.], [2., 4.], [3., 6.]], np.float32)
    b = np.array([1., 2., 3.1], np.float32)
    x, _, rank, s = LA.lstsq(a, b)
    want = np.linalg.lstsq(a, b, rcond=None)
    _close(x, want[0], 1e-4)
    assert int(rank) == 1


@pytest.mark.parametrize("ord", [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norms(ord):
    a = _rand((3, 4, 5))
    _close(LA.norm(a, ord, axis=(1, 2)), np.linalg.norm(a, ord, axis=(1, 2)), 1e-4)
    _close(LA.norm(a, ord, axis=(2, 0), keepdims=True),
           np.linalg.norm(a, ord, axis=(2, 0), keepdims=True), 1e-4)
    _close(LA.matrix_norm(a, ord="fro" if ord is None else ord),
           np.linalg.matrix_norm(a, ord="fro" if ord is None else ord), 1e-4)


@pytest.mark.parametrize("ord", [None, 0, 1, 2, 3, 0.5, -1, np.inf, -np.inf])
def test_vector_norms(ord):
    x = _rand((4, 5), np.complex64)
    _close(LA.norm(x, ord, axis=1), np.linalg.norm(x, ord, axis=1), 1e-4)
    _close(LA.vector_norm(x, ord=2 if ord is None else ord),
           np.linalg.vector_norm(x, ord=2 if ord is None else ord), 1e-4)
    _close(LA.norm(x), np.linalg.norm(x), 1e-4)


def test_cond_power_tensor_functions_and_multi_dot():
    a = _rand((2, 4, 4))
    _close(LA.cond(a), np.linalg.cond(a), 1e-2)
    _close(LA.cond(a, 1), np.linalg.cond(a, 1), 1e-2)
    _close(LA.cond(a, -2), np.linalg.cond(a, -2), 1e-2)
    for n in (0, 1, 3, 6, -2):
        _close(LA.matrix_power(a[0], n), np.linalg.matrix_power(a[0], n), 1e-2)
    t = _rand((4, 2, 2)) + np.eye(4, dtype=np.float32).reshape(4, 2, 2) * 3
    _close(LA.tensorinv(t, ind=1), np.linalg.tensorinv(t, ind=1), 1e-3)
    big, rhs = _rand((2, 3, 6)), _rand((2, 3))
    _close(LA.tensorsolve(big, rhs), np.linalg.tensorsolve(big, rhs), 1e-3)
    chain = [_rand(s) for s in [(3,), (3, 7), (7, 2), (2, 5), (5,)]]
    _close(LA.multi_dot(chain), np.linalg.multi_dot(chain), 1e-4)


def test_array_api_names():
    x, y = _rand((2, 3, 3)), _rand((2, 3, 3))
    _close(LA.cross(x, y), np.linalg.cross(x, y))
    _close(LA.diagonal(x, offset=1), np.linalg.diagonal(x, offset=1))
    _close(LA.matmul(x, y), np.linalg.matmul(x, y))
    _close(LA.matrix_transpose(x), np.linalg.matrix_transpose(x))
    _close(LA.outer(x[0, 0], y[0, 0]), np.linalg.outer(x[0, 0], y[0, 0]))
    z = _rand((3, 4))
    _close(LA.tensordot(x, z, axes=1), np.linalg.tensordot(x, z, axes=1))
    _close(LA.trace(x), np.linalg.trace(x))
    _close(LA.vecdot(x, y), np.linalg.vecdot(x, y))
    with pytest.raises(ValueError, match="one-dimensional"):
        LA.outer(x, y)
    with pytest.raises(ValueError, match="3-dimensional vectors"):
        LA.cross(_rand((2,)), _rand((2,)))


def test_errors():
    with pytest.raises(ValueError, match=r"must have shape \[..., n, n\]"):
        LA.inv(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="_det"):
        LA.det(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="Improper number of axes"):
        LA.norm(np.ones((2, 2, 2), np.float32), axis=(0, 1, 2))
    with pytest.raises(NotImplementedError, match="raw"):
        LA.qr(np.eye(2, dtype=np.float32), mode="raw")


def test_integer_inputs_become_float32():
    a = np.array([[1, 2], [3, 4]], np.int32)
    assert LA.det(a).dtype == np.float32
    _close(LA.det(a), -2.0)
    _close(LA.inv(a), np.linalg.inv(a))

# -- jit and vmap --


JIT_CASES = {
    "solve": (LA.solve, lambda: [_rand((3, 4, 4)), _rand((3, 4, 2))]),
    "inv": (LA.inv, lambda: [_rand((4, 4))]),
    "det": (LA.det, lambda: [_rand((2, 4, 4))]),
    "slogdet": (LA.slogdet, lambda: [_rand((4, 4), np.complex64)]),
    "cholesky": (LA.cholesky, lambda: [_spd((4, 4))]),
    "eigvalsh": (LA.eigvalsh, lambda: [_spd((5, 5))]),
    "svdvals": (LA.svdvals, lambda: [_rand((5, 3))]),
    "pinv": (LA.pinv, lambda: [_rand((5, 3))]),
    "lstsq": (lambda a, b: LA.lstsq(a, b)[0], lambda: [_rand((5, 3)), _rand((5,))]),
    "matrix_rank": (LA.matrix_rank, lambda: [_rand((5, 3))]),
    "norm-nuc": (lambda a: LA.norm(a, "nuc"), lambda: [_rand((4, 3))]),
    "qr": (LA.qr, lambda: [_rand((5, 3))]),
    "matrix_power": (lambda a: LA.matrix_power(a, -3), lambda: [_rand((3, 3)) + 3 * np.eye(
        3, dtype=np.float32)]),
    "cond": (LA.cond, lambda: [_rand((3, 3))]),
}


@pytest.mark.parametrize("name", list(JIT_CASES))
def test_jit_matches_eager(name):
    fun, make = JIT_CASES[name]
    args = make()
    for got, want in zip(xjax.tree_util.tree_leaves(xjax.jit(fun)(*args)),
                         xjax.tree_util.tree_leaves(fun(*args)), strict=True):
        _close(got, want, 1e-3)


@pytest.mark.parametrize("name", ["solve", "inv", "det", "slogdet", "cholesky", "pinv",
                                  "eigvalsh"])
def test_vmap_matches_a_loop(name):
    fun, make = JIT_CASES[name]
    examples = [make() for _ in range(3)]
    batched = [np.stack([e[i] for e in examples]) for i in range(len(examples[0]))]
    got = xjax.tree_util.tree_leaves(xjax.vmap(fun)(*batched))
    want = [np.stack(leaves) for leaves in zip(*[
        [np.asarray(x) for x in xjax.tree_util.tree_leaves(fun(*e))] for e in examples],
        strict=True)]
    for g, w in zip(got, want, strict=True):
        _close(g, w, 1e-3)

# -- derivatives --


GRAD_CASES = {
    "solve": (lambda a, b: LA.solve(a, b), lambda: [_rand((3, 3)) + 3 * np.eye(
        3, dtype=np.float32), _rand((3, 2))]),
    "inv": (LA.inv, lambda: [_rand((3, 3)) + 3 * np.eye(3, dtype=np.float32)]),
    "det": (LA.det, lambda: [_rand((3, 3))]),
    "slogdet": (lambda a: LA.slogdet(a)[1], lambda: [_rand((3, 3)) + 3 * np.eye(
        3, dtype=np.float32)]),
    "cholesky": (LA.cholesky, lambda: [_spd((3, 3))]),
    "eigvalsh": (LA.eigvalsh, lambda: [_spd((3, 3))]),
    "svdvals": (LA.svdvals, lambda: [_rand((4, 3))]),
    "norm-fro": (LA.norm, lambda: [_rand((3, 4))]),
    "norm-2": (lambda a: LA.norm(a, 2), lambda: [_rand((3, 4))]),
    "pinv": (LA.pinv, lambda: [_rand((4, 3))]),
    "qr": (lambda a: LA.qr(a), lambda: [_rand((4, 3))]),
    "lstsq": (lambda a, b: LA.lstsq(a, b)[0], lambda: [_rand((5, 3)), _rand((5,))]),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_check_grads(name):
    fun, make = GRAD_CASES[name]
    check_grads(fun, make(), order=1, atol=5e-2, rtol=5e-2)


@pytest.mark.parametrize("name", ["solve", "inv", "det", "slogdet", "eigvalsh", "svdvals",
                                  "pinv"])
def test_grad_matches_jax(name):
    jax = pytest.importorskip("jax")
    fun, make = GRAD_CASES[name]
    args = make()
    jfun = {"solve": lambda a, b: jax.numpy.linalg.solve(a, b),
            "slogdet": lambda a: jax.numpy.linalg.slogdet(a)[1]}.get(
        name, getattr(jax.numpy.linalg, name))
    argnums = tuple(range(len(args)))
    got = xjax.grad(lambda *xs: jnp.sum(fun(*xs) ** 2), argnums)(*args)
    want = jax.grad(lambda *xs: jax.numpy.sum(jfun(*xs) ** 2), argnums)(*args)
    for g, w in zip(got, want, strict=True):
        _close(g, w, 2e-2)


def test_grad_of_norm_at_zero_is_nan():
    assert np.isnan(np.asarray(xjax.grad(LA.norm)(np.zeros(3, np.float32)))).all()
