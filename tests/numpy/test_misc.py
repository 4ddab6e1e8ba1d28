"""The rest of jnp's NumPy surface against NumPy: insert/delete/put/place/compress/choose/
resize/fill_diagonal/block/packbits, numerical helpers (gradient, trapezoid, interp,
unwrap, frexp, spacing, i0, windows, cov, corrcoef, matvec/vecmat), vectorize and ufunc,
index objects, buffers and printing; with JAX's deviations (inplace=False, static sizes)."""

import io

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src.core import errors




X = np.arange(6, dtype=np.int32).reshape(2, 3)


# -- insert / delete --

@pytest.mark.parametrize("obj,values,axis", [
    (1, 9, None), (1, np.array([7, 8]), 1), (np.array([1, 0, 1]), np.array([7, 8, 9]), 1),
    (slice(0, 2), 5, 1), (-1, 4, 0), (2, np.array([[1, 2, 3]]), 0), (0, 2.7, None),
    (np.array([5, 0]), np.array([1, 2]), None)])
def test_insert(obj, values, axis):
    np.testing.assert_array_equal(jnp.insert(X, obj, values, axis),
                                  np.insert(X, obj, values, axis))


def test_insert_traced_position():
    got = xjax.jit(lambda i: jnp.insert(X, i, 9))(1)
    np.testing.assert_array_equal(got, np.insert(X, 1, 9))


@pytest.mark.parametrize("obj,axis", [(1, 1), (np.array([0, 0, 2]), None), (slice(1, None), 0),
                                      (np.array([True, False, True]), 1), (-1, None)])
def test_delete(obj, axis):
    np.testing.assert_array_equal(jnp.delete(X, obj, axis), np.delete(X, obj, axis))


def test_delete_traced_needs_unique_indices():
    with pytest.raises(errors.ConcretizationTypeError, match="jnp.delete"):
        xjax.jit(lambda i: jnp.delete(X, i))(1)
    got = xjax.jit(lambda i: jnp.delete(X, i, assume_unique_indices=True))(np.array([1, 4]))
    np.testing.assert_array_equal(got, np.delete(X, [1, 4]))


# -- writes returning new arrays --

@pytest.mark.parametrize("mode", [None, "clip", "wrap"])
def test_put(mode):
    got = jnp.put(X, np.array([0, 7, -8]), np.array([10, 20]), mode=mode, inplace=False)
    want = X.copy()
    if mode is None:  # JAX unravels out-of-bounds positions with clamping
        want.flat[[0, 5, 0]] = [10, 20, 10]
    else:
        np.put(want, [0, 7, -8], [10, 20], mode=mode)
    np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="cannot modify arrays in-place"):
        jnp.put(X, 0, 1)


def test_put_along_axis_place_fill_diagonal():
    idx = np.array([[0], [2]])
    want = X.copy()
    np.put_along_axis(want, idx, 9, axis=1)
    np.testing.assert_array_equal(jnp.put_along_axis(X, idx, 9, axis=1, inplace=False), want)
    with pytest.raises(ValueError, match="cannot modify arrays in-place"):
        jnp.put_along_axis(X, idx, 9, axis=1)
    want = X.copy()
    np.place(want, X > 2, [10, 20])
    np.testing.assert_array_equal(jnp.place(X, X > 2, np.array([10, 20]), inplace=False), want)
    for shape, val in (((3, 3), 4), ((5, 3), np.array([1, 2])), ((3, 3, 3), 7)):
        want = np.zeros(shape, np.float32)
        np.fill_diagonal(want, val)
        np.testing.assert_array_equal(
            jnp.fill_diagonal(np.zeros(shape, np.float32), val, inplace=False), want)
    with pytest.raises(NotImplementedError, match="wrap=True"):
        jnp.fill_diagonal(np.zeros((5, 3)), 1, wrap=True, inplace=False)


# -- selections --

@pytest.mark.parametrize("condition,axis", [([True, False, True], 1), ([True, False], 1),
                                            ([False, True], 0), ([1, 0, 1, 0, 0, 1], None)])
