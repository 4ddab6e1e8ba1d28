"""Shape manipulation and products against NumPy."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp


def _eq(got, expected):
    assert isinstance(got, xjax.Array)
    assert got.shape == np.shape(expected)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-6)


A = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize("shape", [(24,), (4, 6), (2, -1), (-1, 3, 2), (2, 3, 4), ()])
@pytest.mark.parametrize("order", ["C", "F"])
def test_reshape(shape, order):
    x = A if shape != () else np.float32(5)
    _eq(jnp.reshape(jnp.asarray(x), shape, order=order), np.reshape(x, shape, order=order))


def test_reshape_errors():
    with pytest.raises(TypeError, match=r"cannot reshape array of shape \(6,\) \(size 6\) into "
                                        r"shape \(4, -1\) because the product"):
        jnp.reshape(jnp.ones(6), (4, -1))
    with pytest.raises(TypeError, match="cannot reshape"):
        jnp.ones(6).reshape(4)
    with pytest.raises(TypeError, match="only specify one unknown"):
        jnp.ones(6).reshape(-1, -1)
    with pytest.raises(NotImplementedError):
        jnp.ones(6).reshape(2, -1, order="A")


@pytest.mark.parametrize("fn,args", [
    ("ravel", ()), ("transpose", ()), ("transpose", ((1, 0, 2),)), ("transpose", ((2, 0, 1),)),
    ("swapaxes", (0, 2)), ("moveaxis", (0, -1)), ("moveaxis", ((0, 1), (2, 0))),
    ("expand_dims", (0,)), ("expand_dims", (-1,)), ("expand_dims", ((0, 2),)),
    ("flip", ()), ("flip", (1,)), ("flip", ((0, 2),)), ("roll", (3,)), ("roll", (-2, 1)),
    ("roll", ((1, 2), (0, 2))), ("atleast_1d", ()), ("atleast_2d", ()), ("atleast_3d", ()),
    ("tile", (2,)), ("tile", ((2, 1, 1, 2),)), ("repeat", (2,)), ("repeat", (2, 1)),
    ("diff", ()), ("diff", (2, 0)), ("matrix_transpose", ()), ("permute_dims", ((2, 1, 0),)),
])
def test_shape_functions_match_numpy(fn, args):
    expected = getattr(np, fn)(A, *args)
    _eq(getattr(jnp, fn)(jnp.asarray(A), *args), expected)


def test_squeeze():
    x = np.ones((1, 3, 1), np.float32)
    _eq(jnp.squeeze(jnp.asarray(x)), np.squeeze(x))
    _eq(jnp.squeeze(jnp.asarray(x), 0), np.squeeze(x, 0))
    _eq(jnp.squeeze(jnp.asarray(x), (0, 2)), np.squeeze(x, (0, 2)))
    with pytest.raises(ValueError, match="cannot select an axis to squeeze out which has size "
                                         r"not equal to one, got shape=\(3, 4\) and "
                                         r"dimensions=\(0,\)"):
        jnp.squeeze(jnp.ones((3, 4)), 0)


def test_atleast_on_scalars():
    _eq(jnp.atleast_1d(3), np.atleast_1d(3))
    a, b = jnp.atleast_2d(jnp.arange(2), 3)
    _eq(a, [[0, 1]])
    assert b.shape == (1, 1) and b.weak_type
    _eq(jnp.atleast_3d(jnp.arange(2)), np.atleast_3d(np.arange(2)))


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_concatenate_and_stack(axis):
    a, b = A[0], A[1] * 2
    _eq(jnp.concatenate([jnp.asarray(a), jnp.asarray(b)], axis=axis),
        np.concatenate([a, b], axis=axis))
    if axis is not None:
        _eq(jnp.stack([jnp.asarray(a), jnp.asarray(b)], axis=axis), np.stack([a, b], axis=axis))


def test_joining_promotes_and_checks():
    out = jnp.concatenate([jnp.array([1, 2]), jnp.array([3.5])])
    assert out.dtype == np.float32
    _eq(out, [1, 2, 3.5])
    assert jnp.concatenate([jnp.arange(2)], dtype=jnp.float32).dtype == np.float32
    _eq(jnp.hstack([jnp.arange(2), jnp.arange(3)]), np.hstack([np.arange(2), np.arange(3)]))
    _eq(jnp.vstack([jnp.arange(2), jnp.arange(2)]), np.vstack([np.arange(2), np.arange(2)]))
    _eq(jnp.dstack([jnp.ones((2, 2)), jnp.ones((2, 2))]), np.dstack([np.ones((2, 2))] * 2))
    _eq(jnp.column_stack([jnp.arange(2), jnp.arange(2)]), np.column_stack([np.arange(2)] * 2))
    _eq(jnp.append(jnp.arange(2), jnp.arange(3)), np.append(np.arange(2), np.arange(3)))
    _eq(jnp.stack(jnp.ones((3, 2))), np.ones((3, 2)))
    with pytest.raises(ValueError, match="All input arrays must have the same shape"):
        jnp.stack([jnp.ones(2), jnp.ones(3)])
    with pytest.raises(ValueError, match="Need at least one array to stack."):
        jnp.stack([])
    with pytest.raises(ValueError, match="Need at least one array to concatenate."):
        jnp.concatenate([])
    with pytest.raises(ValueError, match="Zero-dimensional arrays cannot be concatenated."):
        jnp.concatenate([jnp.array(1), jnp.array(2)])
    with pytest.raises(TypeError, match="concatenate requires ndarray or scalar arguments"):
        jnp.concatenate([[1, 2], [3]])
    with pytest.raises(TypeError, match="stack requires ndarray or scalar arguments"):
        jnp.stack([[1, 2], [3, 4]])


def test_split():
    x = np.arange(12).reshape(3, 4)
    for got, expected in zip(jnp.split(jnp.asarray(x), 2, axis=1), np.split(x, 2, axis=1)):
        _eq(got, expected)
    for got, expected in zip(jnp.split(jnp.arange(6), [1, 4]), np.split(np.arange(6), [1, 4])):
        _eq(got, expected)
    for got, expected in zip(jnp.array_split(jnp.arange(5), 3),
                             np.array_split(np.arange(5), 3)):
        _eq(got, expected)
    assert len(jnp.hsplit(jnp.asarray(x), 2)) == 2 and len(jnp.vsplit(jnp.asarray(x), 3)) == 3
    with pytest.raises(ValueError, match="array split does not result in an equal division"):
        jnp.split(jnp.arange(5), 2)


def test_broadcasting():
    assert jnp.broadcast_shapes((3, 1), (4,)) == (3, 4)
    _eq(jnp.broadcast_to(jnp.arange(3), (2, 3)), np.broadcast_to(np.arange(3), (2, 3)))
    a, b = jnp.broadcast_arrays(jnp.ones((3, 1)), jnp.ones(4))
    assert a.shape == b.shape == (3, 4)
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: "
                                         r"shapes=\[\(3,\), \(4,\)\]"):
        jnp.broadcast_shapes((3,), (4,))
    with pytest.raises(ValueError, match="Incompatible types for broadcasting"):
        jnp.broadcast_to(jnp.ones(3), (4,))
    with pytest.raises(ValueError, match="Cannot broadcast to shape with fewer dimensions"):
        jnp.broadcast_to(jnp.ones((2, 3)), (3,))


def test_transpose_errors():
    with pytest.raises(TypeError, match="transpose permutation isn't a permutation"):
        jnp.transpose(jnp.ones((2, 3)), (0, 0))
    with pytest.raises(ValueError, match="repeated axis"):
        jnp.expand_dims(jnp.ones(3), (0, 0))


def test_repeat_with_array_and_fliplr():
    _eq(jnp.repeat(jnp.arange(3), jnp.array([1, 0, 2])), [0, 2, 2])
    _eq(jnp.repeat(jnp.arange(3), 2, total_repeat_length=4), [0, 0, 1, 1])
    _eq(jnp.fliplr(jnp.asarray(A[0])), np.fliplr(A[0]))
    _eq(jnp.flipud(jnp.asarray(A[0])), np.flipud(A[0]))


def test_shape_ops_under_jit():
    def g(x):
        return jnp.concatenate([jnp.roll(x, 1, 0), jnp.flip(x, 1).T.T], 1).reshape(-1, 2).sum(0)

    x = jnp.asarray(A[0])
    expected = np.concatenate([np.roll(A[0], 1, 0), np.flip(A[0], 1)], 1).reshape(-1, 2).sum(0)
    _eq(g(x), expected)
    _eq(xjax.jit(g)(x), expected)
    shift = xjax.jit(lambda x, s: jnp.roll(x, s))
    _eq(shift(jnp.arange(5), 2), np.roll(np.arange(5), 2))


def test_shape_size_ndim():
    x = jnp.ones((2, 3))
    assert jnp.shape(x) == (2, 3) and jnp.ndim(x) == 2 and jnp.size(x) == 6
    assert jnp.size(x, 1) == 3 and jnp.isscalar(jnp.array(1)) and not jnp.isscalar(x)


# -- products -------------------------------------------------------------------------------

PRODUCT_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                  ((5, 2, 3), (4, 3, 2)), ((), (3,)), ((2, 3), ())]


@pytest.mark.parametrize("shapes", PRODUCT_SHAPES)
def test_dot(shapes):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    _eq(jnp.dot(jnp.asarray(a), jnp.asarray(b)), np.dot(a, b))


@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)),
                                    ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
                                    ((5, 1, 2, 3), (4, 3, 2)), ((3,), (2, 3, 4)),
                                    ((2, 2, 3), (3,))])
def test_matmul(shapes):
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    _eq(jnp.matmul(jnp.asarray(a), jnp.asarray(b)), np.matmul(a, b))
    _eq(jnp.asarray(a) @ jnp.asarray(b), a @ b)


def test_other_products():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((5, 2, 3)).astype(np.float32)
    b = rng.standard_normal((3, 2, 4)).astype(np.float32)
    _eq(jnp.tensordot(jnp.asarray(a), jnp.asarray(b.transpose(1, 0, 2)), axes=2),
        np.tensordot(a, b.transpose(1, 0, 2), axes=2))
    _eq(jnp.tensordot(jnp.asarray(a), jnp.asarray(b), axes=([1, 2], [1, 0])),
        np.tensordot(a, b, axes=([1, 2], [1, 0])))
    _eq(jnp.inner(jnp.ones((5, 3)), jnp.ones((2, 3))), np.inner(np.ones((5, 3)), np.ones((2, 3))))
    _eq(jnp.outer(jnp.arange(3.), jnp.arange(2.)), np.outer(np.arange(3.), np.arange(2.)))
    z = np.array([1 + 2j, 3 - 1j], np.complex64)
    _eq(jnp.vdot(jnp.asarray(z), jnp.asarray(z)), np.vdot(z, z))
    _eq(jnp.vecdot(jnp.ones((2, 3)), jnp.ones(3)), np.ones(2) * 3)
    assert jnp.dot(jnp.ones(3, jnp.int8), jnp.ones(3, jnp.int8)).dtype == np.int8
    assert bool(jnp.dot(jnp.ones(3, bool), jnp.ones(3, bool)))
    with pytest.raises(TypeError, match="contracting dimensions"):
        jnp.dot(jnp.ones((2, 3)), jnp.ones((4,)))
    with pytest.raises(ValueError, match="matmul input operand 0 must have ndim at least 1"):
        jnp.matmul(jnp.ones(()), jnp.ones((4,)))


def test_dot_jaxpr_matches_jax():
    jaxpr = str(xjax.make_jaxpr(lambda x, y: jnp.dot(x + 1, y + 1))(np.ones((3, 4)), np.ones(4)))
    assert "c:f32[3,4] = add a 1.0:f32[]" in jaxpr
    assert "dimension_numbers=(([1], [0]), ([], []))" in jaxpr
    assert "preferred_element_type=float32" in jaxpr


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("lengths", [(3, 10), (10, 3), (4, 4), (5, 2), (1, 3)])
def test_convolve_and_correlate(mode, lengths):
    rng = np.random.default_rng(3)
    a = rng.standard_normal(lengths[0]).astype(np.float32)
    v = rng.standard_normal(lengths[1]).astype(np.float32)
    _eq(jnp.convolve(jnp.asarray(a), jnp.asarray(v), mode=mode), np.convolve(a, v, mode=mode))
    _eq(jnp.correlate(jnp.asarray(a), jnp.asarray(v), mode=mode),
        np.correlate(a, v, mode=mode))


def test_convolve_of_seed():
    out = jnp.convolve(jnp.array([1, 2, 1]), jnp.ones(10))
    assert repr(out) == ("Array([1., 3., 4., 4., 4., 4., 4., 4., 4., 4., 3., 1.], "
                         "dtype=float32)")


# -- diagonals, triangles, padding ----------------------------------------------------------


@pytest.mark.parametrize("offset", [0, 1, -1, 3, -4])
def test_diagonal_and_trace(offset):
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    _eq(jnp.diagonal(jnp.asarray(x[0]), offset), np.diagonal(x[0], offset))
    _eq(jnp.diagonal(jnp.asarray(x), offset, 1, 2), np.diagonal(x, offset, 1, 2))
    _eq(jnp.diagonal(jnp.asarray(x), offset, 2, 0), np.diagonal(x, offset, 2, 0))
    _eq(jnp.trace(jnp.asarray(x[0]), offset), np.trace(x[0], offset))
    _eq(jnp.asarray(x).trace(offset, 1, 2), x.trace(offset, 1, 2))
    _eq(jnp.asarray(x[0]).diagonal(offset), x[0].diagonal(offset))


@pytest.mark.parametrize("k", [0, 2, -1])
def test_diag_tri(k):
    v = np.arange(1, 4, dtype=np.float32)
    _eq(jnp.diag(jnp.asarray(v), k), np.diag(v, k))
    m = np.arange(20, dtype=np.float32).reshape(4, 5)
    _eq(jnp.diag(jnp.asarray(m), k), np.diag(m, k))
    _eq(jnp.tril(jnp.asarray(m), k), np.tril(m, k))
    _eq(jnp.triu(jnp.asarray(m), k), np.triu(m, k))
    _eq(jnp.tril(jnp.ones((2, 3, 3)), k), np.tril(np.ones((2, 3, 3)), k))
    _eq(jnp.tri(3, 4, k), np.tri(3, 4, k))


@pytest.mark.parametrize("mode", ["constant", "edge"])
@pytest.mark.parametrize("widths", [1, (1, 2), ((0, 1), (2, 0))])
def test_pad(mode, widths):
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    _eq(jnp.pad(jnp.asarray(m), widths, mode), np.pad(m, widths, mode))
    if mode == "constant":
        _eq(jnp.pad(jnp.asarray(m), widths, constant_values=-1),
            np.pad(m, widths, constant_values=-1))


def test_repeat_with_total_repeat_length_pads_and_traces():
    """JAX's total_repeat_length: cut when longer, filled with the last element when
    shorter; it also makes traced repeats jittable."""
    a = jnp.array([1, 2, 3])

    def reference(counts, total):
        out = list(np.repeat([1, 2, 3], counts))[:total]
        return out + [3] * (total - len(out))

    for counts, total in [([1, 2, 1], 7), ([1, 2, 0], 5), ([0, 2, 0], 4), ([1, 2, 1], 2)]:
        _eq(jnp.repeat(a, jnp.array(counts), total_repeat_length=total),
            reference(counts, total))
        jitted = xjax.jit(lambda r, t=total: jnp.repeat(a, r, total_repeat_length=t))
        _eq(jitted(jnp.array(counts)), reference(counts, total))
    _eq(jnp.repeat(a, 2, total_repeat_length=8), [1, 1, 2, 2, 3, 3, 3, 3])
    with pytest.raises(xjax.errors.ConcretizationTypeError, match="total_repeat_length"):
        xjax.jit(lambda r: jnp.repeat(a, r))(jnp.array([1, 2, 0]))


def test_expand_dims_takes_any_sequence_of_axes_as_jax():
    # Distrax passes a range; an index array works too (JAX's _ensure_index_tuple).
    x = np.arange(6.0).reshape(2, 3)
    for axis in (range(0, 2), np.array([0, 3]), [1]):
        np.testing.assert_array_equal(jnp.expand_dims(x, axis),
                                      np.expand_dims(x, tuple(int(a) for a in axis)))
