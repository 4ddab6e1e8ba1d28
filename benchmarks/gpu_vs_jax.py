"""The cases where xjax on a GPU differs from NumPy, run beside JAX on the same GPU.

``gpu_check.py``'s sweep compares xjax's GPU results with xjax's NumPy implementations.
Where they differ, the question is whether JAX on the same GPU differs the same way (the
GPU's arithmetic or XLA's GPU backend) or xjax's lowering is at fault. This script runs
those cases, with the sweep's inputs (``--reference``, from ``gpu_check.py
--write-reference``), in xjax and in JAX, each group in its own process (a case may crash
XLA's GPU compiler), and prints, per case, whether xjax's result equals JAX's bit for bit
and how far each is from NumPy's. JAX must be installed (a CUDA plugin for both).

Usage::

    python benchmarks/gpu_vs_jax.py --reference build/gpu_reference.pkl
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

_MATMUL = (((1,), (0,)), ((), ()))
_SCRAMBLED = (((3, 0), (1, 0)), ((1,), (3,)))

# case id in the reference -> (process group, function of (lib, lax) and the inputs)
CASES = {
    **{f"digamma-specials-{t}": ("plain", lambda lib, lax, x: lax.digamma(x))
       for t in ("float32", "float16", "bfloat16")},
    # float32 dots at the default precision (TF32 on this GPU, in JAX too)
    "dot_general-scrambled-f32-float32":
        ("plain", lambda lib, lax, x, y: lax.dot_general(x, y, _SCRAMBLED)),
    "dot_general-matmul-f32-complex64":
        ("plain", lambda lib, lax, x, y: lax.dot_general(x, y, _MATMUL)),
    "conv_general_dilated-strided-int32":
        ("plain", lambda lib, lax, x, y: lax.conv_general_dilated(
            x, y, window_strides=(2, 1), padding="SAME", rhs_dilation=(1, 2))),
    "triangular_solve-left-lower-16bit-float16":
        ("plain", lambda lib, lax, a, b: lax.linalg.triangular_solve(
            a, b, left_side=True, lower=True)),
    **{f"dot_general-int-pref-float32-{t}":
       (f"int-dot-{t}", lambda lib, lax, x, y: lax.dot_general(
           x, y, _MATMUL, preferred_element_type=np.float32)) for t in ("int8", "int16")},
}


def run_group(impl, group, reference, out_path):
    """Worker: the group's cases in `impl` ("xjax" or "jax"), results pickled to out_path."""
    if impl == "jax":
        import jax
        from jax import lax
        lib = jax
    else:
        import xjax
        from xjax import lax
        lib = xjax
    with open(reference, "rb") as f:
        cases = pickle.load(f)
    results = {}
    for case, (case_group, fun) in CASES.items():
        if case_group != group or case not in cases:
            continue
        try:
            out = fun(lib, lax, *cases[case][0])
            results[case] = np.asarray(out)
        except Exception as error:
            results[case] = f"{type(error).__name__}: {str(error).splitlines()[0][:160]}"
    with open(out_path, "wb") as f:
        pickle.dump(results, f)


def _distance(got, want):
    if isinstance(got, str) or isinstance(want, str):
        return "-"
    g, w = np.asarray(got, np.complex128), np.asarray(want, np.complex128)
    nan_g, nan_w = np.isnan(g), np.isnan(w)
    both = ~(nan_g | nan_w)
    with np.errstate(invalid="ignore"):
        err = np.abs(g[both] - w[both])
    err = err[np.isfinite(err)]
    return (f"max|diff| {err.max() if err.size else 0:.3g}, NaN only here "
            f"{int(np.sum(nan_g & ~nan_w))}, only there {int(np.sum(nan_w & ~nan_g))}")


def same_bits(a, b):
    """Whether two results are the same: equal arrays (any NaN equals any NaN, zeros keep
    their sign), or both errors."""
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    a, b = a.astype(wide), b.astype(wide)  # any NaN equals any NaN; zeros keep their sign
    return bool(np.array_equal(a, b, equal_nan=True)
                and np.array_equal(np.signbit(a.real), np.signbit(b.real)))


def results_of(impl, reference, cases, env=None):
    """{case: result} of `impl` ("xjax" or "jax") for those of `cases` this script knows,
    each process group in its own process (a failed process: its cases get the reason)."""
    env = dict(env or os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))
    env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    tmp = tempfile.mkdtemp(prefix="xjax-gpu-vs-jax-")
    results = {}
    for group in sorted({CASES[c][0] for c in cases if c in CASES}):
        out = os.path.join(tmp, f"{impl}-{group}.pkl")
        done = subprocess.run([sys.executable, "-X", "faulthandler", __file__, "--reference",
                               reference, "--worker", impl, group, out], env=env,
                              capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            results.update({c: f"process failed (exit status {done.returncode})"
                            for c, (g, _) in CASES.items() if g == group})
            continue
        with open(out, "rb") as f:
            results.update(pickle.load(f))
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", required=True)
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        impl, group, out_path = args.worker
        run_group(impl, group, args.reference, out_path)
        return 0
    with open(args.reference, "rb") as f:
        reference = pickle.load(f)
    cases = [c for c in CASES if c in reference]
    results = {impl: results_of(impl, args.reference, cases) for impl in ("xjax", "jax")}
    for case in cases:
        want = reference[case][1]
        want = want[0] if isinstance(want, list) else want
        x, j = results["xjax"].get(case, "not run"), results["jax"].get(case, "not run")
        print(f"{case}:  xjax {'==' if same_bits(x, j) else '!='} jax (bits)")
        for name, value in (("xjax", x), ("jax", j)):
            text = value if isinstance(value, str) else f"vs NumPy {_distance(value, want)}"
            print(f"    {name:5s} {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