def test_compress_extract(condition, axis):
    condition = np.array(condition)
    np.testing.assert_array_equal(jnp.compress(condition, X, axis=axis),
                                  np.compress(condition, X, axis=axis))
    np.testing.assert_array_equal(jnp.extract(X > 2, X), np.extract(X > 2, X))


def test_compress_static_size_under_jit():
    got = xjax.jit(lambda c: jnp.compress(c, X, axis=1, size=3, fill_value=-1))(
        np.array([1, 0, 1]))
    np.testing.assert_array_equal(got, [[0, 2, -1], [3, 5, -1]])
    got = xjax.jit(lambda x: jnp.extract(x > 2, x, size=4))(X)
    np.testing.assert_array_equal(got, [3, 4, 5, 0])


@pytest.mark.parametrize("mode", ["clip", "wrap", "raise"])
def test_choose(mode):
    a = np.array([0, 1, 2, 1])
    choices = [np.arange(4), 10 + np.arange(4), 20 + np.arange(4)]
    np.testing.assert_array_equal(jnp.choose(a, choices, mode=mode),
                                  np.choose(a, choices, mode=mode))
    if mode != "raise":
        b = np.array([[0, 5], [-1, 2]])
        np.testing.assert_array_equal(jnp.choose(b, [1, 2, 3], mode=mode),
                                      np.choose(b, [1, 2, 3], mode=mode))


@pytest.mark.parametrize("shape", [(3, 4), 5, (0,), (2, 0), (1, 1)])
def test_resize(shape):
    np.testing.assert_array_equal(jnp.resize(X, shape), np.resize(X, shape))


def test_small_helpers():
    np.testing.assert_array_equal(jnp.diagflat(X, 1), np.diagflat(X, 1))
    np.testing.assert_array_equal(jnp.ediff1d(X, to_begin=np.array([-1]), to_end=99),
                                  np.ediff1d(X, to_begin=[-1], to_end=99))
    np.testing.assert_array_equal(jnp.mask_indices(3, jnp.triu, 1),
                                  np.mask_indices(3, np.triu, 1))
    blocks = [[np.ones((2, 2)), np.zeros((2, 1))], [np.zeros((1, 3))]]
    np.testing.assert_array_equal(jnp.block(blocks), np.block(blocks))
    np.testing.assert_array_equal(jnp.block([1, np.array([2, 3])]),
                                  np.block([1, np.array([2, 3])]))
    with pytest.raises(ValueError, match="depths are mismatched"):
        jnp.block([1, [2, 3]])
    np.testing.assert_array_equal(jnp.block([[1, 2], [3, 4]]), np.block([[1, 2], [3, 4]]))


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_packbits_unpackbits(axis, bitorder):
    bits = np.random.default_rng(0).integers(0, 2, (3, 11)).astype(np.uint8)
    packed = jnp.packbits(bits, axis=axis, bitorder=bitorder)
    np.testing.assert_array_equal(packed, np.packbits(bits, axis=axis, bitorder=bitorder))
    want = np.packbits(bits, axis=axis, bitorder=bitorder)
    for count in (None, 3, -2, 30):
        np.testing.assert_array_equal(
            jnp.unpackbits(want, axis=axis, count=count, bitorder=bitorder),
            np.unpackbits(want, axis=axis, count=count, bitorder=bitorder))


# -- numerical --

@pytest.mark.parametrize("spacing", [(), (2.0,), (np.array([0.0, 1, 3, 4, 7]),)])
def test_gradient_1d(spacing):
    f = np.array([1.0, 2, 4, 7, 11], np.float32)
    np.testing.assert_allclose(jnp.gradient(f, *spacing), np.gradient(f, *spacing),
                               rtol=1e-6)


def test_gradient_nd():
    f = np.random.default_rng(1).standard_normal((4, 5)).astype(np.float32)
    for got, want in zip(jnp.gradient(f, 2.0, np.arange(5.0) ** 2),
                         np.gradient(f, 2.0, np.arange(5.0) ** 2), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jnp.gradient(f, axis=1), np.gradient(f, axis=1), rtol=1e-6)
    with pytest.raises(ValueError, match="too small"):
        jnp.gradient(np.array([1.0]))


