"""Tests of xjax.runtime: PJRT client, buffers, compile and execute on the CPU plugin.

Programs are hand-written StableHLO in the generic operation form, as the lowering emits.
"""

import gc
import os
import subprocess
import sys
import threading
import weakref

import ml_dtypes
import numpy as np
import pytest

from xjax._src import runtime as rt
from xjax._src.runtime import _dtypes, _pjrt

CLIENT = rt.get_client("cpu")


def _mlir_type(shape, dtype) -> str:
    names = {
        np.dtype(np.bool_): "i1", np.dtype(np.float16): "f16", np.dtype(np.float32): "f32",
        np.dtype(np.float64): "f64", np.dtype(ml_dtypes.bfloat16): "bf16",
        np.dtype(np.complex64): "complex<f32>", np.dtype(np.complex128): "complex<f64>",
    }
    dt = np.dtype(dtype)
    if dt in names:
        elt = names[dt]
    elif dt.kind in "iu":
        elt = ("i" if dt.kind == "i" else "ui") + str(dt.itemsize * 8)
    else:  # ml_dtypes float8 / sub-byte types
        elt = {
            "float8_e5m2": "f8E5M2", "float8_e4m3fn": "f8E4M3FN",
            "float8_e4m3b11fnuz": "f8E4M3B11FNUZ", "float8_e5m2fnuz": "f8E5M2FNUZ",
            "float8_e4m3fnuz": "f8E4M3FNUZ", "float8_e4m3": "f8E4M3", "float8_e3m4": "f8E3M4",
            "float8_e8m0fnu": "f8E8M0FNU", "float4_e2m1fn": "f4E2M1FN",
            "int4": "i4", "uint4": "ui4", "int2": "i2", "uint2": "ui2",
        }[dt.name]
    dims = "x".join(str(d) for d in shape)
    return f"tensor<{dims}x{elt}>" if shape else f"tensor<{elt}>"


def unary_module(op, shape, dtype, out_dtype=None) -> str:
    t = _mlir_type(shape, dtype)
    r = _mlir_type(shape, out_dtype or dtype)
    return f"""
module @m {{
  func.func public @main(%arg0: {t}) -> ({r}) {{
    %0 = "{op}"(%arg0) : ({t}) -> {r}
    return %0 : {r}
  }}
}}"""


def identity_module(shape, dtype) -> str:
    t = _mlir_type(shape, dtype)
    return f"""
module @m {{
  func.func public @main(%arg0: {t}) -> ({t}) {{
    return %arg0 : {t}
  }}
}}"""


def add_module(shape, dtype) -> str:
    t = _mlir_type(shape, dtype)
    return f"""
module @m {{
  func.func public @main(%arg0: {t}, %arg1: {t}) -> ({t}) {{
    %0 = "stablehlo.add"(%arg0, %arg1) : ({t}, {t}) -> {t}
    return %0 : {t}
  }}
}}"""


ADD4 = add_module((4,), np.float32)

ALL_DTYPES = [
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.complex64,
    np.complex128,
]
EXTRA_DTYPES = [
    getattr(ml_dtypes, n) for n in (
        "float8_e5m2", "float8_e4m3fn", "float8_e4m3b11fnuz", "float8_e5m2fnuz",
        "float8_e4m3fnuz", "float8_e4m3", "float8_e3m4", "float8_e8m0fnu")
    if hasattr(ml_dtypes, n)
]
SUBBYTE_DTYPES = [getattr(ml_dtypes, n) for n in ("int4", "uint4", "int2", "uint2",
                                                  "float4_e2m1fn") if hasattr(ml_dtypes, n)]


