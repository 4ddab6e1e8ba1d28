"""Tests of xjax.core.dtypes: canonicalization, weak types and JAX's promotion lattice."""

import contextlib
import pathlib
import warnings

import ml_dtypes
import numpy as np
import pytest

from xjax._src.core import dtypes
from xjax._src.core.config import config

TABLE = pathlib.Path(__file__).parent.parent / "data" / "promotion-table.tsv"
PY_SCALARS = {"int": 1, "float": 1.0, "complex": 1j}


def _rows():
    rows = []
    for line in TABLE.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        x64, a, b, out, weak = line.split("\t")
        rows.append(pytest.param(x64 == "1", a, b, out, weak == "True",
                                 id=f"x64={x64}-{a}-{b}"))
    return rows


ROWS = _rows()


def test_table_is_complete():
    assert len(ROWS) == 2 * 18 * 18


def _pair(name):
    """(dtype, weak) of an operand of the table under the current x64 setting."""
    if name in PY_SCALARS:
        return dtypes.python_scalar_dtype(PY_SCALARS[name]), True
    return dtypes.canonicalize_dtype(name), False


def _value(name):
    if name in PY_SCALARS:
        return PY_SCALARS[name]
    return np.zeros((), dtypes.canonicalize_dtype(name))


@pytest.mark.parametrize("x64,a,b,out,weak", ROWS)
def test_promotion_table(x64, a, b, out, weak):
    with config.override(jax_enable_x64=x64):
        assert dtypes.lattice_result(_pair(a), _pair(b)) == (np.dtype(out), weak)
        got = dtypes.result_type(_value(a), _value(b), return_weak_type_flag=True)
        assert got == (np.dtype(out), weak)
        assert dtypes.result_type(_value(a), _value(b)) == np.dtype(out)


@pytest.mark.parametrize("x64", [False, True])
def test_lattice_result_is_symmetric_and_cached(x64):
    with config.override(jax_enable_x64=x64):
        names = [n for n in dtypes.ALL_DTYPES if n not in dtypes._intn_dtypes
                 and n not in dtypes._small_float_dtypes]
        for a in names:
            for b in names:
                for wa in (False, True):
                    for wb in (False, True):
                        r1 = dtypes.lattice_result((a, wa), (b, wb))
                        r2 = dtypes.lattice_result((b, wb), (a, wa))
                        assert r1 == r2
                        assert dtypes.lattice_result((a, wa), (b, wb)) is r1


def test_lattice_result_follows_x64_at_call_time():
    pair = ((dtypes.int32, True), (dtypes.float32, True))
    with config.override(jax_enable_x64=False):
        assert dtypes.lattice_result(*pair) == (dtypes.float32, True)
    with config.override(jax_enable_x64=True):
        assert dtypes.lattice_result(*pair) == (dtypes.float32, True)
        assert dtypes.lattice_result((int, True), (float, True)) == (dtypes.float64, True)
    with config.override(jax_enable_x64=False):
        assert dtypes.lattice_result((int, True), (float, True)) == (dtypes.float32, True)


def test_weak_corner_cases_from_behaviours_doc():
    with config.override(jax_enable_x64=False):
        lr = dtypes.lattice_result
        assert lr((dtypes.int8, False), (dtypes.float32, True)) == (dtypes.float32, True)
        assert lr((dtypes.int32, False), (dtypes.complex64, True)) == (dtypes.complex64, True)
        assert lr((dtypes.float32, False), (dtypes.complex64, True)) == (dtypes.complex64,
                                                                          False)
        assert lr((dtypes.float16, False), (dtypes.bfloat16, False)) == (dtypes.float32,
                                                                          False)
        assert lr((dtypes.uint32, False), (dtypes.int32, False)) == (dtypes.int32, False)
        # weak values of non-default width
        assert lr((dtypes.int16, True), (dtypes.int32, True)) == (dtypes.int32, True)
        assert lr((dtypes.int16, True),) == (dtypes.int16, True)
        assert dtypes.result_type(np.int16(1)) == dtypes.int16
        assert lr((dtypes.bool_, True),) == (dtypes.bool_, False)


