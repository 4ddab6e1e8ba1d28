"""``jax_numpy_dtype_promotion="strict"``: implicit promotion between different dtypes raises
JAX's TypePromotionError; equal dtypes and Python scalars of a compatible kind still combine.

Every pair of JAX's promotion table (tests/data/promotion-table.tsv) is checked against the
strict lattice written out here, and against JAX itself when it is installed.
"""

import pathlib
import warnings

import ml_dtypes
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src.core.config import config

TABLE = pathlib.Path(__file__).resolve().parents[1] / "data" / "promotion-table.tsv"
PY_SCALARS = {"int": 1, "float": 1.0, "complex": 1j}
KIND = {"int": "iufc", "float": "fc", "complex": "c"}  # dtype kinds a scalar may join
MESSAGE = ("have no available implicit dtype promotion path when "
           "jax_numpy_dtype_promotion=strict")


def _rows():
    rows = []
    for line in TABLE.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        x64, a, b, out, weak = line.split("\t")
        rows.append(pytest.param(x64 == "1", a, b, out, weak == "True",
                                 id=f"x64={x64}-{a}-{b}"))
    return rows


def _dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def _operand(name, np_module=np):
    if name in PY_SCALARS:
        return PY_SCALARS[name]
    return jnp.asarray(np.ones((), _dtype(name)))


def _canonical(name, x64):
    if name in PY_SCALARS or x64:
        return name
    return {"int64": "int32", "uint64": "uint32", "float64": "float32",
            "complex128": "complex64"}.get(name, name)


def _strict_allows(a, b, x64) -> bool:
    """JAX's strict lattice: a Python int joins any integer, float or complex dtype, a
    Python float any float or complex dtype, a Python complex any complex dtype (none joins
    bool); Python scalars join each other; a dtype joins only itself."""
    a, b = _canonical(a, x64), _canonical(b, x64)
    if a == b:
        return True
    if a in PY_SCALARS and b in PY_SCALARS:
        return True
    if b in PY_SCALARS:
        a, b = b, a
    if a in PY_SCALARS:
        kind = _dtype(b).kind
        if b == "bfloat16":
            kind = "f"
        return kind in KIND[a]
    return False


@pytest.mark.parametrize("x64,a,b,out,weak", _rows())
def test_strict_promotion_follows_the_strict_lattice(x64, a, b, out, weak):
    with config.override(jax_enable_x64=x64), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x, y = _operand(a), _operand(b)
        with xjax.numpy_dtype_promotion("strict"):
            if _strict_allows(a, b, x64):
                result = jnp.add(x, y)
                assert (result.dtype.name, result.weak_type) == (out, weak)
            else:
                with pytest.raises(xjax.dtypes.TypePromotionError, match=MESSAGE):
                    jnp.add(x, y)


@pytest.mark.parametrize("x64,a,b,out,weak", _rows())
def test_strict_promotion_matches_jax(x64, a, b, out, weak):
    jax = pytest.importorskip("jax")
    import jax.numpy as jjnp

    def run(lib, np_lib):
        x = PY_SCALARS.get(a) if a in PY_SCALARS else np_lib.asarray(np.ones((), _dtype(a)))
        y = PY_SCALARS.get(b) if b in PY_SCALARS else np_lib.asarray(np.ones((), _dtype(b)))
        with lib.numpy_dtype_promotion("strict"):
            try:
                r = np_lib.add(x, y)
                return r.dtype.name, r.weak_type
            except Exception as e:
                return type(e).__name__, str(e)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with config.override(jax_enable_x64=x64), jax.enable_x64(x64):
            assert run(xjax, jnp) == run(jax, jjnp)


def test_strict_mode_under_jit_raises_while_tracing():
    f = xjax.jit(lambda x, y: x + y)
    x, y = jnp.ones(3, jnp.float32), jnp.ones(3, jnp.int32)
    assert f(x, y).dtype == jnp.float32  # standard mode: traced and cached
    with xjax.numpy_dtype_promotion("strict"):
        with pytest.raises(xjax.dtypes.TypePromotionError, match=MESSAGE):
            f(x, y)  # the mode is part of the cache key: retraced, and refused
    assert f(x, y).dtype == jnp.float32


def test_strict_promote_types_and_result_type():
    with xjax.numpy_dtype_promotion("strict"):
        assert jnp.promote_types(jnp.int8, jnp.int8) == jnp.int8
        assert jnp.result_type(jnp.float32, float) == jnp.float32
        assert jnp.result_type(int, float) == jnp.float32
        with pytest.raises(xjax.dtypes.TypePromotionError):
            jnp.promote_types(jnp.int8, jnp.int16)
        with pytest.raises(xjax.dtypes.TypePromotionError):
            jnp.result_type(jnp.int32, float)
    assert jnp.promote_types(jnp.int8, jnp.int16) == jnp.int16


def test_strict_message_names_the_dtypes():
    with xjax.numpy_dtype_promotion("strict"):
        with pytest.raises(xjax.dtypes.TypePromotionError) as info:
            jnp.ones(2, jnp.float32) * jnp.ones(2, jnp.int32)
    # JAX lists the dtypes in the order of a set of dtypes (hashes vary between processes)
    tail = ("have no available implicit dtype promotion path when "
            "jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired "
            "output type, or set jax_numpy_dtype_promotion=standard.")
    assert str(info.value) in (f"Input dtypes ('float32', 'int32') {tail}",
                               f"Input dtypes ('int32', 'float32') {tail}")


def test_strict_mode_is_set_by_config_update_and_read_back():
    assert xjax.config.jax_numpy_dtype_promotion == "standard"
    xjax.config.update("jax_numpy_dtype_promotion", "strict")
    try:
        assert xjax.config.jax_numpy_dtype_promotion == "strict"
        assert xjax.numpy_dtype_promotion.value == "strict"
        with pytest.raises(xjax.dtypes.TypePromotionError):
            jnp.ones(2, jnp.float16) + jnp.ones(2, jnp.float32)
    finally:
        xjax.config.update("jax_numpy_dtype_promotion", "standard")
    assert (jnp.ones(2, jnp.float16) + jnp.ones(2, jnp.float32)).dtype == jnp.float32


def test_bad_promotion_mode_is_refused_as_in_jax():
    with pytest.raises(ValueError, match="'loose' is not a valid NumpyDtypePromotion"):
        xjax.numpy_dtype_promotion("loose")
    with pytest.raises(TypeError, match="requires an argument"):
        xjax.numpy_dtype_promotion()
