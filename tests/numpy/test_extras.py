"""Less central NumPy functions against NumPy: grids, index helpers, nan reductions,
cumulative forms, rotations, Kronecker and cross products, geomspace."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp


def _eq(got, expected):
    if isinstance(expected, (tuple, list)):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            _eq(g, e)
        return
    assert isinstance(got, xjax.Array)
    assert got.shape == np.shape(expected)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid(indexing, sparse):
    x, y, z = np.arange(2), np.arange(3.), np.arange(4)
    _eq(jnp.meshgrid(jnp.asarray(x), jnp.asarray(y), jnp.asarray(z), indexing=indexing,
                     sparse=sparse),
        np.meshgrid(x, y, z, indexing=indexing, sparse=sparse))


def test_grids_and_index_helpers():
    _eq(jnp.indices((2, 3)), np.indices((2, 3)))
    _eq(jnp.indices((2, 3), sparse=True), np.indices((2, 3), sparse=True))
    _eq(jnp.ix_(jnp.array([0, 1]), jnp.array([2])), np.ix_([0, 1], [2]))
    _eq(jnp.unravel_index(jnp.array([5, 7, 0]), (2, 4)), np.unravel_index([5, 7, 0], (2, 4)))
    _eq(jnp.unravel_index(jnp.array([9, -1]), (2, 4)), ([1, 1], [3, 3]))
    _eq(jnp.ravel_multi_index((jnp.array([1, 0]), jnp.array([2, 3])), (2, 4)),
        np.ravel_multi_index(([1, 0], [2, 3]), (2, 4)))
    _eq(jnp.ravel_multi_index((jnp.array([3]), jnp.array([9])), (2, 4), mode="clip"),
        np.ravel_multi_index(([3], [9]), (2, 4), mode="clip"))
    _eq(jnp.ravel_multi_index((jnp.array([3]), jnp.array([9])), (2, 4), mode="wrap"),
        np.ravel_multi_index(([3], [9]), (2, 4), mode="wrap"))
    with pytest.raises(ValueError, match="invalid entry"):
        jnp.ravel_multi_index((jnp.array([3]), jnp.array([0])), (2, 4))
    _eq(jnp.tril_indices(3), np.tril_indices(3))
    _eq(jnp.triu_indices(3, 1, 4), np.triu_indices(3, 1, 4))
    _eq(jnp.tril_indices_from(jnp.ones((3, 4)), -1), np.tril_indices_from(np.ones((3, 4)), -1))
    _eq(jnp.diag_indices(3), np.diag_indices(3))
    _eq(jnp.diag_indices_from(jnp.ones((2, 2))), np.diag_indices_from(np.ones((2, 2))))
    _eq(jnp.isin(jnp.arange(6).reshape(2, 3), jnp.array([1, 3, 5])),
        np.isin(np.arange(6).reshape(2, 3), [1, 3, 5]))
    _eq(jnp.isin(jnp.arange(4), jnp.array([1]), invert=True), [True, False, True, True])
    x = jnp.arange(10)
    _eq(x[jnp.s_[2:8:3]], np.arange(10)[2:8:3])
    assert jnp.index_exp[1:2] == np.index_exp[1:2]


def test_nan_and_cumulative_forms():
    x = np.array([[1., np.nan, 3.], [np.nan, np.nan, 2.]], np.float32)
    for name in ("nanvar", "nanstd", "nancumsum", "nancumprod", "nanargmax", "nanargmin"):
        kwargs = {"axis": 1} if name.startswith("nanarg") or name.startswith("nanv") or \
            name.startswith("nans") else {}
        _eq(getattr(jnp, name)(jnp.asarray(np.nan_to_num(x, nan=5.) if "arg" in name else x),
                               **kwargs),
            getattr(np, name)(np.nan_to_num(x, nan=5.) if "arg" in name else x, **kwargs))
    _eq(jnp.nanargmax(jnp.array([np.nan, 2., 1.])), 1)
    _eq(jnp.nanargmax(jnp.array([np.nan, np.nan])), -1)
    _eq(jnp.cumulative_sum(jnp.arange(3), include_initial=True), [0, 0, 1, 3])
    _eq(jnp.cumulative_prod(jnp.arange(1, 4.), include_initial=True), [1, 1, 2, 6])
    _eq(jnp.cumulative_sum(jnp.ones((2, 3)), axis=1), np.cumsum(np.ones((2, 3)), axis=1))
    with pytest.raises(ValueError, match="axis argument is only optional"):
        jnp.cumulative_sum(jnp.ones((2, 3)))


@pytest.mark.parametrize("k", [0, 1, 2, 3, -1, 5])
@pytest.mark.parametrize("axes", [(0, 1), (1, 0), (0, 2), (2, 1)])
def test_rot90(k, axes):
    m = np.arange(24).reshape(2, 3, 4)
    _eq(jnp.rot90(jnp.asarray(m), k, axes), np.rot90(m, k, axes))


def test_rollaxis_unstack_kron_cross_geomspace():
    m = np.arange(24).reshape(2, 3, 4)
    for axis, start in [(2, 0), (0, 3), (1, -1), (-1, 1)]:
        _eq(jnp.rollaxis(jnp.asarray(m), axis, start), np.rollaxis(m, axis, start))
    _eq(jnp.unstack(jnp.asarray(m), axis=1), tuple(np.moveaxis(m, 1, 0)))
    a, b = np.arange(4).reshape(2, 2), np.array([[1, -1], [2, 0], [0, 3]])
    _eq(jnp.kron(jnp.asarray(a), jnp.asarray(b)), np.kron(a, b))
    _eq(jnp.kron(jnp.arange(3), jnp.asarray(b)), np.kron(np.arange(3), b))
    u, v = np.array([[1., 2, 3], [4, 5, 6]]), np.array([[0., 1, 0], [1, 0, 2]])
    _eq(jnp.cross(jnp.asarray(u), jnp.asarray(v)), np.cross(u, v))
    _eq(jnp.cross(jnp.asarray(u[:, :2]), jnp.asarray(v)), np.cross(u[:, :2], v))
    _eq(jnp.cross(jnp.asarray(u.T), jnp.asarray(v.T), axis=0), np.cross(u.T, v.T, axis=0))
    _eq(jnp.geomspace(1, 1000, 4), np.geomspace(1, 1000, 4))
    _eq(jnp.geomspace(-1, -16, 5, endpoint=False), np.geomspace(-1, -16, 5, endpoint=False))