def test_result_type_misc():
    rt = dtypes.result_type
    with config.override(jax_enable_x64=False):
        assert rt(1) == dtypes.int32
        assert rt(1, return_weak_type_flag=True) == (dtypes.int32, True)
        assert rt(True, return_weak_type_flag=True) == (dtypes.bool_, False)
        assert rt(None) == dtypes.float32
        assert rt(int, float, return_weak_type_flag=True) == (dtypes.float32, True)
        assert rt(np.float32, 1) == dtypes.float32
        assert rt("int8", int) == dtypes.int8
        assert rt(np.float64(1), return_weak_type_flag=True) == (dtypes.float32, False)
        assert rt(np.ones(2)) == dtypes.float32
        with pytest.raises(ValueError, match="at least one array or dtype is required"):
            rt()
        with pytest.raises(TypeError):
            rt(np.array(["a"]))
    with config.override(jax_enable_x64=True):
        assert rt(1) == dtypes.int64
        assert rt(np.ones(2)) == dtypes.float64


class _Weak:
    """Stands in for a weakly typed array or tracer."""

    def __init__(self, dtype, weak=True):
        self.dtype, self.weak_type = np.dtype(dtype), weak


class _WithAval:
    def __init__(self, dtype, weak):
        self.aval = _Weak(dtype, weak)
        self.dtype = self.aval.dtype


def test_is_weakly_typed():
    assert dtypes.is_weakly_typed(1) and dtypes.is_weakly_typed(1.0)
    assert dtypes.is_weakly_typed(1j)
    assert not dtypes.is_weakly_typed(True)
    assert not dtypes.is_weakly_typed(np.float64(1.0))  # a float subclass, but not weak
    assert not dtypes.is_weakly_typed(np.ones(2))
    assert dtypes.is_weakly_typed(_Weak("float32"))
    assert dtypes.is_weakly_typed(_WithAval("float32", True))
    assert not dtypes.is_weakly_typed(_WithAval("float32", False))
    with config.override(jax_enable_x64=False):
        assert dtypes.result_type(_Weak("float32"), np.zeros((), np.float16)) == np.float16
        assert dtypes.result_type(_Weak("int32"), _Weak("float32"),
                                  return_weak_type_flag=True) == (dtypes.float32, True)


def test_result_type_warns_for_explicit_64_bit_dtype():
    with config.override(jax_enable_x64=False):
        with pytest.warns(UserWarning, match="Explicitly requested dtype float64 requested "
                          "in dtype is not available") as rec:
            assert dtypes.result_type("float64") == dtypes.float32
        assert rec[0].filename == __file__
    with config.override(jax_enable_x64=True), warnings.catch_warnings():
        warnings.simplefilter("error")
        assert dtypes.result_type("float64") == dtypes.float64


def test_check_and_canonicalize_user_dtype():
    cc = dtypes.check_and_canonicalize_user_dtype
    with config.override(jax_enable_x64=False):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert cc(float) == dtypes.float32  # Python types give the default silently
            assert cc(int) == dtypes.int32
            assert cc(np.float32) == dtypes.float32
            assert cc(dtypes.bfloat16) == dtypes.bfloat16
        with pytest.warns(UserWarning, match="Explicitly requested dtype float64 requested "
                          "in array is not available, and will be truncated to dtype "
                          "float32"):
            assert cc(np.float64, "array") == dtypes.float32
        with pytest.warns(UserWarning, match="int64 is not available"):
            assert cc("int64") == dtypes.int32
        with pytest.raises(TypeError, match="JAX only supports number"):
            cc(np.dtype("U3"))
        with pytest.raises(ValueError, match="Passing an array as a dtype"):
            cc(np.ones(2))
        with pytest.warns(UserWarning):
            dtypes.check_user_dtype_supported("complex128", "zeros")
    with config.override(jax_enable_x64=True):
        assert cc(np.float64) == dtypes.float64


@pytest.mark.parametrize("x64", [False, True])
def test_canonicalize_dtype(x64):
    c = dtypes.canonicalize_dtype
    with config.override(jax_enable_x64=x64):
        wide = {"int64": "int32", "uint64": "uint32", "float64": "float32",
                "complex128": "complex64"}
        for name, narrow in wide.items():
            expect = np.dtype(name if x64 else narrow)
            assert c(name) == expect and c(np.dtype(name)) == expect
            assert c(getattr(np, name)) == expect
        assert c(float) == (dtypes.float64 if x64 else dtypes.float32)
        assert c(int) == (dtypes.int64 if x64 else dtypes.int32)
        assert c(complex) == (dtypes.complex128 if x64 else dtypes.complex64)
        assert c(bool) == dtypes.bool_
        assert c("f4") == dtypes.float32 and c("f8") == (dtypes.float64 if x64 else
                                                         dtypes.float32)
        assert c(ml_dtypes.bfloat16) == dtypes.bfloat16
        assert c(np.int16) == dtypes.int16
        assert isinstance(c("float32"), np.dtype)
    with pytest.raises(TypeError):
        c("foo")


