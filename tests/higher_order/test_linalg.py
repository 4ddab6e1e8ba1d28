"""xjax.lax.linalg: decompositions by reconstruction and NumPy's invariants, eagerly (LAPACK
kernels, and the NumPy fallbacks used without SciPy) and under jit (XLA's ops and the lax
algorithms); derivatives against JAX (complex ones with JAX's bilinear pairing); vmap against
a loop; the lax compositions (hessenberg, tridiagonal, ...) against LAPACK."""

import numpy as np
import pytest

import xjax
from xjax import lax
from xjax._src.higher_order.linalg.common import use_scipy

L = lax.linalg
rng = np.random.default_rng(0)


def _rand(shape, dtype=np.float32):
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _h(x):
    return np.conj(np.swapaxes(np.asarray(x), -1, -2))


def _close(got, want, tol=1e-4):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)


MODES = ["eager", "jit"]


def _run(fun, mode):
    return xjax.jit(fun) if mode == "jit" else fun


DTYPES = [np.float32, np.complex64]

# -- cholesky --


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_cholesky_reconstructs(mode, dtype):
    a = _rand((3, 5, 5), dtype)
    spd = a @ _h(a) + 5 * np.eye(5)
    factor = np.asarray(_run(L.cholesky, mode)(spd))
    assert np.all(np.triu(factor, 1) == 0)
    _close(factor @ _h(factor), spd, 1e-3)
    _close(factor, np.linalg.cholesky(spd), 1e-3)


@pytest.mark.parametrize("mode", MODES)
def test_cholesky_of_a_matrix_that_is_not_positive_definite_is_nan(mode):
    out = np.asarray(_run(L.cholesky, mode)(np.array([[1., 2.], [2., 1.]], np.float32)))
    assert np.isnan(out[np.tril_indices(2)]).all() and out[0, 1] == 0


def test_cholesky_rejects_16_bit_floats_as_jax_on_the_cpu():
    with pytest.raises(NotImplementedError, match="Unsupported dtype float16"):
        L.cholesky(np.eye(2, dtype=np.float16))

# -- triangular_solve --


def _effective(a, lower, transpose_a, conjugate_a, unit_diagonal):
    m = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        np.fill_diagonal(m, 1)
    if conjugate_a:
        m = np.conj(m)
    return m.T if transpose_a else m


SOLVE_FLAGS = [(left, lower, t, c, u) for left in (True, False) for lower in (True, False)
               for t, c in ((False, False), (True, False), (True, True), (False, True))
               for u in (False, True)]


