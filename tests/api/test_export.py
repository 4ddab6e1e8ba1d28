"""xjax.export: export a jitted function, serialize, deserialize and call it."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import export


def _f(x, y):
    big = jnp.asarray(np.arange(64 * 64, dtype=np.float32).reshape(64, 64))  # a passed const
    return {"s": jnp.sin(x) @ big[: x.shape[1], :4], "t": (x.sum() * y,)}


def _specs():
    return (xjax.ShapeDtypeStruct((2, 3), np.float32), xjax.ShapeDtypeStruct((), np.float32))


def test_roundtrip_and_call():
    exp = export.export(xjax.jit(_f))(*_specs())
    assert exp.fun_name == "_f" and exp.platforms == ("cpu",)
    assert [a.shape for a in exp.in_avals] == [(2, 3), ()]
    assert [a.shape for a in exp.out_avals] == [(2, 4), ()]
    assert "func.func" in exp.mlir_module()
    blob = exp.serialize()
    assert isinstance(blob, bytes)
    back = export.deserialize(blob)
    assert back.in_tree == exp.in_tree and back.out_tree == exp.out_tree
    assert back.in_avals == exp.in_avals
    x = np.linspace(0, 1, 6, dtype=np.float32).reshape(2, 3)
    expected = _f(jnp.asarray(x), jnp.float32(2.0))
    for fn in (back.call, xjax.jit(back.call)):
        out = fn(x, jnp.float32(2.0))
        np.testing.assert_allclose(out["s"], expected["s"], rtol=1e-5)
        np.testing.assert_allclose(out["t"][0], expected["t"][0], rtol=1e-6)
    out = xjax.vmap(lambda v: back.call(v, jnp.float32(1.0))["t"][0])(np.stack([x, 2 * x]))
    np.testing.assert_allclose(out, [x.sum(), 2 * x.sum()], rtol=1e-5)


def test_errors():
    with pytest.raises(ValueError, match="must be the result of `jit`"):
        export.export(_f)
    with pytest.raises(NotImplementedError, match="shape polymorphism"):
        export.symbolic_shape("b, 3")
    with pytest.raises(NotImplementedError):
        export.export(xjax.jit(_f), platforms=("cpu", "tpu"))
    exp = export.deserialize(export.export(xjax.jit(_f))(*_specs()).serialize())
    with pytest.raises(ValueError, match="exported for an argument"):
        exp.call(np.zeros((3, 3), np.float32), np.float32(1))
    with pytest.raises(ValueError, match="pytree"):
        exp.call(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="not an xjax export"):
        export.deserialize(b"flatbuffer bytes")


def test_names_match_jax():
    jax = pytest.importorskip("jax")
    public = {n for n in dir(jax.export) if not n.startswith("_")}
    assert public <= set(dir(export))
