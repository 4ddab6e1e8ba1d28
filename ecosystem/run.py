"""Run JAX's libraries on xjax: install them beside xjax, run their own tests under xjax's
import hook (and under JAX when it is installed), print a table.

    python ecosystem/run.py --smoke              # each library imports; smoke use (CI runs it)
    python ecosystem/run.py                      # the libraries' test suites, a table
    python ecosystem/run.py --only optax chex    # some of them
    python ecosystem/run.py --source equinox=PATH   # tests from a source checkout (see below)

Everything goes into a virtual environment of its own, ``ecosystem/.venv`` (``--venv`` to
choose another; ``--venv current`` uses the running interpreter's): xjax from this checkout,
the libraries at the pinned versions below with ``--no-deps`` (each declares ``jax`` as a
dependency; ``--no-deps`` keeps real JAX out), then their other dependencies, which need no
JAX. ``--compare`` also installs JAX (``pip install -e .[compare]``) and runs every suite
twice. The hook sits first on ``sys.meta_path``, so even with JAX installed, a run under the
hook imports xjax.

Test files come from each library's source distribution on the package index, downloaded
into ``ecosystem/.cache`` (nothing of them is kept in this repository). Equinox and jaxtyping
publish none in theirs: give a checkout of the tagged release with ``--source NAME=PATH``.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import pathlib
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ElementTree

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
CACHE = HERE / ".cache"

# The libraries, pinned (the newest releases on 2026-12-02), with --no-deps.
PINS = {
    "optax": "0.2.8",
    "chex": "0.1.92",
    "flax": "0.12.8",
    "equinox": "0.13.8",
    "distrax": "0.1.9",
    "jaxtyping": "0.3.11",
}
# What they need beside JAX, also with --no-deps: these declare jax or tf-nightly themselves.
SUPPORT = ["tfp-nightly==0.26.0.dev20261027", "wadler-lindig==0.1.8", "treescope==0.1.10"]
# The rest of their dependencies (and their tests'), none of which needs JAX.
DEPENDENCIES = [
    "absl-py==2.3.1", "typing_extensions>=4.15", "toolz==1.0.0", "msgpack==1.1.1",
    "rich==14.1.0", "PyYAML==6.0.2", "six==1.17.0", "decorator==5.2.1", "cloudpickle==3.1.1",
    "gast==0.6.0", "dm-tree==0.1.9", "beartype==0.22.2", "scikit-learn", "scipy", "pytest>=8", "pytest-xdist>=3.6",
]

# Test files of each suite, as globs inside the library's source tree; a suite is reported as
# one row of the table.
SUITES = {
    "optax": ("optax", ["optax/**/*_test.py"]),
    "chex": ("chex", ["chex/_src/*_test.py"]),
    "flax.linen": ("flax", ["tests/linen/*_test.py", "tests/core/**/*_test.py",
                            "tests/*_test.py"]),
    "flax.nnx": ("flax", ["tests/nnx/**/*_test.py"]),
    "equinox": ("equinox", ["tests/test_*.py"]),
    "distrax": ("distrax", ["distrax/**/*_test.py"]),
    "jaxtyping": ("jaxtyping", ["test/test_*.py"]),
}


def _run(command, **kwargs):
    print("+", " ".join(str(c) for c in command), flush=True)
    return subprocess.run([str(c) for c in command], check=True, **kwargs)


def venv_python(venv: str) -> pathlib.Path:
    """The interpreter of ``venv`` (created, with everything installed, when missing)."""
    if venv == "current":
        return pathlib.Path(sys.executable)
    python = pathlib.Path(venv) / "bin" / "python"
    if not python.exists():
        _run([sys.executable, "-m", "venv", venv])
    return python


def install(python: pathlib.Path, compare: bool) -> None:
    """xjax (editable), the pinned libraries without their dependencies, then the rest."""
    pip = [python, "-m", "pip", "install", "-q"]
    if compare or not _has_this_xjax(python):
        _run(pip + ["-e", ".[test,compare]" if compare else ".[test]"], cwd=ROOT)
    _run(pip + ["--no-deps"] + [f"{n}=={v}" for n, v in PINS.items()] + SUPPORT)
    _run(pip + DEPENDENCIES)


def _has_this_xjax(python) -> bool:
    """Whether ``python`` already imports xjax from this checkout (CI's own venv does)."""
    probe = "import xjax, sys; print(xjax.__file__)"
    found = subprocess.run([str(python), "-c", probe], capture_output=True, text=True)
    return found.returncode == 0 and found.stdout.strip().startswith(str(ROOT / "xjax"))


def source_tree(library: str, sources: dict) -> pathlib.Path:
    """The library's source distribution, downloaded and unpacked (or the given checkout)."""
    if library in sources:
        return pathlib.Path(sources[library]).resolve()
    version = PINS[library]
    unpacked = CACHE / f"{library}-{version}"
    if not unpacked.exists():
        CACHE.mkdir(exist_ok=True)
        _run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary",
              ":all:", "-d", CACHE, f"{library}=={version}"])
        archive = next(CACHE.glob(f"{library}-{version}.tar.gz"))
        with tarfile.open(archive) as tar:
            tar.extractall(CACHE, filter="data")
    return unpacked


