"""xjax.ffi: a C++ XLA FFI handler compiled here, registered and called eagerly, under jit
and vmap (skipped without a C++ compiler)."""

import ctypes
import os
import shutil
import subprocess

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import ffi

_SOURCE = r"""
#include <cstdint>
#include "xla/ffi/api/ffi.h"
namespace ffi = xla::ffi;

static ffi::Error AddScaledImpl(ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> y,
                                float scale, int64_t offset,
                                ffi::ResultBuffer<ffi::F32> out) {
  size_t n = x.element_count(), m = y.element_count();
  if (m == 0 || n % m != 0) return ffi::Error::InvalidArgument("size mismatch");
  for (size_t i = 0; i < n; ++i)  // y repeats over x's leading (batch) axes
    out->typed_data()[i] = x.typed_data()[i] * scale + y.typed_data()[i % m] + offset;
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(AddScaled, AddScaledImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Attr<float>("scale")
                                  .Attr<int64_t>("offset")
                                  .Ret<ffi::Buffer<ffi::F32>>());
"""


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no C++ compiler")
    pytest.importorskip("jaxlib", reason="XLA's FFI headers come with jaxlib")
    folder = tmp_path_factory.mktemp("ffi")
    source = folder / "add.cc"
    source.write_text(_SOURCE)
    library = folder / "libadd.so"
    subprocess.run([compiler, "-std=c++17", "-O1", "-shared", "-fPIC", "-w",
                    f"-I{ffi.include_dir()}", str(source), "-o", str(library)], check=True)
    lib = ctypes.CDLL(str(library))
    ffi.register_ffi_target("xjax_test_add_scaled", ffi.pycapsule(lib.AddScaled))
    return "xjax_test_add_scaled"


def _call(target, x, y, vmap_method=None):
    return ffi.ffi_call(target, xjax.ShapeDtypeStruct(x.shape, x.dtype),
                        vmap_method=vmap_method)(x, y, scale=np.float32(2.0), offset=1)


def test_include_dir_has_the_headers():
    pytest.importorskip("jaxlib", reason="XLA's FFI headers come with jaxlib")
    for name in ("ffi.h", "api.h", "c_api.h"):
        assert os.path.exists(os.path.join(ffi.include_dir(), "xla", "ffi", "api", name))
    with open(os.path.join(ffi.include_dir(), "xla", "ffi", "api", "c_api.h")) as f:
        assert "#define XLA_FFI_API_MINOR 2" in f.read()


def test_include_dir_without_jaxlib_says_where_headers_come_from(monkeypatch):
    import importlib.util
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "jaxlib" else real_find_spec(name, *a))
    with pytest.raises(FileNotFoundError, match="pip install jaxlib"):
        ffi.include_dir()


def test_eager_and_jit(target):
    x, y = jnp.arange(4.0), jnp.ones(4)
    expected = np.arange(4.0) * 2 + 1 + 1
    np.testing.assert_allclose(_call(target, x, y), expected)
    np.testing.assert_allclose(xjax.jit(lambda a, b: _call(target, a, b))(x, y), expected)
    text = xjax.jit(lambda a, b: _call(target, a, b)).lower(x, y).as_text()
    assert "stablehlo.custom_call" in text and "offset = 1 : i64" in text
    assert "ffi_call" in str(xjax.make_jaxpr(lambda a, b: _call(target, a, b))(x, y))


@pytest.mark.parametrize("method", ["sequential", "sequential_unrolled", "expand_dims",
                                    "broadcast_all"])
def test_vmap_methods(target, method):
    xs = jnp.arange(8.0).reshape(2, 4)
    y = jnp.ones(4)
    expected = np.arange(8.0).reshape(2, 4) * 2 + 2
    out = xjax.vmap(lambda a: _call(target, a, y, method))(xs)
    np.testing.assert_allclose(out, expected)
    out = xjax.jit(xjax.vmap(lambda a, b: _call(target, a, b, method)))(xs, xs)
    np.testing.assert_allclose(out, expected + np.arange(8.0).reshape(2, 4) - 1)


def test_errors(target):
    x = jnp.arange(4.0)
    with pytest.raises(NotImplementedError, match="vmap_method"):
        xjax.vmap(lambda a: _call(target, a, x))(x.reshape(1, 4))
    with pytest.raises(NotImplementedError, match="Differentiation"):
        xjax.grad(lambda a: _call(target, a, x).sum())(x)
    with pytest.raises(Exception, match="size mismatch"):  # the handler's own error
        _call(target, x, jnp.ones(3))
    with pytest.raises(ValueError, match="vmap_method"):
        ffi.ffi_call(target, xjax.ShapeDtypeStruct((4,), np.float32), vmap_method="bad")
    with pytest.raises(ValueError, match="not supported after"):
        ffi.register_ffi_type_id("t", None)
    with pytest.raises(NotImplementedError):
        ffi.register_ffi_target("x", ffi.pycapsule(ctypes.CDLL(None).abs), api_version=0)
    with pytest.raises(TypeError, match="PyCapsule"):
        ffi.register_ffi_target("x", "not a capsule")


def test_names_match_jax():
    jax = pytest.importorskip("jax")
    public = {n for n in dir(jax.ffi) if not n.startswith("_")}
    assert public <= set(dir(ffi))