@pytest.mark.parametrize("scipy_kernels", [True, False], ids=["scipy", "numpy"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("flags", SOLVE_FLAGS, ids=lambda f: "".join("LlTCU"[i] if v else "-"
                                                                     for i, v in enumerate(f)))
def test_triangular_solve_all_flag_combinations(flags, mode, scipy_kernels):
    left, lower, transpose_a, conjugate_a, unit = flags
    a = _rand((4, 4), np.complex64) + 4 * np.eye(4, dtype=np.complex64)
    b = _rand((4, 3) if left else (3, 4), np.complex64)
    fun = lambda a, b: L.triangular_solve(a, b, left_side=left, lower=lower,  # noqa: E731
                                          transpose_a=transpose_a, conjugate_a=conjugate_a,
                                          unit_diagonal=unit)
    with use_scipy(scipy_kernels):
        x = np.asarray(_run(fun, mode)(a, b))
    m = _effective(a, lower, transpose_a, conjugate_a, unit)
    _close(m @ x if left else x @ m, b, 1e-3)


def test_triangular_solve_accepts_a_vector_and_checks_shapes():
    a = np.array([[2., 0.], [1., 1.]], np.float32)
    _close(L.triangular_solve(a, np.array([2., 3.], np.float32), left_side=True, lower=True),
           [1., 2.])
    with pytest.raises(ValueError, match="must be a square matrix"):
        L.triangular_solve(np.ones((2, 3), np.float32), np.ones((3, 3), np.float32))
    with pytest.raises(ValueError, match="Incompatible shapes"):
        L.triangular_solve(np.ones((3, 3), np.float32), np.ones((2, 3), np.float32),
                           left_side=True)
    with pytest.raises(TypeError, match="same dtypes"):
        L.triangular_solve(np.eye(3, dtype=np.float32), np.ones((3, 3), np.complex64),
                           left_side=True)

# -- lu --


def _check_lu(a, lu, pivots, perm):
    lu, perm = np.asarray(lu), np.asarray(perm)
    m, n = a.shape[-2:]
    k = min(m, n)
    lower = np.tril(lu[..., :, :k], -1) + np.eye(m, k)
    upper = np.triu(lu[..., :k, :])
    _close(np.take_along_axis(a, perm[..., None], -2), lower @ upper, 1e-4)
    want = L.lu_pivots_to_permutation(np.asarray(pivots), m)
    np.testing.assert_array_equal(np.asarray(want), perm)


LU_SHAPES = [(4, 4), (5, 3), (3, 5), (2, 6, 6), (40, 37), (37, 40), (1, 1)]


@pytest.mark.parametrize("scipy_kernels", [True, False], ids=["scipy", "numpy"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", LU_SHAPES)
def test_lu_reconstructs_and_pivots_as_getrf(shape, dtype, mode, scipy_kernels):
    a = _rand(shape, dtype)
    with use_scipy(scipy_kernels):
        lu, pivots, perm = _run(L.lu, mode)(a)
    _check_lu(a, lu, pivots, perm)
    with use_scipy(True):  # LAPACK's pivots (|Re| + |Im| for complex), reached by every path
        np.testing.assert_array_equal(np.asarray(pivots), np.asarray(L.lu(a)[1]))


@pytest.mark.parametrize("mode", MODES)
def test_lu_of_singular_matrices(mode):
    a = np.array([[1., 2., 3.], [2., 4., 6.], [0., 0., 0.]], np.float32)
    lu, pivots, perm = _run(L.lu, mode)(a)
    _check_lu(a, lu, pivots, perm)


def test_lu_pivots_to_permutation_leaves_out_of_range_pivots_alone():
    perm = L.lu_pivots_to_permutation(np.array([[2, 2, 2], [0, 5, 1]], np.int32), 3)
    np.testing.assert_array_equal(np.asarray(perm), [[2, 0, 1], [0, 2, 1]])
    jitted = xjax.jit(lambda p: L.lu_pivots_to_permutation(p, 3))(
        np.array([[2, 2, 2], [0, 5, 1]], np.int32))
    np.testing.assert_array_equal(np.asarray(jitted), [[2, 0, 1], [0, 2, 1]])
    with pytest.raises(ValueError, match="has to exceed the trailing dimension"):
        L.lu_pivots_to_permutation(np.array([0, 2, 2], np.int32), 2)
    with pytest.raises(TypeError, match="subtypes of int32"):
        L.lu_pivots_to_permutation(np.array([1., 2.], np.float32), 3)

# -- qr --


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (2, 5, 4)])
@pytest.mark.parametrize("full_matrices", [False, True])
def test_qr_matches_lapack_signs_included(shape, dtype, mode, full_matrices):
    a = _rand(shape, dtype)
    q, r = _run(lambda a: L.qr(a, full_matrices=full_matrices), mode)(a)
    want_q, want_r = np.linalg.qr(a, mode="complete" if full_matrices else "reduced")
    _close(q, want_q, 1e-4)
    _close(r, want_r, 1e-4)


@pytest.mark.parametrize("scipy_kernels", [True, False], ids=["scipy", "numpy"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 4), (4, 6), (2, 4, 4)])
def test_qr_with_pivoting_chooses_geqp3_pivots(shape, dtype, mode, scipy_kernels):
    a = _rand(shape, dtype)
    with use_scipy(scipy_kernels):
        q, r, p = _run(lambda a: L.qr(a, pivoting=True, full_matrices=False), mode)(a)
    q, r, p = map(np.asarray, (q, r, p))
    assert p.dtype == np.int32
    _close(q @ r, np.take_along_axis(a, p[..., None, :].repeat(shape[-2], -2), -1), 1e-4)
    diagonal = np.abs(np.diagonal(r, axis1=-2, axis2=-1))
    assert np.all(diagonal[..., :-1] >= diagonal[..., 1:] - 1e-5)  # pivoting sorts |R_jj|
    lapack = pytest.importorskip("scipy.linalg")
    for i, m in enumerate(a.reshape((-1,) + shape[-2:])):
        np.testing.assert_array_equal(p.reshape(-1, shape[-1])[i],
                                      lapack.qr(m, pivoting=True, mode="economic")[2])

# -- eigh --


def _hermitian(shape, dtype):
    a = _rand(shape, dtype)
    return (a + _h(a)) / 2


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (5, 5), (3, 6, 6), (17, 17)])
def test_eigh_reconstructs(shape, dtype, mode):
    a = _hermitian(shape, dtype)
    v, w = _run(L.eigh, mode)(a)
    v, w = np.asarray(v), np.asarray(w)
    assert w.dtype == np.float32
    _close(w, np.linalg.eigvalsh(a), 1e-4)
    _close(v @ (w[..., :, None] * _h(v)), a, 1e-4)
    _close(_h(v) @ v, np.broadcast_to(np.eye(shape[-1]), v.shape), 1e-4)