def test_files(suite: str, sources: dict) -> tuple[pathlib.Path, list[str]]:
    library, patterns = SUITES[suite]
    tree = source_tree(library, sources)
    files = sorted({os.path.relpath(f, tree) for p in patterns
                    for f in glob.glob(str(tree / p), recursive=True)})
    return tree, files


def run_suite(python, suite, sources, under, workers, timeout):
    """Run one suite's tests under ``under`` ('xjax' or 'jax'): {test id: outcome}."""
    tree, files = test_files(suite, sources)
    if not files:
        return None
    report = CACHE / f"{suite}-{under}.xml"
    # a test file that fails to import counts as failed tests, not a stopped run
    command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "--continue-on-collection-errors", f"--junitxml={report}", "-n", str(workers)]
    if under == "xjax":
        command += ["-p", "xjax.as_jax"]
    environment = dict(os.environ, PYTHONPATH="", JAX_PLATFORMS="cpu")
    print(f"== {suite} under {under}: {len(files)} files", flush=True)
    try:
        subprocess.run([str(c) for c in command + files], cwd=tree, env=environment,
                       timeout=timeout, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        print(f"   {suite} under {under}: stopped after {timeout} s", flush=True)
    return read_junit(report) if report.exists() else {}


def read_junit(path) -> dict:
    """{test id: 'passed' | 'failed' | 'skipped'} from a pytest junit report."""
    outcomes = {}
    for case in ElementTree.parse(path).iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        tags = {child.tag for child in case}
        if tags & {"failure", "error"}:
            outcomes[name] = "failed"
        elif "skipped" in tags:
            outcomes[name] = "skipped"
        else:
            outcomes[name] = "passed"
    return outcomes


def _counts(outcomes):
    return {k: sum(v == k for v in outcomes.values()) for k in ("passed", "failed", "skipped")}


def table(results: dict) -> str:
    """The table of passed/failed/skipped per suite and backend, and the share of the tests
    passing on JAX that pass on xjax."""
    lines = [f"{'suite':<12} {'xjax pass/fail/skip':>22} {'jax pass/fail/skip':>22} "
             f"{'of jax passes':>14}"]
    for suite, by_backend in results.items():
        cells = []
        for backend in ("xjax", "jax"):
            outcomes = by_backend.get(backend)
            c = _counts(outcomes) if outcomes else None
            cells.append(f"{c['passed']}/{c['failed']}/{c['skipped']}" if c else "-")
        share = "-"
        if by_backend.get("jax") and by_backend.get("xjax") is not None:
            jax_passes = [t for t, o in by_backend["jax"].items() if o == "passed"]
            kept = sum(by_backend["xjax"].get(t) == "passed" for t in jax_passes)
            share = f"{100 * kept / max(len(jax_passes), 1):.1f}%"
        lines.append(f"{suite:<12} {cells[0]:>22} {cells[1]:>22} {share:>14}")
    return "\n".join(lines)


def _cached_reports(suites) -> dict:
    """The outcomes in the junit reports of earlier runs, by suite and backend."""
    found = {}
    for suite in suites:
        for backend in ("xjax", "jax"):
            report = CACHE / f"{suite}-{backend}.xml"
            if report.exists():
                found.setdefault(suite, {})[backend] = read_junit(report)
    return found


def _previous_results() -> dict:
    path = CACHE / "results.json"
    return json.loads(path.read_text()) if path.exists() else {}


def jax_installed(python) -> bool:
    probe = "import jax, sys; sys.exit(0 if hasattr(jax, 'jit') and 'xjax' not in jax.__file__ else 1)"
    return subprocess.run([str(python), "-c", probe], capture_output=True).returncode == 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true", help="import and smoke use only")
    parser.add_argument("--only", nargs="+", choices=sorted(SUITES), default=sorted(SUITES))
    parser.add_argument("--venv", default=str(HERE / ".venv"))
    parser.add_argument("--no-install", action="store_true", help="use the venv as it is")
    parser.add_argument("--compare", action="store_true", help="install JAX, run under it too")
    parser.add_argument("--source", action="append", default=[], metavar="NAME=PATH")
    parser.add_argument("--backends", nargs="+", choices=["xjax", "jax"], default=None,
                        help="run under these only (default: xjax, and jax when installed)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=3600, help="seconds per suite run")
    parser.add_argument("--report", action="store_true",
                        help="print the table of the reports already in ecosystem/.cache")
    parser.add_argument("--keep", action="store_true",
                        help="keep the results of earlier runs for suites not run now")
    args = parser.parse_args(argv)
    if args.report:
        print(table(_cached_reports(args.only)))
        return 0
    python = venv_python(args.venv)
    if not args.no_install:
        install(python, args.compare)
    if args.smoke:
        return subprocess.run([str(python), "-m", "xjax.run", str(HERE / "smoke.py")]).returncode
    sources = dict(s.split("=", 1) for s in args.source)
    backends = args.backends or ["xjax"] + (["jax"] if jax_installed(python) else [])
    results = _previous_results() if args.keep else {}
    for suite in args.only:
        for backend in backends:
            outcomes = run_suite(python, suite, sources, backend, args.workers, args.timeout)
            if outcomes is None:
                print(f"   {suite}: no test files (give --source {SUITES[suite][0]}=PATH)")
                break
            results.setdefault(suite, {})[backend] = outcomes
    CACHE.mkdir(exist_ok=True)
    (CACHE / "results.json").write_text(json.dumps(results))
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
