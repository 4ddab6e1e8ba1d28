"""The runtime on several CPU devices: one SPMD program compiled by XLA's partitioner over
N devices and run once with N argument lists (issue 17's first layer).

The CPU client's device count is fixed when it is created, so each check runs in a fresh
interpreter with ``XJAX_NUM_CPU_DEVICES`` set; the results are checked there against NumPy.
"""


import pytest


_SETUP = """
import numpy as np
from xjax._src.runtime.client import get_client
client = get_client("cpu")

def shards(x, n):
    return np.split(x, n)

def run(exe, per_device_args):
    args = [[client.buffer_from_numpy(a, d) for a in arrays]
            for arrays, d in zip(per_device_args, exe.devices, strict=True)]
    return [[b.to_numpy() for b in outs] for outs in exe.execute_sharded(args)]
"""

# A module as JAX 0.10.2 lowers jit(lambda a: (a * 2, jnp.sum(a))) of an input sharded over
# a 1-D mesh (its result shardings written out): XLA inserts the all-reduce of the sum.
_SCALE_AND_SUM = '''module @m attributes {mhlo.num_partitions = %(n)d : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=%(n)d]>
  func.func public @main(%%arg0: tensor<%(size)dxf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>})
      -> (tensor<%(size)dxf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>},
          tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}) {
    %%cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %%0 = stablehlo.broadcast_in_dim %%cst, dims = [] : (tensor<f32>) -> tensor<%(size)dxf32>
    %%1 = stablehlo.multiply %%arg0, %%0 : tensor<%(size)dxf32>
    %%zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %%2 = stablehlo.reduce(%%arg0 init: %%zero) applies stablehlo.add across dimensions = [0]
        : (tensor<%(size)dxf32>, tensor<f32>) -> tensor<f32>
    return %%1, %%2 : tensor<%(size)dxf32>, tensor<f32>
  }
}'''


@pytest.mark.parametrize("count", [4, 8])
def test_spmd_program_runs_on_every_device(count, run_with_devices):
    module = _SCALE_AND_SUM % {"n": count, "size": 2 * count}
    out = run_with_devices(count, _SETUP + f"""
module = {module!r}
exe = client.compile_partitioned(module, client.devices)
assert exe.devices == client.devices and len(exe.devices) == {count}
x = np.random.default_rng(0).standard_normal({2 * count}).astype(np.float32)
results = run(exe, [[s] for s in shards(x, {count})])
np.testing.assert_array_equal(np.concatenate([r[0] for r in results]), x * 2)
for r in results:  # every device holds the replicated sum
    np.testing.assert_allclose(r[1], x.sum(), rtol=1e-6)
print("ok")
""")
    assert out == ["ok"]


def test_execute_sharded_checks_its_argument_lists(run_with_devices):
    module = _SCALE_AND_SUM % {"n": 4, "size": 8}
    out = run_with_devices(4, _SETUP + f"""
exe = client.compile_partitioned({module!r}, client.devices)
x = np.zeros(2, np.float32)
on_device_0 = [[client.buffer_from_numpy(x, client.devices[0])] for _ in range(4)]
for bad, cls in [([[client.buffer_from_numpy(x, d)] for d in client.devices[:3]], ValueError),
                 (on_device_0, ValueError),
                 ([[x] for _ in range(4)], TypeError)]:
    try:
        exe.execute_sharded(bad)
    except cls as e:
        print(type(e).__name__, str(e).split(":")[0])
    else:
        raise AssertionError("accepted")
""")
    assert out == [
        "ValueError execute_sharded() takes 4 argument lists (one per device), got 3",
        "ValueError execute_sharded()",
        "TypeError execute_sharded()"]


def test_partitioned_compile_rejects_foreign_devices(run_with_devices):
    out = run_with_devices(2, _SETUP + """
from xjax._src.runtime.client import Device
stranger = Device(client, "cpu", 7, "cpu", "CpuDevice(id=7)", 7)
try:
    client.compile_partitioned("module {}", [client.devices[0], stranger])
except ValueError as e:
    print(e)
""")
    assert out == ["CpuDevice(id=7) is not a device of the cpu client"]
