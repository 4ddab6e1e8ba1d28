"""Arrays made over several CPU devices: ``make_array_from_callback``,
``make_array_from_single_device_arrays`` and ``make_array_from_process_local_data`` with
shardings over 4 devices (1-D and 2-D meshes, split and replicated specs), ``Array.committed``
and the per-device ``Device`` attributes. Every value is checked against NumPy in the
script; the printed layouts (device, index, replica id), callback calls, dtypes and error
messages are the ones JAX 0.10.2 gives for the same script on 4 CPU devices (measured,
hard-coded here).

The CPU client's device count is fixed when it is created, so each test runs a script in
a fresh interpreter with ``XJAX_NUM_CPU_DEVICES`` set.
"""


_SETUP = """
import numpy as np
import xjax as jax, xjax.numpy as jnp
from xjax.sharding import Mesh, NamedSharding, PartitionSpec as P
"""


def test_make_array_from_callback_lays_out_shards_as_jax(run_with_devices):
    out = run_with_devices(4, _SETUP + """
devs = jax.devices()
m1 = Mesh(np.array(devs), ("x",))
m2 = Mesh(np.array(devs).reshape(2, 2), ("x", "y"))
data = np.arange(32, dtype=np.float32).reshape(8, 4)


def fmt(index):
    return ",".join(":" if s == slice(None) else f"{s.start}:{s.stop}" for s in index)


for mesh, spec in [(m1, P("x")), (m1, P()), (m1, P(None, "x")), (m2, P("x", "y")),
                   (m2, P("y", "x")), (m2, P("x")), (m2, P(None, "y")), (m2, P(("x", "y")))]:
    calls = []

    def cb(index):
        calls.append(fmt(index))
        return data[index]

    s = NamedSharding(mesh, spec)
    a = jax.make_array_from_callback((8, 4), s, cb)
    assert a.sharding == s and a.committed and a.shape == (8, 4) and a.dtype == np.float32
    assert len(a.devices()) == 4 and not a.weak_type
    np.testing.assert_array_equal(np.asarray(a), data)
    for shard in a.addressable_shards:
        assert shard.data.devices() == {shard.device} and shard.data.committed
        np.testing.assert_array_equal(np.asarray(shard.data), data[shard.index])
    print(spec, " ".join(f"{sh.device.id}[{fmt(sh.index)}]{sh.replica_id}"
                         for sh in a.addressable_shards), "calls", " ".join(calls))
""")
    # The shards (device[index]replica id) and the callback's calls JAX 0.10.2 makes: one
    # call in all for a replicated array, one per device otherwise (repeated indices too).
    assert out == [
        "P('x',) 0[0:2,:]0 1[2:4,:]0 2[4:6,:]0 3[6:8,:]0 calls 0:2,: 2:4,: 4:6,: 6:8,:",
        'P() 0[:,:]0 1[:,:]1 2[:,:]2 3[:,:]3 calls :,:',
        "P(None, 'x') 0[:,0:1]0 1[:,1:2]0 2[:,2:3]0 3[:,3:4]0 calls :,0:1 :,1:2 :,2:3 :,3:4",
        "P('x', 'y') 0[0:4,0:2]0 1[0:4,2:4]0 2[4:8,0:2]0 3[4:8,2:4]0 calls 0:4,0:2 0:4,2:4 "
         '4:8,0:2 4:8,2:4',
        "P('y', 'x') 0[0:4,0:2]0 1[4:8,0:2]0 2[0:4,2:4]0 3[4:8,2:4]0 calls 0:4,0:2 4:8,0:2 "
         '0:4,2:4 4:8,2:4',
        "P('x',) 0[0:4,:]0 1[0:4,:]1 2[4:8,:]0 3[4:8,:]1 calls 0:4,: 0:4,: 4:8,: 4:8,:",
        "P(None, 'y') 0[:,0:2]0 1[:,2:4]0 2[:,0:2]1 3[:,2:4]1 calls :,0:2 :,2:4 :,0:2 :,2:4",
        "P(('x', 'y'),) 0[0:2,:]0 1[2:4,:]0 2[4:6,:]0 3[6:8,:]0 calls 0:2,: 2:4,: 4:6,: 6:8,:"]


