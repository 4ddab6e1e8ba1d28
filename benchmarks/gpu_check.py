"""xjax on a GPU, checked in one run: the seeds, a correctness sweep and the seeds' timings.

Usage (on a machine whose default backend is a GPU: a CUDA PJRT plugin installed, e.g.
``pip install -e ".[cuda13]"``)::

    python benchmarks/gpu_check.py --reference build/gpu_reference.pkl

Steps, each in its own process (only one process holds the GPU at a time):

1. the backend: ``xjax.default_backend()`` must be "gpu" (exit status 2 otherwise);
2. the seeds' programs (``examples/run_all.py``) run to the end;
3. the correctness sweep: every case of the primitive rule check
   (``tests/lax/op_records``) runs eagerly on the GPU (each primitive compiled alone by
   XLA, in several processes at once) and is compared with xjax's NumPy implementation of the primitive
   (the reference: computed on the host, or read from ``--reference``, a file written on
   any CPU machine by ``--write-reference``, inputs included, so that the GPU machine
   needs no CPU plugin);
4. the seeds' timings (``benchmarks/workloads.py``: 3000x3000 dot, selu eager and jit, an
   MLP step, jitted and eager dispatch), xjax beside JAX on the same GPU when JAX is
   installed, medians of ``--rounds`` alternating runs, with the issue's budgets: compiled
   rows at most 1.1x JAX's time, jitted dispatch at most 1.5x.

Exit status 0 when every step passed, 1 when one failed, 2 when there is no GPU. It takes
about 3 minutes (``--quick``: about 1).

Without a GPU, ``XJAX_STAND_IN_GPU=1 python benchmarks/gpu_check.py --allow-stand-in
--jax-platform cpu`` runs every step against the CPU plugin standing in for one (a test of
this script, never a GPU measurement).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if HERE not in sys.path:  # also when started by runpy, which adds no folder
    sys.path.insert(0, HERE)
import gpu_vs_jax  # noqa: E402  (beside this file)

# (workload, budget as xjax/JAX time or None, what it measures): benchmarks/workloads.py
TIMINGS = [
    ("matmul_3000_f32", 1.1, "compiled"),
    ("selu_1e6_jit", 1.1, "compiled"),
    ("mlp_value_and_grad_jit", 1.1, "compiled"),
    ("jit_call_4", 1.5, "jitted dispatch"),
    ("selu_1e6_eager", None, "eager"),
    ("eager_exp_4", None, "eager dispatch"),
]


def _run(args, env=None, timeout=600):
    """A Python subprocess of this repository: (return code, stdout, stderr, seconds)."""
    start = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {timeout} s", time.perf_counter() - start
    return done.returncode, done.stdout, done.stderr, time.perf_counter() - start


def _env(**changes):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


# -- step 1: the backend --

_BACKEND = ("import json, xjax\nfrom xjax._src import runtime\n"
            "d = xjax.devices()[0]\n"
            "print(json.dumps({'backend': xjax.default_backend(), 'device': repr(d),"
            " 'kind': d.device_kind, 'count': len(xjax.devices()),"
            " 'plugin': runtime.plugin_version()}))")


def check_backend(allow_stand_in):
    code, out, err, _ = _run(["-c", _BACKEND], _env())
    if code != 0:
        print(f"backend: xjax did not start:\n{err[-2000:]}")
        return None
    info = json.loads(out.strip().splitlines()[-1])
    print(f"backend: {info['backend']}, {info['count']} x {info['device']} "
          f"({info['kind']}); {info['plugin']}")
    stand_in = os.environ.get("XJAX_STAND_IN_GPU") == "1"
    if info["backend"] != "gpu" or (stand_in and not allow_stand_in):
        print("no GPU: the default backend is not a GPU (install a CUDA PJRT plugin: "
              'pip install -e ".[cuda13]")')
        return None
    if stand_in:
        print("STAND-IN: the CPU plugin plays the GPU; no number below is a GPU's")
    return info


# -- step 2: the seeds --

def check_seeds():
    code, _, err, seconds = _run([os.path.join("examples", "run_all.py")], _env())
    ok = code == 0 and "all examples ran" in err
    print(f"seeds: {'passed' if ok else 'FAILED'} in {seconds:.1f} s")
    if not ok:
        print(err[-3000:])
    return ok


# -- step 3: the correctness sweep --

def _records():
    sys.path.insert(0, os.path.join(ROOT, "tests", "lax"))
    from op_table import all_records  # the rule check's table, beside its test
    return all_records()


def _case_id(record, dtype):
    import numpy as np
    return f"{record.primitive}{'-' + record.name if record.name else ''}-{np.dtype(dtype).name}"


def _leaves(out):
    import numpy as np
    return [np.asarray(o) for o in (out if isinstance(out, (list, tuple)) else [out])]


def write_reference(path, limit=None):
    """Inputs and NumPy-implementation results of every rule-check case (run on a CPU)."""
    import numpy as np
    import xjax
    assert xjax.default_backend() == "cpu", "the reference is computed by the NumPy impls"
    cases = {}
    for record in _records():
        for dtype in record.dtypes:
            args = record.args(np.random.default_rng(0), dtype)
            try:
                want = _leaves(record.fun(*args))
            except Exception as error:  # the device must fail too, or it differs
                want = f"{type(error).__name__}: {error}"[:300]
            cases[_case_id(record, dtype)] = (args, want)
            if limit and len(cases) >= limit:
                break
        if limit and len(cases) >= limit:
            break
    with open(path, "wb") as f:
        pickle.dump(cases, f)
    return len(cases)


def sweep_device(reference_path, cases_path, out_path):
    """The reference cases named in `cases_path` (JSON), run eagerly on the default device:
    each primitive compiled alone by XLA there. Each result is appended to `out_path` as it
    comes (pickled (case, result) pairs, the case's name written first with no result), so
    that a case that kills the process is known by name."""
    with open(reference_path, "rb") as f:
        cases = pickle.load(f)
    with open(cases_path) as f:
        names = json.load(f)
    records = {_case_id(r, d): r for r in _records() for d in r.dtypes}
    with open(out_path, "ab") as out:
        for case in names:
            pickle.dump((case, None), out)  # started
            out.flush()
            try:
                result = _leaves(records[case].fun(*cases[case][0]))
            except Exception as error:
                result = f"{type(error).__name__}: {error}"[:300]
            pickle.dump((case, result), out)
            out.flush()


def _read_pairs(path):
    """(results by case, the case started last without a result or None)."""
    results, started = {}, None
    if os.path.exists(path):
        with open(path, "rb") as f:
            while True:
                try:
                    case, result = pickle.load(f)
                except (EOFError, pickle.UnpicklingError):
                    break
                if result is None:
                    started = case
                else:
                    results[case] = result
                    started = None
    return results, started


def _start_worker(reference, names, tmp, label, env):
    cases_path = os.path.join(tmp, f"cases{label}.json")
    out_path = os.path.join(tmp, f"device{label}.pkl")
    with open(cases_path, "w") as f:
        json.dump(names, f)
    # faulthandler: a crash prints the Python stack of the case to stderr
    proc = subprocess.Popen([sys.executable, "-X", "faulthandler", __file__, "--sweep-device",
                             reference, cases_path, out_path], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return proc, names, out_path


def _sweep_env():
    # float32 dots at full precision: the sweep checks the lowering's arithmetic, and a
    # GPU's default (TF32, as in JAX) rounds operands to 10 bits (gpu_vs_jax.py compares
    # the default precision with JAX's)
    return _env(XLA_PYTHON_CLIENT_PREALLOCATE="false", JAX_DEFAULT_MATMUL_PRECISION="highest")


def _shared_with_jax(reference, differing, results, env, jax_platform):
    """The differing cases whose xjax result JAX gives too, bit for bit, on this device
    (those gpu_vs_jax.py knows, when JAX is installed): XLA's or the GPU's numbers."""
    known = [case for case in differing if case in gpu_vs_jax.CASES]
    if not known or not _jax_installed():
        return []
    jax_env = dict(env, JAX_PLATFORMS=jax_platform)
    jax_env.pop("XJAX_STAND_IN_GPU", None)
    theirs = gpu_vs_jax.results_of("jax", reference, known, jax_env)
    ours = {case: results[case][0] if isinstance(results[case], list)
            and len(results[case]) == 1 else results[case] for case in known}
    return [case for case in known if gpu_vs_jax.same_bits(ours[case], theirs.get(case, "-"))
            and not isinstance(ours[case], str)]


def _sweep_parallel(reference, names, tmp, parts, env):
    """The device sweep in `parts` processes at once (compiling ~2000 small programs is
    what takes the time), each allocating GPU memory as it needs it. A case that kills its
    process is reported as a crash (with the exit status and the end of its stderr), and
    the cases after it go on in a new process."""
    running = [_start_worker(reference, names[i::parts], tmp, str(i), env)
               for i in range(parts)]
    results, crashes, restarts = {}, {}, 0
    while running:
        proc, chunk, out_path = running.pop(0)
        _, err = proc.communicate(timeout=600)
        done, started = _read_pairs(out_path)
        results.update(done)
        if proc.returncode == 0:
            continue
        tail = " | ".join(err.strip().splitlines()[-8:])[-1200:]
        if started is None and not done:  # it failed before its first case: no restart
            crashes[f"(a worker, before its first of {len(chunk)} cases)"] = \
                f"exit status {proc.returncode}: {tail}"
            continue
        culprit = started or next((c for c in chunk if c not in done), None)
        if culprit is None:  # every case finished: the process failed on its way out
            crashes[f"(exit of a worker after {len(chunk)} cases)"] = \
                f"exit status {proc.returncode}: {tail}"
            continue
        crashes[culprit] = f"crashed the process (exit status {proc.returncode}): {tail}"
        rest = [c for c in chunk[chunk.index(culprit) + 1:] if c not in done]
        if rest:
            restarts += 1
            running.append(_start_worker(reference, rest, tmp, f"r{restarts}", env))
    return results, crashes


def _difference(got, want, tol):
    """None when `got` matches `want` within the record's tolerance, else a description."""
    import numpy as np
    if isinstance(want, str) or isinstance(got, str):
        if isinstance(want, str) and isinstance(got, str):
            return None
        return (f"raised {got[:200]}" if isinstance(got, str) else
                f"the reference raised {want[:200]}")
    if len(got) != len(want):
        return f"{len(got)} results, expected {len(want)}"
    for g, w in zip(got, want):
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"{g.dtype}{list(g.shape)} vs {w.dtype}{list(w.shape)}"
        if g.dtype.kind in "fc" or (g.dtype.kind == "V" and "float" in g.dtype.name):
            wide = np.complex128 if g.dtype.kind == "c" else np.float64
            with np.errstate(invalid="ignore"):
                gw, ww = g.astype(wide), w.astype(wide)
            same = (gw == ww) | (np.isnan(gw) & np.isnan(ww))  # NaN, inf: as assert_allclose
            with np.errstate(invalid="ignore"):
                error = np.where(same, 0, np.abs(gw - ww) - tol * np.abs(ww))
            if np.any(np.isnan(error)) or np.max(error, initial=0) > tol:
                with np.errstate(invalid="ignore"):  # inf - inf: NaN, left out of the max
                    worst = float(np.nanmax(np.abs(gw - ww), initial=0))
                return f"max error {worst:.3g} > {tol}"
        elif not np.array_equal(g, w):
            return f"{int(np.sum(g != w))} of {g.size} elements differ (exact op)"
    return None


def check_sweep(reference, quick, parts, jax_platform):
    made_here = reference is None
    tmp = tempfile.mkdtemp(prefix="xjax-gpu-check-")
    if made_here:  # computed on the host, by a process that never touches the GPU
        reference = os.path.join(tmp, "reference.pkl")
        code, _, err, _ = _run([__file__, "--write-reference", reference]
                               + (["--limit", "100"] if quick else []),
                               _env(XJAX_PLATFORMS="cpu", XJAX_STAND_IN_GPU=None))
        if code != 0:
            print(f"sweep: the reference failed:\n{err[-3000:]}")
            return False
    with open(reference, "rb") as f:
        cases = pickle.load(f)
    start = time.perf_counter()
    env = _sweep_env()
    results, crashes = _sweep_parallel(reference, sorted(cases), tmp, parts, env)
    seconds = time.perf_counter() - start
    tols = {_case_id(r, d): r.tol for r in _records() for d in r.dtypes}
    failures, unsupported, differing = [], [], {}
    for case, problem in crashes.items():
        failures.append(f"  {case}: {problem}")
    for case, (_, want) in sorted(cases.items()):
        if case in crashes:
            continue
        got = results.get(case, "no result: its worker stopped")
        if isinstance(got, str) and not isinstance(want, str) and (
                got.startswith("NotImplementedError")  # e.g. LAPACK-only, as in JAX
                or got.startswith("JaxRuntimeError: UNIMPLEMENTED")):  # XLA's GPU backend
            unsupported.append(case)
            continue
        problem = _difference(got, want, tols[case])
        if problem is not None:
            differing[case] = problem
    shared = _shared_with_jax(reference, differing, results, env, jax_platform)
    failures += [f"  {case}: {problem}" for case, problem in differing.items()
                 if case not in shared]
    print(f"sweep: {len(cases)} cases run eagerly on the device ({parts} processes) in "
          f"{seconds:.1f} s: {len(failures)} differ from the NumPy implementations, "
          f"{len(unsupported)} not implemented there, {len(crashes)} crashed a process")
    if unsupported:
        print("  not implemented on the device (xjax or XLA): " + ", ".join(unsupported))
    if shared:
        print("  differ from NumPy as JAX does on this device, bit for bit (gpu_vs_jax.py): "
              + ", ".join(shared))
    for line in failures[:120]:
        print(line)
    return not failures


# -- step 4: timings --

def _jax_installed():
    import importlib.util
    return importlib.util.find_spec("jax") is not None


def check_timings(rounds, quick, jax_platform):
    names = [name for name, _, _ in TIMINGS]
    impls = ["xjax"] + (["jax"] if _jax_installed() else [])
    times = {(impl, name): [] for impl in impls for name in names}
    envs = {"xjax": _env(), "jax": _env(JAX_PLATFORMS=jax_platform, XJAX_STAND_IN_GPU=None)}
    for _ in range(rounds):
        for impl in impls:
            code, out, err, _ = _run([os.path.join(HERE, "run.py"), "--worker", impl,
                                      "--only", ",".join(names)]
                                     + (["--quick"] if quick else []), envs[impl])
            if code != 0:
                print(f"timings: the {impl} worker failed:\n{err[-2000:]}")
                return False
            for name, value in json.loads(out.strip().splitlines()[-1]).items():
                if isinstance(value, str):
                    print(f"timings: {impl} {name}: {value}")
                    return False
                times[(impl, name)].append(value)
    ok = True
    print(f"timings: medians of {rounds} rounds" + ("" if "jax" in impls else
                                                   " (JAX not installed: no ratios)"))
    print(f"  {'workload':26s}{'xjax':>12s}{'jax':>12s}{'xjax/jax':>10s}  budget")
    for name, budget, kind in TIMINGS:
        medians = {impl: statistics.median(times[(impl, name)]) for impl in impls}
        row = f"  {name:26s}{_fmt(medians['xjax']):>12s}"
        if "jax" in medians:
            ratio = medians["xjax"] / medians["jax"]
            within = budget is None or ratio <= budget
            ok = ok and within
            row += f"{_fmt(medians['jax']):>12s}{ratio:10.2f}  "
            row += f"{budget}x {'ok' if within else 'OVER'} ({kind})" if budget else f"({kind})"
        print(row)
    return ok


def _fmt(seconds):
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} us"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", help="the sweep's reference (from --write-reference)")
    parser.add_argument("--quick", action="store_true", help="fewer cases, rounds, samples")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--jax-platform", default="cuda",
                        help="JAX_PLATFORMS for JAX's timings (default cuda)")
    parser.add_argument("--allow-stand-in", action="store_true",
                        help="accept XJAX_STAND_IN_GPU=1 (tests of this script)")
    parser.add_argument("--skip", default="", help="comma-separated steps: seeds,sweep,timings")
    parser.add_argument("--write-reference", metavar="PATH", help=argparse.SUPPRESS)
    parser.add_argument("--limit", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--processes", type=int, default=None,
                        help="processes of the sweep (default: half the cores, at most 8)")
    parser.add_argument("--sweep-device", nargs=3, metavar=("REFERENCE", "CASES", "OUT"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write_reference:
        print(write_reference(args.write_reference, args.limit), "cases")
        return 0
    if args.sweep_device:
        sweep_device(*args.sweep_device)
        return 0
    started = time.perf_counter()
    if check_backend(args.allow_stand_in) is None:
        return 2
    skip = set(filter(None, args.skip.split(",")))
    ok = True
    if "seeds" not in skip:
        ok = check_seeds() and ok
    if "sweep" not in skip:
        parts = args.processes or max(1, min(8, (os.cpu_count() or 2) // 2))
        ok = check_sweep(args.reference, args.quick, parts, args.jax_platform) and ok
    if "timings" not in skip:
        rounds = args.rounds or (2 if args.quick else 3)
        ok = check_timings(rounds, args.quick, args.jax_platform) and ok
    print(f"gpu_check: {'PASSED' if ok else 'FAILED'} in {time.perf_counter() - started:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
