"""JAX's interpreter APIs that Flax, Equinox and TFP use: ``partial_eval.PartialVal``,
``trace_to_jaxpr_nounits`` and ``dce_jaxpr``; ``batching.axis_primitive_batchers``,
``fancy_primitive_batchers``, ``defreducer``, ``broadcast`` and ``register_vmappable``.

References: NumPy values and Python loops over the mapped axis.
"""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import api_util, tree_util
from xjax.core import ShapedArray, eval_jaxpr
from xjax.extend import core
from xjax.extend import linear_util as lu
from xjax.interpreters import batching
from xjax.interpreters import partial_eval as pe

_counter = iter(range(10**6))


def f32(x):
    return np.asarray(x, np.float32)


def unknown_like(x):
    return pe.PartialVal.unknown(ShapedArray(np.shape(x), np.asarray(x).dtype))


# -- PartialVal -------------------------------------------------------------------------------

def test_partial_val_known():
    x = f32([1.0, 2.0])
    pval = pe.PartialVal.known(x)
    assert pval.is_known()
    assert pval.get_known() is x
    assert tuple(pval) == (None, x)
    assert pval.get_aval() == ShapedArray((2,), np.float32)


def test_partial_val_unknown():
    aval = ShapedArray((3, 2), np.int32)
    pval = pe.PartialVal.unknown(aval)
    assert not pval.is_known()
    assert pval.get_known() is None
    assert pval.get_aval() is aval
    assert pval == (aval, None)


def test_partial_val_of_python_scalar_is_weakly_typed():
    assert pe.PartialVal.known(2.0).get_aval() == ShapedArray((), np.float32, True)


# -- trace_to_jaxpr_nounits -------------------------------------------------------------------

def mixed(x, y):
    a = jnp.sin(x)
    return [a, a * y, 3.0, x]


X, Y = f32([0.0, 0.5, 1.0]), f32([2.0, -1.0, 4.0])


def test_known_outputs_are_computed_and_unknown_ones_staged():
    jaxpr, out_pvals, consts = pe.trace_to_jaxpr_nounits(
        lu.wrap_init(mixed), [pe.PartialVal.known(X), unknown_like(Y)])
    assert [p.is_known() for p in out_pvals] == [True, False, True, True]
    np.testing.assert_allclose(out_pvals[0].get_known(), np.sin(X), rtol=1e-6)
    assert out_pvals[2].get_known() == 3.0
    assert out_pvals[3].get_known() is X  # a known input comes back as it is
    assert out_pvals[1].get_aval() == ShapedArray((3,), np.float32)
    # The jaxpr maps the unknown input to the unknown output; its consts are what it reads.
    assert isinstance(consts, tuple) and len(consts) == len(jaxpr.constvars) == 1
    assert len(jaxpr.invars) == 1 and len(jaxpr.outvars) == 1
    (out,) = eval_jaxpr(jaxpr, consts, Y)
    np.testing.assert_allclose(out, np.sin(X) * Y, rtol=1e-6)


