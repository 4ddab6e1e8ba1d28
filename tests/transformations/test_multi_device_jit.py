"""Arrays sharded over several CPU devices, and jit over them as one SPMD program
(issue 17): every sharded result agrees with NumPy on the whole value, and the shardings
are the ones JAX 0.10.2 gives (measured with JAX on 4 CPU devices, hard-coded here).

The CPU client's device count is fixed when it is created, so each test runs a script in
a fresh interpreter with ``XJAX_NUM_CPU_DEVICES`` set.
"""


_SETUP = """
import numpy as np
import xjax as jax, xjax.numpy as jnp
from xjax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()).reshape(2, -1), ("x", "y"))
x = np.arange(32.0, dtype=np.float32).reshape(4, 8)
"""


def test_device_put_splits_over_the_mesh(run_with_devices):
    out = run_with_devices(4, _SETUP + """
a = jax.device_put(x, NamedSharding(mesh, P("x")))
print(len(a.devices()), a.is_fully_replicated, a.sharding.spec)
for s in a.addressable_shards:
    assert s.data.devices() == {s.device}
    np.testing.assert_array_equal(np.asarray(s.data), x[s.index])
    print(s.device, s.index[0], s.replica_id)
np.testing.assert_array_equal(np.asarray(a), x)
np.testing.assert_array_equal(jax.device_get(a), x)
print(a.device == a.sharding, str(jax.devices()[1]))
""")
    assert out == [
        "4 False P('x',)",
        "cpu:0 slice(0, 2, None) 0", "cpu:1 slice(0, 2, None) 1",
        "cpu:2 slice(2, 4, None) 0", "cpu:3 slice(2, 4, None) 1",
        "True cpu:1"]


def test_device_put_errors_as_jax(run_with_devices):
    out = run_with_devices(4, _SETUP + """
from xjax._src.core.sharding_types import IndivisibleError
try:
    jax.device_put(np.ones(3), NamedSharding(mesh, P("x")))
except IndivisibleError as e:
    assert isinstance(e, ValueError)
    print(str(e).split(" (full shape")[0].split("implies ")[1])
a = jax.device_put(x, NamedSharding(mesh, P("x")))
try:
    a.unsafe_buffer_pointer()
except jax.errors.JaxRuntimeError as e:
    print(e)
""")
    assert out == [
        "that array axis 0 is partitioned 2 times, but the dimension size is 3",
        "INVALID_ARGUMENT: UnsafeBufferPointer() is supported only for unsharded arrays."]


def test_jit_runs_one_program_over_the_devices(run_with_devices):
    out = run_with_devices(4, _SETUP + """
a = jax.device_put(x, NamedSharding(mesh, P("x")))
b = jax.device_put(x, NamedSharding(mesh, P("x", "y")))
w = np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3)
cases = [
    (lambda v: v + 1, (a,), x + 1),
    (lambda v: v.sum(), (a,), x.sum()),
    (lambda v, w: jnp.tanh(v @ w), (a, w), np.tanh(x @ w)),
    (lambda v: v.T * 2, (b,), x.T * 2),
    (lambda v, c: v * c, (a, 3.0), x * 3),
    (lambda v: jnp.cumsum(v, axis=1), (b,), np.cumsum(x, axis=1)),
]
for f, args, expected in cases:
    r = jax.jit(f)(*args)
    np.testing.assert_allclose(np.asarray(r), expected, rtol=1e-6)
    print(r.sharding.spec, len(r.devices()))
""")
    # The result shardings JAX 0.10.2 gives for the same calls on 4 CPU devices.
    assert out == ["P('x',) 4", "P() 4", "P('x',) 4", "P('y', 'x') 4", "P('x',) 4",
                   "P('x', 'y') 4"]


def test_jit_grad_of_a_sharded_loss_matches_one_device(run_with_devices):
    out = run_with_devices(8, _SETUP + """
rng = np.random.default_rng(0)
w = rng.standard_normal((8, 4)).astype(np.float32)
xs = rng.standard_normal((16, 8)).astype(np.float32)
def loss(w, xs):
    return jnp.mean(jnp.tanh(xs @ w) ** 2)
sharded_xs = jax.device_put(xs, NamedSharding(mesh, P(("x", "y"))))
g = jax.jit(jax.grad(loss))(w, sharded_xs)
expected = jax.jit(jax.grad(loss))(w, xs)  # the same program on one device
np.testing.assert_allclose(np.asarray(g), np.asarray(expected), rtol=1e-5, atol=1e-6)
print(g.sharding.spec, len(g.devices()), len(expected.devices()))
""")
    assert out == ["P() 8 1"]