def test_python_scalar_dtype_and_dtype():
    with config.override(jax_enable_x64=False):
        assert dtypes.python_scalar_dtype(1) == dtypes.int32
        assert dtypes.python_scalar_dtype(1.0) == dtypes.float32
        assert dtypes.python_scalar_dtype(True) == dtypes.bool_
        assert dtypes.python_scalar_dtype(1j) == dtypes.complex64
        assert dtypes.python_scalar_dtype(float) == dtypes.float32
        assert dtypes.dtype(1) == dtypes.int64
        assert dtypes.dtype(1, canonicalize=True) == dtypes.int32
        assert dtypes.dtype(np.ones(2, np.float64)) == dtypes.float64
        assert dtypes.dtype(np.ones(2, np.float64), canonicalize=True) == dtypes.float32
        assert dtypes.dtype("bfloat16") == dtypes.bfloat16
        assert dtypes.dtype(np.float16) == dtypes.float16
        assert dtypes.dtype(np.uint8(3)) == dtypes.uint8
        assert dtypes.dtype(_Weak("int8")) == dtypes.int8
        with pytest.raises(TypeError, match="Cannot determine dtype"):
            dtypes.dtype([1.0, 2.0])  # as in JAX
        with pytest.raises(TypeError):
            dtypes.python_scalar_dtype("a")
        with pytest.raises(TypeError, match="not a valid JAX array type"):
            dtypes.dtype(np.array(["a"]))
        with pytest.raises(ValueError):
            dtypes.dtype(None)
    with config.override(jax_enable_x64=True):
        assert dtypes.python_scalar_dtype(1) == dtypes.int64


def test_defaults_and_conversions():
    with config.override(jax_enable_x64=False):
        assert dtypes.default_float_dtype() == dtypes.float32
        assert dtypes.default_int_dtype() == dtypes.int32
        assert dtypes.default_complex_dtype() == dtypes.complex64
        assert dtypes.to_inexact_dtype(np.int8) == dtypes.float32
        assert dtypes.to_inexact_dtype(np.int64) == dtypes.float32
        assert dtypes.to_inexact_dtype(np.bool_) == dtypes.float32
        assert dtypes.to_inexact_dtype(dtypes.bfloat16) == dtypes.bfloat16
        assert dtypes.to_complex_dtype(np.float64) == dtypes.complex64
    with config.override(jax_enable_x64=True):
        assert dtypes.default_float_dtype() == dtypes.float64
        assert dtypes.default_int_dtype() == dtypes.int64
        assert dtypes.default_complex_dtype() == dtypes.complex128
        assert dtypes.to_inexact_dtype(np.int64) == dtypes.float64
        assert dtypes.to_inexact_dtype(np.int32) == dtypes.float32
        assert dtypes.to_complex_dtype(np.float64) == dtypes.complex128
        assert dtypes.to_complex_dtype(np.float32) == dtypes.complex64
        assert dtypes.to_complex_dtype(np.int64) == dtypes.complex128
    assert dtypes.to_numeric_dtype(np.bool_) == dtypes.int32


def test_categories():
    d = dtypes
    assert d.is_float(d.bfloat16) and d.is_float(d.float8_e4m3fn) and d.is_float("float16")
    assert not d.is_float(d.complex64) and not d.is_float(np.int32)
    assert d.is_complex(np.complex64) and d.is_inexact(np.complex128)
    assert d.is_integer(d.int4) and d.is_integer(np.uint8) and not d.is_integer(np.bool_)
    assert d.is_unsigned(d.uint4) and d.is_unsigned(np.uint32) and not d.is_unsigned(d.int4)
    assert d.is_signed_integer(np.int8)
    assert d.is_bool(np.bool_) and d.is_bool(bool)
    assert d.is_numeric(np.int8) and not d.is_numeric(np.bool_)


