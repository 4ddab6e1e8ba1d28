"""The JAX-internal names libraries use, as xjax provides them (``jax._src.*`` adapters,
``jax.core``/``jax.interpreters.xla`` tables, ``jax.experimental.layout``/``hijax``)."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src.core.errors import ShardingTypeError
from xjax._src.jax_adapters.jax_src import core as jax_src_core
from xjax._src.jax_adapters.jax_src import dtypes as jax_src_dtypes
from xjax.experimental import hijax, layout
from xjax.interpreters import xla


class ArrayProxy:
    """An array-like type of a library's own (as TFP's NumpyVariable wraps an ndarray)."""

    def __init__(self, value):
        self.value = np.asarray(value)

    def __array__(self, dtype=None, copy=None):
        return self.value if dtype is None else self.value.astype(dtype)


def test_registered_array_like_types_use_the_ndarray_entries():
    xla.canonicalize_dtype_handlers[ArrayProxy] = xla.canonicalize_dtype_handlers[np.ndarray]
    xjax.core.pytype_aval_mappings[ArrayProxy] = xjax.core.pytype_aval_mappings[np.ndarray]
    try:
        proxy = ArrayProxy(np.arange(3, dtype=np.float64))
        assert xjax.typeof(proxy) == xjax.core.ShapedArray((3,), np.float32)
        np.testing.assert_array_equal(xjax.lax.add(proxy, proxy), [0.0, 2.0, 4.0])
        assert xjax.lax.add(proxy, proxy).dtype == np.float32
    finally:
        del xla.canonicalize_dtype_handlers[ArrayProxy]
        del xjax.core.pytype_aval_mappings[ArrayProxy]


def test_core_adapter_names_map_onto_xjax():
    assert jax_src_core.ShapedArray is xjax.core.ShapedArray
    assert jax_src_core.get_aval(np.ones((2, 3), np.int32)) == \
        xjax.core.ShapedArray((2, 3), np.int32)
    aval = xjax.core.ShapedArray((2,), np.float32)
    assert jax_src_core.physical_aval(aval) is aval
    assert isinstance(aval, xjax.core.AbstractValue)
    assert jax_src_core.ShardingTypeError is ShardingTypeError  # raised by sharding rules


def test_dtypes_adapter_knows_which_floats_have_infinities():
    assert jax_src_dtypes.supports_inf(np.float32)
    assert not jax_src_dtypes.supports_inf(jnp.float8_e4m3fn)
    assert not jax_src_dtypes.supports_inf(np.int32)
    assert jax_src_dtypes.DType is np.dtype


def test_layout_format_describes_like_jax():
    assert repr(layout.Format()) == "Format(layout=None, sharding=None)"
    row_major = layout.Layout((0, 1))
    assert row_major == layout.Layout((0, 1)) and hash(row_major) == hash(layout.Layout((0, 1)))
    with pytest.raises(ValueError, match="Sharding has to be concrete"):
        layout.Format(row_major)
    x = jnp.ones((2, 3))
    assert layout.with_layout_constraint(x, row_major) is x
    with pytest.raises(NotImplementedError, match="default row-major layout"):
        layout.with_layout_constraint(x, layout.Layout((1, 0)))


def test_hijax_primitives_say_they_are_not_implemented():
    class MyPrimitive(hijax.HiPrimitive):
        pass

    with pytest.raises(NotImplementedError, match="hijax"):
        MyPrimitive("mine").bind(1.0)
    assert hijax.is_undefined_primal(1.0) is False
    np.testing.assert_array_equal(hijax.instantiate_zeros(jnp.ones(2)), [1.0, 1.0])


def test_user_jvp_rules_receive_tuples_as_in_jax():
    from xjax.extend.core import Primitive
    from xjax.interpreters import ad

    double_p = Primitive("double_for_jvp_test")
    double_p.def_impl(lambda x: 2 * np.asarray(x))
    double_p.def_abstract_eval(lambda x: x)
    seen = []

    def jvp(primals, tangents):
        seen.append((type(primals), type(tangents)))
        return double_p.bind(*primals), 2 * tangents[0]

    ad.primitive_jvps[double_p] = jvp
    assert ad.primitive_jvps[double_p] is jvp
    primal, tangent = xjax.jvp(double_p.bind, (1.5,), (1.0,))
    assert (float(primal), float(tangent)) == (3.0, 2.0)
    assert seen == [(tuple, tuple)]


def test_equations_rebind_with_get_bind_params():
    # Equinox's jaxpr-to-jaxpr passes rebind every equation this way, control flow included.
    closed = xjax.make_jaxpr(lambda x: xjax.lax.cond(x > 0, jnp.sin, jnp.cos, x) * 2)(1.0)

    def rebind(x):
        env = {closed.jaxpr.invars[0]: x}
        for eqn in closed.jaxpr.eqns:
            params = eqn.primitive.get_bind_params(eqn.params)
            args = [env[v] if isinstance(v, xjax.core.Var) else v.val for v in eqn.invars]
            out = eqn.primitive.bind(*args, **params)
            outs = out if eqn.primitive.multiple_results else [out]
            env.update(zip(eqn.outvars, outs))
        return env[closed.jaxpr.outvars[0]]

    for x in (1.0, -1.0):
        np.testing.assert_allclose(rebind(jnp.float32(x)),
                                   2 * (np.sin(x) if x > 0 else np.cos(x)), rtol=1e-6)


def test_every_primitive_is_an_extend_core_primitive():
    # In JAX all primitives share one class; Equinox type-checks lax primitives against it.
    from xjax.extend.core import Primitive
    from xjax._src.lax.elementwise import add_p

    class MyPrimitive(Primitive):
        pass

    assert isinstance(add_p, Primitive) and isinstance(Primitive("p_for_isinstance"), Primitive)
    assert not isinstance(add_p, MyPrimitive) and not isinstance(3, Primitive)


def test_tree_util_registry_holds_the_node_types_jax_lists():
    from collections import OrderedDict

    from xjax._src.jax_adapters.jax_src import tree_util as jax_src_tree_util
    registry = jax_src_tree_util._registry
    for node_type in (tuple, list, dict, type(None), OrderedDict, xjax.tree_util.Partial):
        assert node_type in registry
    # Typed key arrays are pytree leaves in JAX, as they are to xjax's public tree functions.
    assert type(xjax.random.key(0)) not in registry
    assert int not in registry and np.ndarray not in registry
    assert len(registry) == len(list(registry)) >= 5
    with pytest.raises(KeyError):
        registry[int]


def test_jaxpr_walkers_find_jit_and_flags_as_in_jax():
    # Distrax inverts functions by walking their jaxpr: it compares eqn.primitive with
    # jax.extend.core.primitives.jit_p, reads primitive.call_primitive and ClosedJaxpr.literals.
    from xjax.extend.core import primitives
    closed = xjax.make_jaxpr(lambda x: xjax.jit(lambda y: y * 2.0)(x) + 1.0)(1.0)
    assert closed.eqns[0].primitive is primitives.jit_p is primitives.pjit_p
    assert primitives.jit_p.name == "jit"
    assert not closed.eqns[0].primitive.call_primitive
    assert not closed.eqns[1].primitive.map_primitive
    assert closed.literals == closed.consts
    assert xjax.config.x64_enabled is xjax.config.jax_enable_x64
