"""xjax.sharding: Mesh, PartitionSpec, NamedSharding, SingleDeviceSharding, device_put with
shardings, set_mesh, reshard (against NumPy and, where installed, JAX on one device)."""

import pickle

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax.sharding import (AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec,
                           SingleDeviceSharding)
from xjax._src.core.sharding_types import DuplicateSpecError

P = PartitionSpec


def test_partition_spec_basics():
    assert repr(P("x", None)) == "P('x', None)"
    assert repr(P("x")) == "P('x',)"
    assert repr(P()) == "P()"
    assert P("x") == P(("x",)) and P("x") != P("x", None)
    assert P(["x", "y"]) == P(("x", "y"))
    assert len(P("x", None)) == 2 and P(("x", "y"), None)[0] == ("x", "y")
    assert list(P("x", None)) == ["x", None]
    assert P("x") + P("y") == P("x", "y") and P("x") + (None,) == P("x", None)
    assert hash(P("x")) == hash(P(("x",)))
    assert pickle.loads(pickle.dumps(P("x", ("y", "z")))) == P("x", ("y", "z"))
    assert P("x", None)._normalized_spec_for_aval(3) == P("x", None, None)
    assert xjax.P is PartitionSpec
    assert repr(P("x", unreduced={"y"})) == "P('x', unreduced={'y'})"
    with pytest.raises(ValueError, match="cannot overlap"):
        P("x", unreduced={"x"})
    with pytest.raises(ValueError, match="dangerous"):
        P("x", unreduced={"y"})[0]
    with pytest.raises(TypeError):
        class Sub(PartitionSpec):  # noqa: F841
            pass


def test_mesh_attributes():
    dev = xjax.devices()[0]
    mesh = Mesh(np.array([dev]).reshape(1, 1), ("x", "y"))
    assert mesh.axis_names == ("x", "y")
    assert mesh.axis_types == (AxisType.Auto, AxisType.Auto)
    assert dict(mesh.shape) == {"x": 1, "y": 1} and mesh.shape_tuple == (("x", 1), ("y", 1))
    assert mesh.size == 1 and mesh.axis_sizes == (1, 1) and not mesh.empty
    assert mesh.devices.shape == (1, 1) and mesh.device_ids.tolist() == [[dev.id]]
    assert mesh == Mesh(np.array([dev]).reshape(1, 1), ("x", "y"))
    assert hash(mesh) == hash(Mesh(np.array([dev]).reshape(1, 1), ("x", "y")))
    assert mesh.abstract_mesh == AbstractMesh((1, 1), ("x", "y"))
    assert repr(mesh) == ("Mesh(axis_sizes=(1, 1), axis_names=('x', 'y'), "
                          "axis_types=(Auto, Auto))")
    assert str(mesh) == "Mesh('x': 1, 'y': 1, axis_types=(Auto, Auto))"
    assert repr(AxisType.Explicit) == "Explicit"
    with pytest.raises(ValueError, match="ndim"):
        Mesh(np.array([dev]), ("x", "y"))
    with pytest.raises(TypeError, match="AxisType"):
        Mesh(np.array([dev]), ("x",), axis_types=("Auto",))


def test_make_mesh():
    mesh = xjax.make_mesh((1,), ("x",))
    assert mesh.axis_types == (AxisType.Explicit,)  # JAX 0.10's default
    assert mesh.devices.tolist() == [xjax.devices()[0]]
    n = len(xjax.devices())
    with pytest.raises(ValueError, match="must be >= the product"):
        xjax.make_mesh((n + 1,), ("x",))
    with pytest.raises(ValueError, match="sequence of ints"):
        xjax.make_mesh((1.5,), ("x",))


def test_named_sharding():
    mesh = AbstractMesh((2, 3), ("x", "y"))
    s = NamedSharding(mesh, P("x", "y"))
    assert s.shard_shape((4, 6)) == (2, 2)
    assert NamedSharding(mesh, P(("x", "y"))).shard_shape((12, 5)) == (2, 5)
    assert not s.is_fully_replicated and NamedSharding(mesh, P()).is_fully_replicated
    with pytest.raises(ValueError, match="evenly divide"):
        s.shard_shape((3, 6))
    with pytest.raises(ValueError, match="rank at least"):
        s.shard_shape((4,))
    with pytest.raises(DuplicateSpecError, match="duplicate entries for `x`"):
        NamedSharding(mesh, P("x", "x"))
    with pytest.raises(ValueError, match="not found in mesh"):
        NamedSharding(mesh, P("z"))
    assert s == NamedSharding(mesh, P("x", "y")) and s != NamedSharding(mesh, P("x"))
    assert s.with_spec(P("y")).spec == P("y")


