"""Buffer donation: jit(..., donate_argnums/donate_argnames) as JAX 0.10 does it."""

import warnings

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp


def _device_array(values, dtype=np.float32):
    """An Array whose value lives in a device buffer (not shared with a NumPy view)."""
    return xjax.device_put(np.asarray(values, dtype))


def _main_signature(text):
    return next(line for line in text.splitlines() if "func.func public @main" in line)


def test_lowering_marks_aliased_argument():
    f = xjax.jit(lambda x, y: (x * 2, y.sum()), donate_argnums=0)
    sig = _main_signature(f.lower(jnp.ones(3), jnp.ones(4)).as_text())
    assert "%arg0: tensor<3xf32> {tf.aliasing_output = 0 : i32}" in sig
    assert "%arg1: tensor<4xf32>)" in sig  # not donated: no attribute


def test_lowering_matches_outputs_in_order():
    f = xjax.jit(lambda a, b: (a.sum(), b + 1, a * 2), donate_argnums=(0, 1))
    sig = _main_signature(f.lower(jnp.ones(3), jnp.ones(3)).as_text())
    # Output 1 (first of type f32[3]) takes the first donated f32[3] input, output 2 the next.
    assert "%arg0: tensor<3xf32> {tf.aliasing_output = 1 : i32}" in sig
    assert "%arg1: tensor<3xf32> {tf.aliasing_output = 2 : i32}" in sig


def test_same_size_other_type_is_a_buffer_donor():
    f = xjax.jit(lambda x: x.astype(jnp.int32), donate_argnums=0)
    sig = _main_signature(f.lower(jnp.ones(3)).as_text())
    assert "%arg0: tensor<3xf32> {jax.buffer_donor = true}" in sig
    x = _device_array([1.5, 2.5, 3.5])
    np.testing.assert_array_equal(f(x), [1, 2, 3])
    assert x.is_deleted()


def test_donated_array_is_deleted_and_raises_on_use():
    f = xjax.jit(lambda x: x * 2, donate_argnums=0)
    x = _device_array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(f(x), [2, 4, 6])
    assert x.is_deleted()
    message = "Array has been deleted with shape=float32[3]."
    for use in (lambda: print(x), lambda: np.asarray(x), lambda: x + 1, lambda: f(x),
                lambda: float(x[0]), lambda: x.block_until_ready(), repr):
        with pytest.raises(RuntimeError, match=message.replace("[", r"\[").replace("]", r"\]")):
            use() if use is not repr else repr(x)
    assert x.shape == (3,)  # metadata stays available, as in JAX


def test_donated_result_is_correct_after_reuse():
    f = xjax.jit(lambda x, y: x * y + 1, donate_argnums=0)
    x = _device_array(np.arange(6).reshape(2, 3))
    y = _device_array(np.full((2, 3), 2.0))
    out = f(x, y)
    np.testing.assert_array_equal(out, np.arange(6).reshape(2, 3) * 2 + 1)
    assert x.is_deleted() and not y.is_deleted()
    np.testing.assert_array_equal(y, np.full((2, 3), 2.0))


def test_host_valued_array_is_donated_too():
    f = xjax.jit(lambda x: x + 1, donate_argnums=0)
    x = jnp.arange(3.0)  # eager result: its value is on the host
    np.testing.assert_array_equal(f(x), [1, 2, 3])
    assert x.is_deleted()


def test_numpy_argument_is_copied_not_modified():
    f = xjax.jit(lambda x: x + 1, donate_argnums=0)
    for n in (3, 4096):  # below and above the size NumPy inputs are otherwise aliased at
        a = np.arange(n, dtype=np.float32)
        before = a.copy()
        np.testing.assert_array_equal(f(a), before + 1)
        np.testing.assert_array_equal(a, before)


def test_unusable_donation_warns_and_keeps_the_array():
    f = xjax.jit(lambda x: x.sum(), donate_argnums=0)
    x = _device_array([1.0, 2.0, 3.0])
    with pytest.warns(UserWarning, match=r"Some donated buffers were not usable: float32\[3\]"):
        out = f(x)
    assert float(out) == 6.0
    assert not x.is_deleted()
    np.testing.assert_array_equal(x, [1, 2, 3])


def test_usable_donation_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        xjax.jit(lambda x: x * 3, donate_argnums=0)(_device_array([1.0]))


def test_array_shared_with_numpy_view_is_copied_not_donated():
    f = xjax.jit(lambda x: x * 2, donate_argnums=0)
    x = _device_array([1.0, 2.0, 3.0])
    view = np.asarray(x)
    np.testing.assert_array_equal(f(x), [2, 4, 6])
    assert not x.is_deleted()
    np.testing.assert_array_equal(view, [1, 2, 3])


