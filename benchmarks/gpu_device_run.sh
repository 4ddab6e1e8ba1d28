#!/bin/sh
# The one script to run on a lent GPU machine (no network there; JAX and a CUDA PJRT plugin
# installed, no xla-cpu-pjrt): build xjax's C extension in place against a carried PJRT
# header, then run benchmarks/gpu_check.py with a reference computed beforehand on a CPU.
#
# Prepare on the CPU machine (both paths are git-ignored, carried to the device):
#   mkdir -p build/pjrt_include
#   cp .venv/lib/python3*/site-packages/xla_plugins/xla_cpu_pjrt/include/pjrt_c_api.h \
#      build/pjrt_include/    # the header `pip install -e .` builds with (C API 0.81);
#                             # jax-cuda13-pjrt 0.11.2 (C API 0.115) accepts it
#   .venv/bin/python benchmarks/gpu_check.py --write-reference build/gpu_reference.pkl
# Then, with the device tool: command "sh benchmarks/gpu_device_run.sh", carry
# ["build/pjrt_include", "build/gpu_reference.pkl"]; the report lands in
# $OUT/gpu_check.txt. XJAX_PJRT_INCLUDE names another header folder.
set -u
OUT=${OUT:-/tmp}
export XJAX_PJRT_INCLUDE="${XJAX_PJRT_INCLUDE:-$PWD/build/pjrt_include}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
{
  echo "== machine"; nvidia-smi -L 2>&1 | head -4; $PY --version
  grep -m1 "model name" /proc/cpuinfo; nproc
  $PY -c "import jax, numpy; print('jax', jax.__version__, 'numpy', numpy.__version__)" 2>&1 | tail -1
  echo "== build against $XJAX_PJRT_INCLUDE"
  rm -rf xjax/_src/runtime/_pjrt.cpython-*.so build/temp.* build/lib.*
  $PY setup.py build_ext --inplace -j 8 -q 2>&1 | grep -iE "error|warning" | head -20
  if ! $PY -c "import xjax._src.runtime._pjrt" 2>/dev/null; then
    # no setuptools there: the compiler directly
    suffix=$($PY -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
    include=$($PY -c "import sysconfig; print(sysconfig.get_paths()['include'])")
    cc -O2 -std=c11 -fvisibility=hidden -shared -fPIC -I"$include" -I"$XJAX_PJRT_INCLUDE" \
      xjax/_src/runtime/_pjrt*.c -ldl -o "xjax/_src/runtime/_pjrt$suffix"
  fi
  echo "== check"
  timeout 420 $PY benchmarks/gpu_check.py --reference build/gpu_reference.pkl "$@"
  echo "exit status $?"
  echo "== the platform: transfers, async dispatch, donation, the persistent cache"
  timeout 180 $PY benchmarks/gpu_platform_check.py
  echo "exit status $?"
  echo "== the cases where a GPU differs from NumPy, beside JAX"
  timeout 120 $PY benchmarks/gpu_vs_jax.py --reference build/gpu_reference.pkl
} 2>&1 | tee "$OUT/gpu_check.txt"
