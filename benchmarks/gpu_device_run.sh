#!/bin/sh
# The one script to run on a lent GPU machine (no network there; JAX and a CUDA PJRT plugin
# installed, no xla-cpu-pjrt): build xjax's C extension in place against a carried PJRT
# header, then run benchmarks/gpu_check.py with a reference computed beforehand on a CPU.
#
# Prepare on the CPU machine (both paths are git-ignored, carried to the device):
#   mkdir -p build/pjrt_include
#   cp .venv/lib/python3*/site-packages/xla_plugins/xla_cpu_pjrt/include/pjrt_c_api.h \
#      build/pjrt_include/
#   .venv/bin/python benchmarks/gpu_check.py --write-reference build/gpu_reference.pkl
# Then, with the device tool: command "sh benchmarks/gpu_device_run.sh", carry
# ["build/pjrt_include", "build/gpu_reference.pkl"]; the report lands in $OUT.
set -u
OUT=${OUT:-/tmp}
export XJAX_PJRT_INCLUDE="$PWD/build/pjrt_include"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
PY=${PYTHON:-python3}
{
  echo "== machine"; nvidia-smi -L 2>&1 | head -4; $PY --version
  $PY -c "import jax, jaxlib; print('jax', jax.__version__)" 2>&1 | tail -1
  echo "== build"
  if ! $PY setup.py build_ext --inplace -q 2>&1 | tail -5; then :; fi
  if ! $PY -c "import xjax._src.runtime._pjrt" 2>/dev/null; then
    # no setuptools there: the compiler directly
    suffix=$($PY -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
    include=$($PY -c "import sysconfig; print(sysconfig.get_paths()['include'])")
    cc -O2 -std=c11 -fvisibility=hidden -shared -fPIC -I"$include" -I"$XJAX_PJRT_INCLUDE" xjax/_src/runtime/_pjrt*.c \
      -ldl -o "xjax/_src/runtime/_pjrt$suffix"
  fi
  echo "== check"
  $PY benchmarks/gpu_check.py --reference build/gpu_reference.pkl "$@"
  echo "exit status $?"
} 2>&1 | tee "$OUT/gpu_check.txt"