def test_same_array_twice_is_not_donated():
    f = xjax.jit(lambda x, y: x + y, donate_argnums=0)
    x = _device_array([1.0, 2.0])
    np.testing.assert_array_equal(f(x, x), [2, 4])
    assert not x.is_deleted()


def test_donate_argnames_and_inference_from_argnums():
    def add(a, b):
        return a + b

    by_name = xjax.jit(add, donate_argnames="b")
    a, b = _device_array([1.0]), _device_array([2.0])
    by_name(a, b)  # positional b is donated: argnums inferred from the name
    assert (a.is_deleted(), b.is_deleted()) == (False, True)
    a, b = _device_array([1.0]), _device_array([2.0])
    by_name(a, b=b)
    assert (a.is_deleted(), b.is_deleted()) == (False, True)
    by_num = xjax.jit(add, donate_argnums=1)
    a, b = _device_array([1.0]), _device_array([2.0])
    by_num(a, b=b)  # keyword b is donated: argnames inferred from the position
    assert (a.is_deleted(), b.is_deleted()) == (False, True)


def test_pytree_argument_donates_every_leaf():
    f = xjax.jit(lambda d: {k: v * 2 for k, v in d.items()}, donate_argnums=0)
    d = {"a": _device_array([1.0, 2.0]), "b": _device_array([3, 4], np.int32)}
    out = f(d)
    np.testing.assert_array_equal(out["b"], [6, 8])
    assert [v.is_deleted() for v in d.values()] == [True, True]


def test_static_and_donated_cannot_intersect():
    with pytest.raises(ValueError, match="cannot intersect"):
        xjax.jit(lambda a, n: a * n, static_argnums=1, donate_argnums=1)


def test_donation_is_part_of_the_cache_key():
    def f(x):
        return x * 2

    plain = xjax.jit(f)
    donating = xjax.jit(f, donate_argnums=0)
    x = _device_array([1.0])
    plain(x)
    assert not x.is_deleted()
    donating(x)
    assert x.is_deleted()


def test_delete_and_is_deleted():
    x = _device_array([1.0, 2.0])
    assert not x.is_deleted()
    x.delete()
    x.delete()  # idempotent, as in JAX
    assert x.is_deleted()
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        np.asarray(x)
    y = jnp.ones(2)  # host-valued
    y.delete()
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        y + 1


def test_donation_is_ignored_under_transformations():
    f = xjax.jit(lambda x: x * x, donate_argnums=0)
    x = _device_array([3.0])
    np.testing.assert_allclose(xjax.grad(lambda v: f(v).sum())(x), [6.0])
    assert not x.is_deleted()


# -- the runtime: Executable._set_donated --

_DOUBLE_TEXT = """module @m {
  func.func public @main(%a: tensor<2048xf32> {tf.aliasing_output = 0 : i32})
      -> (tensor<2048xf32>) {
    %0 = "stablehlo.add"(%a, %a) : (tensor<2048xf32>, tensor<2048xf32>) -> tensor<2048xf32>
    return %0 : tensor<2048xf32>
  }
}"""


@pytest.fixture
def doubling():
    exe = xjax._src.runtime.get_client().compile(_DOUBLE_TEXT)
    exe._set_donated([0])
    return exe


def test_runtime_donates_a_device_buffer(doubling):
    buffer = xjax._src.runtime.get_client().buffer_from_numpy(np.ones(2048, np.float32))
    out = doubling.execute([buffer])[0]
    np.testing.assert_array_equal(out.to_numpy(), np.full(2048, 2.0))
    assert buffer.is_deleted()
    with pytest.raises(xjax._src.runtime.XlaRuntimeError, match="deleted"):
        doubling.execute([buffer])


def test_runtime_copies_donated_numpy_values(doubling):
    host = np.ones(2048, np.float32)  # 8 KiB: aliased were it not donated
    out = doubling.execute([host])[0]
    np.testing.assert_array_equal(out.to_numpy(), np.full(2048, 2.0))
    np.testing.assert_array_equal(host, np.ones(2048))


def test_runtime_keeps_a_buffer_a_numpy_view_shares(doubling):
    buffer = xjax._src.runtime.get_client().buffer_from_numpy(np.ones(2048, np.float32))
    view = buffer.to_numpy()
    out = doubling.execute([buffer])[0]
    np.testing.assert_array_equal(out.to_numpy(), np.full(2048, 2.0))
    assert not buffer.is_deleted()
    np.testing.assert_array_equal(view, np.ones(2048))
