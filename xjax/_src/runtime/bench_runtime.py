"""Micro-benchmarks of the runtime's hot paths: `python -m xjax._src.runtime.bench_runtime`.

Prints the median time per operation in microseconds (medians of repeated
timing loops, after a warm-up).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from xjax._src.runtime import get_client

ADD4 = """
module @bench_add {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>) {
    %0 = "stablehlo.add"(%arg0, %arg0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""

SMALL_MODULE = """
module @bench_compile_{n} {{
  func.func public @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32>) -> (tensor<8x8xf32>) {{
    %0 = "stablehlo.multiply"(%arg0, %arg1) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %1 = "stablehlo.add"(%0, %arg1) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %2 = "stablehlo.tanh"(%1) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    return %2 : tensor<8x8xf32>
  }}
}}
"""


def _median_us(fn, number: int, repeat: int) -> float:
    fn()  # warm up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number * 1e6)
    return statistics.median(times)


def run(number: int = 20000, repeat: int = 15) -> dict[str, float]:

    client = get_client("cpu")
    exe = client.compile(ADD4)
    x = np.arange(4, dtype=np.float32)
    xb = client.buffer_from_numpy(x)
    execute = exe.execute
    out = execute([x])[0]
    out.block_until_ready()
    counter = iter(range(10**9))

    results = {
        "execute(add4, numpy arg)": _median_us(lambda: execute([x]), number, repeat),
        "execute(add4, DeviceBuffer arg)": _median_us(lambda: execute([xb]), number, repeat),
        "execute + to_numpy (numpy arg)": _median_us(
            lambda: execute([x])[0].to_numpy(), number, repeat),
        "to_numpy(4-elem output)": _median_us(out.to_numpy, number, repeat),
        "to_numpy(fresh output, first call)": _fresh_to_numpy(execute, x, number, repeat),
        "buffer_from_numpy(4 elems)": _median_us(
            lambda: client.buffer_from_numpy(x), number, repeat),
        "compile(small module)": _median_us(
            lambda: client.compile(SMALL_MODULE.format(n=next(counter))),
            max(1, number // 1000), 5),
    }
    return results


def _fresh_to_numpy(execute, x, number: int, repeat: int) -> float:
    """to_numpy on outputs never converted before (what a real program sees)."""
    times = []
    for _ in range(repeat):
        outs = [execute([x])[0] for _ in range(number)]
        for o in outs:
            o.block_until_ready()
        t0 = time.perf_counter()
        for o in outs:
            o.to_numpy()
        times.append((time.perf_counter() - t0) / number * 1e6)
    return statistics.median(times)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--number", type=int, default=20000)
    p.add_argument("--repeat", type=int, default=15)
    args = p.parse_args(argv)
    for name, us in run(args.number, args.repeat).items():
        print(f"{name:40s} {us:10.3f} us")


if __name__ == "__main__":
    main()