def test_jit_with_in_and_out_shardings_places_results(run_with_devices):
    out = run_with_devices(4, _SETUP + """
f = jax.jit(lambda v: v * 2, in_shardings=NamedSharding(mesh, P("x")),
            out_shardings=NamedSharding(mesh, P(None, "y")))
r = f(x)
np.testing.assert_array_equal(np.asarray(r), x * 2)
print(r.sharding.spec, [s.index for s in r.addressable_shards][:2])
main = [l for l in f.lower(x).as_text().splitlines() if "func.func public @main" in l][0]
print('sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>' in main.split(" -> ")[1])
""")
    assert out == ["P(None, 'y') [(slice(None, None, None), slice(0, 4, None)), "
                   "(slice(None, None, None), slice(4, 8, None))]",
                   "True"]


def test_in_shardings_are_the_lowered_argument_shardings(run_with_devices):
    """``lower`` lays the arguments out abstractly by ``in_shardings`` (nothing is placed),
    and ShapeDtypeStructs with shardings lower the same way, as in JAX."""
    out = run_with_devices(4, _SETUP + """
s = NamedSharding(mesh, P("x"))
f = jax.jit(lambda v, w: v @ w, in_shardings=(s, None))
lowered = f.lower(x, x.T)
main = [l for l in lowered.as_text().splitlines() if "func.func public @main" in l][0]
print(main.split(" -> ")[0].split("(", 1)[1])
np.testing.assert_array_equal(np.asarray(lowered.compile()(x, x.T)), x @ x.T)
print(lowered.compile()(x, x.T).sharding.spec)
abstract = jax.jit(lambda v, w: v @ w).lower(jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=s),
                                            jax.ShapeDtypeStruct(x.T.shape, x.dtype))
print(abstract.as_text() == lowered.as_text())
""")
    assert out == [
        '%arg0: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, '
        '%arg1: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})',
        "P('x',)", "True"]


def test_out_shardings_alone_partition_the_program(run_with_devices):
    """Unsharded arguments and multi-device out_shardings: the program runs over the
    out_shardings' mesh and produces them (JAX does the same)."""
    out = run_with_devices(4, _SETUP + """
f = jax.jit(lambda v: (v + 1, v.sum(0)), out_shardings=(NamedSharding(mesh, P("x", "y")),
                                                         NamedSharding(mesh, P("y"))))
a, b = f(x)
np.testing.assert_array_equal(np.asarray(a), x + 1)
np.testing.assert_array_equal(np.asarray(b), x.sum(0))
print(a.sharding.spec, b.sharding.spec, len(a.devices()), len(b.devices()))
try:
    jax.jit(lambda v: v, out_shardings=NamedSharding(mesh, P(None, None, "x")))(x)
except ValueError as e:
    print(type(e).__name__)
""")
    assert out == ["P('x', 'y') P('y',) 4 4", "ValueError"]


def test_arrays_on_different_devices_are_refused(run_with_devices):
    out = run_with_devices(4, _SETUP + """
left = Mesh(np.array(jax.devices()[:2]), ("x",))
right = Mesh(np.array(jax.devices()[2:]), ("x",))
a = jax.device_put(x, NamedSharding(left, P("x")))
b = jax.device_put(x, NamedSharding(right, P("x")))
try:
    jax.jit(lambda u, v: u + v)(a, b)
except ValueError as e:
    print(e)
""")
    assert out == ["Received incompatible devices for jitted computation. Got argument u of "
                   "<lambda> with shape float32[4,8] and with device ids [0, 1] on platform "
                   "CPU and argument v of <lambda> with shape float32[4,8] and with device "
                   "ids [2, 3] on platform CPU"]


def test_sharding_constraint_inside_jit_partitions_the_program(run_with_devices):
    out = run_with_devices(2, """
import numpy as np
import xjax as jax, xjax.numpy as jnp
from xjax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
s = NamedSharding(mesh, P("x"))
r = jax.jit(lambda v: jax.lax.with_sharding_constraint(v + 1, s))(jnp.zeros(20))
np.testing.assert_array_equal(np.asarray(r), np.ones(20))
print(r.sharding == s, [s.index for s in r.addressable_shards])
g = jax.jit(lambda v: jnp.sin(jax.lax.with_sharding_constraint(
    v, NamedSharding(mesh, P(None, "x")))).sum(0))
y = g(jnp.ones((3, 4)))
np.testing.assert_allclose(np.asarray(y), np.full(4, 3 * np.sin(1.0)), rtol=1e-6)
print(y.sharding.spec)
""")
    # JAX 0.10.2 on 2 CPU devices: the constrained result keeps the constraint's sharding.
    assert out == ["True [(slice(0, 10, None),), (slice(10, 20, None),)]", "P('x',)"]