@pytest.mark.parametrize("mode", MODES)
def test_eigh_of_repeated_eigenvalues(mode):
    q, _ = np.linalg.qr(_rand((6, 6)))
    a = (q * np.array([1., 1., 1., 2., 2., 5.])) @ q.T
    v, w = _run(L.eigh, mode)(a.astype(np.float32))
    _close(w, [1., 1., 1., 2., 2., 5.], 1e-4)
    _close(np.asarray(v).T @ np.asarray(v), np.eye(6), 1e-4)


@pytest.mark.parametrize("mode", MODES)
def test_eigh_reads_one_triangle_and_takes_a_subset(mode):
    a = _hermitian((5, 5), np.float32)
    garbage = a + np.triu(_rand((5, 5)), 1)
    fun = lambda x: L.eigh(x, lower=True, symmetrize_input=False,  # noqa: E731
                           subset_by_index=(1, 4))
    v, w = _run(fun, mode)(garbage)
    _close(w, np.linalg.eigvalsh(a)[1:4], 1e-4)
    assert v.shape == (5, 3)

# -- svd --


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (6, 3), (3, 6), (2, 5, 4)])
@pytest.mark.parametrize("full_matrices", [False, True])
def test_svd_reconstructs(shape, dtype, mode, full_matrices):
    a = _rand(shape, dtype)
    u, s, vt = _run(lambda a: L.svd(a, full_matrices=full_matrices), mode)(a)
    u, s, vt = map(np.asarray, (u, s, vt))
    k = min(shape[-2:])
    _close(s, np.linalg.svd(a, compute_uv=False), 1e-4)
    _close((u[..., :, :k] * s[..., None, :]) @ vt[..., :k, :], a, 1e-4)
    _close(_h(u) @ u, np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2),
           1e-4)
    _close(vt @ _h(vt), np.broadcast_to(np.eye(vt.shape[-2]),
                                        vt.shape[:-2] + (vt.shape[-2],) * 2), 1e-4)


@pytest.mark.parametrize("mode", MODES)
def test_svd_of_rank_deficient_matrices(mode):
    a = (_rand((6, 2)) @ _rand((2, 4))).astype(np.float32)
    u, s, vt = _run(L.svd, mode)(a)
    u, s, vt = map(np.asarray, (u, s, vt))
    _close(s[2:], 0, 1e-4)
    _close(u.T @ u, np.eye(6), 1e-4)
    _close((u[:, :4] * s) @ vt, a, 1e-4)
    _close(_run(lambda a: L.svd(a, compute_uv=False), mode)(a), s, 1e-4)

