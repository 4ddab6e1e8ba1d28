"""vmap: axes specifications, composition with jit and grad, collectives, errors."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import grad, jit, lax, vmap


def test_seed_apply_matrix():
    rng = np.random.default_rng(0)
    mat = jnp.asarray(rng.standard_normal((150, 100)).astype(np.float32))
    batched_x = jnp.asarray(rng.standard_normal((10, 100)).astype(np.float32))

    def apply_matrix(v):
        return jnp.dot(mat, v)

    naive = jnp.stack([apply_matrix(v) for v in batched_x])
    manual = jit(lambda vs: jnp.dot(vs, mat.T))(batched_x)
    auto = jit(lambda vs: vmap(apply_matrix)(vs))(batched_x)
    np.testing.assert_allclose(naive, manual, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(auto, manual, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("in_axes", [0, 1, -1, (0, None), (1, 0), (None, -1)])
def test_in_axes_against_a_loop(in_axes):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 3)).astype(np.float32)
    y = rng.standard_normal((3, 3)).astype(np.float32)

    def f(a, b):
        return jnp.sin(a) * b + jnp.sum(a)

    axes = in_axes if isinstance(in_axes, tuple) else (in_axes, in_axes)
    size = 3
    expected = []
    for i in range(size):
        a = x if axes[0] is None else np.take(x, i, axis=axes[0])
        b = y if axes[1] is None else np.take(y, i, axis=axes[1])
        expected.append(f(a, b))
    np.testing.assert_allclose(vmap(f, in_axes=in_axes)(x, y), np.stack(expected), rtol=1e-6)


def test_out_axes_and_pytrees():
    out = vmap(lambda d: {"s": d["a"] + d["b"], "p": d["a"] * 2.0}, out_axes={"s": 1, "p": 0})(
        {"a": jnp.ones((4, 2)), "b": jnp.ones((4, 2))})
    assert out["s"].shape == (2, 4) and out["p"].shape == (4, 2)


def test_axis_size_and_unmapped_outputs():
    out = vmap(lambda: jnp.float32(3.0), axis_size=5, in_axes=())()
    assert out.shape == (5,)


def test_nested_vmap_and_jit_composition():
    x = jnp.arange(12.0).reshape(3, 4)
    got = vmap(vmap(lambda a: a * 2.0 + 1.0))(x)
    np.testing.assert_allclose(got, np.arange(12.0).reshape(3, 4) * 2 + 1)
    np.testing.assert_allclose(vmap(jit(jnp.sin))(x), np.sin(np.arange(12.0).reshape(3, 4)),
                               rtol=1e-6)
    np.testing.assert_allclose(jit(vmap(jnp.sin))(x), np.sin(np.arange(12.0).reshape(3, 4)),
                               rtol=1e-6)


def test_per_example_gradients_equal_a_loop():
    w = jnp.array([0.5, -1.0, 2.0])
    xs = jnp.asarray(np.random.default_rng(2).standard_normal((5, 3)).astype(np.float32))

    def loss(w, x):
        return jnp.tanh(jnp.dot(w, x)) ** 2

    per_example = vmap(grad(loss), in_axes=(None, 0))(w, xs)
    looped = np.stack([grad(loss)(w, x) for x in xs])
    np.testing.assert_allclose(per_example, looped, rtol=1e-5, atol=1e-6)
    total = grad(lambda w: jnp.sum(vmap(loss, in_axes=(None, 0))(w, xs)))(w)
    np.testing.assert_allclose(total, looped.sum(0), rtol=1e-5, atol=1e-6)


def test_collectives():
    x = jnp.array([1.0, 3.0])
    np.testing.assert_allclose(vmap(lambda v: v / lax.psum(v, "i"), axis_name="i")(x),
                               [0.25, 0.75])
    np.testing.assert_allclose(vmap(lambda v: lax.pmean(v, "i"), axis_name="i")(x), [2.0, 2.0])
    np.testing.assert_allclose(vmap(lambda v: lax.pmax(v, "i"), axis_name="i")(x), [3.0, 3.0])
    np.testing.assert_allclose(vmap(lambda v: lax.pmin(v, "i"), axis_name="i")(x), [1.0, 1.0])
    assert vmap(lambda v: lax.axis_index("i"), axis_name="i")(x).tolist() == [0, 1]
    gathered = vmap(lambda v: lax.all_gather(v, "i"), axis_name="i")(x)
    np.testing.assert_allclose(gathered, [[1.0, 3.0], [1.0, 3.0]])
    with pytest.raises(NameError, match="unbound axis name"):
        lax.psum(x, "i")


def test_errors():
    with pytest.raises(ValueError, match="inconsistent sizes"):
        vmap(lambda a, b: a + b)(jnp.ones(2), jnp.ones(3))
    with pytest.raises(ValueError, match=r"tuple of entries .* len\(in_axes\)=1, len\(args\)=2"):
        vmap(lambda a, b: a + b, in_axes=(0,))(jnp.ones(2), jnp.ones(2))
    with pytest.raises(ValueError, match="axis 2"):
        vmap(lambda a: a, in_axes=2)(jnp.ones((2, 2)))
    with pytest.raises(ValueError, match="at least one non-None"):
        vmap(lambda a: a, in_axes=None)(jnp.ones(2))


def test_top_level_list_in_axes_is_a_tuple():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    y = np.arange(3.0, dtype=np.float32)
    np.testing.assert_array_equal(vmap(lambda a, b: a + b, in_axes=[None, 0])(y, x), x + y)
    np.testing.assert_array_equal(vmap(lambda a, b: a + b, in_axes=[None, 1])(y[:2], x),
                                  (x + y[:2, None]).T)
    np.testing.assert_array_equal(vmap(lambda a, b: a + b[0], in_axes=[None, [0]])(y, [x]),
                                  x + y)
    with pytest.raises(ValueError, match=r"len\(in_axes\)=1, len\(args\)=2"):
        vmap(lambda a, b: a + b, in_axes=[0])(x, x)
    with pytest.raises(TypeError, match="tuple of entries"):
        vmap(lambda a, b: a + b, in_axes={"a": 0})(x, x)
    with pytest.raises(ValueError, match="out_axes specification must be a tree prefix"):
        vmap(lambda a: (a, a), out_axes=[0, 1])(x)


def test_unmapped_arguments_reach_the_function_as_they_are():
    class Config:
        scale = 2.0

    x = np.arange(3.0, dtype=np.float32)
    seen = []

    def f(cfg, opts, v):
        seen.append((type(cfg), type(opts["name"]), type(opts["n"])))
        return v * cfg.scale + len(opts["name"]) + opts["n"]

    opts = {"name": "abc", "n": 1}
    np.testing.assert_array_equal(vmap(f, in_axes=(None, None, 0))(Config(), opts, x),
                                  x * 2 + 4)
    assert seen == [(Config, str, int)]
    np.testing.assert_array_equal(vmap(lambda t, v: v.astype(t), in_axes=(None, 0))(
        jnp.int32, x), [0, 1, 2])
    grads = grad(lambda v: vmap(f, in_axes=(None, None, 0))(Config(), opts, v).sum())(x)
    np.testing.assert_array_equal(grads, [2.0, 2.0, 2.0])
    with pytest.raises(TypeError, match="Argument 'ab' of type <class 'str'> is not a valid"):
        vmap(lambda s, v: v, in_axes=(0, 0))("ab", x)
    with pytest.raises(TypeError, match="not a valid JAX type"):
        vmap(lambda o, v: (v, o), in_axes=(None, 0))(Config(), x)


def test_shape_errors_under_vmap_name_the_unbatched_shapes():
    """As in JAX, a per-example type error reports the shapes the user wrote, not the
    batched ones."""
    with pytest.raises(TypeError, match=r"\(3, 3\), \(4, 4\)"):
        xjax.vmap(lambda a: a[:, :3] + jnp.eye(4), in_axes=1)(jnp.ones((3, 4, 5)))


def test_vmap_rejects_outputs_that_are_not_jax_types():
    with pytest.raises(TypeError, match="Output from batched function 'hi' with type "
                                        "<class 'str'> is not a valid JAX type"):
        xjax.vmap(lambda x: (x, "hi"))(xjax.numpy.ones(2))


def test_vmap_of_jit_keeps_unbatched_outputs_unbatched():
    """A psum over the vmapped name inside a jit is the same for every instance, so
    out_axes=None accepts it, as in JAX."""
    f = xjax.jit(lambda a: xjax.lax.psum(a, "i"))
    out = xjax.vmap(f, axis_name="i", out_axes=None)(jnp.arange(4.0))
    np.testing.assert_array_equal(out, 6.0)
    mixed = xjax.vmap(xjax.jit(lambda a: (a * 2, 3.0)))(jnp.arange(4.0))
    np.testing.assert_array_equal(mixed[1], [3.0] * 4)


def test_inconsistent_sizes_error_names_arguments_as_jax():
    message = ("vmap got inconsistent sizes for array axes to be mapped:\n"
               "  * one axis had size 2: axis 0 of argument a['u'] of type float32[2];\n"
               "  * one axis had size 3: axis 0 of kwargs['b'] of type float32[3]")
    with pytest.raises(ValueError) as info:
        vmap(lambda a, b: a["u"] + b)({"u": jnp.ones(2)}, b=jnp.ones(3))
    assert str(info.value) == message
    with pytest.raises(ValueError, match=r"argument x\[1\] of type float32\[3\]$"):
        vmap(lambda x: x[0] + x[1])((jnp.ones(2), jnp.ones(3)))


def test_out_axes_out_of_bounds_raise_value_error_as_jax():
    for out_axis in (1, -2):
        with pytest.raises(ValueError, match=f"axis {out_axis} is out of bounds for array of "
                                             "dimension 1"):
            vmap(lambda x: x * 2, out_axes=out_axis)(jnp.arange(2.0))
    assert vmap(lambda x: x * 2, out_axes=1)(jnp.ones((2, 3))).shape == (3, 2)
    assert vmap(lambda x: x * 2, out_axes=-2)(jnp.ones((2, 3))).shape == (2, 3)


def test_transforming_a_callable_whose_name_is_not_a_string():
    # Equinox modules can carry a non-string __name__; JAX's wrappers tolerate it.
    class Weird:
        __name__ = 3

        def __call__(self, x):
            return x * 2

    weird = Weird()
    np.testing.assert_array_equal(xjax.vmap(weird)(np.arange(3.0)), np.arange(3.0) * 2)
    assert xjax.vmap(weird).__wrapped__ is weird
    assert float(xjax.grad(weird)(1.0)) == 2.0
    assert float(xjax.jit(weird)(1.0)) == 2.0


def test_transformed_callables_carry_the_callables_attributes():
    # As JAX's wraps: Equinox reads a vmapped module's fields through the vmapped function.
    class Module:
        def __init__(self):
            self.state_index = 7
            self._fun = "a field named as jit's own attribute"

        def __call__(self, x):
            return x + 1

    module = Module()
    for transform in (xjax.vmap, xjax.grad, xjax.jit, xjax.jacfwd):
        assert transform(module).state_index == 7
    assert float(xjax.jit(module)(1.0)) == 2.0  # jit's own attributes win


def test_a_batched_output_with_out_axes_none_is_named_by_its_path():
    cases = [(lambda x: {"broadcast": x, "a": 1}, {"broadcast": None, "a": None},
              r"at vmap out_axes\['broadcast'\], got axis spec None but output was batched "
              r"on axis 1"),
             (lambda x: x, None, r"at vmap out_axes, got axis spec None"),
             (lambda x: (x, [x.T]), (0, [None]), r"at vmap out_axes\[1\]\[0\], .* on axis 1")]
    for f, out_axes, message in cases:
        with pytest.raises(ValueError, match=message):
            xjax.vmap(f, in_axes=1, out_axes=out_axes)(jnp.ones((2, 3)))
