#!/usr/bin/env bash
# tools/sanitize.sh: run xjax's runtime tests against an ASan+UBSan build of the C extension.
#
# What it checks
#   xjax._src.runtime._pjrt (xjax/_src/runtime/_pjrt*.c, the PJRT C API binding) and
#   xjax._src.core._pytree (pytree flattening) are rebuilt in a
#   throwaway copy of the package with AddressSanitizer and UndefinedBehaviorSanitizer
#   (-fsanitize=address,undefined). The tests then run against that copy, so heap/stack
#   overflows, use-after-free, double free and undefined behaviour (bad shifts, misaligned
#   access, out-of-bounds indexes, invalid object sizes, null derefs, ...) in the extension's
#   C code are reported with a stack trace and stop the run. The script fails if pytest
#   fails or any sanitizer report appears. The working tree is not modified (the build
#   happens in a temp dir, removed at the end).
#
# How to run (from anywhere; tests are run from the repository root)
#   bash tools/sanitize.sh                          # tests/runtime
#   bash tools/sanitize.sh -k buffer                # tests/runtime -k buffer
#   bash tools/sanitize.sh tests/test_ffi.py tests/runtime   # explicit paths replace the default
#   PYTHON=/path/to/python bash tools/sanitize.sh   # default: <repo>/.venv/bin/python
#   That python needs setuptools, pytest and `xla-cpu-pjrt` (for pjrt_c_api.h) installed.
#   SANITIZE_KEEP=1 keeps the temp dir (build, logs) for inspection.
#
# Why LD_PRELOAD
#   Only the extension is instrumented; the python interpreter is not. The ASan runtime must
#   be the first library in the process so it can intercept malloc/free and friends before
#   anything allocates, and a dlopen()ed instrumented module (our extension, imported by an
#   uninstrumented python) cannot arrange that itself: without the preload it aborts with
#   "ASan runtime does not come first in initial library list". So libasan.so (and
#   libubsan.so) of the compiler that built the extension are preloaded into python and
#   everything it spawns.
#
# Other settings
#   ASAN_OPTIONS=detect_leaks=0:... leak detection is off (python and the XLA plugin keep
#     memory for the life of the process, which LeakSanitizer would report).
#   Where reports go: pytest runs with --capture=sys, so what C code writes to fd 2 (a
#     sanitizer report, then abort) reaches the terminal instead of pytest's capture file,
#     which an abort would throw away. ASan also gets log_path=<tmp>/logs/sanitizer (UBSan the
#     same; gcc 12's libubsan itself still prints to stderr), so reports from subprocesses the
#     tests spawn with captured stderr are kept too; those files are printed at the end.
#     Both runtimes abort on the first report (rc 134).
#   No signed-overflow check in effect: Python's CFLAGS carry -fwrapv (overflow is defined).
#     The extension is compiled at -O2 in the end: setup.py's extra_compile_args come last.
#   PYTHONMALLOC=malloc: python objects come from malloc, so ASan sees overflows and
#     use-after-free of objects the extension handles (pymalloc arenas would hide them).
#   XLA_FLAGS gets --xla_cpu_use_xnnpack=false.
#   Deselected: tests that measure RSS (test_many_executions_do_not_leak). Under ASan freed
#     memory sits in the quarantine (up to 256 MiB, kept so use-after-free is caught) and RSS
#     grows by ~150 MiB in a full run, so such a test fails without any leak (it passes with
#     quarantine_size_mb=0). Set SANITIZE_DESELECT="" to run it anyway, or to a
#     space-separated list of node ids to deselect others.
#   PYTHONDONTWRITEBYTECODE=1 so nothing is written into the repository's tests/.
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-$REPO/.venv/bin/python}"
CC="${CC:-gcc}"
START=$SECONDS

die() { echo "sanitize.sh: $*" >&2; exit 2; }