def test_named_sharding_devices_indices_map():
    dev = xjax.devices()[0]
    mesh = Mesh(np.array([dev]), ("x",))
    s = NamedSharding(mesh, P("x"))
    assert s.device_set == {dev} and s.num_devices == 1 and s.is_fully_replicated
    assert s.addressable_devices == {dev} and s.is_fully_addressable
    assert s.devices_indices_map((4, 2)) == {dev: (slice(None), slice(None))}
    assert s.memory_kind == "device"
    assert s.is_equivalent_to(SingleDeviceSharding(dev), 2)


def test_array_sharding_and_device_put():
    x = jnp.arange(6.0).reshape(2, 3)
    dev = xjax.devices()[0]
    assert x.sharding == SingleDeviceSharding(dev)
    assert repr(x.sharding) == f"SingleDeviceSharding(device={dev!r}, memory_kind=device)"
    assert x.sharding.shard_shape((2, 3)) == (2, 3)
    (shard,) = x.addressable_shards
    np.testing.assert_array_equal(shard.data, np.arange(6.0).reshape(2, 3))
    assert shard.device == dev and shard.replica_id == 0
    mesh = xjax.make_mesh((1,), ("x",))
    y = xjax.device_put(np.arange(4.0), NamedSharding(mesh, P("x")))
    np.testing.assert_array_equal(np.asarray(y), np.arange(4.0))
    assert y.sharding == NamedSharding(mesh, P("x"))  # as placed, as JAX reports it
    np.testing.assert_array_equal(np.asarray(xjax.jit(lambda v: v * 2)(y)), np.arange(8.0, step=2))
    tree = xjax.device_put({"a": np.ones(2), "b": np.zeros(3)},
                           {"a": NamedSharding(mesh, P()), "b": SingleDeviceSharding(dev)})
    np.testing.assert_array_equal(np.asarray(tree["b"]), np.zeros(3))
    with pytest.raises(ValueError, match="rank at least"):
        xjax.device_put(np.float32(1.0), NamedSharding(mesh, P("x")))


def test_device_put_of_a_partition_spec_needs_a_context_mesh():
    with pytest.raises(ValueError, match="Please set a mesh via `jax.set_mesh` if a "
                                         "PartitionSpec is passed to device_put"):
        xjax.device_put(np.ones(2), P())
    mesh = xjax.make_mesh((1,), ("x",))
    with xjax.set_mesh(mesh):
        tree = xjax.device_put({"a": np.ones(2)}, {"a": P("x")})
    assert tree["a"].sharding == NamedSharding(mesh, P("x"))  # JAX 0.10.2's


def test_set_mesh_and_reshard():
    assert xjax.sharding.get_mesh().empty
    mesh = xjax.make_mesh((1,), ("x",))
    with xjax.set_mesh(mesh):
        assert xjax.sharding.get_mesh() == mesh
        assert xjax.sharding.get_abstract_mesh() == mesh.abstract_mesh
        y = xjax.reshard(jnp.arange(4.0), P("x"))
        np.testing.assert_array_equal(np.asarray(y), np.arange(4.0))
        z = xjax.jit(lambda v: xjax.reshard(v * 2, P("x")))(jnp.arange(2.0))
        np.testing.assert_array_equal(np.asarray(z), [0.0, 2.0])
    assert xjax.sharding.get_mesh().empty
    with pytest.raises(ValueError, match="requires a mesh"):
        xjax.reshard(jnp.arange(4.0), P("x"))
    with pytest.warns(DeprecationWarning):
        with mesh:
            assert xjax.sharding.get_mesh() == mesh
    assert xjax.sharding.get_mesh().empty


def test_typeof_sharding_is_an_unsplit_named_sharding_over_the_empty_abstract_mesh():
    empty = AbstractMesh((), ())
    matrix = xjax.typeof(jnp.ones((2, 3))).sharding
    assert isinstance(matrix, NamedSharding) and matrix.mesh == empty and matrix.mesh.empty
    assert matrix.spec == P(None, None) and matrix.memory_kind is None
    assert repr(matrix) == "NamedSharding(mesh=AbstractMesh((), axis_types=()), spec=P(None, None))"
    assert xjax.typeof(np.ones(3)).sharding == NamedSharding(empty, P(None))
    assert xjax.typeof(1.0).sharding.spec == P()
    specs = []

    def f(x):
        specs.append(xjax.typeof(x).sharding.spec)
        return x

    xjax.jit(f)(jnp.ones(3))
    xjax.vmap(f)(jnp.ones(3))
    assert specs == [P(None), P()]