# -- eig --


def test_eig_matches_lapack():
    a = _rand((5, 5))
    w, vl, vr = L.eig(a)
    w, vl, vr = map(np.asarray, (w, vl, vr))
    assert w.dtype == np.complex64
    _close(a @ vr, vr * w, 1e-4)
    _close(_h(vl) @ a, w[:, None] * _h(vl), 1e-4)
    _close(np.sort_complex(w), np.sort_complex(np.linalg.eigvals(a)), 1e-4)


def test_eig_left_eigenvectors_without_scipy():
    a = _rand((4, 4))
    with use_scipy(False):
        w, vl, _ = map(np.asarray, L.eig(a))
    _close(_h(vl) @ a, w[:, None] * _h(vl), 1e-4)
    _close(np.linalg.norm(vl, axis=0), 1, 1e-5)


def test_eig_under_jit_agrees_with_eager():  # more in tests/lax/test_linalg_schur_eig_jit.py
    a = _rand((5, 5))
    for got, want in zip(xjax.jit(L.eig)(a), L.eig(a), strict=True):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))

# -- derivatives against JAX --


def _jax():
    return pytest.importorskip("jax")


def _bilinear(a, b):
    return float(np.sum(np.asarray(a, np.complex128) * np.asarray(b, np.complex128)).real)


DERIVATIVE_CASES = {
    "cholesky": (lambda m: m.cholesky, lambda: (lambda a: a @ _h(a) + 4 * np.eye(4))(
        _rand((4, 4), np.complex64)).astype(np.complex64)),
    "triangular_solve": (lambda m: (lambda a: m.triangular_solve(
        a, np.ones((4, 2), np.complex64), left_side=True, lower=True, transpose_a=True,
        conjugate_a=True)), lambda: _rand((4, 4), np.complex64) + 4 * np.eye(4,
                                                                             dtype=np.complex64)),
    "lu": (lambda m: (lambda a: m.lu(a)[0]), lambda: _rand((5, 3), np.complex64)),
    "qr": (lambda m: (lambda a: m.qr(a, full_matrices=False)), lambda: _rand((5, 3),
                                                                             np.complex64)),
    "qr-wide": (lambda m: (lambda a: m.qr(a, full_matrices=False)), lambda: _rand((3, 5))),
    "qr-full": (lambda m: (lambda a: m.qr(a, full_matrices=True)), lambda: _rand((5, 3))),
    "qr-pivoting": (lambda m: (lambda a: m.qr(a, pivoting=True, full_matrices=False)[:2]),
                    lambda: _rand((5, 4), np.complex64)),
    "eigh-values": (lambda m: (lambda a: m.eigh(a)[1]), lambda: _rand((4, 4), np.complex64)),
    "svd-values": (lambda m: (lambda a: m.svd(a, compute_uv=False)),
                   lambda: _rand((5, 3), np.complex64)),
    "svd": (lambda m: (lambda a: m.svd(a, full_matrices=False)), lambda: _rand((3, 3))),
    "eigh": (lambda m: m.eigh, lambda: _rand((4, 4))),
    "eig-values": (lambda m: (lambda a: m.eig(a, compute_left_eigenvectors=False,
                                                compute_right_eigenvectors=False)),
                   lambda: _rand((4, 4))),
    "eig-vectors": (lambda m: (lambda a: m.eig(a, enable_eigvec_derivs=True)),
                    lambda: _rand((4, 4))),
}


def _fix_signs(name, primal, tangent):
    """Real eigenvectors and singular vectors are unique up to sign, which two LAPACK builds
    may choose differently: make each column's first entry positive, in the primal and (the
    same flip) in the tangent."""
    primal = [np.asarray(p) for p in primal]
    tangent = [np.asarray(t) for t in tangent]
    if name == "eigh":  # (v, w)
        flip = np.sign(primal[0][0, :])
        return [primal[0] * flip, primal[1]], [tangent[0] * flip, tangent[1]]
    if name == "svd":  # (u, s, vt)
        flip = np.sign(primal[0][0, :])
        return ([primal[0] * flip, primal[1], primal[2] * flip[:, None]],
                [tangent[0] * flip, tangent[1], tangent[2] * flip[:, None]])
    return primal, tangent