[[ -x "$PYTHON" ]] || die "no python at $PYTHON (set PYTHON=...)"
"$PYTHON" -c "import xla_plugins.xla_cpu_pjrt, pytest, setuptools" 2>/dev/null \
  || die "$PYTHON needs xla-cpu-pjrt, pytest and setuptools installed"

LIBASAN="$("$CC" -print-file-name=libasan.so)"
LIBUBSAN="$("$CC" -print-file-name=libubsan.so)"
[[ -f "$LIBASAN" ]] || die "libasan.so not found via $CC -print-file-name (install libasan)"
[[ -f "$LIBUBSAN" ]] || die "libubsan.so not found via $CC -print-file-name (install libubsan)"
LIBASAN="$(readlink -f "$LIBASAN")"
LIBUBSAN="$(readlink -f "$LIBUBSAN")"

TMP="$(mktemp -d "${TMPDIR:-/tmp}/xjax-sanitize.XXXXXX")"
cleanup() {
  if [[ "${SANITIZE_KEEP:-0}" == 1 ]]; then echo "sanitize.sh: kept $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
SRC="$TMP/src"
LOGS="$TMP/logs"
mkdir -p "$SRC" "$LOGS"

# ---------------------------------------------------------------- copy + sanitized build
# The working tree as it is now (uncommitted edits included), minus build outputs.
tar -C "$REPO" --exclude='__pycache__' --exclude='*.so' --exclude='*.pyc' --exclude='build' \
    -cf - xjax setup.py pyproject.toml $(cd "$REPO" && ls README.md 2>/dev/null) | tar -C "$SRC" -xf - \
  || die "copying the sources failed"

echo "sanitize.sh: building the extension with ASan+UBSan in $SRC"
(
  cd "$SRC" &&
  CC="$CC" \
  CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -g -O1" \
  LDFLAGS="-fsanitize=address,undefined" \
  "$PYTHON" setup.py -q build_ext --inplace --force
) > "$LOGS/build.log" 2>&1
rc=$?
if (( rc != 0 )); then
  cat "$LOGS/build.log" >&2
  die "sanitized build failed (rc=$rc)"
fi
EXT="$(ls "$SRC"/xjax/_src/runtime/_pjrt*.so 2>/dev/null | head -n1)"
[[ -n "$EXT" ]] || { cat "$LOGS/build.log" >&2; die "build produced no xjax/_src/runtime/_pjrt*.so"; }
[[ "$(ldd "$EXT")" == *libasan* ]] || die "$EXT is not linked against libasan (CFLAGS ignored?)"

# A pytest plugin (in the temp copy, first on sys.path) that fails the session loudly unless
# the extension the tests use is the sanitized one.
cat > "$TMP/src/_xjax_sanitize_check.py" <<'EOF'
import os
import sys

_ROOT = os.path.realpath(os.environ["XJAX_SANITIZE_ROOT"])


def _inside(path):
    return os.path.commonpath([os.path.realpath(path), _ROOT]) == _ROOT


def _check():
    import xjax._src.runtime._pjrt as ext
    bad = [(name, getattr(sys.modules.get(name), "__file__", None))
           for name in ("xjax", "xjax._src.runtime._pjrt")]
    bad = [(n, f) for n, f in bad if f is None or not _inside(f)]
    if bad:
        raise RuntimeError(
            "sanitize.sh: NOT testing the sanitized build: " +
            ", ".join(f"{n} from {f}" for n, f in bad) + f" (expected inside {_ROOT})")
    return ext.__file__


def pytest_configure(config):
    _check()


def pytest_sessionfinish(session, exitstatus):
    try:
        path = _check()
    except RuntimeError as e:
        sys.stderr.write(f"\n{e}\n")
        session.exitstatus = 3
        return
    sys.stderr.write(f"\nsanitize.sh: tests used {path}\n")
EOF

# ---------------------------------------------------------------- run the tests
export XJAX_SANITIZE_ROOT="$SRC"
export PYTHONPATH="$SRC${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
# No cwd (the repository, with its own unsanitized build) at the front of sys.path, for pytest
# and for the `python -c` subprocesses some tests start: like python -P, but inherited.
export PYTHONSAFEPATH=1
export PYTHONMALLOC="${SANITIZE_PYTHONMALLOC:-malloc}"
export XLA_FLAGS="${XLA_FLAGS:+$XLA_FLAGS }--xla_cpu_use_xnnpack=false"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:halt_on_error=1:log_path=$LOGS/sanitizer"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:abort_on_error=1:log_path=$LOGS/sanitizer"
PRELOAD="$LIBASAN $LIBUBSAN${LD_PRELOAD:+ $LD_PRELOAD}"

# Default test paths unless the arguments name one (a path or a path::test node id).
args=("$@")
has_path=0
for a in "${args[@]}"; do
  [[ "$a" != -* && -e "$REPO/${a%%::*}" ]] && has_path=1
done
(( has_path )) || args=(tests/runtime "${args[@]}")
deselect=()
for d in ${SANITIZE_DESELECT-tests/runtime/test_runtime.py::test_many_executions_do_not_leak}; do
  deselect+=(--deselect "$d")
done

cd "$REPO" || die "cannot cd to $REPO"

# Before the test run: the import resolves to the temp copy.
where="$(LD_PRELOAD="$PRELOAD" "$PYTHON" -c \
  'import xjax._src.runtime._pjrt as m; print(m.__file__)' 2>&1)"
case "$where" in
  "$SRC"/*) echo "sanitize.sh: xjax._src.runtime._pjrt comes from $where" ;;
  *) echo "$where" >&2
     die "FATAL: xjax._src.runtime._pjrt does not come from the sanitized copy in $SRC" ;;
esac

echo "sanitize.sh: pytest ${deselect[*]} ${args[*]}"
LD_PRELOAD="$PRELOAD" "$PYTHON" -m pytest --import-mode=importlib -p no:cacheprovider \
  -p no:xdist --capture=sys -p _xjax_sanitize_check "${deselect[@]}" "${args[@]}" 2>&1 | tee "$LOGS/pytest.log"
pytest_rc=${PIPESTATUS[0]}

# ---------------------------------------------------------------- reports + summary
shopt -s nullglob
for f in "$LOGS"/sanitizer.*; do
  [[ -s "$f" ]] || continue
  echo "==================== sanitizer log $(basename "$f") ===================="
  cat "$f"
done
n_asan=$(cat "$LOGS"/pytest.log "$LOGS"/sanitizer.* 2>/dev/null \
         | grep -c "ERROR: AddressSanitizer")
n_ubsan=$(cat "$LOGS"/pytest.log "$LOGS"/sanitizer.* 2>/dev/null \
          | grep -c "runtime error:")
reports=$((n_asan + n_ubsan))

first="$(cat "$LOGS"/pytest.log "$LOGS"/sanitizer.* 2>/dev/null \
         | grep -m1 -A6 -E "ERROR: AddressSanitizer|runtime error:")"
counts="$(grep -E '^(=+ )?[0-9]+ (passed|failed|error)|[0-9]+ (passed|failed|errors?|skipped)' \
          "$LOGS/pytest.log" | tail -n1 | sed -E 's/=+//g; s/^ +| +$//g')"
elapsed=$((SECONDS - START))
if (( pytest_rc == 0 && reports == 0 )); then
  echo "sanitize.sh: PASS: pytest rc=0 (${counts:-no summary}), 0 sanitizer reports, ${elapsed}s"
  exit 0
fi
[[ -n "$first" ]] && printf '%s\n' "---- first sanitizer report (head) ----" "$first" "----"
echo "sanitize.sh: FAIL: pytest rc=$pytest_rc (${counts:-no summary}), $n_asan ASan + $n_ubsan UBSan reports, ${elapsed}s"
exit 1
