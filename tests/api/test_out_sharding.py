"""The ``out_sharding`` argument of array-producing functions: checked as JAX checks it,
and (xjax keeping arrays whole on one device) leaving every value unchanged."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax.sharding import NamedSharding, PartitionSpec as P

MESH = xjax.make_mesh((1,), ("x",))

CALLS = {
    "zeros": lambda s: jnp.zeros((4, 2), out_sharding=s),
    "ones": lambda s: jnp.ones((4, 2), out_sharding=s),
    "empty": lambda s: jnp.empty((4, 2), out_sharding=s),
    "full": lambda s: jnp.full((4, 2), 3.0, out_sharding=s),
    "zeros_like": lambda s: jnp.zeros_like(np.ones((4, 2)), out_sharding=s),
    "ones_like": lambda s: jnp.ones_like(np.ones((4, 2)), out_sharding=s),
    "full_like": lambda s: jnp.full_like(np.ones((4, 2)), 2, out_sharding=s),
    "arange": lambda s: jnp.arange(4, out_sharding=s),
    "array": lambda s: jnp.array([[1.0, 2.0]] * 4, out_sharding=s),
    "asarray": lambda s: jnp.asarray(np.arange(8.0).reshape(4, 2), out_sharding=s),
    "reshape": lambda s: jnp.reshape(jnp.arange(8), (4, 2), out_sharding=s),
    "ravel": lambda s: jnp.ravel(jnp.ones((4, 2)), out_sharding=s),
    "broadcast_to": lambda s: jnp.broadcast_to(jnp.arange(2), (4, 2), out_sharding=s),
    "repeat": lambda s: jnp.repeat(jnp.arange(2), 2, out_sharding=s),
    "dot": lambda s: jnp.dot(np.ones((4, 3)), np.ones((3, 2)), out_sharding=s),
    "matmul": lambda s: jnp.matmul(np.ones((4, 3)), np.ones((3, 2)), out_sharding=s),
    "tensordot": lambda s: jnp.tensordot(np.ones((4, 3)), np.ones((3, 2)), 1, out_sharding=s),
    "linalg.tensordot": lambda s: jnp.linalg.tensordot(np.ones((4, 3)), np.ones((3, 2)),
                                                       axes=1, out_sharding=s),
    "conv_general_dilated": lambda s: lax.conv_general_dilated(
        np.ones((4, 1, 5), np.float32), np.ones((2, 1, 2), np.float32), (1,), "SAME",
        out_sharding=s),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_valid_out_sharding_changes_no_value(name):
    call = CALLS[name]
    expected = np.asarray(call(None))
    np.testing.assert_array_equal(call(NamedSharding(MESH, P("x"))), expected)
    with xjax.set_mesh(MESH):
        np.testing.assert_array_equal(call(P("x")), expected)
        np.testing.assert_array_equal(xjax.jit(lambda: call(P()))(), expected)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_partition_spec_needs_a_mesh_context(name):
    with pytest.raises(ValueError, match="not under a mesh context"):
        CALLS[name](P("x"))


@pytest.mark.parametrize("name", ["zeros", "dot", "conv_general_dilated"])
def test_other_types_are_refused_naming_the_function(name):
    with pytest.raises(TypeError, match=r"`out_sharding` argument of .*"
                       + name.split(".")[-1] + r".* Got 3 of type: <class 'int'>"):
        CALLS[name](3)


def test_signatures_match_jax():
    jax = pytest.importorskip("jax")
    import inspect
    for name in CALLS:
        module_name, _, function_name = name.rpartition(".")
        ours = (lax if function_name == "conv_general_dilated"
                else getattr(jnp, module_name) if module_name else jnp)
        theirs = (jax.lax if function_name == "conv_general_dilated"
                  else getattr(jax.numpy, module_name) if module_name else jax.numpy)
        ours_parameter = inspect.signature(getattr(ours, function_name)).parameters
        theirs_parameter = inspect.signature(getattr(theirs, function_name)).parameters
        assert ours_parameter["out_sharding"].kind == theirs_parameter["out_sharding"].kind
        assert ours_parameter["out_sharding"].default is None
