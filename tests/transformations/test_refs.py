"""Mutable array references (xjax.ref): eager semantics against NumPy, jit with Refs inside,
as arguments and closed over, control-flow bodies against Python loops, grad/jvp/vmap of
functions using Refs against the same functions written without them, and JAX's errors."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax


def f32(x):
    return np.asarray(x, np.float32)


# -- eager ----------------------------------------------------------------------------------

def test_reads_match_numpy():
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    r = xjax.new_ref(x)
    for idx in [..., (), 1, -1, (1, 2), slice(1, 3), (slice(None), 2), (Ellipsis, 1),
                (slice(0, 3, 2), slice(1, None)), np.array([2, 0]), (1, np.array([3, 0]))]:
        np.testing.assert_array_equal(np.asarray(r[idx]), x[idx])
    np.testing.assert_array_equal(np.asarray(r[xjax.ds(1, 2)]), x[1:3])
    np.testing.assert_array_equal(np.asarray(r[:, xjax.ds(0, 2, 2)]), x[:, 0:3:2])
    np.testing.assert_array_equal(np.asarray(xjax.ref.get(r, (2, slice(1, 3)))), x[2, 1:3])


def test_index_arrays_clamp_after_wrapping():
    x = np.arange(4.0, dtype=np.float32)
    r = xjax.new_ref(x)
    idx = np.array([3, 5, -1])
    np.testing.assert_array_equal(np.asarray(r[jnp.asarray(idx)]),
                                  x[np.clip(np.where(idx < 0, idx + 4, idx), 0, 3)])


def test_writes_match_numpy():
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    cases = [(..., np.full((3, 4), 7.0)), (1, np.ones(4)), ((2, 3), np.float32(5)),
             (slice(0, 2), np.zeros((2, 4))), ((slice(None), slice(1, 4, 2)), np.ones((3, 2))),
             (np.array([0, 2]), -np.ones((2, 4))), ((1, np.array([3, 0])), np.array([8, 9.]))]
    for idx, value in cases:
        r = xjax.new_ref(x)
        r[idx] = jnp.asarray(f32(value))
        expected = x.copy()
        expected[idx] = value
        np.testing.assert_array_equal(np.asarray(r[...]), expected)
    r = xjax.new_ref(x)
    r[xjax.ds(1, 2), 1:3] = jnp.ones((2, 2))
    expected = x.copy()
    expected[1:3, 1:3] = 1
    np.testing.assert_array_equal(np.asarray(xjax.freeze(r)), expected)


def test_inplace_add_and_addupdate_accumulate_repeats():
    x = np.arange(5.0, dtype=np.float32)
    r = xjax.new_ref(x)
    r[...] += 1
    r[1] += 10
    np.testing.assert_array_equal(np.asarray(r[...]), x + 1 + 10 * (np.arange(5) == 1))
    r = xjax.new_ref(x)
    xjax.ref.addupdate(r, jnp.array([1, 1, 3]), jnp.array([10.0, 20.0, 1.0]))
    expected = x.copy()
    np.add.at(expected, [1, 1, 3], [10, 20, 1])
    np.testing.assert_array_equal(np.asarray(r[...]), expected)
    r.addupdate(jnp.ones(5))
    np.testing.assert_array_equal(np.asarray(r[...]), expected + 1)


def test_swap_set_get_return_values():
    r = xjax.new_ref(jnp.arange(5.0))
    assert float(xjax.ref.swap(r, 1, 100.0)) == 1.0
    assert xjax.ref.set(r, 2, 200.0) is None
    assert xjax.ref.addupdate(r, 3, 1000.0) is None
    np.testing.assert_array_equal(np.asarray(xjax.ref.get(r)), [0, 100, 200, 1003, 4])


def test_values_read_earlier_never_change():
    r = xjax.new_ref(jnp.arange(3.0))
    before = r[...]
    row = r[1]
    r[...] = jnp.zeros(3)
    r[1] = 5.0
    np.testing.assert_array_equal(np.asarray(before), [0, 1, 2])
    assert float(row) == 1.0


def test_new_ref_copies_nothing_visible():
    x = jnp.arange(3.0)
    r = xjax.new_ref(x)
    r[0] = 9.0
    np.testing.assert_array_equal(np.asarray(x), [0, 1, 2])


def test_attributes_repr_and_types():
    r = xjax.new_ref(jnp.arange(6, dtype=jnp.int32).reshape(2, 3))
    assert (r.shape, r.dtype, r.ndim, r.size, len(r)) == ((2, 3), np.dtype(np.int32), 2, 6, 2)
    assert repr(xjax.new_ref(jnp.arange(3))) == "Ref([0, 1, 2], dtype=int32)"
    aval = xjax.typeof(r)
    assert isinstance(aval, xjax.ref.AbstractRef)
    assert str(aval) == "Ref{int32[2,3]}"
    assert isinstance(r, xjax.Ref) and not isinstance(r, xjax.Array)
    weak = xjax.new_ref(1.0)
    assert weak[...].weak_type and xjax.typeof(weak).inner_aval.weak_type


def test_freeze_free_empty():
    r = xjax.new_ref(jnp.arange(3))
    r[0] = 7
    np.testing.assert_array_equal(np.asarray(xjax.freeze(r)), [7, 1, 2])
    assert xjax.free_ref(r) == ()
    def fill(x):
        e = xjax.empty_ref(xjax.ShapeDtypeStruct((2,), jnp.float32))
        assert e.shape == (2,) and e.dtype == np.float32
        e[...] = x
        return e[...] * 2
    np.testing.assert_array_equal(np.asarray(xjax.jit(fill)(jnp.ones(2))), [2, 2])
    # as in JAX: only while staged (jit, control-flow bodies), not eagerly or under grad/vmap
    with pytest.raises(NotImplementedError, match="Evaluation rule for 'empty_ref'"):
        fill(jnp.ones(2))
    with pytest.raises(NotImplementedError, match="Evaluation rule for 'empty_ref'"):
        xjax.vmap(fill)(jnp.ones((3, 2)))
    out, _ = lax.scan(lambda c, x: (c + fill(x).sum(), None), 0.0, jnp.ones((3, 2)))
    assert float(out) == 12.0


def test_memory_space_only_inside_jit():
    space = xjax.memory.Space.Device
    with pytest.raises(NotImplementedError, match="memory space only works inside of a `jit`"):
        xjax.new_ref(jnp.ones(2), memory_space=space)

    def f(x):
        r = xjax.new_ref(x, memory_space=space)
        assert str(xjax.typeof(r)) == "Ref<MemorySpace.Device>{float32[2]}"
        r[...] += 1.0
        return r[...]
    np.testing.assert_array_equal(np.asarray(xjax.jit(f)(jnp.ones(2))), [2, 2])


def test_ds():
    s = xjax.ds(1, 3)
    assert (s.start, s.size, s.stride) == (1, 3, 1)
    assert repr(s) == "Slice(start=1, size=3, stride=1)"
    assert xjax.ds(4).start == 0 and xjax.ds(4).size == 4
    assert xjax.ds(None) == slice(None)


# -- errors ----------------------------------------------------------------------------------

def test_static_out_of_range_raises_value_error():
    r = xjax.new_ref(jnp.arange(5.0))
    with pytest.raises(ValueError, match="Out of bound indexer: idx=7, dim=5"):
        r[7]
    with pytest.raises(ValueError, match="Out of bound indexer"):
        r[-6] = 1.0
    with pytest.raises(ValueError, match="Out of bound slice"):
        r[xjax.ds(4, 2)]
    with pytest.raises(ValueError, match="step >= 1"):
        r[::-1]


def test_write_shape_and_dtype_must_match_exactly():
    r = xjax.new_ref(jnp.arange(5.0))
    with pytest.raises(ValueError, match=r"Invalid shape for `swap`.*Expected shape: \(2,\)"):
        r[1:3] = 7.0  # no broadcasting
    with pytest.raises(ValueError, match="Invalid dtype for `swap`"):
        r[...] = jnp.arange(5)
    with pytest.raises(ValueError, match="Invalid shape for `addupdate`"):
        r.addupdate(jnp.ones(4))
    with pytest.raises(ValueError, match="Invalid dtype for `swap`"):
        xjax.new_ref(1.0)[...] = 3  # a Python int is int32


def test_misuse_errors():
    with pytest.raises(xjax.errors.NonConcreteBooleanIndexError):
        xjax.new_ref(jnp.arange(3.0))[jnp.array([True, False, True])]
    with pytest.raises(TypeError, match="len"):
        bool(xjax.new_ref(1.0))
    with pytest.raises(ValueError, match="Can only call `ref_get` on a `Ref`"):
        xjax.ref.get(jnp.ones(3))
    with pytest.raises(TypeError, match="new_ref"):
        xjax.new_ref([1.0, 2.0])
    with pytest.raises(NotImplementedError):
        xjax.new_ref(1.0).at
    with pytest.raises(TypeError):
        xjax.new_ref(1.0) + 1


# -- jit -------------------------------------------------------------------------------------

def test_jit_ref_created_inside():
    @xjax.jit
    def f(x):
        r = xjax.new_ref(x)
        r[...] += 1
        r[0] = 5.0
        return r[...] * 2

    x = np.arange(3.0, dtype=np.float32)
    expected = (x + 1) * 2
    expected[0] = 10
    np.testing.assert_array_equal(np.asarray(f(jnp.asarray(x))), expected)


def test_jit_ref_argument_is_mutated_and_cached():
    traces = []

    @xjax.jit
    def f(r, x):
        traces.append(1)
        r[...] += x
        return r[0]

    r = xjax.new_ref(jnp.zeros(3))
    assert float(f(r, jnp.ones(3))) == 1.0
    assert float(f(r, jnp.ones(3))) == 2.0
    other = xjax.new_ref(jnp.zeros(3) + 10.0)
    assert float(f(other, jnp.ones(3))) == 11.0
    assert len(traces) == 1
    np.testing.assert_array_equal(np.asarray(r[...]), [2, 2, 2])


def test_jit_closed_over_ref_reads_current_value():
    r = xjax.new_ref(jnp.zeros(3))

    @xjax.jit
    def f(x):
        r[...] += x
        return r[...]

    np.testing.assert_array_equal(np.asarray(f(jnp.ones(3))), [1, 1, 1])
    r[...] = jnp.full(3, 5.0)  # an eager write between calls is seen by the cached executable
    np.testing.assert_array_equal(np.asarray(f(jnp.ones(3))), [6, 6, 6])
    np.testing.assert_array_equal(np.asarray(r[...]), [6, 6, 6])

    g = xjax.jit(lambda: r[1] * 2)  # read only: no write-back
    assert float(g()) == 12.0
    r[1] = 1.0
    assert float(g()) == 2.0


def test_nested_jit_threads_refs():
    @xjax.jit
    def outer(x):
        r = xjax.new_ref(x)

        @xjax.jit
        def bump():
            r[...] += 1

        @xjax.jit
        def bump_arg(ref):
            ref[...] *= 2

        bump()
        bump_arg(r)
        bump()
        return r[...]

    assert float(outer(1.0)) == 5.0


def test_jit_traced_indices_clamp():
    def f(x, i):
        r = xjax.new_ref(x)
        r[i] = -1.0
        return r[...], r[xjax.ds(i, 2)]

    x = np.arange(5.0, dtype=np.float32)
    for i in [0, 2, 4, 9, -1]:
        written, window = xjax.jit(f)(jnp.asarray(x), i)
        k = min(i if i >= 0 else i + 5, 4)
        expected = x.copy()
        expected[k] = -1
        np.testing.assert_array_equal(np.asarray(written), expected)
        start = min(k, 3)
        np.testing.assert_array_equal(np.asarray(window), expected[start:start + 2])


def test_jit_errors():
    with pytest.raises(ValueError, match="mutable array references cannot be returned"):
        xjax.jit(lambda x: xjax.new_ref(x))(1.0)
    r = xjax.new_ref(jnp.zeros(2))
    with pytest.raises(ValueError, match="only one reference to a mutable array"):
        xjax.jit(lambda a, b: a[...] + b[...])(r, r)


def test_make_jaxpr_shows_functional_updates():
    def f(x):
        r = xjax.new_ref(x)
        r[...] += 1.0
        return r[...]

    text = str(xjax.make_jaxpr(f)(jnp.ones(3)))
    assert "add" in text and "Ref" not in text


# -- control flow ----------------------------------------------------------------------------

def _python_accumulate(x, n):
    acc = np.zeros_like(x)
    for i in range(n):
        acc = acc + x * i
    return acc


@pytest.mark.parametrize("jit", [False, True])
def test_fori_loop_accumulates_into_ref(jit):
    def f(x):
        r = xjax.new_ref(jnp.zeros_like(x))

        def body(i, c):
            r[...] += x * i
            return c + 1

        count = lax.fori_loop(0, 5, body, 0)
        return r[...], count

    fn = xjax.jit(f) if jit else f
    x = np.arange(3.0, dtype=np.float32)
    acc, count = fn(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(acc), _python_accumulate(x, 5))
    assert int(count) == 5


def test_fori_loop_traced_bounds_and_eager_ref():
    r = xjax.new_ref(jnp.zeros(3))

    @xjax.jit
    def f(x, n):
        def body(i, c):
            r[i % 3] += x[i % 3] * i
            return c

        lax.fori_loop(0, n, body, 0)
        return r[...]

    x = np.array([1.0, 2.0, 3.0], np.float32)
    expected = np.zeros(3, np.float32)
    for i in range(7):
        expected[i % 3] += x[i % 3] * i
    np.testing.assert_allclose(np.asarray(f(jnp.asarray(x), 7)), expected)
    np.testing.assert_allclose(np.asarray(r[...]), expected)


def test_scan_reads_and_writes_ref():
    def f(xs):
        r = xjax.new_ref(jnp.float32(0))

        def body(c, x):
            r[...] += x
            return c + 1, r[...]

        count, ys = lax.scan(body, 0, xs)
        return r[...], ys, count

    xs = np.arange(1.0, 6.0, dtype=np.float32)
    for fn in (f, xjax.jit(f)):
        total, ys, count = fn(jnp.asarray(xs))
        assert float(total) == xs.sum() and int(count) == 5
        np.testing.assert_allclose(np.asarray(ys), np.cumsum(xs))


def test_nested_loops_write_the_same_ref():
    def f(n):
        r = xjax.new_ref(jnp.zeros((3, 4)))

        def outer(i, c):
            def inner(j, c):
                r[i, j] = (i * 10 + j).astype(jnp.float32)
                return c
            return lax.fori_loop(0, n, inner, c)

        lax.fori_loop(0, 3, outer, 0)
        return r[...]

    expected = (np.arange(3)[:, None] * 10 + np.arange(4)[None, :]).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(f(4)), expected)


def test_while_loop_body_and_cond_use_ref():
    def f(x):
        r = xjax.new_ref(x)

        def cond(c):
            return r[...] < 100.0

        def body(c):
            r[...] *= 2.0
            return c + 1

        steps = lax.while_loop(cond, body, 0)
        return r[...], steps

    value, steps = f(3.0)
    v, n = 3.0, 0
    while v < 100:
        v, n = v * 2, n + 1
    assert float(value) == v and int(steps) == n
    value, steps = xjax.jit(f)(3.0)
    assert float(value) == v and int(steps) == n


@pytest.mark.parametrize("jit", [False, True])
def test_cond_and_switch_write_refs(jit):
    def with_cond(p, x):
        r = xjax.new_ref(x)
        s = xjax.new_ref(jnp.float32(0))

        def true_fun():
            r[...] += 1.0

        def false_fun():
            s[...] = 7.0

        lax.cond(p, true_fun, false_fun)
        return r[...], s[...]

    def with_switch(i, x):
        r = xjax.new_ref(x)
        lax.switch(i, [lambda: r.__setitem__(..., 1.0), lambda: None,
                       lambda: r.addupdate(5.0)])
        return r[...]

    def with_operand(p, x):
        r = xjax.new_ref(x)
        lax.cond(p, lambda ref: ref.addupdate(1.0), lambda ref: None, r)
        return r[...]

    c, s, o = (xjax.jit(g) if jit else g for g in (with_cond, with_switch, with_operand))
    assert [float(v) for v in c(True, jnp.float32(3))] == [4.0, 0.0]
    assert [float(v) for v in c(False, jnp.float32(3))] == [3.0, 7.0]
    assert [float(s(i, jnp.float32(2))) for i in range(3)] == [1.0, 2.0, 7.0]
    assert [float(o(p, jnp.float32(2))) for p in (True, False)] == [3.0, 2.0]


def test_ref_writes_in_unsupported_bodies_raise():
    r = xjax.new_ref(jnp.float32(0))

    @xjax.custom_jvp
    def g(x):
        r[...] = x
        return x

    g.defjvp(lambda p, t: (p[0], t[0]))
    with pytest.raises(NotImplementedError):
        xjax.jit(g)(1.0)
    with pytest.raises(NotImplementedError, match="cond_fun"):
        lax.while_loop(lambda c: r.__setitem__(..., c) or c < 3.0, lambda c: c + 1.0, 0.0)


def test_body_returning_ref_raises():
    with pytest.raises(ValueError, match="mutable array references cannot be returned"):
        lax.cond(True, lambda: xjax.new_ref(1.0), lambda: xjax.new_ref(2.0))


# -- grad, jvp, vmap -------------------------------------------------------------------------

def _with_refs(x):
    r = xjax.new_ref(jnp.zeros_like(x))
    r[...] += x ** 2
    r[...] += jnp.sin(x)
    r[0] = r[0] * 3.0
    return r[...].sum()


def _without_refs(x):
    y = x ** 2 + jnp.sin(x)
    return (y.at[0].set(y[0] * 3.0)).sum()


def test_grad_jvp_vmap_match_refless_function():
    x = jnp.asarray(np.array([0.5, 1.5, -2.0], np.float32))
    np.testing.assert_allclose(np.asarray(xjax.grad(_with_refs)(x)),
                               np.asarray(xjax.grad(_without_refs)(x)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(xjax.jit(xjax.grad(_with_refs))(x)),
                               np.asarray(xjax.grad(_without_refs)(x)), rtol=1e-6)
    t = jnp.ones(3)
    for a, b in zip(xjax.jvp(_with_refs, (x,), (t,)), xjax.jvp(_without_refs, (x,), (t,))):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
    xs = jnp.stack([x, 2 * x])
    np.testing.assert_allclose(np.asarray(xjax.vmap(_with_refs)(xs)),
                               np.asarray(xjax.vmap(_without_refs)(xs)), rtol=1e-6)
    np.testing.assert_allclose(float(xjax.grad(xjax.grad(lambda v: _with_refs(v[None])))(
        jnp.float32(0.7))), float(xjax.grad(xjax.grad(lambda v: _without_refs(v[None])))(
            jnp.float32(0.7))), rtol=1e-5)


def test_grad_through_fori_loop_with_ref():
    def f(x):
        r = xjax.new_ref(jnp.zeros(3))

        def body(i, c):
            r[i] = x[i] * c
            return c * 2.0

        lax.fori_loop(0, 3, body, 1.0)
        return (r[...] ** 2).sum()

    x = np.array([1.0, -2.0, 0.5], np.float32)
    expected = 2 * x * np.array([1, 2, 4]) ** 2
    np.testing.assert_allclose(np.asarray(xjax.grad(f)(jnp.asarray(x))), expected, rtol=1e-6)
    batched = xjax.vmap(xjax.grad(f))(jnp.stack([jnp.asarray(x)] * 2))
    np.testing.assert_allclose(np.asarray(batched), np.stack([expected] * 2), rtol=1e-6)


def test_reading_outer_ref_inside_grad_and_vmap_is_constant():
    r = xjax.new_ref(jnp.float32(5))
    assert float(xjax.grad(lambda x: x * r[...])(3.0)) == 5.0
    np.testing.assert_array_equal(np.asarray(xjax.vmap(lambda x: x * r[...])(jnp.arange(3.0))),
                                  [0, 5, 10])


def test_writing_transformed_values_to_outer_ref_raises():
    r = xjax.new_ref(jnp.float32(0))

    def write(x):
        r[...] += x
        return x * 2

    with pytest.raises(Exception, match="differentiated value on a non-differentiated"):
        xjax.grad(write)(3.0)
    with pytest.raises(Exception, match="vmapped value on an unbatched array reference"):
        xjax.vmap(write)(jnp.arange(3.0))
    assert float(r[...]) == 0.0


def test_refs_as_loop_carries_raise_jax_error():
    r = xjax.new_ref(jnp.zeros(3))

    def body(c, x):
        return c, x

    with pytest.raises(ValueError, match=r"traced for scan returned a mutable array reference "
                                         r"of type Ref\{float32\[3\]\} at output tree path "
                                         r"result\[0\]\[1\](?s:.*)argument c\[1\]"):
        lax.scan(body, (1.0, r), jnp.arange(3.0))
    with pytest.raises(ValueError, match=r"traced for while_body returned a mutable array "
                                         r"reference of type Ref\{float32\[3\]\}, but(?s:.*)"
                                         r"argument c\."):
        lax.while_loop(lambda c: False, lambda c: c, r)
    with pytest.raises(ValueError, match="mutable array references cannot be returned"):
        lax.fori_loop(0, 3, lambda i, c: c, r)
    with pytest.raises(NotImplementedError, match="scanning over a mutable array reference"):
        lax.scan(lambda c, x: (c, None), 0.0, r)


# -- against JAX -----------------------------------------------------------------------------

def test_matches_jax():
    jax = pytest.importorskip("jax")
    jjnp = jax.numpy

    def program(api, np_):
        def f(x, i):
            r = api.new_ref(np_.zeros((4, 3)))

            def body(k, c):
                r[k] = x * k + c
                r[:, api.ds(i, 2)] += 1.0
                return c + r[k, 0]

            c = api.lax.fori_loop(0, 4, body, 0.0)
            return r[...], c
        return api.jit(f)

    x = np.array([1.0, 2.0, 3.0], np.float32)
    ours = program(xjax, jnp)(jnp.asarray(x), 1)
    theirs = program(jax, jjnp)(jjnp.asarray(x), 1)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
    for api, np_ in ((xjax, jnp), (jax, jjnp)):
        r = api.new_ref(np_.arange(5.0))
        with pytest.raises(ValueError):
            r[7]
        with pytest.raises(ValueError):
            r[1:3] = 1.0
        assert repr(r) == "Ref([0., 1., 2., 3., 4.], dtype=float32)"
        assert str(api.typeof(r)) == "Ref{float32[5]}"