def random_array(shape, dtype, seed=0) -> np.ndarray:
    """Random values covering every bit pattern the dtype allows (bit-exact checks)."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dt in [np.dtype(d) for d in SUBBYTE_DTYPES]:
        bits = 2 if "2" in dt.name and "e2m1" not in dt.name else 4
        codes = rng.integers(0, 1 << bits, shape).astype(np.uint8)
        return codes.view(dt)
    raw = rng.integers(0, 256, int(np.prod(shape, dtype=np.int64)) * dt.itemsize, np.uint8)
    arr = raw.view(dt).reshape(shape)
    if dt.kind in "fc" or dt.name.startswith("float") or dt.name.startswith("bfloat"):
        # NaN payloads are not preserved by every copy path; use finite values.
        finite = np.isfinite(arr.astype(np.complex128 if dt.kind == "c" else np.float64))
        arr = np.where(finite, arr, np.zeros((), dt)).astype(dt)
    return arr


def aligned(a: np.ndarray, alignment: int = 64, readonly: bool = False) -> np.ndarray:
    """A copy of `a` whose data starts at a multiple of `alignment` bytes (PJRT's CPU
    client aliases host memory only when it is suitably aligned). ``readonly`` gives memory
    nothing can write instead, the only kind aliased without may_alias=True: the read-only
    NumPy view of a device buffer's memory (64-byte aligned by PJRT)."""
    if readonly:
        return CLIENT.buffer_from_numpy(a, may_alias=False).to_numpy()
    raw = np.empty(a.nbytes + alignment, np.uint8)
    off = (-raw.ctypes.data) % alignment
    out = raw[off:off + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


def bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


# --------------------------------------------------------------------------- devices


def test_devices_and_backend():
    devs = rt.devices()
    assert devs and all(isinstance(d, rt.Device) for d in devs)
    d = devs[0]
    assert d.platform == "cpu" and d.id == 0 and isinstance(d.device_kind, str)
    assert repr(d) == "CpuDevice(id=0)"
    assert hash(d) == hash(rt.devices("cpu")[0]) and d == rt.devices("cpu")[0]
    assert len({*devs}) == len(devs)
    assert rt.default_backend() in ("cpu", "gpu")
    assert rt.get_client() is rt.get_client("cpu") is CLIENT
    assert CLIENT.platform == "cpu" and tuple(CLIENT.devices) == tuple(rt.devices("cpu"))


def test_plugin_version_string():
    v = rt.plugin_version("cpu")
    assert isinstance(v, str) and "pjrt_c_api=" in v and "xla-cpu-pjrt" in v
    assert v == rt.plugin_version()
    major, minor = CLIENT.plugin.api_version
    assert (major, minor)[0] == _pjrt.HEADER_API_VERSION[0]


def test_incompatible_plugin_is_refused(tmp_path):
    bogus = tmp_path / "not_a_plugin.so"
    bogus.write_bytes(b"garbage")
    with pytest.raises(ImportError):
        _pjrt.load_plugin(str(bogus))


# --------------------------------------------------------------------------- basics


def test_add_numpy_and_buffer_inputs():
    exe = CLIENT.compile(ADD4)
    assert exe.num_outputs == 1
    assert exe.output_shapes == ((4,),) and exe.output_dtypes == (np.dtype(np.float32),)
    x = np.array([1.5, -2.0, 3.25, 0.0], np.float32)
    y = np.array([0.5, 4.0, -1.0, 2.0], np.float32)
    (out,) = exe.execute([x, y])
    assert isinstance(out, rt.DeviceBuffer)
    assert out.shape == (4,) and out.dtype == np.float32 and out.device == rt.devices()[0]
    np.testing.assert_array_equal(out.to_numpy(), x + y)
    xb, yb = CLIENT.buffer_from_numpy(x), CLIENT.buffer_from_numpy(y)
    np.testing.assert_array_equal(exe.execute([xb, yb])[0].to_numpy(), x + y)
    np.testing.assert_array_equal(exe.execute((xb, y))[0].to_numpy(), x + y)
    assert "DeviceBuffer(shape=(4,), dtype=float32" in repr(out)


def test_to_numpy_is_readonly_zero_copy_view():
    exe = CLIENT.compile(ADD4)
    x = np.arange(4, dtype=np.float32)
    (out,) = exe.execute([x, x])
    a = out.to_numpy()
    assert not a.flags.writeable
    assert a.base.owner is out  # the view keeps the device buffer alive
    assert a.ctypes.data == out.unsafe_buffer_pointer()
    with pytest.raises(ValueError):
        a[0] = 1
    b = out.copy_to_host()
    assert b.flags.writeable and b.ctypes.data != a.ctypes.data
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(np.asarray(out), x + x)
    ref = weakref.ref(out)
    del out, b
    gc.collect()
    assert ref() is not None  # still alive through the view
    np.testing.assert_array_equal(a, x + x)
    del a
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize("dtype", ALL_DTYPES + EXTRA_DTYPES + SUBBYTE_DTYPES,
                         ids=lambda d: np.dtype(d).name)
def test_dtype_round_trip_bit_exact(dtype):
    x = random_array((3, 5), dtype)
    b = CLIENT.buffer_from_numpy(x)
    assert b.dtype == np.dtype(dtype) and b.shape == (3, 5)
    y = b.to_numpy()
    assert y.dtype == np.dtype(dtype) and y.shape == (3, 5)
    assert bits(y) == bits(x)
    # and through a compiled identity (device-side representation)
    exe = CLIENT.compile(identity_module((3, 5), dtype))
    (out,) = exe.execute([x])
    assert out.dtype == np.dtype(dtype)
    assert bits(out.to_numpy()) == bits(x)
    (out2,) = exe.execute([b])
    assert bits(out2.to_numpy()) == bits(x)


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.complex64, ml_dtypes.bfloat16,
                                   np.bool_, ml_dtypes.int4],
                         ids=lambda d: np.dtype(d).name)
