"""The GPU platform end to end, on a machine with a GPU: what ``gpu_check.py``'s sweep and
timings do not show. Each check prints one line, ``ok`` or ``FAILED``; exit status 0 when
all pass, 2 without a GPU.

- NumPy data to the GPU and back (``device_put``, ``np.asarray``, ``device_get`` of a tree);
- asynchronous dispatch: a result is returned before it is computed, and
  ``block_until_ready`` waits for it;
- donation: a donated input is deleted and its result right;
- the persistent compilation cache: a second process finds the first one's entry for the
  GPU (one entry for one program) and gives the same numbers;
- a CPU device beside the GPU, where a CPU plugin is installed: committed arrays compute
  there, and data moves both ways.

Usage: ``python benchmarks/gpu_platform_check.py`` (tests/runtime/test_platforms.py runs it
against the stand-in GPU).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import xjax
import xjax.numpy as jnp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_CACHED_PROGRAM = """
import numpy as np, xjax, xjax.numpy as jnp
xjax.config.update("jax_compilation_cache_dir", {cache!r})
xjax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
x = np.linspace(0, 1, 1000, dtype=np.float32)
print(float(xjax.jit(lambda v: jnp.sum(jnp.sin(v) * jnp.cos(v) ** 2))(x)))
"""


def _report(name, ok, detail=""):
    print(f"{name}: {'ok' if ok else 'FAILED'}{' (' + detail + ')' if detail else ''}")
    return ok


def check_transfers(xjax, jnp):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    on_gpu = xjax.device_put(x)
    tree = xjax.device_get({"a": on_gpu * 2, "b": [on_gpu[0]]})
    return _report("transfers", on_gpu.devices() == {xjax.devices()[0]}
                   and np.array_equal(np.asarray(on_gpu), x)
                   and np.array_equal(tree["a"], x * 2) and np.array_equal(tree["b"][0], x[0]),
                   f"{on_gpu.devices()}")


def check_async(xjax, jnp):
    # ~3.3 TFLOP on a GPU (milliseconds), far longer than a dispatch; a small one on the
    # stand-in, where only the mechanics are checked
    n = 512 if os.environ.get("XJAX_STAND_IN_GPU") == "1" else 8192
    x = xjax.device_put(np.ones((n, n), np.float32))
    f = xjax.jit(lambda a: jnp.tanh(a @ a @ a))
    f(x).block_until_ready()
    start = time.perf_counter()
    y = f(x)
    returned = time.perf_counter() - start
    y.block_until_ready()
    done = time.perf_counter() - start
    fast_return = n == 512 or returned < done / 2
    ok = fast_return and np.array_equal(np.asarray(y)[:2, :2], np.ones((2, 2), np.float32))
    return _report("async dispatch", ok, f"returned after {returned * 1e6:.0f} us, "
                   f"ready after {done * 1e6:.0f} us")


def check_donation(xjax, jnp):
    d = xjax.device_put(np.ones(8, np.float32))
    e = xjax.jit(lambda t: t * 2, donate_argnums=0)(d)
    return _report("donation", d.is_deleted() and np.array_equal(np.asarray(e), np.full(8, 2.0)))


def check_cache():
    with tempfile.TemporaryDirectory() as cache:
        outs = []
        for _ in range(2):
            done = subprocess.run([sys.executable, "-c", _CACHED_PROGRAM.format(cache=cache)],
                                  cwd=ROOT, capture_output=True, text=True, timeout=300)
            if done.returncode != 0:
                return _report("persistent cache", False, done.stderr[-500:])
            outs.append(done.stdout.strip())
        entries = [p for p in os.listdir(cache) if not p.startswith(".")]
    return _report("persistent cache", len(entries) == 1 and outs[0] == outs[1],
                   f"{len(entries)} entries, results {outs}")


def check_cpu_beside(xjax, jnp):
    try:
        cpu = xjax.devices("cpu")[0]
    except RuntimeError as error:
        print(f"cpu beside the gpu: skipped ({str(error)[:120]})")
        return True
    x = np.arange(6, dtype=np.float32)
    on_cpu = xjax.device_put(x, cpu)
    y = jnp.sin(on_cpu) + 1
    back = xjax.device_put(y, xjax.devices()[0])
    return _report("cpu beside the gpu", y.devices() == {cpu}
                   and back.devices() == {xjax.devices()[0]}
                   and np.allclose(np.asarray(back), np.sin(x) + 1, rtol=1e-6))


def main():
    if xjax.default_backend() != "gpu":
        print("no GPU: the default backend is", xjax.default_backend())
        return 2
    results = [check(xjax, jnp) for check in (check_transfers, check_async, check_donation,
                                              check_cpu_beside)]
    results.append(check_cache())
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