def test_make_array_from_callback_values_and_errors_as_jax(run_with_devices):
    out = run_with_devices(4, _SETUP + """
devs = jax.devices()
m1 = Mesh(np.array(devs), ("x",))
rev = Mesh(np.array(devs[::-1]), ("x",))
data = np.arange(32, dtype=np.float32).reshape(8, 4)
calls = []
a = jax.make_array_from_callback((8,), NamedSharding(rev, P("x")),
                                 lambda i: calls.append(i[0].start) or np.arange(8)[i])
np.testing.assert_array_equal(np.asarray(a), np.arange(8))
print("reversed mesh", calls, [(s.device.id, s.index[0].start) for s in a.addressable_shards])
s = NamedSharding(m1, P("x"))
r = NamedSharding(m1, P())
for value, dtype in [(3.0, None), (3, None), (True, None), (np.float64(2.5), None),
                     (np.arange(2, dtype=np.int16), None), (np.ones(2), np.float32)]:
    shape = np.shape(value)
    b = jax.make_array_from_callback(shape, r, lambda i: value, dtype=dtype)
    np.testing.assert_array_equal(np.asarray(b), np.asarray(value).astype(b.dtype))
    print(type(value).__name__, b.dtype, b.weak_type, b.addressable_shards[0].data.shape)
c = jax.make_array_from_callback((8,), s, lambda i: jnp.arange(8)[i])
print("array values", c.dtype, np.asarray(c).tolist(), c.sharding.spec)
placed = jax.device_put(np.arange(8.0), r)
same = jax.make_array_from_callback((8,), NamedSharding(m1, P()), lambda i: placed)
print("replicated array value returned as is:", same is placed)
again = jax.make_array_from_callback((8,), s, lambda i: placed[i])
np.testing.assert_array_equal(np.asarray(again), np.arange(8.0))
for name, f in [
        ("wrong shape", lambda: jax.make_array_from_callback((8, 4), s, lambda i: data)),
        ("uneven", lambda: jax.make_array_from_callback((6,), s, lambda i: np.ones(6)[i])),
        ("mixed dtypes", lambda: jax.make_array_from_callback(
            (8, 4), s, lambda i: data[i] if i[0].start else data[i].astype(np.int32))),
        ("dtype argument", lambda: jax.make_array_from_callback((8, 4), s, lambda i: data[i],
                                                                dtype=np.int32)),
        ("list", lambda: jax.make_array_from_callback((4,), s, lambda i: [1.0]))]:
    try:
        f()
    except (ValueError, TypeError) as e:
        kind = type(e).__name__ if name != "list" else "TypeError" * isinstance(e, TypeError)
        print(name, kind, str(e).replace(chr(10), " "))
""")
    # JAX 0.10.2's call order over a mesh of reversed devices, dtypes for each kind of
    # value, and errors (class, message; JAX's list error is a TypeError subclass).
    assert out == [
        'reversed mesh [0, 2, 4, 6] [(3, 0), (2, 2), (1, 4), (0, 6)]',
        'float float32 False ()',
        'int int32 False ()',
        'bool bool False ()',
        'float64 float32 False ()',
        'ndarray int16 False (2,)',
        'ndarray float32 False (2,)',
        "array values int32 [0, 1, 2, 3, 4, 5, 6, 7] P('x',)",
        'replicated array value returned as is: False',
        "wrong shape ValueError Expected shard shape (2, 4) doesn't match the single device "
         'array shape (8, 4). Shape of Array is float32[8,4] with sharding '
         "NamedSharding(mesh=Mesh('x': 4, axis_types=(Auto,)), spec=P('x',), memory_kind=device)",
        "uneven IndivisibleError Sharding NamedSharding(mesh=Mesh('x': 4, axis_types=(Auto,)), "
         "spec=P('x',), memory_kind=device) implies that array axis 0 is partitioned 4 times, "
         'but the dimension size is 6 (full shape: (6,), per-dimension tiling factors: [4] '
         'should evenly divide the shape)',
        'mixed dtypes ValueError Input buffers to `Array` must have matching dtypes. Got '
         'float32, expected int32 for buffer: [[ 8.  9. 10. 11.]  [12. 13. 14. 15.]]',
        'dtype argument ValueError If `dtype` is provided to `jax.make_array_from_callback`, '
         'it must match the dtype of the addressable shards. Got dtype=int32 and shard '
         'dtype=float32`.',
        "list TypeError Argument '[1.0]' of type <class 'list'> is not a valid JAX type."]


