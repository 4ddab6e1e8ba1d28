"""A default backend other than the CPU, tested on a machine without a GPU.

With ``XJAX_STAND_IN_GPU=1`` the "gpu" platform is a second client of the CPU plugin named
as the CUDA one: it is the default backend, arrays live on it, eager operations run
compiled on it, and moving data between it and the CPU client crosses two PJRT clients as
it would between a GPU and the host. What runs on it is checked against NumPy. The
platform is chosen once per process, so each case runs one script in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

_STAND_IN_SCRIPT = textwrap.dedent(r"""
    import json, os, sys
    import numpy as np
    import xjax, xjax.numpy as jnp
    from xjax._src.core.array import Array
    from xjax._src import runtime

    out = {}
    gpu, cpu = xjax.devices()[0], xjax.devices("cpu")[0]
    out["backend"] = xjax.default_backend()
    out["devices"] = [repr(d) for d in xjax.devices()]
    out["str"], out["platform"] = str(gpu), gpu.platform

    def where(a):
        return [str(d) for d in a.devices()] + [str(a._buffer.device)]

    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 4)).astype(np.float32)
    b = rng.standard_normal((4, 3)).astype(np.float32)
    x, y = jnp.asarray(a), xjax.device_put(b)
    out["put_uncommitted"] = [where(y), y.committed]

    # eager operations run compiled on the default device; results stay there
    eager = {"sin_add": (jnp.sin(x) + 1.0, np.sin(a) + 1.0),
             "dot": (jnp.dot(x, y), a @ b),
             "sum": (jnp.sum(x, axis=0), a.sum(0)),
             "cumsum": (jnp.cumsum(x, axis=1), np.cumsum(a, axis=1)),
             "where": (jnp.where(x > 0, x, 0.0), np.where(a > 0, a, 0.0)),
             "index": (x[1:3, ::2], a[1:3, ::2])}
    out["eager"] = {k: [where(r), float(np.max(np.abs(np.asarray(r) - e)))]
                    for k, (r, e) in eager.items()}
    g = xjax.grad(lambda w: jnp.sum(jnp.tanh(x @ w)))(y)
    expect = a.T @ (1 - np.tanh(a @ b) ** 2)
    out["grad"] = [where(g), float(np.max(np.abs(np.asarray(g) - expect)))]

    # jit: compiled for the default device, async results, block_until_ready
    f = xjax.jit(lambda u, v: jnp.tanh(u @ v))
    r = f(x, y).block_until_ready()
    out["jit"] = [where(r), float(np.max(np.abs(np.asarray(r) - np.tanh(a @ b)))),
                  r.is_ready()]

    # donation on the default device
    d = xjax.device_put(np.ones(8, np.float32))
    e = xjax.jit(lambda t: t * 2, donate_argnums=0)(d)
    out["donate"] = [d.is_deleted(), np.asarray(e).tolist()]

    # transfers between the two clients, both ways
    on_cpu = xjax.device_put(r, cpu)
    back = xjax.device_put(on_cpu, gpu)
    out["to_cpu"] = [where(on_cpu), on_cpu.committed,
                     bool(np.array_equal(np.asarray(on_cpu), np.asarray(r)))]
    out["to_gpu"] = [where(back), bool(np.array_equal(np.asarray(back), np.asarray(r)))]

    # computations on arrays committed to the CPU run there, eager and jitted
    out["cpu_eager"] = where(on_cpu * 2)
    out["cpu_jit"] = where(xjax.jit(lambda t: t + 1)(on_cpu))
    try:
        on_cpu + back
        out["mixed"] = None
    except ValueError as error:
        out["mixed"] = str(error)

    # a program of one client given another client's buffer copies it to its device
    # (through host memory), never hands the plugin a foreign buffer
    text = '''module @m {
      func.func public @main(%a: tensor<5x4xf32>) -> (tensor<5x4xf32>) {
        %0 = stablehlo.add %a, %a : tensor<5x4xf32>
        return %0 : tensor<5x4xf32>
      }
    }'''
    host_buffer = runtime.get_client("cpu").buffer_from_numpy(a)
    moved = runtime.get_client("gpu").compile(text).execute([host_buffer])[0]
    out["foreign_buffer"] = [str(moved.device), str(host_buffer.device),
                             bool(np.array_equal(moved.to_numpy(), a + a))]

    # callbacks run eagerly on the host; in compiled code they are refused clearly
    shape = xjax.ShapeDtypeStruct((5, 4), np.float32)
    eager_cb = xjax.pure_callback(lambda t: np.asarray(t) * 2, shape, x)
    out["callback_eager"] = bool(np.array_equal(np.asarray(eager_cb), a * 2))
    try:
        xjax.jit(lambda t: xjax.pure_callback(lambda u: u, shape, t))(x)
        out["callback_jit"] = None
    except NotImplementedError as error:
        out["callback_jit"] = str(error)

    # jax.default_device(cpu): the GPU machine computing on its CPU
    with xjax.default_device(cpu):
        z = jnp.arange(3.0) * 2
        out["default_cpu"] = [[str(d) for d in z.devices()], where(f(x, y)),
                              where(xjax.device_put(a))]
    out["default_after"] = where(f(x, y))

    # random numbers and a seed's MLP step
    k = xjax.random.normal(xjax.random.key(0), (3,))
    out["random"] = where(k)
    out["plugin_version"] = runtime.plugin_version()
    print("RESULT" + json.dumps(out))
