"""The last top-level names of jax 0.10.2: distributed, lib, api_util, ad, memory,
auto_pcast, remove_size_one_mesh_axis_from_type, make_user_context; and the messages of
unsupported collectives."""

import dataclasses
import socket

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import api_util, tree_util
from xjax.sharding import PartitionSpec as P


# -- jax.distributed --

@pytest.fixture
def fresh_distributed():
    xjax.distributed.shutdown()
    yield xjax.distributed
    xjax.distributed.shutdown()


def test_distributed_single_process_lifecycle(fresh_distributed):
    dist = fresh_distributed
    assert not dist.is_initialized()
    dist.initialize("localhost:1234", num_processes=1, process_id=0)
    assert dist.is_initialized()
    assert xjax.process_count() == 1 and xjax.process_index() == 0
    with pytest.raises(RuntimeError, match="should only be called once"):
        dist.initialize("localhost:1234", 1, 0)
    dist.shutdown()
    assert not dist.is_initialized()
    dist.shutdown()  # a no-op when not running
    dist.initialize("localhost:1234", 1, 0)  # and it can start again
    assert dist.is_initialized()


def test_distributed_bad_arguments(fresh_distributed, monkeypatch):
    dist = fresh_distributed
    monkeypatch.delenv("JAX_COORDINATOR_ADDRESS", raising=False)
    with pytest.raises(ValueError, match="coordinator_address should be defined"):
        dist.initialize()
    with pytest.raises(ValueError, match="Number of processes must be defined"):
        dist.initialize("localhost:1234")
    with pytest.raises(ValueError, match="process id of the current process must be defined"):
        dist.initialize("localhost:1234", 1)
    with pytest.raises(ValueError, match="process_id < num_processes"):
        dist.initialize("localhost:1234", 1, 1)
    with pytest.raises(TypeError, match="num_processes must be a positive int"):
        dist.initialize("localhost:1234", 1.0, 0)
    # Several processes: process 1 waits for process 0's service, which never comes.
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        free_port = probe.getsockname()[1]
    with pytest.raises(xjax.errors.JaxRuntimeError, match="^DEADLINE_EXCEEDED: Deadline"):
        dist.initialize(f"localhost:{free_port}", 2, 1, initialization_timeout=0.3)
    assert dist.global_state.client is None
    with pytest.raises(NotImplementedError, match="local_device_ids"):
        dist.initialize("localhost:1234", 1, 0, local_device_ids=0)
    with pytest.raises(NotImplementedError, match="detects no cluster"):
        dist.initialize(cluster_detection_method="mpi4py")
    assert not dist.is_initialized()
    monkeypatch.setenv("JAX_COORDINATOR_ADDRESS", "localhost:999")
    dist.initialize(num_processes=1, process_id=0)
    assert dist.global_state.coordinator_address == "localhost:999"


def test_distributed_slice_index_is_deprecated(fresh_distributed):
    with pytest.warns(DeprecationWarning, match="partition_index"):
        fresh_distributed.initialize("localhost:1", 1, 0, slice_index=3)
    assert fresh_distributed.global_state.partition_index == 3


def test_distributed_names_match_jax():
    jax = pytest.importorskip("jax")
    public = lambda m: {n for n in dir(m) if not n.startswith("_")}  # noqa: E731
    assert public(jax.distributed) <= public(xjax.distributed)


# -- jax.lib --

def test_lib_version_and_removed_attributes():
    assert xjax.lib.__version__ == xjax.__version__
    for name in ("xla_bridge", "xla_client"):
        with pytest.raises(AttributeError):
            getattr(xjax.lib, name)


def test_lib_matches_jax_shape():
    jax = pytest.importorskip("jax")
    assert isinstance(jax.lib.__version__, str) and isinstance(xjax.lib.__version__, str)
    assert hasattr(jax.lib, "xla_bridge") == hasattr(xjax.lib, "xla_bridge")


# -- jax.api_util --