def test_make_array_from_single_device_arrays_as_jax(run_with_devices):
    out = run_with_devices(4, _SETUP + """
devs = jax.devices()
m1 = Mesh(np.array(devs), ("x",))
m2 = Mesh(np.array(devs).reshape(2, 2), ("x", "y"))
data = np.arange(32, dtype=np.float32).reshape(8, 4)


def pieces(s, shape=(8, 4)):
    return [jax.device_put(data[index], d)
            for d, index in s.addressable_devices_indices_map(shape).items()]


for mesh, spec in [(m1, P("x")), (m1, P()), (m2, P("x", "y")), (m2, P("y")),
                   (m2, P(None, ("y", "x")))]:
    s = NamedSharding(mesh, spec)
    arrays = pieces(s)
    a = jax.make_array_from_single_device_arrays((8, 4), s, arrays[::-1])  # any order
    assert a.sharding == s and a.committed and not a.weak_type and a.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(a), data)
    for shard in a.addressable_shards:
        assert shard.data.devices() == {shard.device}
        np.testing.assert_array_equal(np.asarray(shard.data), data[shard.index])
    print(spec, [(sh.device.id, sh.replica_id) for sh in a.addressable_shards])
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: v * 2)(a)), data * 2)
    np.testing.assert_array_equal(np.asarray(a + 1), data + 1)
rep = NamedSharding(m1, P())
diff = jax.make_array_from_single_device_arrays(
    (2,), rep, [jax.device_put(np.full(2, i, np.int32), d) for i, d in enumerate(devs)])
print("replicas kept as given:", [np.asarray(sh.data).tolist() for sh in diff.addressable_shards],
      np.asarray(diff).tolist())
sub = NamedSharding(Mesh(np.array(devs[:2]), ("x",)), P("x"))
two = jax.make_array_from_single_device_arrays(
    (8, 4), sub, [jax.device_put(data[4:], devs[1]), jax.device_put(data[:4], devs[0])])
np.testing.assert_array_equal(np.asarray(two), data)
print("two devices", sorted(d.id for d in two.devices()))
one = NamedSharding(Mesh(np.array(devs[:1]), ("x",)), P("x"))
u = jax.make_array_from_single_device_arrays((4,), one, [jnp.arange(4)])
print("uncommitted input", u.committed, np.asarray(u).tolist(), u.sharding.spec)
s2 = NamedSharding(m2, P("x", "y"))
block = data[:4, :2]
for name, f in [
        ("too few", lambda: jax.make_array_from_single_device_arrays((8, 4), s2, pieces(s2)[:3])),
        ("too many", lambda: jax.make_array_from_single_device_arrays(
            (8, 4), s2, pieces(s2) + [jax.device_put(block, devs[0])])),
        ("same device", lambda: jax.make_array_from_single_device_arrays(
            (8, 4), s2, [jax.device_put(block, devs[i]) for i in (0, 0, 1, 2)])),
        ("other devices", lambda: jax.make_array_from_single_device_arrays(
            (8, 4), sub, [jax.device_put(data[:4], devs[i]) for i in (0, 2)])),
        ("shard shape", lambda: jax.make_array_from_single_device_arrays(
            (8, 4), s2, [jax.device_put(data[:2, :2], d) for d in devs])),
        ("global shape", lambda: jax.make_array_from_single_device_arrays((8, 8), s2, pieces(s2))),
        ("mixed dtypes", lambda: jax.make_array_from_single_device_arrays(
            (8, 4), s2, [jax.device_put(block.astype(np.int32) if i == 2 else block, d)
                         for i, d in enumerate(devs)])),
        ("dtype argument", lambda: jax.make_array_from_single_device_arrays(
            (8, 4), s2, pieces(s2), dtype=np.int32)),
        ("numpy arrays", lambda: jax.make_array_from_single_device_arrays((8, 4), s2, [block] * 4)),
        ("no arrays", lambda: jax.make_array_from_single_device_arrays((8, 4), s2, [])),
        ("no arrays, dtype", lambda: jax.make_array_from_single_device_arrays(
            (8, 4), s2, [], dtype=np.float32)),
        ("iterator", lambda: jax.make_array_from_single_device_arrays((8, 4), s2,
                                                                     iter(pieces(s2)))),
        ("sharded input", lambda: jax.make_array_from_single_device_arrays(
            (8,), NamedSharding(m1, P("x")),
            [jax.device_put(np.arange(8.0), NamedSharding(m1, P("x")))] * 4))]:
    try:
        f()
    except (ValueError, TypeError) as e:
        print(name, type(e).__name__, str(e).replace(chr(10), " "))
""")
    # JAX 0.10.2's replica ids, and its errors for wrong arrays (class, message).
    assert out == [
        "P('x',) [(0, 0), (1, 0), (2, 0), (3, 0)]",
        'P() [(0, 0), (1, 1), (2, 2), (3, 3)]',
        "P('x', 'y') [(0, 0), (1, 0), (2, 0), (3, 0)]",
        "P('y',) [(0, 0), (1, 0), (2, 1), (3, 1)]",
        "P(None, ('y', 'x')) [(0, 0), (1, 0), (2, 0), (3, 0)]",
        'replicas kept as given: [[0, 0], [1, 1], [2, 2], [3, 3]] [0, 0]',
        'two devices [0, 1]',
        "uncommitted input True [0, 1, 2, 3] P('x',)",
        'too few ValueError Expected 4 per-device arrays (this is how many devices are '
         'addressable by the sharding), but got 3',
        'too many ValueError Expected 4 per-device arrays (this is how many devices are '
         'addressable by the sharding), but got 5',
        'same device ValueError When making an array from single-device arrays, the input '
         'arrays must be from distinct devices, but got device IDs [0, 0, 1, 2]',
        'other devices ValueError Addressable devices and per-device arrays devices do not '
         'match. Sharding contains devices {1} that are not present in per-device arrays. '
         'Per-device arrays contain devices {2} that are not present in the sharding.',
        "shard shape ValueError Expected shard shape (4, 2) doesn't match the single device "
         'array shape (2, 2). Shape of Array is float32[8,4] with sharding '
         "NamedSharding(mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto)), spec=P('x', 'y'), "
         'memory_kind=device)',
        "global shape ValueError Expected shard shape (4, 4) doesn't match the single device "
         'array shape (4, 2). Shape of Array is float32[8,8] with sharding '
         "NamedSharding(mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto)), spec=P('x', 'y'), "
         'memory_kind=device)',
        'mixed dtypes ValueError Input buffers to `Array` must have matching dtypes. Got '
         'int32, expected float32 for buffer: [[ 0  1]  [ 4  5]  [ 8  9]  [12 13]]',
        'dtype argument ValueError If `dtype` is provided to '
         '`jax.make_array_from_single_device_arrays`, it must match the dtype of the '
         'addressable shards. Got dtype=int32 and shard dtype=float32`.',
        'numpy arrays TypeError Unsupported type for elements in `arrays`: <class '
         "'numpy.ndarray'>",
        'no arrays ValueError If the Array has no addressable shards, `dtype` must be provided '
         'via the `dtype` argument to `jax.make_array_from_single_device_arrays`.',
        'no arrays, dtype ValueError Expected 4 per-device arrays (this is how many devices '
         'are addressable by the sharding), but got 0',
        'iterator TypeError jax.make_array_from_single_device_arrays `arrays` argument must be '
         "a list or tuple, but got <class 'list_iterator'>.",
        'sharded input ValueError When making an array from single-device arrays the input '
         'arrays must have one shard each. An argument array had 4 shard(s).']


