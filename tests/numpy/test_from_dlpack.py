"""``jnp.from_dlpack``: Arrays from DLPack exporters (NumPy arrays, xjax Arrays, any object
with ``__dlpack__``/``__dlpack_device__``), and xjax Arrays as exporters."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src.core.config import config


class _Exporter:
    """Only the DLPack protocol, delegating to a NumPy array (a stand-in for another
    library's host tensor)."""

    def __init__(self, value):
        self._value = value

    def __dlpack__(self, *args, **kwargs):
        return self._value.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._value.__dlpack_device__()


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.uint16, np.int32,
                                   np.complex64, np.bool_])
def test_numpy_arrays(dtype):
    x = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    for source in (x, _Exporter(x)):
        out = jnp.from_dlpack(source)
        assert isinstance(out, xjax.Array)
        assert out.dtype == dtype and out.shape == (3, 4) and not out.weak_type
        np.testing.assert_array_equal(np.asarray(out), x)


def test_64_bit_inputs_are_canonicalized():
    x = np.linspace(0.0, 1.0, 5)
    out = jnp.from_dlpack(x)
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), x, rtol=1e-7)
    assert jnp.from_dlpack(np.arange(3, dtype=np.int64)).dtype == np.int32
    with config.override(jax_enable_x64=True):
        out = jnp.from_dlpack(x)
        assert out.dtype == np.float64
        np.testing.assert_array_equal(np.asarray(out), x)


def test_strided_and_scalar_inputs():
    x = np.arange(24.0, dtype=np.float32).reshape(4, 6)[::2, 1::2]
    np.testing.assert_array_equal(np.asarray(jnp.from_dlpack(x)), x)
    assert float(jnp.from_dlpack(np.array(2.5, np.float32))) == 2.5


def test_xjax_arrays_round_trip():
    x = jnp.arange(6, dtype=jnp.float32).reshape(2, 3) * 1.5
    assert hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__")
    assert x.__dlpack_device__()[0] == 1  # kDLCPU: the exported value lives on the host
    np.testing.assert_array_equal(np.from_dlpack(x), np.asarray(x))
    assert jnp.from_dlpack(x) is x  # immutable: nothing to copy
    y = jnp.from_dlpack(_Exporter(np.from_dlpack(x)))
    assert y.dtype == x.dtype
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))
    out = jnp.from_dlpack(x, device=xjax.devices("cpu")[0])
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x))


def test_copy_argument():
    x = np.arange(4, dtype=np.float32)
    out = jnp.from_dlpack(x, copy=True)
    x[0] = 100.0  # the copy does not see the exporter's later writes
    assert float(out[0]) == 0.0


def test_not_an_exporter():
    with pytest.raises(TypeError, match="__dlpack__ and __dlpack_device__"):
        jnp.from_dlpack([1.0, 2.0])
    with pytest.raises(TypeError, match="__dlpack__ and __dlpack_device__"):
        jnp.from_dlpack(np.float64(1.0).item())


def test_matches_jax():
    jax = pytest.importorskip("jax")
    for x in (np.arange(5.0), np.arange(6, dtype=np.int16).reshape(2, 3), np.array(True)):
        got, want = jnp.from_dlpack(x), jax.numpy.from_dlpack(x)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