@pytest.mark.parametrize("name", list(DERIVATIVE_CASES))
def test_jvp_matches_jax(name):
    jax = _jax()
    make_fun, make_x = DERIVATIVE_CASES[name]
    x = make_x()
    t = _rand(x.shape, x.dtype)
    primal, got = xjax.jvp(make_fun(lax.linalg), (x,), (t,))
    j_primal, want = jax.jvp(make_fun(jax.lax.linalg), (x,), (t,))
    _, got = _fix_signs(name, xjax.tree_util.tree_leaves(primal),
                        xjax.tree_util.tree_leaves(got))
    _, want = _fix_signs(name, jax.tree_util.tree_leaves(j_primal),
                         jax.tree_util.tree_leaves(want))
    for g, w in zip(got, want, strict=True):
        _close(g, w, 2e-3)


@pytest.mark.parametrize("name", [n for n in DERIVATIVE_CASES if not n.startswith("eig-")])
def test_vjp_matches_jax_and_the_bilinear_identity(name):
    jax = _jax()
    make_fun, make_x = DERIVATIVE_CASES[name]
    x = make_x()
    out, f_vjp = xjax.vjp(make_fun(lax.linalg), x)
    _, j_vjp = jax.vjp(make_fun(jax.lax.linalg), x)
    cts = [_rand(np.shape(o), np.asarray(o).dtype) for o in xjax.tree_util.tree_leaves(out)]
    ct_tree = xjax.tree_util.tree_unflatten(xjax.tree_util.tree_structure(out), cts)
    (got,) = f_vjp(ct_tree)
    (want,) = j_vjp(jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(out), cts))
    if name not in ("eigh", "svd"):  # vectors' signs may differ from JAX's LAPACK build
        _close(got, want, 2e-3)
    t = _rand(x.shape, x.dtype)
    _, jt = xjax.jvp(make_fun(lax.linalg), (x,), (t,))
    lhs = sum(_bilinear(c, j) for c, j in zip(cts, xjax.tree_util.tree_leaves(jt), strict=True))
    assert abs(lhs - _bilinear(got, t)) <= 1e-3 * max(1.0, abs(lhs))

# -- vmap --


VMAP_CASES = {
    "cholesky": (L.cholesky, lambda: [(lambda a: a @ a.T + 4 * np.eye(4, dtype=np.float32))(
        _rand((4, 4)))]),
    "triangular_solve": (lambda a, b: L.triangular_solve(a, b, left_side=True, lower=True),
                         lambda: [_rand((3, 3)) + 3 * np.eye(3, dtype=np.float32),
                                  _rand((3, 2))]),
    "lu": (L.lu, lambda: [_rand((4, 3))]),
    "qr": (L.qr, lambda: [_rand((4, 3))]),
    "eigh": (lambda a: L.eigh(a)[1], lambda: [_rand((4, 4))]),
    "svd": (lambda a: L.svd(a, compute_uv=False), lambda: [_rand((4, 3))]),
    "eig": (lambda a: L.eig(a, compute_left_eigenvectors=False,
                            compute_right_eigenvectors=False)[0], lambda: [_rand((3, 3))]),
}


@pytest.mark.parametrize("in_axis", [0, 1, 2])
@pytest.mark.parametrize("name", list(VMAP_CASES))
def test_vmap_matches_a_loop(name, in_axis):
    fun, make = VMAP_CASES[name]
    examples = [make() for _ in range(3)]
    batched = [np.stack([e[i] for e in examples], axis=in_axis)
               for i in range(len(examples[0]))]
    got = xjax.tree_util.tree_leaves(xjax.vmap(fun, in_axes=in_axis)(*batched))
    want = [np.stack(leaves) for leaves in zip(*[
        [np.asarray(x) for x in xjax.tree_util.tree_leaves(fun(*e))] for e in examples],
        strict=True)]
    for g, w in zip(got, want, strict=True):
        _close(g, w, 1e-4)