def test_reprs_match_jax():
    jax = pytest.importorskip("jax")
    jmesh = jax.make_mesh((1,), ("x",))
    mesh = xjax.make_mesh((1,), ("x",))
    assert repr(mesh) == repr(jmesh) and str(mesh) == str(jmesh)
    for spec in [("x",), ("x", None), (("x",), None), ()]:
        assert repr(P(*spec)) == repr(jax.P(*spec))
        assert (repr(NamedSharding(mesh, P(*spec)))
                == repr(jax.NamedSharding(jmesh, jax.P(*spec))))
    assert repr(jnp.ones(2).sharding) == repr(jax.numpy.ones(2).sharding)
    assert [repr(t) for t in AxisType] == [repr(t) for t in jax.sharding.AxisType]
    jam = jax.sharding.AbstractMesh((2, 3), ("x", "y"))
    am = AbstractMesh((2, 3), ("x", "y"))
    for spec in [("x", "y"), (("y", "x"),), (None, "x")]:
        assert (NamedSharding(am, P(*spec)).shard_shape((6, 6))
                == jax.NamedSharding(jam, jax.P(*spec)).shard_shape((6, 6)))


def test_shaped_array_takes_a_sharding():
    aval = xjax.core.ShapedArray((2, 3), np.float32)
    assert xjax.core.ShapedArray((2, 3), np.float32, sharding=aval.sharding) == aval
    mesh = xjax.make_mesh((1,), ("x",))
    unsplit = NamedSharding(mesh, PartitionSpec(None, None))
    assert xjax.core.ShapedArray((2, 3), np.float32, sharding=unsplit) == aval
    split = xjax.core.ShapedArray((2, 3), np.float32, sharding=NamedSharding(mesh, PartitionSpec("x")))
    assert split != aval and split.str_short() == "float32[2@x,3]"
    assert split.sharding.spec == PartitionSpec("x", None)
    assert split.sharding.mesh == mesh.abstract_mesh
    auto = xjax.make_mesh((1,), ("x",), axis_types=(xjax.sharding.AxisType.Auto,))
    # Auto axes stay out of types, as in JAX
    assert xjax.core.ShapedArray((2, 3), np.float32,
                                 sharding=NamedSharding(auto, PartitionSpec("x"))) == aval


# -- Device attributes, Array.committed and make_array_from_* on one device (the values
# were measured with JAX 0.10.2 on the CPU) --


def test_device_process_attributes_are_jaxs():
    dev = xjax.devices()[0]
    # JAX's CpuDevice(id=0): process_index, host_id, task_id 0; local_hardware_id its id
    assert (dev.process_index, dev.host_id, dev.task_id, dev.local_hardware_id) == (0, 0, 0, 0)
    assert {d.process_index for d in xjax.devices()} == {xjax.process_index()}


def test_committed_for_arrays_made_without_a_target():
    assert not jnp.array([1.0, 2.0]).committed
    assert not jnp.zeros(3).committed and not jnp.arange(3).committed
    assert not jnp.asarray(np.ones(2)).committed
    assert not xjax.device_put(np.ones(3)).committed
    u = jnp.ones(3)
    assert not xjax.device_put(u).committed and not xjax.device_put(u, None).committed
    assert not (u + u).committed and not (u + 1).committed
    assert not xjax.jit(lambda a, b: a * b)(u, u).committed
    assert not xjax.jit(lambda a, b: a * b)(np.ones(3), np.ones(3)).committed
    assert not xjax.jit(lambda: jnp.ones(3))().committed
    assert not u.copy().committed and not list(jnp.ones((2, 2)))[0].committed
    assert not xjax.grad(lambda x: (x ** 2).sum())(u).committed
    assert not xjax.random.normal(xjax.random.key(0), (2,)).committed


