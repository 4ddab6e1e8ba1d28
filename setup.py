"""Builds xjax's C extensions: xjax._src.runtime._pjrt (the PJRT C API binding) and
xjax._src.core._pytree (pytree flattening of the built-in containers).

Everything else about the package lives in pyproject.toml. The extension is
compiled against the `pjrt_c_api.h` that ships inside the `xla-cpu-pjrt` wheel
(a build requirement), so the binding and the CPU plugin agree on the ABI.
"""

import importlib.util
import os

from setuptools import Extension, setup


def _pjrt_include_dir() -> str:
    override = os.environ.get("XJAX_PJRT_INCLUDE")
    if override:
        return override
    spec = importlib.util.find_spec("xla_plugins.xla_cpu_pjrt")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "building xjax needs the `xla-cpu-pjrt` package for pjrt_c_api.h "
            "(pip install xla-cpu-pjrt==0.0.1), or XJAX_PJRT_INCLUDE=<dir with the header>"
        )
    include = os.path.join(list(spec.submodule_search_locations)[0], "include")
    if not os.path.isfile(os.path.join(include, "pjrt_c_api.h")):
        raise RuntimeError(f"pjrt_c_api.h not found in {include}")
    return include


_C_FLAGS = ["-O2", "-std=c11", "-fvisibility=hidden", "-Wall", "-Wno-missing-field-initializers"]

setup(
    ext_modules=[
        Extension(
            "xjax._src.runtime._pjrt",
            sources=[
                "xjax/_src/runtime/_pjrt.c",
                "xjax/_src/runtime/_pjrt_client.c",
                "xjax/_src/runtime/_pjrt_buffer.c",
                "xjax/_src/runtime/_pjrt_executable.c",
                "xjax/_src/runtime/_pjrt_ffi.c",
                "xjax/_src/runtime/_pjrt_lapack.c",
                "xjax/_src/runtime/_pjrt_sort.c",
            ],
            depends=["xjax/_src/runtime/_pjrt.h", "xjax/_src/runtime/_pjrt_ffi.h"],
            include_dirs=[_pjrt_include_dir()],
            libraries=["dl"],
            extra_compile_args=_C_FLAGS,
        ),
        Extension(
            "xjax._src.core._pytree",
            sources=["xjax/_src/core/_pytree.c"],
            extra_compile_args=_C_FLAGS,
        ),
    ],
)