def test_trapezoid_interp_unwrap():
    y = np.random.default_rng(2).standard_normal((3, 5)).astype(np.float32)
    np.testing.assert_allclose(jnp.trapezoid(y), np.trapezoid(y), rtol=1e-5)
    x = np.array([0.0, 1, 3, 4, 7], np.float32)
    np.testing.assert_allclose(jnp.trapezoid(y, x), np.trapezoid(y, x), rtol=1e-5)
    np.testing.assert_allclose(jnp.trapezoid(y, dx=0.5, axis=0),
                               np.trapezoid(y, dx=0.5, axis=0), rtol=1e-5)
    xp = np.array([0.0, 1, 3], np.float32)
    fp = np.array([0.0, 10, 20], np.float32)
    points = np.array([-1, 0.5, 2, 3, 9], np.float32)
    np.testing.assert_allclose(jnp.interp(points, xp, fp), np.interp(points, xp, fp))
    np.testing.assert_allclose(jnp.interp(points, xp, fp, left=-5, right=50),
                               np.interp(points, xp, fp, left=-5, right=50))
    np.testing.assert_allclose(jnp.interp(points, xp, fp, period=4),
                               np.interp(points, xp, fp, period=4), rtol=1e-6)
    np.testing.assert_allclose(jnp.interp(points, xp, fp, left="extrapolate"),
                               [-10, 5, 15, 20, 20])
    p = np.array([0.0, 3, 6.5, 1, -5, 12], np.float32)
    np.testing.assert_allclose(jnp.unwrap(p), np.unwrap(p), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(jnp.unwrap(p, period=4), np.unwrap(p, period=4), rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_frexp_spacing(dtype):
    x = np.array([0.0, 1.5, -3, 1e-3, 7e3, np.inf, -np.inf], dtype)
    mantissa, exponent = jnp.frexp(x)
    want_m, want_e = np.frexp(x)
    np.testing.assert_array_equal(mantissa, want_m)
    np.testing.assert_array_equal(exponent, want_e)
    assert exponent.dtype == np.int32
    finite = np.array([1.0, -1.0, 1e3, 0.25], dtype)
    if dtype == np.float32:  # NumPy's float16 spacing of negative values is off
        np.testing.assert_array_equal(jnp.spacing(finite), np.spacing(finite))
    assert jnp.frexp(np.array([1, 2])) [0].dtype == np.float32


def test_i0_and_windows():
    x = np.array([0.0, 0.5, -2.0, 5.0], np.float32)
    np.testing.assert_allclose(jnp.i0(x), np.i0(x), rtol=1e-6)
    for m in (0, 1, 5, 8):
        for name in ("bartlett", "blackman", "hamming", "hanning"):
            np.testing.assert_allclose(getattr(jnp, name)(m), getattr(np, name)(m),
                                       rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(jnp.kaiser(m, 3.0), np.kaiser(m, 3.0), rtol=1e-5,
                                   atol=1e-6)
    g = xjax.grad(lambda x: jnp.i0(x))(np.float32(1.5))
    np.testing.assert_allclose(g, (np.i0(1.5 + 1e-3) - np.i0(1.5 - 1e-3)) / 2e-3, rtol=1e-3)


@pytest.mark.parametrize("rowvar", [True, False])
@pytest.mark.parametrize("weights", [False, True])
def test_cov_corrcoef(rowvar, weights):
    rng = np.random.default_rng(3)
    m = rng.standard_normal((3, 6)).astype(np.float32)
    y = rng.standard_normal((2, 6) if rowvar else (6, 2)).astype(np.float32)
    m = m if rowvar else m.T
    kwargs = {}
    if weights:
        kwargs = {"fweights": np.array([1, 2, 1, 1, 3, 1]),
                  "aweights": rng.uniform(0.5, 1.5, 6).astype(np.float32)}
    np.testing.assert_allclose(jnp.cov(m, rowvar=rowvar, **kwargs),
                               np.cov(m, rowvar=rowvar, **kwargs), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(jnp.cov(m, y, rowvar=rowvar),
                               np.cov(m, y, rowvar=rowvar), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(jnp.cov(m, rowvar=rowvar, ddof=0),
                               np.cov(m, rowvar=rowvar, ddof=0), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(jnp.corrcoef(m, rowvar=rowvar),
                               np.corrcoef(m, rowvar=rowvar), rtol=1e-4, atol=1e-5)
    assert jnp.cov(np.array([1, 2, 4])).shape == ()


def test_matvec_vecmat():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    v = (rng.standard_normal(4) + 1j * rng.standard_normal(4)).astype(np.complex64)
    np.testing.assert_allclose(jnp.matvec(a, v), np.einsum("bij,j->bi", a, v), rtol=1e-5)
    w = (rng.standard_normal(3) + 1j * rng.standard_normal(3)).astype(np.complex64)
    np.testing.assert_allclose(jnp.vecmat(w, a), np.einsum("i,bij->bj", w.conj(), a),
                               rtol=1e-5)


# -- mapped functions --

def test_vectorize():
    add = jnp.vectorize(lambda a, b: a + b)
    np.testing.assert_array_equal(add(np.ones(3), 2), [3, 3, 3])
    scale = jnp.vectorize(lambda a, s: a * s, excluded={1})
    np.testing.assert_array_equal(scale(np.ones(3), 2), [2, 2, 2])
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'm'"):
        jnp.vectorize(lambda a, b: a @ b, signature="(n,m),(m)->(n)")(np.ones((5, 2, 3)),
                                                                       np.ones(4))
    with pytest.raises(ValueError, match="does not have enough dimensions"):
        jnp.vectorize(lambda a: a.sum(), signature="(n)->()")(np.ones(()))
    total = jnp.vectorize(lambda a: a.sum(), signature="(n)->()")
    np.testing.assert_array_equal(total(np.ones((2, 3))), [3, 3])
    dot = jnp.vectorize(jnp.dot, signature="(n),(n)->()")
    np.testing.assert_array_equal(dot(np.ones((2, 3)), np.ones(3)),
                                  [3, 3])


def test_ufunc_methods():
    add = jnp.frompyfunc(lambda a, b: a + b, 2, 1, identity=0)
    assert repr(add) == "<jnp.ufunc '<lambda>'>" and add.nin == 2 and add.identity == 0
    np.testing.assert_array_equal(add(np.arange(3), 1), [1, 2, 3])
    np.testing.assert_array_equal(add.outer(np.arange(3), np.arange(2)),
                                  np.add.outer(np.arange(3), np.arange(2)))
    np.testing.assert_array_equal(
        add.reduce(np.arange(6).reshape(2, 3), axis=1), [3, 12])
    np.testing.assert_array_equal(add.reduce(np.arange(4)), 6)
    np.testing.assert_array_equal(add.accumulate(np.arange(4)), [0, 1, 3, 6])
    np.testing.assert_array_equal(add.at(np.arange(4), np.array([0, 0]), 5, inplace=False),
                                  [10, 1, 2, 3])
    np.testing.assert_array_equal(add.reduceat(np.arange(4), np.array([0, 2])), [1, 5])


def test_apply_functions_and_fromfunction():
    np.testing.assert_array_equal(jnp.apply_over_axes(jnp.sum, X, [0, 1]),
                                  np.apply_over_axes(np.sum, X, [0, 1]))
    np.testing.assert_array_equal(
        jnp.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=int),
        np.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=int))
    np.testing.assert_array_equal(
        jnp.apply_along_axis(jnp.sum, 0, X),
        np.apply_along_axis(np.sum, 0, X))
    np.testing.assert_array_equal(
        jnp.apply_along_axis(jnp.cumsum, 1, X),
        np.apply_along_axis(np.cumsum, 1, X))


# -- index objects, buffers, printing --

def test_index_objects():
    np.testing.assert_array_equal(jnp.mgrid[0:2, 0:3], np.mgrid[0:2, 0:3])
    np.testing.assert_allclose(jnp.mgrid[0:1:3j], np.mgrid[0:1:3j])
    for got, want in zip(jnp.ogrid[0:2, 0:1:3j], np.ogrid[0:2, 0:1:3j], strict=True):
        np.testing.assert_allclose(got, want)
    np.testing.assert_array_equal(jnp.r_[1:4, 0, np.array([7, 8])],
                                  np.r_[1:4, 0, np.array([7, 8])])
    np.testing.assert_array_equal(jnp.r_["0,2", np.array([1, 2]), np.array([3, 4])],
                                  np.r_["0,2", [1, 2], [3, 4]])
    np.testing.assert_array_equal(jnp.r_["-1,2,0", np.array([1, 2]), np.array([3, 4])],
                                  np.r_["-1,2,0", [1, 2], [3, 4]])
    np.testing.assert_array_equal(jnp.c_[np.array([1, 2]), np.array([3, 4])],
                                  np.c_[[1, 2], [3, 4]])
    np.testing.assert_array_equal(jnp.c_[np.ones((2, 2)), np.zeros(2)],
                                  np.c_[np.ones((2, 2)), np.zeros(2)])


def test_buffers_files_printing(tmp_path):
    np.testing.assert_array_equal(jnp.frombuffer(b"\x01\x02", dtype=np.uint8), [1, 2])
    np.testing.assert_array_equal(jnp.fromstring("1 2 3", dtype=np.int32, sep=" "),
                                  [1, 2, 3])
    with pytest.raises(NotImplementedError, match="non-pure"):
        jnp.fromiter(iter([1, 2]))
    with pytest.raises(NotImplementedError, match="non-pure"):
        jnp.fromfile("x")
    buffer = io.BytesIO()
    jnp.save(buffer, jnp.arange(3.0))
    buffer.seek(0)
    loaded = jnp.load(buffer)
    assert isinstance(loaded, xjax.Array)
    np.testing.assert_array_equal(loaded, [0.0, 1.0, 2.0])
    jnp.savez(tmp_path / "a.npz", x=jnp.ones(2))
    np.testing.assert_array_equal(np.load(tmp_path / "a.npz")["x"], [1.0, 1.0])
    assert jnp.array_repr(jnp.ones(2)) == "Array([1., 1.], dtype=float32)"
    assert jnp.array_str(jnp.ones(2)) == "[1. 1.]"
    assert jnp.ComplexWarning is np.exceptions.ComplexWarning


def test_load_reads_bfloat16_saved_as_two_byte_void():
    # NumPy saves bfloat16 with descr '|V2'; JAX's load views it as bfloat16 again.
    buffer = io.BytesIO()
    jnp.save(buffer, jnp.array([1.5, -2.0], dtype=jnp.bfloat16))
    buffer.seek(0)
    assert np.load(buffer).dtype == np.dtype("V2")
    buffer.seek(0)
    loaded = jnp.load(buffer)
    assert loaded.dtype == jnp.bfloat16
    np.testing.assert_array_equal(np.asarray(loaded, np.float32), [1.5, -2.0])


def test_compress_size_beyond_the_axis_raises_as_jax():
    cond = np.array([True, False, True])
    with pytest.raises(ValueError, match="size must be positive and not greater"):
        jnp.compress(cond, jnp.arange(3), size=4)
    with pytest.raises(ValueError, match="got size=-1"):
        jnp.compress(cond, jnp.arange(3), size=-1)
    np.testing.assert_array_equal(jnp.compress(cond, jnp.arange(3), size=3), [0, 2, 0])


def test_isin_methods_agree_and_unknown_methods_raise():
    element, tests = np.array([[1, 2, 3], [4, 5, 6]]), np.array([2, 5, 9])
    expected = np.isin(element, tests)
    for method in ("auto", "compare_all", "binary_search", "sort"):
        np.testing.assert_array_equal(jnp.isin(element, tests, method=method), expected)
    with pytest.raises(ValueError, match="method='bogus' is not implemented"):
        jnp.isin(element, tests, method="bogus")


def test_put_casts_like_at_set_with_jax_future_warning():
    with pytest.warns(FutureWarning, match="cannot safely cast"):
        out = jnp.put(jnp.zeros(4, dtype=jnp.int32), np.array([1, 2]), np.array([1.7, 2.2]),
                      inplace=False)
    np.testing.assert_array_equal(out, [0, 1, 2, 0])