def test_issubdtype():
    iss = dtypes.issubdtype
    assert iss(dtypes.bfloat16, np.floating) and iss(dtypes.bfloat16, np.inexact)
    assert iss("bfloat16", np.number) and iss(ml_dtypes.bfloat16, np.floating)
    assert iss(dtypes.float8_e4m3fn, np.floating)
    assert iss(dtypes.int4, np.signedinteger) and iss(dtypes.int4, np.integer)
    assert iss(dtypes.uint4, np.unsignedinteger) and not iss(dtypes.uint4, np.signedinteger)
    assert not iss(dtypes.bfloat16, np.integer)
    assert not iss(np.float32, float) and iss(np.float64, float)
    assert not iss(np.int32, int) and not iss(np.complex64, complex)
    assert iss(np.bool_, bool) and iss(dtypes.bfloat16, dtypes.bfloat16)
    assert not iss(np.float32, dtypes.bfloat16) and not iss(dtypes.bfloat16, np.float16)
    assert iss(np.float32, np.floating) and not iss(np.float32, np.complexfloating)
    assert iss(np.floating, np.inexact) and not iss(np.inexact, np.floating)
    assert iss(dtypes.prng_key, dtypes.extended) and not iss(np.float32, dtypes.extended)
    assert not iss(dtypes.extended, np.floating)

    class Key(dtypes.ExtendedDType):
        type = dtypes.prng_key
        name = "key<fry>"

    key = Key()
    assert iss(key, dtypes.extended) and iss(key, dtypes.prng_key) and iss(key, key)
    assert not iss(key, np.floating) and not iss(np.float32, key)


def test_finfo_iinfo_and_bits():
    assert dtypes.finfo(dtypes.bfloat16).bits == 16
    assert float(dtypes.finfo(dtypes.float8_e4m3fn).max) == 448.0
    assert dtypes.finfo(np.float32).eps == np.finfo(np.float32).eps
    assert dtypes.iinfo(dtypes.int4).max == 7 and dtypes.iinfo(dtypes.uint4).max == 15
    assert dtypes.iinfo(np.int8).min == -128
    assert dtypes.itemsize_bits(dtypes.int4) == 4 and dtypes.itemsize_bits(np.bool_) == 8
    assert dtypes.itemsize_bits(np.complex128) == 128
    assert dtypes.itemsize_bits(dtypes.float4_e2m1fn) == 4
    with pytest.raises(ValueError):
        dtypes.itemsize_bits(dtypes.float0)
    assert dtypes.float0.itemsize == 0


def test_scalar_type_of():
    sto = dtypes.scalar_type_of
    assert [sto(x) for x in (1, 1.0, True, 1j)] == [int, float, bool, complex]
    assert sto(np.float32(1)) is float and sto(np.ones(2, dtypes.bfloat16)) is float
    assert sto(np.uint8(1)) is int and sto(np.arange(2)) is int


def test_short_dtype_names():
    expect = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
              "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
              "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "bool",
              "complex64": "c64", "complex128": "c128", "float8_e4m3fn": "f8_e4m3fn",
              "float8_e5m2fnuz": "f8_e5m2fnuz", "int4": "i4", "uint4": "u4"}
    for name, short in expect.items():
        assert dtypes.short_dtype_name(np.dtype(name)) == short
    assert dtypes.short_dtype_name(dtypes.float0) == "float0"


def test_python_int_overflow_helpers():
    with config.override(jax_enable_x64=False):
        assert dtypes.python_int_fits(127, np.int8) and not dtypes.python_int_fits(128,
                                                                                 np.int8)
        assert dtypes.python_int_fits(2**31, np.uint32)
        assert dtypes.python_int_fits(10**30, np.float32)
        with pytest.raises(OverflowError,
                           match="Python int 2147483648 too large to convert to int32"):
            dtypes.check_python_int(2**31)
        with pytest.raises(OverflowError, match="-2147483649"):
            dtypes.check_python_int(-2**31 - 1)
        dtypes.check_python_int(2**31 - 1)
        # int8 array + 300 wraps: 300 becomes 44, and 1 + 44 == 45
        v = dtypes.coerce_python_int(300, np.int8)
        assert v.dtype == np.int8 and int(np.int8(1) + v) == 45
        assert int(dtypes.coerce_python_int(-1, np.uint8)) == 255
        assert dtypes.coerce_python_int(7, np.float16).dtype == np.float16
        for big in (2**40, 2**31):
            with pytest.raises(OverflowError):
                dtypes.coerce_python_int(big, np.float32)
    with config.override(jax_enable_x64=True):
        dtypes.check_python_int(2**40)
        with pytest.raises(OverflowError, match="too large to convert to int64"):
            dtypes.check_python_int(2**63)


