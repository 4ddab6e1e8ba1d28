"""Run the benchmark suite: xjax, JAX (when installed) and NumPy side by side.

Each implementation runs in its own process; rounds are interleaved (xjax, jax, numpy,
xjax, ...) so drift in the machine affects all alike. Each round times every workload with
an automatically sized inner loop and reports the median of its samples; the table shows the
median over rounds and the ratio to JAX. Before the rounds, the machine's float32 peak
(NumPy sgemm) and memory bandwidth (NumPy copy) are measured; workloads that declare their
work (workloads.WORK) are reported as a rate beside that peak.

A workload that needs several CPU devices (workloads.DEVICES) runs in a worker of its own per
implementation, whose CPU client is created with that many devices, so the other workloads
keep one device; NumPy sits those out.

    python benchmarks/run.py            # full: 5 rounds of 5 samples each
    python benchmarks/run.py --quick    # 3 rounds of 3 samples, smaller budgets (< 3 min)
    python benchmarks/run.py --only jit_call_4,eager_exp_4

The machine is shared: note its load (printed at the end) beside any numbers you quote.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
IMPLS = ("xjax", "jax", "numpy")


class Namespace:
    def __init__(self, impl):
        import numpy
        self.impl = impl
        if impl == "xjax":
            import xjax
            import xjax.numpy as jnp
            self.np, self.jit = jnp, xjax.jit
            self.transforms = xjax
            self.asarray = lambda x: xjax.device_put(x)
            self.block = lambda x: x.block_until_ready()
        elif impl == "jax":
            os.environ.setdefault("JAX_PLATFORMS", "cpu")
            import jax
            import jax.numpy as jnp
            self.np, self.jit = jnp, jax.jit
            self.transforms = jax
            self.asarray = lambda x: jax.device_put(x)
            self.block = lambda x: x.block_until_ready()
        else:
            self.np, self.jit = numpy, None
            self.transforms = None
            self.asarray = numpy.asarray
            self.block = lambda x: x


def time_callable(fn, budget=0.2, samples=5, warmup=2):
    """Median seconds per call over `samples` batches sized to take ~budget/5 each.

    Warm-up runs at least `warmup` calls and, for fast workloads, at least budget/2 seconds
    (at most 200 calls): the first calls of a fresh executable pay for its output memory
    (page faults until the allocator recycles freed buffers: selu_1e6_jit's 4 MB result
    costs ~2 ms instead of ~0.4 ms for its first ~10-20 calls here, JAX's ~5-10).
    """
    fn()  # the first call compiles: the warm-up clock starts after it
    start, calls = time.perf_counter(), 1
    while calls < warmup or (time.perf_counter() - start < budget / 2 and calls < 200):
        fn()
        calls += 1
    number, elapsed = 1, 0.0
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed > budget / 5 or number > 1_000_000:
            break
        number *= 4
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times)


def worker(impl, names, quick=False):
    sys.path.insert(0, HERE)
    from workloads import WORKLOADS
    ns = Namespace(impl)
    results = {}
    for name in names:
        setup, needs_jit = WORKLOADS[name]
        if needs_jit and ns.jit is None:
            continue
        try:
            if quick:
                results[name] = time_callable(setup(ns), budget=0.05, samples=3, warmup=1)
            else:
                results[name] = time_callable(setup(ns))
        except Exception as e:  # report, don't hide: the table shows the error
            results[name] = f"error: {type(e).__name__}: {e}"[:200]
    print(json.dumps(results))


def worker_env(impl, devices):
    """The environment for a worker whose CPU client must have `devices` devices: the count
    is fixed when the client starts, so it is set before the worker imports anything."""
    env = dict(os.environ)
    if devices == 1:
        return env
    if impl == "xjax":
        env["XJAX_NUM_CPU_DEVICES"] = str(devices)
    elif impl == "jax":
        flag = f"--xla_force_host_platform_device_count={devices}"
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " " + flag).strip()
    return env


def cpu_description():
    """'model name, machine (AVX2 yes, AVX-512 no)' from /proc/cpuinfo ('unknown' where it
    is missing): XLA's and NumPy's kernels depend on the vector width, so numbers from
    different machines need it beside them."""
    model, flags = None, None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "model name" and model is None:
                    model = value.strip()
                elif key == "flags" and flags is None:
                    flags = set(value.split())
                if model is not None and flags is not None:
                    break
    except OSError:
        pass

    def has(flag):
        return "unknown" if flags is None else ("yes" if flag in flags else "no")
    return (f"{model or 'unknown'}, {platform.machine() or 'unknown'} "
            f"(AVX2 {has('avx2')}, AVX-512 {has('avx512f')})")


def available(impl):
    if impl == "numpy":
        return True
    probe = "import jax" if impl == "jax" else "import xjax"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="3 rounds of 3 samples instead of 5 of 5, smaller budgets")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--only", default="", help="comma-separated workload names")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, HERE)
    from workloads import DEVICES, WORKLOADS
    names = [n for n in args.only.split(",") if n] or list(WORKLOADS)
    if args.worker:
        worker(args.worker, names, args.quick)
        return
    started = time.perf_counter()
    rounds = args.rounds or (3 if args.quick else 5)
    impls = [i for i in IMPLS if available(i)]
    peaks = machine_peaks(args.quick)
    times = {(i, n): [] for i in impls for n in names}
    groups = {}  # device count -> its workloads, in the order asked for
    for name in names:
        groups.setdefault(DEVICES.get(name, 1), []).append(name)
    runs = [(impl, devices, group) for impl in impls for devices, group in groups.items()
            if impl != "numpy" or devices == 1]
    errors = {}
    for r in range(rounds):
        for impl, devices, group in runs:
            cmd = [sys.executable, __file__, "--worker", impl, "--only", ",".join(group)]
            out = subprocess.run(cmd + (["--quick"] if args.quick else []),
                                 capture_output=True, text=True, env=worker_env(impl, devices))
            if out.returncode != 0:
                key = impl if devices == 1 else (impl, f"{devices} devices")
                errors[key] = out.stderr.strip().splitlines()[-1:] if out.stderr else "failed"
                continue
            for name, value in json.loads(out.stdout.strip().splitlines()[-1]).items():
                if isinstance(value, str):
                    errors[(impl, name)] = value
                else:
                    times[(impl, name)].append(value)
        print(f"round {r + 1}/{rounds} done", file=sys.stderr)
    print(f"cpu: {cpu_description()}")
    print(f"{'workload':28s}" + "".join(f"{i:>14s}" for i in impls) + "  xjax/jax")
    for name in names:
        row = f"{name:28s}"
        med = {}
        for impl in impls:
            samples = times[(impl, name)]
            if samples:
                med[impl] = statistics.median(samples)
                row += f"{_fmt(med[impl]):>14s}"
            else:
                row += f"{'-':>14s}"
        if "xjax" in med and "jax" in med:
            row += f"  {med['xjax'] / med['jax']:8.2f}"
        print(row)
    for key, message in errors.items():
        print(f"error {key}: {message}")
    print_rates(names, impls, times, peaks)
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print(f"{rounds} rounds in {time.perf_counter() - started:.0f} s on {os.cpu_count()} "
          f"cores; load average at the end {', '.join(f'{v:.1f}' for v in load or ())}")


def machine_peaks(quick):
    """(float32 GFLOP/s of a NumPy sgemm, GB/s of a NumPy copy counting read + write):
    best of several repeats, measured in this process between no other work."""
    import numpy as np
    n = 3000  # matmul_3000_f32's product, so its rate compares like with like
    a = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
    gemm = min(_timed(lambda: a @ a.T) for _ in range(3 if quick else 5))
    src = np.ones(32 << 20, np.float32)  # 128 MiB
    dst = np.empty_like(src)
    np.copyto(dst, src)
    copy = min(_timed(lambda: np.copyto(dst, src)) for _ in range(5 if quick else 10))
    return 2 * n**3 / gemm / 1e9, 2 * src.nbytes / copy / 1e9


def _timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def print_rates(names, impls, times, peaks):
    from workloads import WORK
    gflops, gbytes = peaks
    print(f"machine peak: {gflops:.1f} GFLOP/s float32 (NumPy sgemm), {gbytes:.1f} GB/s "
          "memory (NumPy copy, read + write)")
    for name in names:
        if name not in WORK:
            continue
        kind, amount = WORK[name]
        peak, unit = (gflops, "GFLOP/s") if kind == "flop" else (gbytes, "GB/s")
        parts = []
        for impl in impls:
            if times[(impl, name)]:
                rate = amount / statistics.median(times[(impl, name)]) / 1e9
                parts.append(f"{impl} {rate:.1f} {unit} ({100 * rate / peak:.0f}% of peak)")
        if parts:
            print(f"  {name}: " + ", ".join(parts))


def _fmt(seconds):
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.2f} us"


if __name__ == "__main__":
    main()