def test_flatten_fun_and_out_tree_thunk():
    args = (((1.0, {"w": 2.0}),), {"scale": 3.0})  # (positional args, keyword args)
    flat, in_tree = tree_util.tree_flatten(args)
    flat_fun, out_tree = api_util.flatten_fun(lambda a, scale: {"y": a[0] * scale,
                                                                  "z": a[1]["w"]}, in_tree)
    with pytest.raises(api_util.StoreException, match="Store empty"):
        out_tree()
    assert flat_fun.call_wrapped(*flat) == [3.0, 2.0]
    assert out_tree() == tree_util.tree_structure({"y": 0, "z": 0})


def test_flatten_fun_nokwargs_under_jit():
    args = (jnp.arange(3.0), (jnp.ones(3), 2.0))
    flat, in_tree = tree_util.tree_flatten(args)
    flat_fun, out_tree = api_util.flatten_fun_nokwargs(
        api_util.wrap_init(lambda x, yz: (x * yz[1], x + yz[0])), in_tree)
    outs = xjax.jit(flat_fun.call_wrapped)(*flat)
    a, b = tree_util.tree_unflatten(out_tree(), outs)
    np.testing.assert_allclose(np.asarray(a), [0.0, 2.0, 4.0])
    np.testing.assert_allclose(np.asarray(b), [1.0, 2.0, 3.0])


def test_argnums_partial():
    g, dyn = api_util.argnums_partial(lambda a, b, c, *, k=0: (a, b, c, k), (0, -1),
                                      ("a", "b", "c"))
    assert dyn == ("a", "c")
    assert g.call_wrapped("A", "C", k=1) == ("A", "b", "C", 1)
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        api_util.argnums_partial(lambda a, b: a, 0, (1, [2]))
    g, _ = api_util.argnums_partial(lambda a, b: b, 0, (1, [2]),
                                    require_static_args_hashable=False)
    assert g.call_wrapped(5) == [2]
    with pytest.raises(ValueError, match="len\\(args\\) == 2"):
        api_util.argnums_partial(lambda a, b: a, 2, (1, 2))


def test_flatten_axes():
    treedef = tree_util.tree_structure(((1, 2), {"a": 3}))
    assert api_util.flatten_axes("vmap in_axes", treedef, (0, None)) == [0, 0, None]
    assert api_util.flatten_axes("vmap in_axes", treedef, 1) == [1, 1, 1]
    with pytest.raises(ValueError, match="(?s)tree prefix.*different lengths of tuple"):
        api_util.flatten_axes("vmap in_axes", treedef, (0, None, 1))
    with pytest.raises(ValueError, match="singleton tuple"):
        api_util.flatten_axes("vmap in_axes", tree_util.tree_structure(((1, 2),)), (0, 1),
                              tupled_args=True)


def test_donation_vector_and_rebase():
    tree = tree_util.tree_structure(((1, (2, 3)), {"b": 4, "a": 5}))
    # kwargs leaves come in sorted-key order: a, then b
    assert api_util.donation_vector((0,), ("b",), tree) == (True, False, False, False, True)
    assert api_util.donation_vector((1,), (), tree_util.tree_structure((1, (2, 3))),
                                    False) == (False, True, True)
    assert api_util.rebase_donate_argnums((3, 4), (0, 1)) == (1, 2)
    assert api_util.rebase_donate_argnums((4, 1), ()) == (1, 4)
    assert api_util.rebase_donate_argnums((0, 5), (2,)) == (0, 4)
    with pytest.raises(ValueError, match="cannot intersect"):
        api_util.rebase_donate_argnums((1, 4), (0, 1))


def test_debug_info_safe_map_and_shaped_abstractify():
    def f(x, y, *, z=1, **kw):
        return x
    info = api_util.debug_info("jit", f, ({"a": 1, "b": [2, 3]}, 3), {"z": 4, "q": 5},
                               static_argnums=(1,))
    assert list(info.arg_names) == ["x['a']", "x['b'][0]", "x['b'][1]", "kw['q']", "z"]
    assert info.traced_for == "jit" and info.func_name == "f"
    assert api_util.safe_map(lambda a, b: a * b, [1, 2], (3, 4)) == [3, 8]
    with pytest.raises(ValueError, match="argument 2 is shorter than argument 1"):
        api_util.safe_map(lambda a, b: a, [1, 2], [3])
    aval = api_util.shaped_abstractify(1.0)
    assert aval.shape == () and aval.dtype == np.float32 and aval.weak_type
    assert api_util.shaped_abstractify(np.ones((2, 3), np.int8)).shape == (2, 3)