def test_vmap_with_an_unmapped_operand():
    a = _rand((3, 3)) + 3 * np.eye(3, dtype=np.float32)
    bs = _rand((4, 3, 2))
    got = xjax.vmap(lambda b: L.triangular_solve(a, b, left_side=True, lower=True))(bs)
    want = np.stack([np.asarray(L.triangular_solve(a, b, left_side=True, lower=True))
                     for b in bs])
    _close(got, want, 1e-5)

# -- compositions --


def _lapack():
    return pytest.importorskip("scipy.linalg.lapack")


@pytest.mark.parametrize("mode", MODES)
def test_hessenberg_matches_gehrd(mode):
    lapack = _lapack()
    a = _rand((6, 6))
    packed, taus = _run(L.hessenberg, mode)(a)
    want, want_taus, _ = lapack.sgehrd(a)
    _close(packed, want, 1e-4)
    _close(taus, want_taus, 1e-4)


@pytest.mark.parametrize("mode", MODES)
def test_tridiagonal_matches_sytrd(mode):
    lapack = _lapack()
    a = _rand((5, 5))
    a = a + a.T
    packed, d, e, taus = _run(L.tridiagonal, mode)(a)
    want, want_d, want_e, want_taus, _ = lapack.ssytrd(a, lower=1)
    _close(d, want_d, 1e-4)
    _close(e, want_e, 1e-4)
    _close(taus, want_taus, 1e-4)
    _close(np.tril(np.asarray(packed), -2), np.tril(want, -2), 1e-4)


def test_householder_product_rebuilds_q():
    lapack = _lapack()
    a = _rand((5, 3))
    packed, taus, *_ = lapack.sgeqrf(a)
    q = np.asarray(L.householder_product(packed, taus))
    _close(q, np.linalg.qr(a)[0], 1e-4)


@pytest.mark.parametrize("mode", MODES)
def test_tridiagonal_solve(mode):
    dl = np.r_[0, _rand(4)].astype(np.float32)
    du = np.r_[_rand(4), 0].astype(np.float32)
    d = (_rand(5) + 4).astype(np.float32)
    b = _rand((5, 2))
    t = np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)
    _close(_run(L.tridiagonal_solve, mode)(dl, d, du, b), np.linalg.solve(t, b), 1e-4)


def test_symmetric_product_and_cholesky_update():
    a, c = _rand((3, 2)), _rand((3, 3))
    _close(L.symmetric_product(a, c, alpha=2.0, beta=0.5), 2 * a @ a.T + 0.5 * c, 1e-5)
    m = _rand((4, 4))
    r = np.linalg.cholesky(m @ m.T + 4 * np.eye(4)).T.astype(np.float32)
    w = _rand(4)
    updated = np.asarray(L.cholesky_update(r, w))
    _close(updated.T @ updated, r.T @ r + np.outer(w, w), 1e-4)


def test_unimplemented_names_say_so():
    with pytest.raises(NotImplementedError, match="qdwh"):
        L.qdwh(np.eye(2, dtype=np.float32))

# -- 64-bit --


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_compiled_algorithms_in_x64(dtype):
    with xjax.config.override(jax_enable_x64=True):
        a = _rand((6, 6), dtype)
        lu, pivots, perm = xjax.jit(L.lu)(a)
        assert lu.dtype == dtype
        _check_lu(a, lu, pivots, perm)
        q, r = xjax.jit(L.qr)(a)
        np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), a, atol=1e-12)
        h = (a + _h(a)) / 2
        v, w = xjax.jit(L.eigh)(h)
        np.testing.assert_allclose(np.asarray(w), np.linalg.eigvalsh(h), atol=1e-12)
        s = xjax.jit(lambda a: L.svd(a, compute_uv=False))(a)
        np.testing.assert_allclose(np.asarray(s), np.linalg.svd(a, compute_uv=False),
                                   atol=1e-12)