def test_eager_operations_on_sharded_arrays_run_over_their_devices(run_with_devices):
    out = run_with_devices(4, _SETUP + """
a = jax.device_put(x, NamedSharding(mesh, P("x")))
w = np.ones((8, 2), np.float32)
cases = [(a + 1, x + 1), (a.sum(), x.sum()), (jnp.sin(a), np.sin(x)), (a @ w, x @ w),
         (a[0], x[0]), (jnp.where(a > 3, a, 0), np.where(x > 3, x, 0)), (a.T, x.T)]
for r, expected in cases:
    np.testing.assert_allclose(np.asarray(r), expected, rtol=1e-6)
    print(r.sharding.spec, len(r.devices()))
""")
    # JAX 0.10.2 gives the same shardings for the same eager operations.
    assert out == ["P('x',) 4", "P() 4", "P('x',) 4", "P('x',) 4", "P() 4", "P('x',) 4",
                   "P(None, 'x') 4"]


def test_constraint_over_the_abstract_context_mesh(run_with_devices):
    out = run_with_devices(4, """
import numpy as np
import xjax as jax, xjax.numpy as jnp
from xjax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 2), ("model", "data"), axis_types=(jax.sharding.AxisType.Auto,) * 2)

@jax.jit
def make():
    abstract = jax.sharding.get_abstract_mesh()
    return jax.lax.with_sharding_constraint(jnp.ones((8, 2)),
                                            NamedSharding(abstract, P("model", "data")))

with jax.set_mesh(mesh):
    w = make()
    x = jax.device_put(jnp.arange(32.0).reshape(4, 8), P(None, "model"))
    y = x @ w
np.testing.assert_allclose(np.asarray(y), np.arange(32.0).reshape(4, 8) @ np.ones((8, 2)))
print(w.sharding.spec, w.sharding.shard_shape(w.shape), y.sharding.spec)
""")
    # JAX 0.10.2 (Flax's nnx.with_partitioning test does this).
    assert out == ["P('model', 'data') (4, 1) P(None, 'data')"]


def test_jit_runs_where_its_arguments_are_committed(run_with_devices):
    """An argument placed on another device than the first: the program runs there (as
    in JAX); arguments committed to two devices are refused with JAX's message."""
    out = run_with_devices(4, _SETUP + """
on1 = jax.device_put(x, jax.devices()[1])
r = jax.jit(lambda v: v * 2)(on1)
np.testing.assert_array_equal(np.asarray(r), x * 2)
print(r.devices(), r.committed, type(r.sharding).__name__)
r = jax.jit(lambda u, v: u + v)(jnp.ones((4, 8)), on1)  # the uncommitted one follows
np.testing.assert_array_equal(np.asarray(r), x + 1)
print(r.devices())
on0 = jax.device_put(x, jax.devices()[0])
try:
    jax.jit(lambda u, v: u + v)(on0, on1)
except ValueError as e:
    print(str(e).split(" and argument ")[1])
""")
    assert out == ["{CpuDevice(id=1)} True SingleDeviceSharding", "{CpuDevice(id=1)}",
                   "v of <lambda> with shape float32[4,8] and with device ids [1] on platform "
                   "CPU"]


def test_eager_operations_run_where_their_operands_are_committed(run_with_devices):
    """An eager operation on an array committed to a device other than the first runs
    there and its result is committed there, as JAX's; operands committed to two devices
    are refused with JAX's message (lax-level names, as JAX gives for ``lax.add``)."""
    out = run_with_devices(4, _SETUP + """
on2 = jax.device_put(x, jax.devices()[2])
for r in (jnp.sin(on2) + 1, on2 * jnp.ones((4, 8)), jnp.sum(on2, axis=0), on2[1:], on2.T):
    print(r.devices(), r.committed)
np.testing.assert_allclose(np.asarray(jnp.sin(on2) + 1), np.sin(x) + 1, rtol=1e-6)
np.testing.assert_array_equal(np.asarray(on2.T @ on2), x.T @ x)
print(jnp.ones(3).devices(), jnp.ones(3).committed)
try:
    jax.lax.add(on2, jax.device_put(x, jax.devices()[1]))
except ValueError as e:
    print(str(e).split(" and argument ")[1])
""")
    assert out == ["{CpuDevice(id=2)} True"] * 5 + [
        "{CpuDevice(id=0)} False",
        "args[1] of add with shape float32[4,8] and with device ids [1] on platform CPU"]