def test_api_util_matches_jax():
    jax = pytest.importorskip("jax")
    ja = jax.api_util
    assert {n for n in dir(ja) if not n.startswith("_")} <= set(dir(api_util))
    args = (({"a": 1, "b": [2, 3]}, 3), {"z": 4})

    def f(x, y, *, z=1):
        return x
    assert tuple(api_util.debug_info("jit", f, *args).arg_names) == \
        ja.debug_info("jit", f, *args).arg_names
    tree = ((1, (2, 3)), {"b": 4, "a": 5})
    assert api_util.donation_vector((1,), ("a",), tree_util.tree_structure(tree)) == \
        ja.donation_vector((1,), ("a",), jax.tree.structure(tree))
    for donate, static in [((3, 4), (0, 1)), ((0, 2, 7), (1, 5)), ((), (2,))]:
        assert api_util.rebase_donate_argnums(donate, static) == \
            ja.rebase_donate_argnums(donate, static)
    value = ((1, 2), {"a": 3, "b": (4, 5)})
    for axes in [(0, None), (1, {"a": None, "b": 0}), None]:
        assert api_util.flatten_axes("in_axes", tree_util.tree_structure(value), axes) == \
            ja.flatten_axes("in_axes", jax.tree.structure(value), axes)


# -- jax.ad and jax.memory --

def test_ad_markers_are_jax_dataclasses():
    ad = xjax.ad
    for cls in (ad.DontWant, ad.DidntWant, ad.GradRef, ad.GradValue):
        assert dataclasses.is_dataclass(cls)
        assert cls.__dataclass_params__.frozen and dataclasses.fields(cls) == ()
        assert cls() == cls() and hash(cls()) == hash(cls())
    # the markers a vjp returns are empty pytrees; the ones passed in are leaves
    assert tree_util.tree_leaves([ad.DidntWant(), ad.GradRef()]) == []
    assert len(tree_util.tree_leaves([ad.GradValue(), ad.DontWant()])) == 2


def test_ad_and_memory_match_jax():
    jax = pytest.importorskip("jax")
    assert set(vars(jax.ad)) == set(vars(xjax.ad))
    for name in vars(jax.ad):
        ours, theirs = getattr(xjax.ad, name), getattr(jax.ad, name)
        assert len(jax.tree.leaves(theirs())) == len(tree_util.tree_leaves(ours()))
    assert [m.name for m in jax.memory.Space] == [m.name for m in xjax.memory.Space]
    assert [m.value for m in jax.memory.Space] == [m.value for m in xjax.memory.Space]
    assert repr(jax.memory.Space.Host) == repr(xjax.memory.Space.Host)


# -- auto_pcast, remove_size_one_mesh_axis_from_type --

def test_auto_pcast_flag():
    assert xjax.auto_pcast.value is True
    with xjax.auto_pcast(True):
        assert xjax.config.jax_auto_pcast is True
    with pytest.raises(NotImplementedError, match="jax_auto_pcast=False"):
        xjax.auto_pcast(False)
    with pytest.raises(NotImplementedError, match="always broadcast"):
        xjax.config.update("jax_auto_pcast", False)
    # what True means: an invariant operand meets a varying one inside shard_map
    mesh = xjax.make_mesh((1,), ("x",))
    out = xjax.shard_map(lambda a, b: a + b, mesh=mesh, in_specs=(P("x"), P()),
                         out_specs=P("x"))(jnp.arange(4.0), jnp.ones(4))
    np.testing.assert_allclose(np.asarray(out), np.arange(4.0) + 1)


def _identity_over_x(mesh):
    return xjax.shard_map(lambda v: v, mesh=mesh, in_specs=P("x"), out_specs=P())


