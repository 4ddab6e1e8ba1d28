"""Count wrong results of the memory-safety issue's program, optionally under CPU load.

A jitted chain of 32 matmuls runs on NumPy inputs that the caller then frees (``free``:
del + gc + new arrays reusing the memory) or writes (``mutate``: ``x[:] = 5`` right after
the call). Every result must be ``(k + 1) ** 33 * I``.

    python tools/stress_memory.py --mode free --reps 1000 --load 2
    python tools/stress_memory.py --mode mutate --reps 1000 --load 2 --impl jax

``--load N`` runs N busy processes beside the measurement, as a loaded machine would.
"""

import argparse
import gc
import multiprocessing
import time

import numpy as np


def _busy(stop):
    x = 0
    while not stop.is_set():
        for i in range(100_000):
            x += i * i


def run(impl: str, mode: str, reps: int) -> tuple[int, int]:
    if impl == "jax":
        import jax
    else:
        import xjax as jax

    @jax.jit
    def f(x):
        y = x
        for _ in range(32):
            y = y @ x
        return y

    wrong = total = 0
    for _ in range(reps):
        outs = []
        for k in range(4):
            x = np.eye(256, dtype=np.float32) * (k + 1)
            outs.append(f(x))
            if mode == "free":
                del x
                gc.collect()
                junk = [np.full((256, 256), 7.0, np.float32) for _ in range(4)]
                del junk
            else:
                x[:] = 5.0
        for k, out in enumerate(outs):
            total += 1
            expected = np.eye(256, dtype=np.float32) * np.float32(k + 1) ** 33
            wrong += not np.allclose(np.asarray(out), expected, rtol=1e-5)
    return wrong, total


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", choices=("xjax", "jax"), default="xjax")
    parser.add_argument("--mode", choices=("free", "mutate"), default="free")
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--load", type=int, default=0, help="busy processes beside the run")
    args = parser.parse_args()
    stop = multiprocessing.Event()
    workers = [multiprocessing.Process(target=_busy, args=(stop,), daemon=True)
               for _ in range(args.load)]
    for w in workers:
        w.start()
    start = time.perf_counter()
    try:
        wrong, total = run(args.impl, args.mode, args.reps)
    finally:
        stop.set()
        for w in workers:
            w.join()
    print(f"{args.impl} {args.mode}: {wrong} of {total} results wrong "
          f"({args.reps} repetitions, {args.load} busy processes, "
          f"{time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
