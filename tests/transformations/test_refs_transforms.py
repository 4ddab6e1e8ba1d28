"""Refs as arguments of vmap, jvp, linearize, vjp and grad (against NumPy and the derivatives
written out), JAX's errors for writes under vmap and derivatives with respect to Refs, and
``jnp`` array indexing with ``ds`` (against NumPy slicing and clamping)."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax


# -- Refs as arguments of vmap, jvp, linearize, vjp, grad -------------------------------------

@pytest.mark.parametrize("axis", [0, 1, -1])
def test_vmap_writes_mapped_axis_of_ref_argument(axis):
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    r = xjax.new_ref(x)

    def f(ref):
        ref[...] = ref[...] * 2 + 1
        ref[0] += 10.0

    assert xjax.vmap(f, in_axes=axis)(r) is None
    expected = np.moveaxis(np.moveaxis(x, axis, 0) * 2 + 1, 0, axis)
    np.moveaxis(expected, axis, 0)[:, 0] += 10
    np.testing.assert_array_equal(np.asarray(r[...]), expected)


def test_vmap_ref_argument_with_batched_values_and_indices():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    r = xjax.new_ref(x)
    seen = []

    def f(ref, i, v):
        seen.append((str(xjax.typeof(ref)), ref.shape, len(ref)))
        ref[i] = v
        xjax.ref.addupdate(ref, 0, v)
        return ref[...].sum() * v

    out = xjax.vmap(f, in_axes=(0, 0, 0))(r, jnp.asarray([1, 2]), jnp.asarray([5.0, 7.0]))
    expected = x.copy()
    for b, (i, v) in enumerate([(1, 5.0), (2, 7.0)]):
        expected[b, i] = v
        expected[b, 0] += v
    np.testing.assert_array_equal(np.asarray(r[...]), expected)
    np.testing.assert_allclose(np.asarray(out), expected.sum(1) * [5.0, 7.0])
    assert seen == [("Ref{float32[3]}", (3,), 3)]


def test_vmap_ref_argument_through_jit_loops_and_nesting():
    x = np.arange(12.0, dtype=np.float32).reshape(2, 2, 3)

    def body_loop(ref):
        def body(i, c):
            ref[i] += c
            return c + 1.0
        lax.fori_loop(0, 3, body, 1.0)

    r = xjax.new_ref(x[0])
    xjax.vmap(body_loop)(r)
    np.testing.assert_array_equal(np.asarray(r[...]), x[0] + [1.0, 2.0, 3.0])
    r = xjax.new_ref(x)
    xjax.vmap(xjax.vmap(xjax.jit(lambda ref: ref.__setitem__(..., ref[...] * 3))))(r)
    np.testing.assert_array_equal(np.asarray(r[...]), x * 3)
    r = xjax.new_ref(x[0])
    xjax.jit(xjax.vmap(lambda ref, v: ref.__setitem__(..., ref[...] + v)))(r, jnp.ones(2))
    np.testing.assert_array_equal(np.asarray(r[...]), x[0] + 1)

    @xjax.jit
    def closing():  # a Ref closed over by jit, passed to vmap inside
        xjax.vmap(lambda ref: ref.__setitem__(0, -1.0), in_axes=1)(r)
    closing()
    np.testing.assert_array_equal(np.asarray(r[...])[0], -np.ones(3))


def test_vmap_returned_refs():
    r = xjax.new_ref(jnp.zeros((2, 3)))
    out, one = xjax.vmap(lambda ref: (ref, 1.0))(r)
    assert out is r and np.asarray(one).tolist() == [1.0, 1.0]
    made = xjax.vmap(lambda v: xjax.new_ref(v * 2))(jnp.ones((2, 3)))
    assert isinstance(made, xjax.Ref)
    np.testing.assert_array_equal(np.asarray(made[...]), np.full((2, 3), 2.0))


def test_vmap_ref_errors():
    r = xjax.new_ref(jnp.zeros((2, 3)))
    with pytest.raises(ValueError, match="appeared at both a and b"):
        xjax.vmap(lambda a, b: None)(r, r)
    with pytest.raises(ValueError, match=r"axis 0 of .* of type Ref\{float32\[2,3\]\}"):
        xjax.vmap(lambda a, y: None)(r, jnp.ones(3))
    unmapped = xjax.vmap(lambda ref, x: ref[0, 0] + x, in_axes=(None, 0))
    assert np.asarray(unmapped(r, jnp.ones(2))).tolist() == [1.0, 1.0]
    write_unmapped = xjax.vmap(lambda ref, x: ref.__setitem__(0, jnp.ones(3)), in_axes=(None, 0))
    with pytest.raises(Exception, match="set/swap operation with vmapped value on an unbatched"):
        write_unmapped(r, jnp.ones(2))
    with pytest.raises(ValueError, match="Invalid shape for `swap`"):
        xjax.vmap(lambda ref: ref.__setitem__(..., 1.0))(r)
    closed = xjax.new_ref(jnp.zeros(3))
    with pytest.raises(Exception, match="set/swap operation with vmapped value on an unbatched"):
        xjax.vmap(lambda x: closed.__setitem__(..., jnp.ones(3)))(jnp.ones(2))  # unbatched too
    with pytest.raises(Exception, match="an addupdate operation with vmapped value"):
        xjax.vmap(lambda x: xjax.ref.addupdate(closed, ..., x))(jnp.ones((2, 3)))
    assert np.asarray(closed[...]).tolist() == [0, 0, 0]


def _scale(ref, x):
    ref[...] = ref[...] * x
    return (ref[...] * x).sum()


def test_jvp_ref_primal_writes_value_and_tangent_refs():
    v, t = np.array([1.0, 2.0, 3.0], np.float32), np.array([0.5, -1.0, 2.0], np.float32)
    x, dx = 2.0, 0.25
    r, tr = xjax.new_ref(jnp.asarray(v)), xjax.new_ref(jnp.asarray(t))
    out, out_dot = xjax.jvp(_scale, (r, x), (tr, dx))
    np.testing.assert_allclose(float(out), (v * x * x).sum(), rtol=1e-6)
    np.testing.assert_allclose(float(out_dot), (t * x * x + 2 * v * x * dx).sum(), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(r[...]), v * x, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(tr[...]), t * x + v * dx, rtol=1e-6)
    # a constant write gives the tangent Ref zeros there
    r, tr = xjax.new_ref(jnp.asarray(v)), xjax.new_ref(jnp.asarray(t))
    xjax.jvp(lambda ref: ref.__setitem__(1, 7.0), (r,), (tr,))
    np.testing.assert_array_equal(np.asarray(tr[...]), [t[0], 0.0, t[2]])
    with pytest.raises(ValueError, match=r"`get` must be called on `Ref` types: float32\[3\]"):
        xjax.jvp(_scale, (xjax.new_ref(jnp.asarray(v)), x), (jnp.ones(3), dx))
    with pytest.raises(TypeError, match="mutable array reference"):
        xjax.jvp(lambda a: a.sum(), (jnp.ones(3),), (xjax.new_ref(jnp.ones(3)),))


def test_linearize_ref_primal():
    v = np.array([1.0, 2.0, 3.0], np.float32)
    r = xjax.new_ref(jnp.asarray(v))
    out, f_jvp = xjax.linearize(lambda ref: _scale(ref, 2.0), r)
    assert float(out) == (v * 4).sum()
    np.testing.assert_array_equal(np.asarray(r[...]), v * 2)  # written once, by linearize
    tr = xjax.new_ref(jnp.ones(3))
    assert float(f_jvp(tr)) == 12.0
    np.testing.assert_array_equal(np.asarray(tr[...]), [2.0, 2.0, 2.0])
    with pytest.raises(ValueError, match=r"Got tangent aval float32\[3\] for primal aval "
                                         r"Ref\{float32\[3\]\}"):
        f_jvp(jnp.ones(3))
    _, g_jvp = xjax.linearize(lambda a: a * 2, jnp.ones(3))
    with pytest.raises(ValueError, match=r"Got tangent aval float32\[2\] for primal aval "
                                         r"float32\[3\] but expected float32\[3\]"):
        g_jvp(jnp.ones(2))


def test_vjp_and_grad_with_respect_to_ref_raise_after_forward():
    v = np.array([1.0, 2.0, 3.0], np.float32)
    r = xjax.new_ref(jnp.asarray(v))
    out, f_vjp = xjax.vjp(_scale, r, 2.0)
    assert float(out) == (v * 4).sum()
    np.testing.assert_array_equal(np.asarray(r[...]), v * 2)
    with pytest.raises(ValueError, match=r"Expected cotangent type Ref\{float32\[3\]\} but got "
                                         r"float32\[3\]"):
        f_vjp(1.0)
    with pytest.raises(ValueError, match="Expected cotangent type"):
        xjax.grad(lambda ref: ref[...].sum())(r)
    with pytest.raises(ValueError, match="Expected cotangent type"):
        xjax.jacrev(lambda ref: ref[...])(r)
    with pytest.raises(ValueError, match="must be called on `Ref` types"):
        xjax.jacfwd(lambda ref: ref[...])(r)
    # a Ref that is not differentiated may be read, and written with undifferentiated values
    g = xjax.grad(lambda x, ref: (ref.__setitem__(..., ref[...] + 1), (ref[...] * x).sum())[1])
    assert float(g(2.0, r)) == float((v * 2 + 1).sum())


# -- jnp array indexing with ds ---------------------------------------------------------------

def test_array_indexing_with_ds_matches_numpy_slices():
    x = np.arange(20.0, dtype=np.float32).reshape(4, 5)
    a = jnp.asarray(x)
    ds = xjax.ds
    cases = [(ds(1, 2), x[1:3]), (ds(2), x[:2]), (ds(None), x), ((1, ds(1, 3)), x[1, 1:4]),
             ((ds(1, 2), ds(3, 2)), x[1:3, 3:5]), (ds(0, 2, 2), x[0:4:2]),
             ((Ellipsis, ds(0, 3, 2)), x[..., 0:5:2]), ((None, ds(1, 2)), x[None, 1:3]),
             ((np.array([0, 2]), ds(1, 2)), x[np.array([0, 2]), 1:3]),
             ((ds(1, 2), np.array([0, 3])), x[1:3, np.array([0, 3])]),
             ((np.array([True, False, True, False]), ds(1, 2)), x[[0, 2], 1:3]),
             (ds(1, 0), x[1:1])]
    for idx, expected in cases:
        np.testing.assert_array_equal(np.asarray(a[idx]), expected)
        np.testing.assert_array_equal(np.asarray(a.at[idx].get()), expected)
    # out-of-range windows clamp (a negative start counts from the end), strided reads clamp
    # each position
    np.testing.assert_array_equal(np.asarray(a[ds(3, 2)]), x[2:4])
    np.testing.assert_array_equal(np.asarray(a[ds(-1, 2)]), x[2:4])
    np.testing.assert_array_equal(np.asarray(a[:, ds(3, 2, 3)]), x[:, [3, 4]])
    with pytest.raises(TypeError, match="slice_sizes must be less than or equal"):
        a[ds(0, 6)]
    with pytest.raises(IndexError, match="Too many indices"):
        jnp.float32(1)[ds(0, 1)]


def test_array_indexing_with_traced_ds_start():
    x = np.arange(20.0, dtype=np.float32).reshape(4, 5)
    take = xjax.jit(lambda a, i: (a[xjax.ds(i, 2)], a[i, xjax.ds(i, 2)], a[xjax.ds(i, 2, 2)]))
    for i in range(-2, 5):
        window, row, strided = take(jnp.asarray(x), i)
        first = min(max(i + 4 if i < 0 else i, 0), 2)
        np.testing.assert_array_equal(np.asarray(window), x[first:first + 2])
        r = min(max(i + 4 if i < 0 else i, 0), 3)
        c = min(max(i + 5 if i < 0 else i, 0), 3)
        np.testing.assert_array_equal(np.asarray(row), x[r, c:c + 2])
        np.testing.assert_array_equal(np.asarray(strided), x[np.clip([i, i + 2], 0, 3)])
    batched = xjax.vmap(lambda i: jnp.asarray(x)[xjax.ds(i, 2)])(jnp.asarray([0, 3]))
    np.testing.assert_array_equal(np.asarray(batched), np.stack([x[0:2], x[2:4]]))
    g = xjax.grad(lambda a: a[xjax.ds(1, 2)].sum())(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(g), np.isin(np.arange(4), [1, 2])[:, None]
                                  * np.ones((4, 5)))
    with pytest.raises(TypeError, match="concrete values of integer type"):
        xjax.jit(lambda a, n: a[xjax.ds(0, n)])(jnp.asarray(x), 2)


def test_array_updates_with_ds():
    x = np.arange(8.0, dtype=np.float32)
    a = jnp.asarray(x)
    ds = xjax.ds
    expected = x.copy()
    expected[1:3] = 0
    np.testing.assert_array_equal(np.asarray(a.at[ds(1, 2)].set(0.0)), expected)
    expected = x.copy()
    expected[0:6:3] += 1
    np.testing.assert_array_equal(np.asarray(a.at[ds(0, 2, 3)].add(1.0)), expected)
    # a window that does not fit is dropped whole; strided positions one by one
    np.testing.assert_array_equal(np.asarray(a.at[ds(7, 2)].set(0.0)), x)
    np.testing.assert_array_equal(np.asarray(a.at[ds(-1, 2)].set(0.0)), x)
    expected = x.copy()
    expected[5] = -1
    np.testing.assert_array_equal(np.asarray(a.at[ds(5, 2, 3)].set(-1.0)), expected)
    np.testing.assert_array_equal(np.asarray(a.at[ds(7, 2)].get(mode="fill", fill_value=-1)),
                                  [-1, -1])
    np.testing.assert_array_equal(np.asarray(a.at[ds(5, 2, 3)].get(mode="fill", fill_value=-1)),
                                  [5, -1])
    update = xjax.jit(lambda a, i: a.at[ds(i, 3)].add(1.0))
    for i in range(0, 7):
        expected = x.copy()
        if i + 3 <= 8:
            expected[i:i + 3] += 1
        np.testing.assert_array_equal(np.asarray(update(a, i)), expected)


# -- against JAX -----------------------------------------------------------------------------

def test_transformations_of_ref_arguments_and_ds_indexing_match_jax():
    jax = pytest.importorskip("jax")
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)

    def run(api, np_):
        r = api.new_ref(np_.asarray(x))

        def f(ref, v):
            ref[1] = ref[1] * v
            return ref[...].sum()

        out = api.vmap(f, in_axes=(1, 0))(r, np_.arange(4.0))
        mapped = np.asarray(r[...])
        r2, t2 = api.new_ref(np_.asarray(x[0])), api.new_ref(np_.ones(4, np_.float32))
        primal, tangent = api.jvp(lambda ref: f(ref, 3.0), (r2,), (t2,))
        a = np_.asarray(x)
        i = 2
        reads = api.jit(lambda a, i: (a[api.ds(i, 2)], a[:, api.ds(i, 2, 2)],
                                      a.at[api.ds(i, 2)].set(0.0)))(a, i)
        errors = []
        for bad in (lambda: api.grad(lambda ref: ref[...].sum())(api.new_ref(np_.ones(2))),
                    lambda: api.vmap(lambda v: r.__setitem__(0, np_.ones(4)))(np_.ones(2))):
            try:
                bad()
            except Exception as e:  # noqa: BLE001  (comparing the error classes)
                errors.append(type(e).__name__)
        return [out, mapped, primal, tangent, np.asarray(r2[...]), np.asarray(t2[...]),
                *reads], errors

    ours, our_errors = run(xjax, jnp)
    theirs, their_errors = run(jax, jax.numpy)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
    assert our_errors == their_errors == ["ValueError", "Exception"]


def test_duplicate_ref_error_names_keyword_arguments_in_flattening_order():
    # keyword arguments flatten in sorted order; the names must follow it, not call order
    r = xjax.new_ref(jnp.zeros(2))
    for transform in (xjax.jit, xjax.vmap):
        with pytest.raises(ValueError, match="appeared at both b and c"):
            transform(lambda *, b, a, c: None)(b=r, a=jnp.ones(2), c=r)