""")


def _run(script, **env_vars):
    env = {k: v for k, v in os.environ.items()
           if k not in ("XJAX_STAND_IN_GPU", "XJAX_PLATFORMS", "JAX_PLATFORMS")}
    env.update(env_vars)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=600)
    return done


@pytest.fixture(scope="module")
def stand_in():
    done = _run(_STAND_IN_SCRIPT, XJAX_STAND_IN_GPU="1")
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(s for s in done.stdout.splitlines() if s.startswith("RESULT"))
    return json.loads(line[len("RESULT"):])


GPU = ["cuda:0", "cuda:0"]
CPU = ["cpu:0", "cpu:0"]


def test_the_gpu_is_the_default_backend(stand_in):
    assert stand_in["backend"] == "gpu"
    assert stand_in["devices"] == ["CudaDevice(id=0)"]
    assert (stand_in["str"], stand_in["platform"]) == ("cuda:0", "gpu")


def test_device_put_places_on_the_default_device_uncommitted(stand_in):
    assert stand_in["put_uncommitted"] == [GPU, False]


@pytest.mark.parametrize("name", ["sin_add", "dot", "sum", "cumsum", "where", "index"])
def test_eager_operations_run_on_the_device(stand_in, name):
    devices, error = stand_in["eager"][name]
    assert devices == GPU
    assert error < 1e-5


def test_eager_grad_runs_on_the_device(stand_in):
    devices, error = stand_in["grad"]
    assert devices == GPU and error < 1e-4


def test_jit_runs_on_the_device(stand_in):
    devices, error, ready = stand_in["jit"]
    assert devices == GPU and error < 1e-5 and ready


def test_donation_on_the_device(stand_in):
    assert stand_in["donate"] == [True, [2.0] * 8]


def test_transfers_between_clients(stand_in):
    assert stand_in["to_cpu"] == [CPU, True, True]
    assert stand_in["to_gpu"] == [GPU, True]


def test_committed_cpu_arrays_compute_on_the_cpu(stand_in):
    assert stand_in["cpu_eager"] == CPU
    assert stand_in["cpu_jit"] == CPU


def test_arrays_committed_to_two_platforms_raise(stand_in):
    assert stand_in["mixed"] is not None
    assert "incompatible devices" in stand_in["mixed"]
    assert "on platform CPU" in stand_in["mixed"] and "on platform GPU" in stand_in["mixed"]


def test_a_program_copies_another_clients_buffer_to_its_device(stand_in):
    assert stand_in["foreign_buffer"] == ["cuda:0", "cpu:0", True]


def test_callbacks_run_eagerly_and_are_refused_in_compiled_code(stand_in):
    assert stand_in["callback_eager"]
    assert "host callbacks" in stand_in["callback_jit"]
    assert "on the gpu backend" in stand_in["callback_jit"]


def test_default_device_cpu_computes_on_the_cpu(stand_in):
    assert stand_in["default_cpu"] == [["cpu:0"], CPU, CPU]
    assert stand_in["default_after"] == GPU


def test_random_numbers_on_the_device(stand_in):
    assert stand_in["random"] == GPU


def test_plugin_version_names_the_platform(stand_in):
    assert "platform=gpu" in stand_in["plugin_version"]


_CACHE_SCRIPT = textwrap.dedent(r"""
    import os, sys
    import numpy as np
    import xjax, xjax.numpy as jnp
    from xjax._src import runtime
    from xjax._src.runtime.compilation_cache import compile_or_load
    text = xjax.jit(lambda t: jnp.cos(t) * 3).lower(np.ones(5, np.float32)).as_text()
    for platform in ("gpu", "cpu", "gpu"):
        exe = compile_or_load(runtime.get_client(platform), text, CACHE,
                              min_compile_time_secs=0)
        out = exe.execute([np.ones(5, np.float32)])[0]
        print(platform, out.device, sorted(os.listdir(CACHE)) if platform == "cpu" else "")