def test_remove_size_one_mesh_axis_from_type():
    assert xjax.remove_size_one_mesh_axis_from_type.value is False
    x = jnp.arange(4.0)
    mesh = xjax.make_mesh((1,), ("x",))
    with pytest.raises(ValueError, match="require replication"):
        _identity_over_x(mesh)(x)
    with xjax.remove_size_one_mesh_axis_from_type(True):
        np.testing.assert_array_equal(np.asarray(_identity_over_x(mesh)(x)), np.arange(4.0))
        # an axis of size 2 still counts
        mesh2 = xjax.sharding.AbstractMesh((2, 1), ("x", "y"))
        spec = P(("x", "y"))
        out = xjax.shard_map(lambda v: v, mesh=mesh2, in_specs=spec, out_specs=P("x"))(x)
        np.testing.assert_array_equal(np.asarray(out), np.arange(4.0))
        with pytest.raises(ValueError, match="require replication"):
            xjax.shard_map(lambda v: v, mesh=mesh2, in_specs=spec, out_specs=P())(x)


def test_remove_size_one_matches_jax():
    jax = pytest.importorskip("jax")
    mesh = jax.make_mesh((1,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
    f = jax.shard_map(lambda v: v, mesh=mesh, in_specs=jax.P("x"), out_specs=jax.P())
    with pytest.raises(ValueError, match="require replication"):
        f(np.arange(4.0))
    with jax.remove_size_one_mesh_axis_from_type(True):
        np.testing.assert_array_equal(np.asarray(f(np.arange(4.0))), np.arange(4.0))


# -- make_user_context --

def test_make_user_context_retraces_on_change():
    traces = []

    @xjax.jit
    def f(x):
        traces.append(None)
        return x * 2
    ctx = xjax.make_user_context(default_value=5)
    assert ctx.value == 5 and ctx.get_global() == 5
    f(1.0)
    with ctx(1):
        assert ctx.value == 1
        f(1.0)
        f(1.0)
        with ctx(2):
            f(1.0)
        assert ctx.value == 1
    assert ctx.value == 5
    f(1.0)
    assert len(traces) == 3
    ctx.set_global(7)
    assert ctx.value == 7 and ctx.get_global() == 7
    f(1.0)
    assert len(traces) == 4
    with ctx(3):
        ctx.set_global(8)
        assert ctx.value == 3
    ctx.set_global(None)
    assert xjax.make_user_context().value is None


def test_make_user_context_unhashable_value_fails_jit():
    f = xjax.jit(lambda x: x + 1)
    ctx = xjax.make_user_context()
    with ctx([1]):
        with pytest.raises(TypeError, match="unhashable"):
            f(1.0)
    assert float(f(1.0)) == 2.0


# -- messages of unsupported collectives --

@pytest.mark.parametrize("name", ["pmax", "pmin"])
def test_pmax_pmin_have_no_derivative_as_jax(name):
    op = getattr(xjax.lax, name)
    with pytest.raises(NotImplementedError,
                       match=f"Differentiation rule for '{name}' not implemented"):
        xjax.vmap(xjax.grad(lambda v: op(v, "i")), axis_name="i")(jnp.ones(3))


@pytest.mark.parametrize("name", ["pmax", "pmin"])
def test_pmax_pmin_derivative_error_matches_jax(name):
    jax = pytest.importorskip("jax")
    op = getattr(jax.lax, name)
    with pytest.raises(NotImplementedError,
                       match=f"Differentiation rule for '{name}' not implemented"):
        jax.vmap(jax.grad(lambda v: op(v, "i")), axis_name="i")(np.ones(3, np.float32))


def test_unsupported_collectives_do_not_claim_shard_map_is_missing():
    x = jnp.ones(2)
    calls = [lambda v: xjax.lax.psend(v, "i", [(0, 1)]),
             lambda v: xjax.lax.precv(v, v, "i", [(0, 1)]),
             lambda v: xjax.lax.pcast(v, "i", to="reduced"),
             lambda v: xjax.lax.all_gather(v, "i", to="reduced")]
    for call in calls:
        with pytest.raises(NotImplementedError) as info:
            xjax.vmap(call, axis_name="i")(x)
        message = str(info.value)
        assert "no shard_map" not in message and "does not have" not in message
        assert "shard_map" in message