def test_compute_matches_numpy(dtype):
    dt = np.dtype(dtype)
    op = "stablehlo.or" if dt == np.bool_ else "stablehlo.add"
    t = _mlir_type((2, 3), dt)
    mod = f"""
module @m {{
  func.func public @main(%arg0: {t}, %arg1: {t}) -> ({t}) {{
    %0 = "{op}"(%arg0, %arg1) : ({t}, {t}) -> {t}
    return %0 : {t}
  }}
}}"""
    if dt.name == "int4":
        x = np.array([[1, -2, 3], [-8, 7, 0]], dt)
        y = np.array([[2, 1, -4], [3, -7, 5]], dt)
        expect = (x.astype(np.int8) + y.astype(np.int8)).astype(dt)
    else:
        x, y = random_array((2, 3), dt, 1), random_array((2, 3), dt, 2)
        with np.errstate(all="ignore"):
            expect = x | y if dt == np.bool_ else (x + y).astype(dt)
    out = CLIENT.compile(mod).execute([x, y])[0].to_numpy()
    assert bits(out) == bits(expect)


def test_zero_d_arrays():
    t = "tensor<f32>"
    mod = f"""
module @m {{
  func.func public @main(%arg0: {t}, %arg1: {t}) -> ({t}) {{
    %0 = "stablehlo.multiply"(%arg0, %arg1) : ({t}, {t}) -> {t}
    return %0 : {t}
  }}
}}"""
    exe = CLIENT.compile(mod)
    assert exe.output_shapes == ((),)
    (out,) = exe.execute([np.float32(3.0), np.array(2.5, np.float32)])
    assert out.shape == ()
    r = out.to_numpy()
    assert r.shape == () and r.dtype == np.float32 and r == 7.5
    b = CLIENT.buffer_from_numpy(np.array(True))
    assert b.shape == () and b.to_numpy()[()] is np.True_


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 2, 5)])
def test_zero_size_arrays(shape):
    x = np.zeros(shape, np.float32)
    b = CLIENT.buffer_from_numpy(x)
    assert b.shape == shape and b.to_numpy().shape == shape
    (out,) = CLIENT.compile(add_module(shape, np.float32)).execute([x, b])
    assert out.shape == shape
    r = out.to_numpy()
    assert r.shape == shape and r.dtype == np.float32 and r.size == 0