def test_committed_and_device_attributes_over_several_devices(run_with_devices):
    out = run_with_devices(4, _SETUP + """
devs = jax.devices()
print([(d.id, d.process_index, d.local_hardware_id, d.host_id, d.task_id) for d in devs])
m1 = Mesh(np.array(devs), ("x",))
x1 = jax.device_put(np.arange(3.0), devs[1])
print("on device 1:", x1.committed, [d.id for d in x1.devices()], np.asarray(x1).tolist())
u = jnp.arange(3.0)
print("uncommitted:", u.committed, jax.device_put(u).committed)
for spec in [P("x"), P()]:
    a = jax.device_put(np.arange(8.0).reshape(4, 2), NamedSharding(m1, spec))
    rows = list(a)
    print(spec, a.committed, (a + 1).committed, jax.jit(lambda v: v * 2)(a).committed,
          a.sum().committed, a.copy().committed, rows[0].committed,
          [s.data.committed for s in a.addressable_shards])
    np.testing.assert_array_equal(np.asarray(rows[3]), [6.0, 7.0])
local = jax.make_array_from_process_local_data(NamedSharding(m1, P("x")), np.arange(8.0))
print("local data", local.committed, local.dtype, local.sharding.spec, np.asarray(local).tolist(),
      [s.index for s in local.addressable_shards][:2])
""")
    # JAX 0.10.2's values: (id, process_index, local_hardware_id, host_id, task_id) per
    # device, then the commitment of placed, sharded and computed arrays.
    assert out == [
        '[(0, 0, 0, 0, 0), (1, 0, 1, 0, 0), (2, 0, 2, 0, 0), (3, 0, 3, 0, 0)]',
        'on device 1: True [1] [0.0, 1.0, 2.0]',
        'uncommitted: False False',
        "P('x',) True True True True True False [True, True, True, True]",
        'P() True True True True True True [True, True, True, True]',
        "local data True float32 P('x',) [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0] [(slice(0, "
         '2, None),), (slice(2, 4, None),)]']