""")


def test_persistent_cache_keeps_one_entry_per_platform(tmp_path):
    done = _run(_CACHE_SCRIPT.replace("CACHE", repr(str(tmp_path))), XJAX_STAND_IN_GPU="1")
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert [line.split()[:2] for line in lines] == [["gpu", "cuda:0"], ["cpu", "cpu:0"],
                                                    ["gpu", "cuda:0"]]
    entries = [p for p in os.listdir(tmp_path) if not p.startswith(".")]
    assert len(entries) == 2, entries  # the same program, once per platform


def test_platforms_naming_a_missing_gpu_raise_jax_error():
    done = _run("import xjax; xjax.devices()", XJAX_PLATFORMS="cuda",
                XJAX_PJRT_PLUGIN_GPU="/nonexistent/xla_cuda_plugin.so")
    assert done.returncode != 0
    assert "RuntimeError: Unable to initialize backend 'gpu'" in done.stderr
    assert "set JAX_PLATFORMS=cpu to skip this backend" in done.stderr


def test_jax_platforms_cpu_keeps_the_stand_in_out():
    done = _run("import xjax; print(xjax.default_backend(), xjax.devices())",
                XJAX_STAND_IN_GPU="1", JAX_PLATFORMS="cpu")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["cpu", "[CpuDevice(id=0)]"]


def test_a_gpu_plugin_that_fails_falls_back_to_the_cpu():
    done = _run("import xjax; print(xjax.default_backend())",
                XJAX_PJRT_PLUGIN_GPU="/nonexistent/xla_cuda_plugin.so")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["cpu"]
    assert "Unable to initialize backend 'cuda'" in done.stderr


def test_asking_for_gpu_devices_without_a_plugin_raises():
    done = _run("import xjax\ntry:\n    xjax.devices('gpu')\nexcept RuntimeError as e:\n"
                "    print(e)")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Unknown backend: 'gpu' requested" in done.stdout
    assert "no CUDA PJRT plugin found" in done.stdout


def test_forced_eager_path_leaves_results_on_the_device():
    import xjax
    import xjax.numpy as jnp

    x = jnp.arange(6.0).reshape(2, 3)
    with xjax.config.override(xjax_eager_via_xla=True):
        y = jnp.exp(x) - x
    assert y._buffer is not None  # computed by XLA, never by the NumPy impl
    np.testing.assert_allclose(np.asarray(y), np.exp(np.arange(6.0).reshape(2, 3))
                               - np.arange(6.0).reshape(2, 3), rtol=1e-6)


def test_gpu_memory_options_follow_jax_environment(monkeypatch):
    from xjax._src.runtime import client

    for name in ("XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_MEM_FRACTION",
                 "XLA_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_ALLOCATOR"):
        monkeypatch.delenv(name, raising=False)
    assert client._gpu_memory_options() == {}
    monkeypatch.setenv("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    monkeypatch.setenv("XLA_PYTHON_CLIENT_MEM_FRACTION", ".5")
    monkeypatch.setenv("XLA_PYTHON_CLIENT_ALLOCATOR", "platform")
    assert client._gpu_memory_options() == {"preallocate": False, "memory_fraction": 0.5,
                                             "allocator": "platform"}


def test_cuda_libraries_are_loaded_from_nvidia_wheel_folders(tmp_path):
    """A CUDA plugin's libraries in NVIDIA's wheel layout (nvidia/<folder>/lib) are opened
    before the plugin; a library the layout lacks is skipped. A copy of the C math library
    plays libcudart.so.13, and the process's memory map shows which file was opened."""
    with open("/proc/self/maps") as f:
        libm = next(line.split()[-1] for line in f if "/libm." in line)
    lib = tmp_path / "nvidia" / "cu13" / "lib"
    lib.mkdir(parents=True)
    (lib / "libcudart.so.13").write_bytes(open(libm, "rb").read())
    script = textwrap.dedent("""
        from xjax._src.runtime import client
        client._load_cuda_libraries()
        print(open("/proc/self/maps").read())
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), *sys.path]))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert str(lib / "libcudart.so.13") in done.stdout
    assert str(lib / "libcublas.so.13") not in done.stdout


def test_gpu_check_script_runs_against_the_stand_in():
    """benchmarks/gpu_check.py end to end but for its timings and seeds (which the
    quickstart and benchmarks/run.py cover), on 100 sweep cases."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = _run(f"import runpy, sys; sys.argv = ['gpu_check.py', '--allow-stand-in', "
                f"'--quick', '--processes', '1', '--skip', 'seeds,timings']; "
                f"runpy.run_path({os.path.join(root, 'benchmarks', 'gpu_check.py')!r}, "
                f"run_name='__main__')", XJAX_STAND_IN_GPU="1")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "STAND-IN" in done.stdout
    assert "sweep: 100 cases run eagerly on the device" in done.stdout
    assert "0 differ from the NumPy implementations" in done.stdout


def test_gpu_platform_check_passes_against_the_stand_in():
    """benchmarks/gpu_platform_check.py (transfers, async dispatch, donation, a CPU device
    beside the GPU, the persistent cache across processes), on the stand-in."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = _run(f"import runpy, sys; sys.argv = ['gpu_platform_check.py']; "
                f"runpy.run_path({os.path.join(root, 'benchmarks', 'gpu_platform_check.py')!r}, "
                f"run_name='__main__')", XJAX_STAND_IN_GPU="1")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "transfers", "async dispatch", "donation", "cpu beside the gpu", "persistent cache"]
    assert all(": ok" in line for line in lines), lines


def test_gpu_check_refuses_a_machine_without_a_gpu():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = _run(f"import runpy, sys; sys.argv = ['gpu_check.py']; "
                f"runpy.run_path({os.path.join(root, 'benchmarks', 'gpu_check.py')!r}, "
                f"run_name='__main__')")
    assert done.returncode == 2
    assert "no GPU" in done.stdout


def test_default_device_context_places_and_runs_there(run_with_devices):
    """``jax.default_device(d)``: uncommitted arrays go to ``d``, eager operations, random
    numbers and jitted calls run there; outside the block, back to the first device."""
    lines = run_with_devices(2, """
        import numpy as np
        import xjax, xjax.numpy as jnp
        second = xjax.devices()[1]
        f = xjax.jit(lambda a: a * 2)
        def where(a):
            return sorted(str(d) for d in a.devices())
        with xjax.default_device(second):
            x = jnp.arange(4.0)
            print(where(x), where(xjax.device_put(np.ones(2))), x.committed)
            y = f(x)
            print(where(y), np.asarray(y).tolist())
            print(where(jnp.sin(x) + 1), where(xjax.random.normal(xjax.random.key(0), (2,))))
            print(xjax.config.jax_default_device is second, xjax.default_device.value is second)
        print(where(f(jnp.arange(4.0))), xjax.config.jax_default_device)
        xjax.config.update("jax_default_device", "cpu")
        print(where(f(jnp.ones(2))))
    """)
    assert lines == ["['cpu:1'] ['cpu:1'] False",
                     "['cpu:1'] [0.0, 2.0, 4.0, 6.0]",
                     "['cpu:1'] ['cpu:1']",
                     "True True",
                     "['cpu:0'] None",
                     "['cpu:0']"]


def test_default_device_needs_a_value():
    import xjax

    with pytest.raises(TypeError, match="requires an argument"):
        xjax.default_device()
    with pytest.raises(ValueError, match="jax_default_device must be"):
        xjax.config.update("jax_default_device", 3)