def test_multiple_outputs():
    t4, t2 = "tensor<4xf32>", "tensor<2x2xi32>"
    mod = f"""
module @m {{
  func.func public @main(%arg0: {t4}, %arg1: {t2}) -> ({t4}, {t2}, {t4}) {{
    %0 = "stablehlo.add"(%arg0, %arg0) : ({t4}, {t4}) -> {t4}
    %1 = "stablehlo.multiply"(%arg1, %arg1) : ({t2}, {t2}) -> {t2}
    %2 = "stablehlo.negate"(%arg0) : ({t4}) -> {t4}
    return %0, %1, %2 : {t4}, {t2}, {t4}
  }}
}}"""
    exe = CLIENT.compile(mod)
    assert exe.num_outputs == 3
    assert exe.output_shapes == ((4,), (2, 2), (4,))
    x = np.array([1, 2, 3, 4], np.float32)
    y = np.array([[1, -2], [3, 4]], np.int32)
    a, b, c = exe.execute([x, y])
    np.testing.assert_array_equal(a.to_numpy(), x + x)
    np.testing.assert_array_equal(b.to_numpy(), y * y)
    np.testing.assert_array_equal(c.to_numpy(), -x)


def test_many_arguments_and_outputs():
    n = 40  # beyond the extension's on-stack fast path
    t = "tensor<2xf32>"
    args = ", ".join(f"%a{i}: {t}" for i in range(n))
    outs = ", ".join(t for _ in range(n))
    body = "\n".join(
        f'    %r{i} = "stablehlo.add"(%a{i}, %a{(i + 1) % n}) : ({t}, {t}) -> {t}'
        for i in range(n))
    rets = ", ".join(f"%r{i}" for i in range(n))
    mod = f"""
module @m {{
  func.func public @main({args}) -> ({outs}) {{
{body}
    return {rets} : {outs}
  }}
}}"""
    xs = [np.array([i, -i], np.float32) for i in range(n)]
    res = CLIENT.compile(mod).execute(xs)
    assert len(res) == n
    for i in range(n):
        np.testing.assert_array_equal(res[i].to_numpy(), xs[i] + xs[(i + 1) % n])


def test_non_contiguous_and_byteswapped_inputs():
    base = np.arange(32, dtype=np.float32).reshape(4, 8)
    x = base[:, ::2]  # non-contiguous (4, 4)
    assert not x.flags.c_contiguous
    exe = CLIENT.compile(add_module((4, 4), np.float32))
    np.testing.assert_array_equal(exe.execute([x, x.T])[0].to_numpy(), x + x.T)
    be = x.astype(">f4")
    np.testing.assert_array_equal(exe.execute([be, x])[0].to_numpy(), x + x)
    b = CLIENT.buffer_from_numpy(np.asfortranarray(x))
    np.testing.assert_array_equal(b.to_numpy(), x)


def test_python_scalars_and_lists_are_converted():
    exe = CLIENT.compile(add_module((2,), np.float64))
    out = exe.execute([[1.0, 2.0], np.array([3.0, 4.0])])[0]
    np.testing.assert_array_equal(out.to_numpy(), [4.0, 6.0])


def test_unsupported_dtype_raises_type_error():
    with pytest.raises(TypeError, match="no device type"):
        CLIENT.buffer_from_numpy(np.array(["a", "b"]))


def test_transposed_output_layout_is_row_major():
    mod = """
module @m {
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<3x2xf32>) {
    %0 = "stablehlo.transpose"(%arg0) {permutation = array<i64: 1, 0>}
        : (tensor<2x3xf32>) -> tensor<3x2xf32>
    return %0 : tensor<3x2xf32>
  }
}"""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = CLIENT.compile(mod).execute([x])[0].to_numpy()
    np.testing.assert_array_equal(out, x.T)


def test_device_buffer_reused_many_times():
    exe = CLIENT.compile(ADD4)
    x = np.array([1, 2, 3, 4], np.float32)
    xb = CLIENT.buffer_from_numpy(x)
    acc = xb
    for _ in range(100):
        acc = exe.execute([acc, xb])[0]
    np.testing.assert_array_equal(acc.to_numpy(), x * 101)
    np.testing.assert_array_equal(xb.to_numpy(), x)


