"""xjax.experimental.{mesh_utils, multihost_utils, pjit, shard_map, compilation_cache}:
one-device / one-process semantics, JAX's errors and deprecations."""

import os

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax.sharding import Mesh, NamedSharding, PartitionSpec as P
from xjax.experimental import mesh_utils, multihost_utils


@pytest.fixture
def mesh():
    return Mesh(np.array(xjax.devices()), ("x",))


# -- mesh_utils --

@pytest.mark.parametrize("shape", [(1,), (1, 1), [1, 1, 1], (), (1.0,)])
def test_create_device_mesh_shapes(shape):
    grid = mesh_utils.create_device_mesh(shape)
    assert grid.dtype == object
    assert grid.shape == tuple(int(s) for s in shape)
    assert list(grid.flat) == xjax.devices()


def test_create_device_mesh_errors():
    with pytest.raises(ValueError, match=r"Number of devices 1 must equal the product of "
                       r"mesh_shape \(2,\)"):
        mesh_utils.create_device_mesh((2,))
    with pytest.raises(ValueError, match="should be a sequence of ints"):
        mesh_utils.create_device_mesh("ab")


def test_create_device_mesh_feeds_mesh():
    m = Mesh(mesh_utils.create_device_mesh((1, 1)), ("a", "b"))
    assert m.shape == {"a": 1, "b": 1}


def test_create_hybrid_device_mesh():
    grid = mesh_utils.create_hybrid_device_mesh((1, 1), (1, 1), process_is_granule=True)
    assert grid.shape == (1, 1) and grid[0, 0] == xjax.devices()[0]
    with pytest.raises(ValueError, match="does not have attribute slice_index"):
        mesh_utils.create_hybrid_device_mesh((1,), (1,))
    with pytest.raises(ValueError, match="Number of slices 1 must equal"):
        mesh_utils.create_hybrid_device_mesh((1,), (2,), process_is_granule=True)


def test_mesh_utils_against_jax():
    jax = pytest.importorskip("jax")
    from jax.experimental import mesh_utils as jmu
    for shape in [(1,), (1, 1), ()]:
        assert jmu.create_device_mesh(shape).shape == mesh_utils.create_device_mesh(shape).shape


# -- multihost_utils --

def test_process_allgather():
    x = jnp.arange(3.0)
    stacked = multihost_utils.process_allgather({"a": x, "b": 2.0})
    assert isinstance(stacked["a"], np.ndarray)
    np.testing.assert_array_equal(stacked["a"], np.arange(3.0)[None])
    assert stacked["b"].shape == (1,) and stacked["b"][0] == 2.0
    tiled = multihost_utils.process_allgather(x, tiled=True)
    np.testing.assert_array_equal(tiled, np.arange(3.0))
    assert multihost_utils.process_allgather(2.0, tiled=True).shape == ()


def test_broadcast_sync_assert():
    out = multihost_utils.broadcast_one_to_all({"a": jnp.arange(3), "b": 1.5})
    assert isinstance(out["a"], np.ndarray)
    np.testing.assert_array_equal(out["a"], [0, 1, 2])
    assert out["b"] == 1.5
    assert multihost_utils.sync_global_devices("step") is None
    multihost_utils.assert_equal({"w": jnp.ones(2)})
    # Elementwise ==, as JAX: NaN is never equal to itself.
    with pytest.raises(AssertionError, match="boom"):
        multihost_utils.assert_equal(jnp.array([1.0, np.nan]), "boom")
    assert multihost_utils.reached_preemption_sync_point(3) is False


def test_live_devices_needs_distributed():
    with pytest.raises(RuntimeError, match="Distributed JAX not initialized"):
        with multihost_utils.live_devices(xjax.devices()):
            pass
    err = multihost_utils.ProcessFailureError({"d"})
    assert err.failed_devices == {"d"}


def test_host_local_global_round_trip(mesh):
    local = {"a": np.arange(4.0), "b": np.float32(2)}
    glob = multihost_utils.host_local_array_to_global_array(local, mesh,
                                                            {"a": P("x"), "b": P()})
    assert isinstance(glob["a"], xjax.Array) and glob["b"].shape == ()
    np.testing.assert_array_equal(glob["a"], local["a"])
    back = multihost_utils.global_array_to_host_local_array(glob, mesh, P())
    np.testing.assert_array_equal(back["a"], local["a"])


def test_host_local_under_transforms(mesh):
    to_global = lambda x: multihost_utils.host_local_array_to_global_array(x, mesh, P("x"))
    x = jnp.arange(4.0)
    np.testing.assert_array_equal(xjax.grad(lambda v: (to_global(v) ** 2).sum())(x), 2 * x)
    np.testing.assert_array_equal(xjax.jit(lambda v: to_global(v) * 2)(x), 2 * x)
    np.testing.assert_array_equal(xjax.vmap(lambda v: to_global(v) + 1)(jnp.ones((2, 4))),
                                  np.full((2, 4), 2.0))