def test_type_promotion_errors():
    assert issubclass(dtypes.TypePromotionError, ValueError)
    with pytest.raises(dtypes.TypePromotionError, match="8-bit floats do not support"):
        dtypes.promote_types(dtypes.float8_e4m3fn, np.float32)
    with pytest.raises(dtypes.TypePromotionError, match="4-bit integers do not support"):
        dtypes.result_type(dtypes.int4, np.int8)
    with pytest.raises(dtypes.TypePromotionError):
        dtypes.lattice_result((dtypes.float8_e5m2, False), (dtypes.float8_e4m3fn, False))
    # weak Python scalars do promote with the small types
    assert dtypes.lattice_result((dtypes.float8_e5m2, False), (dtypes.float32, True)) == (
        dtypes.float8_e5m2, False)


def test_promote_types_examples():
    pt = dtypes.promote_types
    with config.override(jax_enable_x64=False):
        assert pt(np.int8, np.uint8) == dtypes.int16
        assert pt("uint8", int) == dtypes.uint8
        assert pt("float16", float) == dtypes.float16
        assert pt(np.uint32, np.int32) == dtypes.int32
        assert pt(np.int8, np.uint64) == dtypes.float64  # not canonicalized, as in JAX
    with config.override(jax_enable_x64=True):
        assert pt(np.uint32, np.int32) == dtypes.int64


# --------------------------------------------------------------------------------------------
# differential tests against JAX


@pytest.fixture(scope="module")
def jax():
    return pytest.importorskip("jax")


@contextlib.contextmanager
def both_x64(jax, x64):
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", x64)
    try:
        with config.override(jax_enable_x64=x64):
            yield
    finally:
        jax.config.update("jax_enable_x64", old)


def _outcome(f, *args):
    try:
        return str(f(*args))
    except Exception as e:  # noqa: BLE001
        return type(e).__name__


TYPES = list(dtypes.ALL_DTYPES) + [int, float, complex]


@pytest.mark.parametrize("x64", [False, True])
def test_promote_types_matches_jax(jax, x64):
    jnp = jax.numpy
    with both_x64(jax, x64):
        for a in TYPES:
            for b in TYPES:
                ours = _outcome(dtypes.promote_types, a, b)
                theirs = _outcome(jnp.promote_types, a, b)
                assert ours == theirs, (a, b)


@pytest.mark.parametrize("x64", [False, True])
def test_result_type_matches_jax(jax, x64):
    jd = jax.dtypes
    values = [1, 1.0, 1j, True, None, int, float, complex] + \
        [np.zeros((), d) for d in dtypes.ALL_DTYPES] + list(dtypes.ALL_DTYPES)
    with both_x64(jax, x64), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a in values:
            assert _outcome(dtypes.result_type, a) == _outcome(jd.result_type, a)
            for b in values:
                ours = _outcome(lambda *v: dtypes.result_type(*v, return_weak_type_flag=True),
                                a, b)
                theirs = _outcome(lambda *v: jd.result_type(*v, return_weak_type_flag=True),
                                  a, b)
                assert ours == theirs, (a, b)


@pytest.mark.parametrize("x64", [False, True])
def test_canonicalize_and_friends_match_jax(jax, x64):
    jd = jax.dtypes
    likes = list(dtypes.ALL_DTYPES) + [float, int, bool, complex, "f8", "i4", "float64",
                                       np.uint64, np.complex128]
    with both_x64(jax, x64):
        for d in likes:
            assert dtypes.canonicalize_dtype(d) == jd.canonicalize_dtype(d), d
    for d in dtypes.ALL_DTYPES:
        assert dtypes.itemsize_bits(d) == jd.itemsize_bits(d), d
        assert dtypes.scalar_type_of(np.zeros((), d)) is jd.scalar_type_of(np.zeros((), d))
        for cat in (np.generic, np.number, np.integer, np.signedinteger, np.unsignedinteger,
                    np.inexact, np.floating, np.complexfloating, np.bool_, float, int,
                    complex, bool, dtypes.bfloat16, np.float32):
            assert dtypes.issubdtype(d, cat) == jd.issubdtype(d, cat), (d, cat)


def test_short_names_match_jax_jaxprs(jax):
    jnp = jax.numpy
    for d in dtypes.ALL_DTYPES:
        if dtypes.itemsize_bits(d) < 8 or d in (dtypes.int64, dtypes.uint64, dtypes.float64,
                                                 dtypes.complex128):
            continue
        text = str(jax.make_jaxpr(lambda x: x)(jnp.zeros((1,), d)))
        assert f"a:{dtypes.short_dtype_name(d)}[1]" in text, text