def test_buffer_on_another_device():
    devs = rt.devices()
    if len(devs) < 2:
        pytest.skip("one CPU device")
    x = np.arange(4, dtype=np.float32)
    b = CLIENT.buffer_from_numpy(x, devs[1])
    assert b.device == devs[1]
    exe = CLIENT.compile(ADD4, device=devs[1])
    assert exe.device == devs[1]
    (out,) = exe.execute([b, x])
    assert out.device == devs[1]
    np.testing.assert_array_equal(out.to_numpy(), x + x)
    with pytest.raises(ValueError):
        CLIENT.buffer_from_numpy(x, "not a device")


def test_cpu_device_count_from_environment():
    code = (
        "import numpy as np, xjax._src.runtime as rt\n"
        "d = rt.devices('cpu'); assert [x.id for x in d] == [0, 1, 2], d\n"
        "c = rt.get_client()\n"
        "exe = c.compile(%r, device=d[2])\n"
        "x = np.arange(4, dtype=np.float32)\n"
        "(o,) = exe.execute([c.buffer_from_numpy(x, d[2]), x])\n"
        "assert o.device is d[2] and (o.to_numpy() == 2 * x).all()\n"
        "print('ok')\n"
    ) % ADD4
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=3")
    env.pop("XJAX_NUM_CPU_DEVICES", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # import what we import
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok" and r.stderr == ""


# --------------------------------------------------------------------------- errors


def test_compile_error_has_xla_message():
    bad = ADD4.replace('"stablehlo.add"', '"stablehlo.no_such_op"')
    with pytest.raises(rt.XlaRuntimeError) as info:
        CLIENT.compile(bad)
    msg = str(info.value)
    assert isinstance(info.value, RuntimeError)
    assert "no_such_op" in msg and msg.split(":")[0].isupper()
    with pytest.raises(rt.XlaRuntimeError):
        CLIENT.compile("this is not MLIR")


def test_compile_options_are_passed_to_xla_by_name():
    x = np.arange(4, dtype=np.float32)
    for options in ({"xla_cpu_enable_fast_math": True}, {"xla_backend_optimization_level": 0},
                    {"xla_cpu_enable_fast_math": np.bool_(False)}):
        exe = CLIENT.compile(ADD4, compiler_options=options)
        np.testing.assert_array_equal(exe.execute([x, x])[0].to_numpy(), 2 * x)
    with pytest.raises(rt.XlaRuntimeError, match="No such compile option: 'xla_foo'"):
        CLIENT.compile(ADD4, compiler_options={"xla_foo": 1})
    with pytest.raises(rt.XlaRuntimeError, match="'1.5' is not a valid bool value"):
        CLIENT.compile(ADD4, compiler_options={"xla_cpu_enable_fast_math": 1.5})
    with pytest.raises(TypeError, match="must be a str, bool, int or float"):
        CLIENT.compile(ADD4, compiler_options={"xla_cpu_enable_fast_math": None})
    assert rt.compile_options(overrides={}) == rt.compile_options()
    assert rt.compile_options(overrides={"a": True}) != rt.compile_options()


def test_hlo_text_of_a_module():
    text = CLIENT.hlo_text(ADD4)
    assert text.startswith("HloModule ") and "ENTRY" in text
    assert "f32[4]{0} add(" in text and text.count("parameter(") == 2


def test_type_mismatch_in_module_is_reported():
    bad = ADD4.replace("-> tensor<4xf32>\n", "-> tensor<5xf32>\n", 1)
    with pytest.raises(rt.XlaRuntimeError):
        CLIENT.compile(bad)


def test_wrong_argument_count_raises():
    exe = CLIENT.compile(ADD4)
    with pytest.raises(rt.XlaRuntimeError):
        exe.execute([np.zeros(4, np.float32)])


def test_deleted_buffer():
    x = np.arange(4, dtype=np.float32)
    b = CLIENT.buffer_from_numpy(x)
    b.delete()
    assert b.is_deleted()
    b.delete()  # idempotent
    with pytest.raises(rt.XlaRuntimeError, match="deleted"):
        b.to_numpy()
    with pytest.raises(rt.XlaRuntimeError, match="deleted"):
        CLIENT.compile(ADD4).execute([b, x])


def test_delete_with_live_numpy_view_keeps_memory():
    x = np.arange(4, dtype=np.float32)
    b = CLIENT.buffer_from_numpy(x)
    view = b.to_numpy()
    b.delete()
    np.testing.assert_array_equal(view, x)  # memory freed only when the view dies
    with pytest.raises(rt.XlaRuntimeError):
        b.to_numpy()


# --------------------------------------------------------------------------- async


def _slow_module(n=256, iters=64) -> str:
    t = f"tensor<{n}x{n}xf32>"
    ops = ['%v0 = "stablehlo.dot_general"(%arg0, %arg0) {dot_dimension_numbers = '
           '#stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}'
           f' : ({t}, {t}) -> {t}']
    for i in range(1, iters):
        ops.append(f'%v{i} = "stablehlo.dot_general"(%v{i - 1}, %arg0) {{dot_dimension_numbers = '
                   '#stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions'
                   f' = [0]>}} : ({t}, {t}) -> {t}')
    body = "\n    ".join(ops)
    return f"""
module @m {{
  func.func public @main(%arg0: {t}) -> ({t}) {{
    {body}
    return %v{iters - 1} : {t}
  }}
}}"""


def test_async_execute_then_block_until_ready():
    exe = CLIENT.compile(_slow_module())
    x = (np.eye(256, dtype=np.float32) * 1.0)
    outs = [exe.execute([x])[0] for _ in range(3)]
    # execute returns before the work is done (at least the later ones are queued)
    states = [o.is_ready() for o in outs]
    assert not all(states)  # returned before the computation finished
    for o in outs:
        assert o.block_until_ready() is o
        assert o.is_ready()
    np.testing.assert_array_equal(outs[-1].to_numpy(), x)


@pytest.mark.parametrize("is_aligned", [True, False])
@pytest.mark.parametrize("readonly", [False, True])
def test_numpy_input_collected_while_running_is_safe(is_aligned, readonly):
    n = 256
    exe = CLIENT.compile(_slow_module(n, 32))
    outs = []
    for k in range(4):
        x = np.eye(n, dtype=np.float32) * (k + 1)
        x = aligned(x, readonly=readonly) if is_aligned else np.ascontiguousarray(x)
        outs.append(exe.execute([x])[0])
        del x  # only PJRT (through the extension) references the array now
        gc.collect()
        # overwrite freed memory aggressively
        junk = [np.full((n, n), 7.0, np.float32) for _ in range(4)]
        del junk
    for k, o in enumerate(outs):
        np.testing.assert_allclose(o.to_numpy(), np.eye(n) * float(k + 1) ** 33, rtol=1e-5)


def test_aliased_numpy_input_is_kept_alive_until_done():
    n = 256
    exe = CLIENT.compile(_slow_module(n, 32))
    x = aligned(np.eye(n, dtype=np.float32) * 2, readonly=True)
    before = sys.getrefcount(x)
    (out,) = exe.execute([x])
    assert sys.getrefcount(x) == before + 1  # held while PJRT may read it
    np.testing.assert_allclose(out.to_numpy(), np.eye(n) * 2.0 ** 33, rtol=1e-5)
    CLIENT._sweep(True)
    assert sys.getrefcount(x) == before


def test_may_alias_shares_memory_and_copy_does_not():
    x = aligned(np.arange(1 << 14, dtype=np.float32))
    shared = CLIENT.buffer_from_numpy(x, may_alias=True)
    assert shared.unsafe_buffer_pointer() == x.ctypes.data
    copied = CLIENT.buffer_from_numpy(x)
    assert copied.unsafe_buffer_pointer() != x.ctypes.data
    x[0] = 42.0  # the default (a copy) is immune to later mutation
    assert copied.to_numpy()[0] == 0.0
    refs = sys.getrefcount(x)
    del shared
    CLIENT._sweep(True)
    assert sys.getrefcount(x) == refs - 1  # released once PJRT let go of it


def test_only_memory_nothing_can_write_is_aliased_by_default():
    data = np.arange(1 << 14, dtype=np.float32)
    frozen = aligned(data, readonly=True)
    assert CLIENT.buffer_from_numpy(frozen).unsafe_buffer_pointer() == frozen.ctypes.data
    assert (CLIENT.buffer_from_numpy(frozen, may_alias=False).unsafe_buffer_pointer()
            != frozen.ctypes.data)
    # A read-only view of a writeable array can still change: copied.
    writeable = aligned(data)
    view = writeable.view()
    view.flags.writeable = False
    assert CLIENT.buffer_from_numpy(view).unsafe_buffer_pointer() != view.ctypes.data
    # So can a read-only array owning its memory (its holder may make it writeable again).
    writeable.base.flags.writeable = False
    owner_view = writeable.base[:0]
    assert not _pjrt.is_immutable(writeable) and not _pjrt.is_immutable(owner_view)
    assert CLIENT.buffer_from_numpy(writeable).unsafe_buffer_pointer() != writeable.ctypes.data
    # A read-only C-contiguous view of a writeable Fortran-order array is no different.
    fortran = np.asfortranarray(np.ones((64, 64), np.float32))
    c_view = fortran.T
    c_view.flags.writeable = False
    assert c_view.flags.c_contiguous and not _pjrt.is_immutable(c_view)
    assert _pjrt.is_immutable(np.frombuffer(b"immutable bytes!", np.uint8))


def test_writes_after_execute_never_change_the_result():
    n = 256
    exe = CLIENT.compile(_slow_module(n, 32))
    for trial in range(20):
        x = aligned(np.eye(n, dtype=np.float32) * 2)
        (out,) = exe.execute([x])
        x[...] = 5.0  # while the program may still be running
        np.testing.assert_allclose(out.to_numpy(), np.eye(n) * 2.0 ** 33, rtol=1e-5)


def test_argument_whose_conversion_drops_the_argument_list():
    # The conversion hook (here __array__) runs Python code that may free the list and so
    # the argument itself: execute() must hold it first (it crashed, 5 of 5 runs).
    exe = CLIENT.compile(ADD4)

    class DropsTheList:
        def __init__(self, args):
            self.args = args

        def __array__(self, dtype=None, copy=None):
            self.args.clear()
            return np.ones(4, np.float32)

    for _ in range(5):
        args = [np.arange(4, dtype=np.float32), None]
        args[1] = DropsTheList(args)
        (out,) = exe.execute(args)
        np.testing.assert_array_equal(out.to_numpy(), np.arange(4, dtype=np.float32) + 1)


def test_execute_from_many_threads():
    exe = CLIENT.compile(ADD4)
    errors = []

    def work(k):
        try:
            x = np.full(4, k, np.float32)
            for _ in range(500):
                (o,) = exe.execute([x, x])
            np.testing.assert_array_equal(o.to_numpy(), x + x)
        except Exception as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


# --------------------------------------------------------------------------- leaks


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
def test_many_executions_do_not_leak():
    exe = CLIENT.compile(ADD4)
    x = np.arange(4, dtype=np.float32)
    xb = CLIENT.buffer_from_numpy(x)
    big = aligned(np.ones(1 << 16, np.float32), readonly=True)  # aliased, not copied
    big_copied = np.ones(1 << 16, np.float32)  # writeable: copied
    exe_big = CLIENT.compile(add_module((1 << 16,), np.float32))

    def round_():
        for _ in range(10000):
            (o,) = exe.execute([x, xb])
            o.to_numpy()
            exe.execute([x, x])[0].block_until_ready()
            CLIENT.buffer_from_numpy(x)
        for _ in range(300):
            exe_big.execute([big, big])[0].to_numpy()
            exe_big.execute([big_copied, big])[0].to_numpy()

    round_()  # warm up allocator pools
    gc.collect()
    start = _rss_bytes()
    for _ in range(3):
        round_()
    gc.collect()
    growth = _rss_bytes() - start
    assert growth < 8 << 20, f"RSS grew by {growth / 2**20:.1f} MiB over 30000 executions"


def test_dtype_tables_are_consistent():
    for p, dt in _dtypes.PTYPE_TO_DTYPE.items():
        assert _dtypes.DTYPE_TO_PTYPE[dt] == p
    for d in ALL_DTYPES:
        assert np.dtype(d) in _dtypes.DTYPE_TO_PTYPE