def test_committed_for_arrays_placed_on_a_device():
    dev = xjax.devices()[0]
    c = xjax.device_put(np.arange(3.0), dev)
    np.testing.assert_array_equal(np.asarray(c), np.arange(3.0))
    assert c.committed and c.devices() == {dev}
    assert xjax.device_put(np.ones(3), SingleDeviceSharding(dev)).committed
    assert xjax.device_put(jnp.ones(3), dev).committed  # an uncommitted Array, placed
    assert xjax.device_put(c).committed and xjax.device_put(c) is c
    tree = xjax.device_put({"a": np.ones(2), "b": np.zeros(2)}, {"a": dev, "b": None})
    assert tree["a"].committed and not tree["b"].committed
    assert xjax.device_put(2.0, dev).committed and xjax.device_put(2.0, dev).weak_type
    assert c.copy().committed and jnp.asarray(c).committed
    rows = list(xjax.device_put(np.arange(4.0).reshape(2, 2), dev))
    assert [r.committed for r in rows] == [True, True]
    np.testing.assert_array_equal(np.asarray(rows[1]), [2.0, 3.0])
    assert c.addressable_shards[0].data.committed
    mesh = xjax.make_mesh((1,), ("x",))
    named = xjax.device_put(np.ones(2), NamedSharding(mesh, P()))
    assert named.committed and named.sharding == NamedSharding(mesh, P())
    c.delete()
    assert c.committed  # JAX keeps the flag of a deleted array


def test_make_array_from_callback_commits_and_keeps_a_named_sharding():
    dev = xjax.devices()[0]
    data = np.arange(8.0).reshape(4, 2)  # float64: float32 without x64, as JAX
    out = xjax.make_array_from_callback((4, 2), SingleDeviceSharding(dev), lambda i: data[i])
    assert out.committed and out.dtype == np.float32 and not out.weak_type
    np.testing.assert_array_equal(np.asarray(out), data)
    mesh = xjax.make_mesh((1,), ("x",))
    named = NamedSharding(mesh, P("x"))
    out = xjax.make_array_from_callback((4, 2), named, lambda i: data[i])
    assert out.committed and out.sharding == named  # JAX reports the NamedSharding
    np.testing.assert_array_equal(np.asarray(out), data)
    assert xjax.make_array_from_callback((), named.with_spec(P()), lambda i: 3).dtype == np.int32
    with pytest.raises(TypeError, match=r"Argument '\[1, 2, 3\]' of type <class 'list'> is not "
                                        "a valid JAX type"):
        xjax.make_array_from_callback((3,), SingleDeviceSharding(dev), lambda i: [1, 2, 3])
    with pytest.raises(ValueError, match=r"Expected shard shape \(2,\) doesn't match the single "
                                         r"device array shape \(3,\). Shape of Array is "
                                         r"float32\[2\] with sharding SingleDeviceSharding"):
        xjax.make_array_from_callback((2,), SingleDeviceSharding(dev), lambda i: np.ones(3))


def test_make_array_from_single_device_arrays_on_one_device_is_jaxs():
    dev = xjax.devices()[0]
    x = jnp.arange(3)
    out = xjax.make_array_from_single_device_arrays((3,), SingleDeviceSharding(dev), [x])
    assert out.committed and out.tolist() == [0, 1, 2]
    weak = xjax.make_array_from_single_device_arrays((), SingleDeviceSharding(dev),
                                                     [jnp.asarray(1.0)])
    assert not weak.weak_type and weak.committed and float(weak) == 1.0  # as JAX
    for arrays in ([x, x], []):
        with pytest.raises(ValueError, match=f"Expected 1 per-device arrays \\(this is how "
                                             f"many devices are addressable by the sharding\\), "
                                             f"but got {len(arrays)}"):
            xjax.make_array_from_single_device_arrays((3,), SingleDeviceSharding(dev), arrays,
                                                      dtype=np.int32)
    with pytest.raises(TypeError, match="Unsupported type for elements in `arrays`"):
        xjax.make_array_from_single_device_arrays((3,), dev, [np.arange(3)])
    mesh = xjax.make_mesh((1,), ("x",))
    out = xjax.make_array_from_single_device_arrays((), NamedSharding(mesh, P()),
                                                    [jnp.asarray(2.0)])
    assert out.sharding == NamedSharding(mesh, P()) and not out.weak_type
    assert out.shape == () and float(out) == 2.0 and out.addressable_shards[0].data.shape == ()
    local = xjax.make_array_from_process_local_data(NamedSharding(mesh, P("x")), np.arange(4.0))
    assert local.committed and local.sharding == NamedSharding(mesh, P("x"))
    np.testing.assert_array_equal(np.asarray(local), np.arange(4.0))