def test_instantiate_stages_every_output():
    jaxpr, out_pvals, consts = pe.trace_to_jaxpr_nounits(
        lu.wrap_init(mixed), [pe.PartialVal.known(X), unknown_like(Y)], instantiate=True)
    assert not any(p.is_known() for p in out_pvals)
    assert out_pvals[2].get_aval() == ShapedArray((), np.float32, True)
    outs = eval_jaxpr(jaxpr, consts, Y)
    expected = [np.sin(X), np.sin(X) * Y, 3.0, X]
    for got, want in zip(outs, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_instantiate_per_output():
    jaxpr, out_pvals, consts = pe.trace_to_jaxpr_nounits(
        lu.wrap_init(mixed), [pe.PartialVal.known(X), unknown_like(Y)],
        instantiate=[False, True, False, True])
    assert [p.is_known() for p in out_pvals] == [True, False, True, False]
    got_product, got_x = eval_jaxpr(jaxpr, consts, Y)
    np.testing.assert_allclose(got_product, np.sin(X) * Y, rtol=1e-6)
    np.testing.assert_array_equal(got_x, X)


def test_all_known_inputs_stage_nothing():
    jaxpr, out_pvals, consts = pe.trace_to_jaxpr_nounits(
        lu.wrap_init(mixed), [pe.PartialVal.known(X), pe.PartialVal.known(Y)])
    assert all(p.is_known() for p in out_pvals)
    assert jaxpr.eqns == [] and jaxpr.invars == [] and jaxpr.outvars == []
    assert consts == ()
    np.testing.assert_allclose(out_pvals[1].get_known(), np.sin(X) * Y, rtol=1e-6)


def test_all_unknown_inputs_stage_everything():
    jaxpr, out_pvals, consts = pe.trace_to_jaxpr_nounits(
        lu.wrap_init(lambda x, y: [x * y + 1.0]), [unknown_like(X), unknown_like(Y)])
    assert not out_pvals[0].is_known() and consts == ()
    np.testing.assert_allclose(eval_jaxpr(jaxpr, consts, X, Y)[0], X * Y + 1.0)


def test_flax_style_use_with_debug_info():
    """Flax marks which leaves are known and reads back which outputs are."""
    def f_flat(w, b, x):
        return [w * 2.0, w @ x + b]
    args = (np.ones((2, 3), np.float32), f32([1.0, 2.0]), f32([1.0, 2.0, 3.0]))
    is_unknown = [False, False, True]
    in_pvals = [unknown_like(a) if u else pe.PartialVal.known(a)
                for a, u in zip(args, is_unknown)]
    dbg = api_util.debug_info("test", f_flat, args, {})
    jaxpr, out_pvals, _ = pe.trace_to_jaxpr_nounits(lu.wrap_init(f_flat, debug_info=dbg),
                                                    in_pvals)
    assert [p.is_known() for p in out_pvals] == [True, False]
    np.testing.assert_array_equal(out_pvals[0].get_known(), args[0] * 2.0)
    assert jaxpr.debug_info.arg_names == ["x"]  # the jaxpr's inputs: the unknown ones


def test_unknown_key_array_inputs_and_outputs():
    # Flax's scan over layers traces its body with the rng key as an unknown carry.
    key = xjax.random.key(3)
    f = lambda k, x: [xjax.random.fold_in(k, 7), x * 2.0, xjax.random.uniform(k, (2,))]
    in_pvals = [pe.PartialVal.unknown(xjax.typeof(key)), pe.PartialVal.known(f32(2.0))]
    jaxpr, out_pvals, consts = pe.trace_to_jaxpr_nounits(lu.wrap_init(f), in_pvals)
    assert [p.is_known() for p in out_pvals] == [False, True, False]
    assert out_pvals[0].get_aval() == xjax.typeof(key)
    assert out_pvals[2].get_aval() == ShapedArray((2,), np.float32)
    # the jaxpr maps the key's data to the unknown outputs (the new key's data first)
    folded, sample = eval_jaxpr(jaxpr, consts, xjax.random.key_data(key))
    np.testing.assert_array_equal(folded, xjax.random.key_data(xjax.random.fold_in(key, 7)))
    np.testing.assert_array_equal(sample, xjax.random.uniform(key, (2,)))


def test_known_values_under_jit_stay_known():
    seen = []

    @xjax.jit
    def g(x):
        _, out_pvals, _ = pe.trace_to_jaxpr_nounits(
            lu.wrap_init(mixed), [pe.PartialVal.known(x), unknown_like(Y)])
        seen.append([p.is_known() for p in out_pvals])
        return out_pvals[0].get_known()
    np.testing.assert_allclose(g(X), np.sin(X), rtol=1e-6)
    assert seen == [[True, False, True, True]]


# -- dce_jaxpr --------------------------------------------------------------------------------

def three_outputs():
    return xjax.make_jaxpr(lambda a, b, c: (jnp.sin(a), b * 2.0, a + b))(1.0, 2.0, 3.0).jaxpr


def test_dce_jaxpr_drops_unused_outputs_and_inputs():
    jaxpr, used_inputs = pe.dce_jaxpr(three_outputs(), [False, True, False])
    assert used_inputs == [False, True, False]
    assert len(jaxpr.eqns) == 1 and len(jaxpr.invars) == 1 and len(jaxpr.outvars) == 1
    np.testing.assert_allclose(eval_jaxpr(jaxpr, [], 5.0)[0], 10.0)


def test_dce_jaxpr_instantiate_keeps_inputs():
    jaxpr, used_inputs = pe.dce_jaxpr(three_outputs(), [True, False, False],
                                      instantiate=[False, False, True])
    assert used_inputs == [True, False, True]
    np.testing.assert_allclose(eval_jaxpr(jaxpr, [], 0.5, 7.0)[0], np.sin(0.5), rtol=1e-6)
    _, used_inputs = pe.dce_jaxpr(three_outputs(), [False] * 3, instantiate=True)
    assert used_inputs == [True, True, True]


def test_dce_jaxpr_with_every_output_used():
    jaxpr, used_inputs = pe.dce_jaxpr(three_outputs(), True)
    assert used_inputs == [True, True, False]
    outs = eval_jaxpr(jaxpr, [], 0.5, 2.0)
    np.testing.assert_allclose(outs, [np.sin(0.5), 4.0, 2.5], rtol=1e-6)


# -- batching rule tables ---------------------------------------------------------------------

def elementwise_primitive(base, impl):
    p = core.Primitive(f"{base}_{next(_counter)}")
    p.def_impl(impl)
    p.def_abstract_eval(lambda x, **_: ShapedArray(x.shape, x.dtype))
    return p


def loop(f, xs):
    return np.stack([np.asarray(f(x)) for x in xs])


def test_axis_primitive_batchers_rule_gets_size_and_name():
    """Equinox's convention: ``rule(axis_size, axis_name, trace_type, args, dims)``."""
    p = elementwise_primitive("double", lambda x: np.multiply(x, 2))
    calls = []

    def rule(axis_size, axis_name, trace_type, args, dims, **params):
        calls.append((axis_size, axis_name, trace_type, list(dims)))
        (x,), (d,) = args, dims
        return p.bind(x, **params), d
    batching.axis_primitive_batchers[p] = rule
    xs = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    out = xjax.vmap(lambda v: p.bind(v) + 1.0, axis_name="i")(xs)
    np.testing.assert_array_equal(out, loop(lambda v: v * 2 + 1, xs))
    assert calls == [(2, "i", None, [0])]
    # As in JAX, the rule runs even when no operand is mapped.
    out = xjax.vmap(lambda v, w: p.bind(w) + v, in_axes=(0, None))(xs, xs[0])
    np.testing.assert_array_equal(out, loop(lambda v: v + xs[0] * 2, xs))
    assert calls[-1] == (2, None, None, [None])


def test_fancy_primitive_batchers_rule_gets_axis_data():
    p = elementwise_primitive("triple", lambda x: np.multiply(x, 3))
    seen = []

    def rule(axis_data, args, dims, **params):
        seen.append(axis_data)
        return p.bind(*args, **params), dims[0]
    batching.fancy_primitive_batchers[p] = rule
    xs = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    out = xjax.vmap(p.bind, in_axes=1, axis_name="k")(xs)
    np.testing.assert_array_equal(out, loop(lambda v: v * 3, xs.T))
    (axis_data,) = seen
    assert (axis_data.name, axis_data.size) == ("k", 4)
    assert axis_data.spmd_name is None and axis_data.explicit_mesh_axis is None


def test_fancy_rule_wins_until_primitive_batchers_replaces_it():
    p = elementwise_primitive("neg", np.negative)
    batching.primitive_batchers[p] = lambda args, dims: (p.bind(*args), dims[0])
    batching.fancy_primitive_batchers[p] = \
        lambda axis_data, args, dims: (p.bind(*args) + 100.0, dims[0])
    xs = f32([1.0, 2.0])
    np.testing.assert_array_equal(xjax.vmap(p.bind)(xs), -xs + 100.0)
    batching.primitive_batchers[p] = lambda args, dims: (p.bind(*args) - 100.0, dims[0])
    assert p not in batching.fancy_primitive_batchers
    np.testing.assert_array_equal(xjax.vmap(p.bind)(xs), -xs - 100.0)


def test_axis_rules_nest():
    p = elementwise_primitive("square", np.square)
    sizes = []

    def rule(axis_size, axis_name, _, args, dims):
        sizes.append((axis_size, axis_name))
        return p.bind(*args), dims[0]
    batching.axis_primitive_batchers[p] = rule
    xs = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    out = xjax.vmap(xjax.vmap(p.bind, axis_name="inner"), axis_name="outer")(xs)
    np.testing.assert_array_equal(out, xs ** 2)
    assert sorted(sizes, key=str) == [(2, "outer"), (3, "inner")]


def reduce_sum_primitive():
    p = core.Primitive(f"my_sum_{next(_counter)}")
    p.def_impl(lambda x, *, axes, input_shape: np.sum(np.asarray(x), axis=axes))
    p.def_abstract_eval(lambda x, *, axes, input_shape: ShapedArray(
        tuple(s for i, s in enumerate(x.shape) if i not in axes), x.dtype))
    batching.defreducer(p)
    return p


@pytest.mark.parametrize("in_axis", [0, 1, 2])
@pytest.mark.parametrize("axes", [(0,), (1,), (0, 1)])
def test_defreducer(in_axis, axes):
    p = reduce_sum_primitive()

    def f(v):
        return p.bind(v, axes=axes, input_shape=v.shape)
    xs = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    out = xjax.vmap(f, in_axes=in_axis)(xs)
    want = loop(lambda v: np.sum(v, axis=axes), np.moveaxis(xs, in_axis, 0))
    np.testing.assert_array_equal(out, want)


def test_defreducer_unmapped_operand():
    p = reduce_sum_primitive()
    xs, w = f32([1.0, 2.0]), np.ones((2, 3), np.float32)
    out = xjax.vmap(lambda x: x + p.bind(w, axes=(1,), input_shape=(2, 3)))(xs)
    np.testing.assert_array_equal(out, loop(lambda x: x + w.sum(1), xs))


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_broadcast(axis):
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    out = batching.broadcast(jnp.asarray(x), 4, axis, None)
    want = np.repeat(np.expand_dims(x, axis), 4, axis=axis)
    assert out.shape == want.shape
    np.testing.assert_array_equal(out, want)


# -- custom vmappable types -------------------------------------------------------------------

class Buffered:
    """A state mapped by vmap next to a buffer every example shares (as MuJoCo's Data)."""

    def __init__(self, state, buffer):
        self.state, self.buffer = state, buffer

    shape = property(lambda self: self.state.shape)


tree_util.register_pytree_node(Buffered, lambda d: ((d.state, d.buffer), None),
                               lambda _, children: Buffered(*children))


def _to_elt(cont, _get_idx, d, axis):
    return Buffered(cont(d.state, axis), d.buffer)


def _from_elt(cont, axis_size, d, axis):
    return Buffered(cont(axis_size, d.state, axis), d.buffer)


batching.register_vmappable(Buffered, int, int, _to_elt, _from_elt, None)


def step(d):
    assert d.state.shape == () and d.buffer.shape == (4,)
    return Buffered(d.state * 2.0 + d.buffer.sum(), d.buffer)


@pytest.mark.parametrize("wrap", [lambda f: f, xjax.jit])
def test_register_vmappable(wrap):
    states, buffer = f32([1.0, 2.0, 3.0]), np.arange(4.0, dtype=np.float32)
    out = wrap(xjax.vmap(step))(Buffered(jnp.asarray(states), jnp.asarray(buffer)))
    assert type(out) is Buffered
    np.testing.assert_array_equal(out.state, loop(lambda s: s * 2.0 + buffer.sum(), states))
    np.testing.assert_array_equal(out.buffer, buffer)


def test_vmappable_next_to_arrays_and_out_axes():
    states, buffer = f32([1.0, 2.0]), np.ones(4, np.float32)
    xs = np.arange(6.0, dtype=np.float32).reshape(3, 2)

    def f(d, x):
        return step(d), x * d.state
    out, prod = xjax.vmap(f, in_axes=(0, 1), out_axes=(0, 1))(
        Buffered(jnp.asarray(states), jnp.asarray(buffer)), xs)
    np.testing.assert_array_equal(out.state, states * 2.0 + 4.0)
    np.testing.assert_array_equal(prod, (xs.T * states[:, None]).T)


def test_vmappable_get_idx_is_the_example_index():
    class Indexed(Buffered):
        pass
    tree_util.register_pytree_node(Indexed, lambda d: ((d.state, d.buffer), None),
                                   lambda _, children: Indexed(*children))
    batching.register_vmappable(
        Indexed, int, int, lambda cont, get_idx, d, axis: Indexed(cont(d.state, axis),
                                                                   get_idx()),
        lambda cont, size, d, axis: Indexed(cont(size, d.state, axis),
                                            cont(size, d.buffer, axis)), None)
    out = xjax.vmap(lambda d: Indexed(d.state + d.buffer, d.buffer))(
        Indexed(jnp.zeros(4), None))
    np.testing.assert_array_equal(out.state, [0, 1, 2, 3])
    np.testing.assert_array_equal(out.buffer, [0, 1, 2, 3])
    assert batching.unregister_vmappable(Indexed) is None  # JAX 0.10: does nothing