def test_host_local_errors(mesh):
    convert = multihost_utils.host_local_array_to_global_array
    with pytest.raises(ValueError, match="`None` is not a valid input to the pspecs"):
        convert(np.arange(4.0), mesh, None)
    with pytest.raises(ValueError, match="tree prefix"):
        convert(np.arange(4.0), mesh, (P(), P()))
    with pytest.raises(ValueError, match="not found in mesh"):
        convert(np.arange(4.0), mesh, P("y"))
    with pytest.raises(ValueError, match="rank at least 2"):
        convert(np.arange(4.0), mesh, P("x", None))


def test_multihost_against_jax():
    jax = pytest.importorskip("jax")
    from jax.experimental import multihost_utils as jmh
    tree = {"a": np.arange(6.0).reshape(2, 3), "s": 3.0}
    for tiled in (False, True):
        mine = multihost_utils.process_allgather(tree, tiled=tiled)
        theirs = jmh.process_allgather(tree, tiled=tiled)
        for k in tree:
            np.testing.assert_array_equal(mine[k], theirs[k])
            assert mine[k].shape == theirs[k].shape


# -- pjit --

def _pjit():
    with pytest.warns(DeprecationWarning, match="pjit has been deprecated"):
        from xjax._src.experimental.pjit import pjit
    return pjit


def test_pjit_shardings(mesh):
    pjit = _pjit()
    s = NamedSharding(mesh, P("x"))
    f = pjit(lambda a, n, b: (a * n, b + 1), in_shardings=(s, s), out_shardings=s,
             static_argnums=1)
    a, b = f(jnp.arange(2.0), 3, jnp.ones(3))
    np.testing.assert_array_equal(a, [0.0, 3.0])
    np.testing.assert_array_equal(b, [2.0, 2.0, 2.0])
    g = xjax.grad(pjit(lambda v: (v ** 3).sum(), in_shardings=s))
    np.testing.assert_allclose(g(jnp.arange(3.0)), 3 * np.arange(3.0) ** 2)
    assert "stablehlo" in pjit(lambda v: v + 1).lower(jnp.ones(2)).as_text()


def test_pjit_partition_specs_need_mesh(mesh):
    pjit = _pjit()
    f = pjit(lambda x: x * 2, in_shardings=P("x"), out_shardings=P())
    with pytest.raises(RuntimeError, match="pjit requires a non-empty mesh"):
        f(jnp.arange(4.0))
    with xjax.set_mesh(mesh):
        np.testing.assert_array_equal(f(jnp.arange(4.0)), 2 * np.arange(4.0))


def test_pjit_errors(mesh):
    pjit = _pjit()
    s = NamedSharding(mesh, P("x"))
    with pytest.raises(TypeError, match="expected to be PartitionSpec instances or None"):
        pjit(lambda x: x, in_shardings=3)
    with pytest.raises(ValueError, match="tree prefix of the positional arguments"):
        pjit(lambda x: x, in_shardings=(s, s))(jnp.ones(2))
    with pytest.raises(ValueError, match="incompatible with its sharding"):
        pjit(lambda x: x, in_shardings=NamedSharding(mesh, P("x", None)))(jnp.ones(2))
    with pytest.raises(ValueError, match="incompatible with its sharding"):
        pjit(lambda x: x, out_shardings=NamedSharding(mesh, P("x", None)))(jnp.ones(2))
    with pytest.raises(ValueError, match="does not support kwargs"):
        pjit(lambda a, b: a + b, in_shardings=s)(jnp.ones(2), b=jnp.ones(2))


# -- shard_map --

def test_legacy_shard_map(mesh):
    with pytest.warns(DeprecationWarning, match="shard_map is deprecated"):
        from xjax._src.experimental.shard_map import shard_map
    f = shard_map(lambda b: xjax.lax.psum(b.sum(), "x"), mesh, P("x"), P())
    assert float(f(jnp.arange(4.0))) == 6.0
    # check_rep is check_vma: an output not known replicated is an error unless off.
    unchecked = lambda b: b.sum()  # noqa: E731
    with pytest.raises(ValueError, match="replicat"):
        shard_map(unchecked, mesh, P("x"), P(), check_rep=True)(jnp.arange(4.0))
    assert float(shard_map(unchecked, mesh, P("x"), P(), check_rep=False)(
        jnp.arange(4.0))) == 6.0
    with pytest.raises(AttributeError):
        import xjax.experimental.shard_map as sm
        sm.no_such_name  # noqa: B018


# -- compilation_cache --

def test_compilation_cache_dir(tmp_path):
    from xjax.experimental.compilation_cache import compilation_cache as cc
    old_dir = xjax.config.jax_compilation_cache_dir
    old_min = xjax.config.jax_persistent_cache_min_compile_time_secs
    try:
        cc.set_cache_dir(str(tmp_path))
        assert xjax.config.jax_compilation_cache_dir == str(tmp_path)
        xjax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        xjax.clear_caches()
        out = xjax.jit(lambda x: x * 7.0 - 3.0)(jnp.ones(5))
        np.testing.assert_array_equal(out, np.full(5, 4.0))
        assert any(name.endswith(".xjaxexe") for name in os.listdir(tmp_path))
        cc.reset_cache()
        assert xjax.config.jax_compilation_cache_dir == str(tmp_path)  # kept, as JAX
    finally:
        cc.set_cache_dir(old_dir)
        xjax.config.update("jax_persistent_cache_min_compile_time_secs", old_min)
