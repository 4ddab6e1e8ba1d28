"""jnp.einsum against NumPy: paths, diagonals, reductions, ellipses, dtypes, and under jit,
grad and vmap; einsum_path."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp

CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk->ki", [(2, 3), (3, 4)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(4, 4)]),
    ("ij->", [(2, 3)]),
    ("ijk->kji", [(2, 3, 4)]),
    ("iji->j", [(3, 2, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("...ij,...jk", [(5, 2, 3), (5, 3, 4)]),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("iij,jk->ik", [(3, 3, 2), (2, 4)]),
    ("ijk,ikl,il->j", [(2, 3, 4), (2, 4, 5), (2, 5)]),
    ("i,i", [(3,), (3,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ab,cd,bc->ad", [(2, 3), (4, 5), (3, 4)]),
    (",i->i", [(), (3,)]),
    ("ij,ij->i", [(3, 4), (3, 4)]),
    ("aij,ajk->", [(2, 3, 4), (2, 4, 5)]),
    ("ij,kl->", [(2, 3), (4, 5)]),
    ("...i,...i->...", [(2, 1, 3), (4, 3)]),
]


@pytest.mark.parametrize("subscripts,shapes", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("optimize", ["auto", False, "optimal", "greedy"])
def test_against_numpy(subscripts, shapes, optimize):
    rng = np.random.default_rng(0)
    operands = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    want = np.einsum(subscripts, *operands)
    got = jnp.einsum(subscripts, *operands, optimize=optimize)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    jitted = xjax.jit(lambda *o: jnp.einsum(subscripts, *o, optimize=optimize))(*operands)
    np.testing.assert_allclose(jitted, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtypes_,want", [
    ((np.int8, np.int8), np.int8), ((np.int8, np.float32), np.float32),
    ((np.int32, np.int32), np.int32), ((np.complex64, np.float32), np.complex64),
    ((np.bool_, np.bool_), np.bool_)])
def test_result_dtypes(dtypes_, want):
    a = np.ones((2, 3), dtypes_[0])
    b = np.ones((3, 4), dtypes_[1])
    out = jnp.einsum("ij,jk->ik", a, b)
    assert out.dtype == want
    np.testing.assert_array_equal(np.asarray(out).astype(np.float64),
                                  np.einsum("ij,jk->ik", a.astype(np.float64),
                                            b.astype(np.float64)).astype(want))


def test_preferred_element_type():
    a = np.full((2, 3), 100, np.int8)
    out = jnp.einsum("ij,jk->ik", a, a.T, preferred_element_type=np.int32)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, np.full((2, 2), 30000))


def test_jaxpr_is_one_dot_general():
    text = str(xjax.make_jaxpr(lambda x, y: jnp.einsum("ij,jk->ki", x, y))(
        np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)))
    assert text.count("dot_general") == 1 and "transpose" not in text
    assert "preferred_element_type=float32" in text


def test_grad():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    ga, gb = xjax.grad(lambda a, b: jnp.einsum("ij,jk->", a, b), argnums=(0, 1))(a, b)
    np.testing.assert_allclose(ga, np.broadcast_to(b.sum(1), (3, 4)), rtol=1e-5)
    np.testing.assert_allclose(gb, np.broadcast_to(a.sum(0)[:, None], (4, 5)), rtol=1e-5)
    g = xjax.grad(lambda x: jnp.einsum("ii->", x))(a[:3, :3])
    np.testing.assert_array_equal(g, np.eye(3))


def test_vmap():
    rng = np.random.default_rng(2)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    batch = rng.standard_normal((6, 3, 4)).astype(np.float32)
    got = xjax.vmap(lambda x: jnp.einsum("ij,jk->ik", x, b))(batch)
    np.testing.assert_allclose(got, np.einsum("bij,jk->bik", batch, b), rtol=1e-5,
                               atol=1e-5)


def test_einsum_path_matches_opt_einsum():
    import opt_einsum
    shapes = [(2, 3), (3, 4), (4, 5)]
    path, info = jnp.einsum_path("ij,jk,kl->il", *[np.ones(s) for s in shapes],
                                 optimize="greedy")
    want, _ = opt_einsum.contract_path("ij,jk,kl->il", *[np.ones(s) for s in shapes],
                                       optimize="greedy")
    assert list(path) == list(want)
    assert "Complete contraction" in str(info)


def test_errors():
    with pytest.raises(ValueError):
        jnp.einsum("ij,jk->ik", np.ones((2, 3)), np.ones((4, 5)))
    with pytest.raises(TypeError):
        jnp.einsum("ij->i", [[1.0, 2.0]])
