"""Run the benchmark suite: xjax, JAX (when installed) and NumPy side by side.

Each implementation runs in its own process; rounds are interleaved (xjax, jax, numpy,
xjax, ...) so drift in the machine affects all alike. Each round times every workload with
an automatically sized inner loop and reports the best-of-inner median; the table shows the
median over rounds and the ratio to JAX.

    python benchmarks/run.py            # full
    python benchmarks/run.py --quick    # fewer rounds
    python benchmarks/run.py --only jit_call_4,eager_exp_4
"""

import argparse
import json
import os
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


def time_callable(fn, budget=0.2):
    """Median seconds per call over several batches sized to take ~budget/5 each."""
    fn()
    fn()
    number, elapsed = 1, 0.0
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed > budget / 5 or number > 1_000_000:
            break
        number *= 4
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - start) / number)
    return statistics.median(samples)


def worker(impl, names):
    sys.path.insert(0, HERE)
    from workloads import WORKLOADS
    ns = Namespace(impl)
    results = {}
    for name in names:
        setup, needs_jit = WORKLOADS[name]
        if needs_jit and ns.jit is None:
            continue
        try:
            results[name] = time_callable(setup(ns))
        except Exception as e:  # report, don't hide: the table shows the error
            results[name] = f"error: {type(e).__name__}: {e}"[:200]
    print(json.dumps(results))


def available(impl):
    if impl == "numpy":
        return True
    probe = "import jax" if impl == "jax" else "import xjax"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds instead of 5")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--only", default="", help="comma-separated workload names")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, HERE)
    from workloads import WORKLOADS
    names = [n for n in args.only.split(",") if n] or list(WORKLOADS)
    if args.worker:
        worker(args.worker, names)
        return
    rounds = args.rounds or (3 if args.quick else 5)
    impls = [i for i in IMPLS if available(i)]
    times = {(i, n): [] for i in impls for n in names}
    errors = {}
    for r in range(rounds):
        for impl in impls:
            out = subprocess.run([sys.executable, __file__, "--worker", impl, "--only",
                                  ",".join(names)], capture_output=True, text=True)
            if out.returncode != 0:
                errors[impl] = out.stderr.strip().splitlines()[-1:] if out.stderr else "failed"
                continue
            for name, value in json.loads(out.stdout.strip().splitlines()[-1]).items():
                if isinstance(value, str):
                    errors[(impl, name)] = value
                else:
                    times[(impl, name)].append(value)
        print(f"round {r + 1}/{rounds} done", file=sys.stderr)
    print(f"{'workload':24s}" + "".join(f"{i:>14s}" for i in impls) + "  xjax/jax")
    for name in names:
        row = f"{name:24s}"
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


def _fmt(seconds):
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.2f} us"


if __name__ == "__main__":
    main()
