"""JAX's dtype rules: canonical dtypes, weak types and the type promotion lattice.

64-bit types are off by default: with ``config.jax_enable_x64`` false, int64, uint64, float64
and complex128 canonicalize to their 32-bit (64-bit complex) counterparts. Values born from
Python scalars are *weakly typed*: they take the width of the strongly typed operand they meet.
Binary promotion follows JAX's lattice (https://docs.jax.dev/en/latest/type_promotion.html),
checked row by row against measurements of JAX 0.10.2 in ``tests/data/promotion-table.tsv``.

Everything here is on the hot path of every operation, so results are cached in dicts keyed on
the arguments and the x64 flag (read at call time: it may change between calls).
"""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np

from xjax._src.core.config import config

_config_flags = config.__dict__  # flags are plain instance attributes; read them by dict

# --------------------------------------------------------------------------------------------
# dtype constants

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(f"int{b}") for b in (8, 16, 32, 64))
uint8, uint16, uint32, uint64 = (np.dtype(f"uint{b}") for b in (8, 16, 32, 64))
float16, float32, float64 = (np.dtype(f"float{b}") for b in (16, 32, 64))
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)
bfloat16 = np.dtype(ml_dtypes.bfloat16)
# The dtype of tangents of integer and boolean values.
float0 = np.dtype([("float0", np.void, 0)])


def _ml(name):
    typ = getattr(ml_dtypes, name, None)
    return None if typ is None else np.dtype(typ)


int1, uint1, int2, uint2, int4, uint4 = map(_ml, ("int1", "uint1", "int2", "uint2",
                                                  "int4", "uint4"))
float4_e2m1fn = _ml("float4_e2m1fn")
float6_e2m3fn, float6_e3m2fn = _ml("float6_e2m3fn"), _ml("float6_e3m2fn")
float8_e3m4, float8_e4m3 = _ml("float8_e3m4"), _ml("float8_e4m3")
float8_e8m0fnu, float8_e4m3b11fnuz = _ml("float8_e8m0fnu"), _ml("float8_e4m3b11fnuz")
float8_e4m3fn, float8_e4m3fnuz = _ml("float8_e4m3fn"), _ml("float8_e4m3fnuz")
float8_e5m2, float8_e5m2fnuz = _ml("float8_e5m2"), _ml("float8_e5m2fnuz")


def _present(*dts):
    return tuple(d for d in dts if d is not None)


_intn_dtypes = _present(uint1, uint2, uint4, int1, int2, int4)  # sub-byte integers
_float8_dtypes = _present(float8_e3m4, float8_e4m3, float8_e8m0fnu, float8_e4m3b11fnuz,
                          float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz)
_float6_dtypes = _present(float6_e2m3fn, float6_e3m2fn)
_float4_dtypes = _present(float4_e2m1fn)
_small_float_dtypes = _float4_dtypes + _float6_dtypes + _float8_dtypes
_custom_float_dtypes = _small_float_dtypes + (bfloat16,)  # floats numpy does not know
_int_dtypes = _present(uint1, uint2, uint4) + (uint8, uint16, uint32, uint64) + \
    _present(int1, int2, int4) + (int8, int16, int32, int64)
_float_dtypes = _small_float_dtypes + (bfloat16, float16, float32, float64)
_complex_dtypes = (complex64, complex128)
# Every dtype a JAX array may have, in JAX's order.
ALL_DTYPES = (bool_,) + _int_dtypes + _float_dtypes + _complex_dtypes
_valid_dtypes = frozenset(ALL_DTYPES)

# Kind letter ('b', 'i', 'u', 'f', 'c') of each dtype; ml_dtypes report kind 'V'.
_KIND = {bool_: "b", **{d: d.kind for d in (int8, int16, int32, int64, uint8, uint16,
                                            uint32, uint64, float16, float32, float64,
                                            complex64, complex128)}}
_KIND.update({d: "f" for d in _custom_float_dtypes})
_KIND.update({d: ("u" if d.name.startswith("u") else "i") for d in _intn_dtypes})

_BITS = {d: (8 if d == bool_ else (ml_dtypes.iinfo(d).bits if _KIND[d] in "iu" else
                                   ml_dtypes.finfo(d).bits * (2 if _KIND[d] == "c" else 1)))
         for d in ALL_DTYPES}

_TO_32 = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}


class TypePromotionError(ValueError):
    """Raised when two dtypes have no implicit promotion path."""


class extended(np.generic):
    """Abstract scalar type of extended (non-NumPy) dtypes, such as typed PRNG keys."""


class prng_key(extended):
    """Abstract scalar type of PRNG key dtypes."""


class ExtendedDType:
    """Base class of extended dtype objects; subclasses set ``type`` (a subclass of
    :class:`extended`) and ``name``."""

    type = extended
    name = "extended"

    def __repr__(self):
        return self.name

    __str__ = __repr__


finfo = ml_dtypes.finfo  # numpy's finfo extended to bfloat16 and the float8 types
iinfo = ml_dtypes.iinfo  # numpy's iinfo extended to int4 and friends

# --------------------------------------------------------------------------------------------
# canonicalization


def _x64() -> bool:
    return _config_flags["jax_enable_x64"]


_canon_cache = ({}, {})  # indexed by the x64 flag


def canonicalize_dtype(dtype, allow_extended_dtype: bool = False):
    """Return the canonical form of a dtype-like under the current x64 setting.

    Parameters
    ----------
    dtype : dtype-like
        A ``np.dtype``, scalar type (``np.float32``, ``float``), or string (``'f4'``).
    allow_extended_dtype : bool
        Pass extended dtypes (e.g. PRNG keys) through instead of raising.

    Returns
    -------
    numpy.dtype
        With x64 disabled, 64-bit types map to 32-bit ones (complex128 to complex64).

    Examples
    --------
    >>> canonicalize_dtype(float)  # x64 disabled
    dtype('float32')
    """
    cache = _canon_cache[_config_flags["jax_enable_x64"]]
    try:
        return cache[dtype]
    except (KeyError, TypeError):
        pass
    if isinstance(dtype, ExtendedDType) or (
            isinstance(dtype, type) and issubclass(dtype, extended)):
        if not allow_extended_dtype:
            raise ValueError(f"Internal: canonicalize_dtype called on extended dtype {dtype} "
                             "with allow_extended_dtype=False")
        return dtype
    dt = np.dtype(dtype)
    out = dt if _x64() else _TO_32.get(dt, dt)
    try:
        cache[dtype] = out
    except TypeError:
        pass
    return out


def default_float_dtype() -> np.dtype:
    """The dtype of Python floats: float64 with x64 enabled, else float32."""
    return float64 if _config_flags["jax_enable_x64"] else float32


def default_int_dtype() -> np.dtype:
    """The dtype of Python ints: int64 with x64 enabled, else int32."""
    return int64 if _config_flags["jax_enable_x64"] else int32


def default_uint_dtype() -> np.dtype:
    """The default unsigned integer dtype: uint64 with x64 enabled, else uint32."""
    return uint64 if _config_flags["jax_enable_x64"] else uint32


def default_complex_dtype() -> np.dtype:
    """The dtype of Python complex numbers: complex128 with x64 enabled, else complex64."""
    return complex128 if _config_flags["jax_enable_x64"] else complex64


_PY_SCALAR_DTYPE = {bool: bool_, int: int64, float: float64, complex: complex128}
_DEFAULT_OF_KIND = {"b": (bool_, bool_), "i": (int32, int64), "u": (uint32, uint64),
                    "f": (float32, float64), "c": (complex64, complex128)}
python_scalar_types = frozenset(_PY_SCALAR_DTYPE)


def is_python_scalar(x) -> bool:
    """True for Python ``bool``, ``int``, ``float`` and ``complex`` values (not subclasses)."""
    return type(x) in _PY_SCALAR_DTYPE


def python_scalar_dtype(x) -> np.dtype:
    """Canonical dtype of a Python scalar value or type (``1`` -> int32 with x64 off).

    Examples
    --------
    >>> python_scalar_dtype(1.0)  # x64 disabled
    dtype('float32')
    """
    typ = x if isinstance(x, type) else type(x)
    dt = _PY_SCALAR_DTYPE.get(typ)
    if dt is None:
        raise TypeError(f"{x!r} is not a Python scalar")
    return dt if _config_flags["jax_enable_x64"] else _TO_32.get(dt, dt)


def _kind(dt) -> str:
    k = _KIND.get(dt)
    if k is None:
        k = "V" if isinstance(dt, ExtendedDType) else np.dtype(dt).kind
    return k


def default_dtype_of_kind(kind: str) -> np.dtype:
    """Canonical default dtype for a kind letter: 'b', 'i', 'u', 'f' or 'c'."""
    return _DEFAULT_OF_KIND[kind][_config_flags["jax_enable_x64"]]


def is_valid_dtype(dt) -> bool:
    """True if ``dt`` (a ``np.dtype``) is a dtype a JAX array may have."""
    return dt in _valid_dtypes


def _invalid_value(x, dt):
    return TypeError(f"Value '{x}' with dtype {dt} is not a valid JAX array type. "
                     "Only arrays of numeric types are supported by JAX.")


def dtype(x, canonicalize: bool = False):
    """Return the dtype of a value or dtype-like.

    Parameters
    ----------
    x : object
        A Python scalar or scalar type, a NumPy array or scalar, a dtype-like, or any object
        with a ``dtype`` attribute (arrays, tracers, avals).
    canonicalize : bool
        Apply :func:`canonicalize_dtype` to the result. Without it Python scalars report
        their 64-bit type (``int`` -> int64).

    Examples
    --------
    >>> dtype(1.0, canonicalize=True)  # x64 disabled
    dtype('float32')
    """
    typ = type(x)
    dt = _PY_SCALAR_DTYPE.get(typ)
    if dt is None:
        if x is None:
            raise ValueError(f"Invalid argument to dtype: {x}.")
        if isinstance(x, np.dtype):
            dt = x
        elif isinstance(x, ExtendedDType):
            return x
        elif isinstance(x, type):
            dt = _PY_SCALAR_DTYPE.get(x)
            if dt is None:
                if issubclass(x, extended):
                    return x
                dt = np.dtype(x)
        elif isinstance(x, str):
            dt = np.dtype(x)
        else:
            attr = getattr(x, "dtype", None)
            if isinstance(attr, ExtendedDType):
                return attr
            if isinstance(attr, np.dtype):
                dt = attr
            else:
                try:
                    dt = np.result_type(x)
                except TypeError as err:
                    raise TypeError(f"Cannot determine dtype of {x}") from err
        if dt not in _valid_dtypes and dt != float0:
            raise _invalid_value(x, dt)
    if canonicalize and not _config_flags["jax_enable_x64"]:
        return _TO_32.get(dt, dt)
    return dt


def is_weakly_typed(x) -> bool:
    """True for Python int/float/complex values and for weakly typed arrays and tracers.

    Python ``bool`` is not weak: it is an ordinary strong bool.
    """
    typ = type(x)
    if typ is int or typ is float or typ is complex:
        return True
    aval = getattr(x, "aval", None)
    if aval is not None:
        return bool(getattr(aval, "weak_type", False))
    return bool(getattr(x, "weak_type", False))


def scalar_type_of(x) -> type:
    """The Python scalar type (bool, int, float or complex) matching a value's dtype.

    Examples
    --------
    >>> scalar_type_of(np.float32(1))
    <class 'float'>
    """
    k = _kind(dtype(x))
    try:
        return {"b": bool, "i": int, "u": int, "f": float, "c": complex}[k]
    except KeyError:
        raise TypeError(f"Invalid scalar value {x}") from None


def itemsize_bits(dtype_) -> int:
    """Size of one element in bits (4 for int4; 8 for bool).

    Examples
    --------
    >>> itemsize_bits(int4)
    4
    """
    if dtype_ is None:
        raise ValueError("dtype cannot be None.")
    dt = np.dtype(dtype_)
    bits = _BITS.get(dt)
    if bits is None:
        raise ValueError(f"unexpected input: dtype={dtype_!r}")
    return bits


_SHORT_PREFIXES = (("bfloat", "bf"), ("float", "f"), ("uint", "u"), ("int", "i"),
                   ("complex", "c"))


def short_dtype_name(dt) -> str:
    """Short dtype name used when printing jaxprs: f32, bf16, i8, u32, c64, f8_e4m3fn, bool.

    Examples
    --------
    >>> short_dtype_name(np.dtype('float32')), short_dtype_name(bfloat16)
    ('f32', 'bf16')
    """
    name = _short_names.get(dt)
    if name is None:
        if isinstance(dt, ExtendedDType):
            return str(dt)
        dt = np.dtype(dt)
        if dt == float0:
            name = "float0"
        else:
            name = dt.name
            for long, short in _SHORT_PREFIXES:
                if name.startswith(long):
                    name = short + name[len(long):]
                    break
        _short_names[dt] = name
    return name


_short_names: dict = {}

# --------------------------------------------------------------------------------------------
# dtype categories


_ABSTRACT = frozenset([np.generic, np.number, np.integer, np.signedinteger,
                       np.unsignedinteger, np.inexact, np.floating, np.complexfloating,
                       np.flexible, np.character])
_KIND_PARENTS = {
    "b": (np.generic,),
    "i": (np.generic, np.number, np.integer, np.signedinteger),
    "u": (np.generic, np.number, np.integer, np.unsignedinteger),
    "f": (np.generic, np.number, np.inexact, np.floating),
    "c": (np.generic, np.number, np.inexact, np.complexfloating),
}
_issubdtype_cache: dict = {}


def issubdtype(a, b) -> bool:
    """``numpy.issubdtype`` that also knows the ml_dtypes types and extended dtypes.

    Examples
    --------
    >>> issubdtype(bfloat16, np.floating), issubdtype(int4, np.signedinteger)
    (True, True)
    >>> issubdtype(np.float32, float)  # a Python type stands for its 64-bit dtype
    False
    """
    try:
        return _issubdtype_cache[a, b]
    except (KeyError, TypeError):
        pass
    out = _issubdtype(a, b)
    try:
        _issubdtype_cache[a, b] = out
    except TypeError:
        pass
    return out


def _issubdtype(a, b) -> bool:
    if a is None or b is None:
        return False
    # Extended dtypes: a dtype object or an abstract scalar type under `extended`.
    a_ext = isinstance(a, ExtendedDType) or (isinstance(a, type) and issubclass(a, extended))
    b_ext = isinstance(b, ExtendedDType) or (isinstance(b, type) and issubclass(b, extended))
    if a_ext or b_ext:
        if not (a_ext and b_ext):
            return False
        if isinstance(b, ExtendedDType):
            return a == b
        a_type = a.type if isinstance(a, ExtendedDType) else a
        return issubclass(a_type, b)
    b_abstract = isinstance(b, type) and b in _ABSTRACT
    if isinstance(a, type) and a in _ABSTRACT:
        b_type = b if b_abstract else np.dtype(b).type
        return issubclass(a, b_type)
    a_dt = np.dtype(a)
    if b_abstract:
        k = _KIND.get(a_dt)
        if k is not None:
            return b in _KIND_PARENTS[k]
        return bool(np.issubdtype(a_dt, b))
    return a_dt == np.dtype(b)


def _kind_of_dtype_like(d) -> str:
    dt = d if isinstance(d, (np.dtype, ExtendedDType)) else np.dtype(d)
    return _kind(dt)


def is_bool(d) -> bool:
    """True for the bool dtype."""
    return _kind_of_dtype_like(d) == "b"


def is_integer(d) -> bool:
    """True for signed and unsigned integer dtypes, int4 included (bool excluded)."""
    return _kind_of_dtype_like(d) in "iu"


def is_signed_integer(d) -> bool:
    """True for signed integer dtypes."""
    return _kind_of_dtype_like(d) == "i"


def is_unsigned(d) -> bool:
    """True for unsigned integer dtypes."""
    return _kind_of_dtype_like(d) == "u"


def is_float(d) -> bool:
    """True for real floating dtypes, bfloat16 and the float8 types included."""
    return _kind_of_dtype_like(d) == "f"


def is_complex(d) -> bool:
    """True for complex dtypes."""
    return _kind_of_dtype_like(d) == "c"


def is_inexact(d) -> bool:
    """True for floating and complex dtypes."""
    return _kind_of_dtype_like(d) in "fc"


def is_numeric(d) -> bool:
    """True for integer, floating and complex dtypes (not bool)."""
    return _kind_of_dtype_like(d) in "iufc"


_TO_INEXACT = {bool_: float32, uint8: float32, int8: float32, uint16: float32,
               int16: float32, uint32: float32, int32: float32, uint64: float64,
               int64: float64, **{d: float32 for d in _intn_dtypes}}


def to_inexact_dtype(d) -> np.dtype:
    """The dtype ``jnp.true_divide`` computes in: integers and bool become float32 (64-bit
    integers float64), canonicalized; inexact dtypes are returned unchanged.

    Examples
    --------
    >>> to_inexact_dtype(np.int8)
    dtype('float32')
    """
    dt = np.dtype(d)
    out = _TO_INEXACT.get(dt)
    return dt if out is None else canonicalize_dtype(out)


def to_complex_dtype(d) -> np.dtype:
    """The complex dtype matching a dtype's precision (complex128 only from 64-bit types).

    Examples
    --------
    >>> to_complex_dtype(np.float32)
    dtype('complex64')
    """
    ftype = to_inexact_dtype(d)
    out = complex128 if ftype in (float64, complex128) else complex64
    return canonicalize_dtype(out)


def to_numeric_dtype(d) -> np.dtype:
    """Bool becomes int32; other dtypes are returned unchanged."""
    dt = np.dtype(d)
    return int32 if dt == bool_ else dt


# --------------------------------------------------------------------------------------------
# the promotion lattice
#
# Nodes are strings: a dtype's name, or "i*", "f*", "c*" for weakly typed Python int, float
# and complex values. Strings keep numpy's lenient dtype equality (dtype('int64') == int) out
# of the set arithmetic below.

_WEAK_NODE = {"i": "i*", "u": "i*", "f": "f*", "c": "c*"}
_WEAK_NODE_KIND = {"i*": "i", "f*": "f", "c*": "c"}
_PY_WEAK_NODE = {int: "i*", float: "f*", complex: "c*"}
_NODE_DTYPE = {d.name: d for d in ALL_DTYPES}


def _standard_edges(x64: bool) -> dict:
    names = lambda dts: [d.name for d in dts]  # noqa: E731
    edges = {
        "bool": ["i*"],
        "i*": ["uint8", "int8"] + names(_intn_dtypes),
        "uint8": ["int16", "uint16"], "uint16": ["int32", "uint32"],
        # Without x64 no promotion may create a 64-bit type from narrower ones.
        "uint32": ["int64", "uint64"] if x64 else ["int32", "uint64"],
        "uint64": ["f*"],
        "int8": ["int16"], "int16": ["int32"], "int32": ["int64"], "int64": ["f*"],
        "f*": names(_small_float_dtypes) + ["bfloat16", "float16", "c*"],
        "bfloat16": ["float32"], "float16": ["float32"],
        "float32": ["float64", "complex64"], "float64": ["complex128"],
        "c*": ["complex64"], "complex64": ["complex128"], "complex128": [],
    }
    for d in _intn_dtypes + _small_float_dtypes:
        edges[d.name] = []
    return edges


def _strict_edges() -> dict:
    edges = {d.name: [] for d in ALL_DTYPES}
    edges["i*"] = ["f*"] + [d.name for d in _int_dtypes]
    edges["f*"] = ["c*"] + [d.name for d in _float_dtypes]
    edges["c*"] = [d.name for d in _complex_dtypes]
    return edges


def _upper_sets(edges: dict) -> dict:
    """Map each node to the set of nodes at or above it (transitive closure of the DAG)."""
    ups: dict = {}

    def visit(n, active):
        if n in ups:
            return ups[n]
        if n in active:
            raise ValueError(f"cycle in type promotion lattice at {n}")
        active.add(n)
        up = {n}
        for m in edges[n]:
            up |= visit(m, active)
        active.discard(n)
        ups[n] = frozenset(up)
        return ups[n]

    for n in edges:
        visit(n, set())
    return ups


_UPPER = {("standard", False): _upper_sets(_standard_edges(False)),
          ("standard", True): _upper_sets(_standard_edges(True)),
          ("strict", False): _upper_sets(_strict_edges()),
          ("strict", True): _upper_sets(_strict_edges())}


def _promotion_mode() -> str:
    return _config_flags.get("jax_numpy_dtype_promotion", "standard")


def _no_path_message(labels, mode) -> str:
    lead = f"Input dtypes {tuple(labels)} have no available implicit dtype promotion path"
    if mode == "strict":
        return (lead + " when jax_numpy_dtype_promotion=strict. Try explicitly casting "
                "inputs to the desired output type, or set "
                "jax_numpy_dtype_promotion=standard.")
    names = set(labels)
    for group, what in ((_float8_dtypes, "8-bit floats"), (_float6_dtypes, "6-bit floats"),
                        (_float4_dtypes, "4-bit floats")):
        if names & {d.name for d in group}:
            return (lead + f". To avoid unintended promotion, {what} do not support "
                    "implicit promotion. If you'd like your inputs to be promoted to another "
                    "type, you can do so explicitly using e.g. x.astype('float32')")
    if names & {d.name for d in _intn_dtypes}:
        return (lead + ". To avoid unintended promotion, 1-bit, 2-bit and 4-bit integers do "
                "not support implicit promotion. If you'd like your inputs to be promoted to "
                "another type, you can do so explicitly using e.g. x.astype('int32')")
    return lead + ". Try explicitly casting inputs to the desired output type."


_WEAK_LABEL = {"i*": str(int), "f*": str(float), "c*": str(complex)}
_lub_cache: dict = {}


def _labels_in_jax_order(nodes) -> list:
    """The nodes' names in the order JAX's message lists them: JAX iterates a set of dtypes
    and Python types, so the order is that of the same set here."""
    objects = {n: (_WEAK_TYPE[n] if n in _WEAK_TYPE else _NODE_DTYPE[n]) for n in nodes}
    by_object = {id(o): n for n, o in objects.items()}
    return [_WEAK_LABEL.get(by_object[id(o)], by_object[id(o)])
            for o in set(objects.values())]


_WEAK_TYPE = {"i*": int, "f*": float, "c*": complex}


def _least_upper_bound(nodes: tuple, mode: str, x64: bool) -> str:
    key = (nodes, mode, x64)
    try:
        return _lub_cache[key]
    except KeyError:
        pass
    ups = _UPPER[mode, x64]
    common = frozenset.intersection(*(ups[n] for n in nodes))
    least = [c for c in common if common <= ups[c]]
    if len(least) != 1:
        raise TypePromotionError(_no_path_message(_labels_in_jax_order(nodes), mode))
    _lub_cache[key] = least[0]
    return least[0]


def _node(dt, weak: bool) -> str:
    try:
        name = dt.name
    except AttributeError:
        name = None
    if name not in _NODE_DTYPE or _NODE_DTYPE[name] != dt:
        raise ValueError(f"dtype={dt!r} is not a valid dtype for JAX type promotion.")
    if weak and dt != bool_:
        return _WEAK_NODE[_KIND[dt]]
    return name


def _node_to_dtype(node: str, x64: bool) -> np.dtype:
    kind = _WEAK_NODE_KIND.get(node)
    if kind is not None:
        return _DEFAULT_OF_KIND[kind][x64]
    dt = _NODE_DTYPE[node]
    return dt if x64 else _TO_32.get(dt, dt)


def promote_types(a, b) -> np.dtype:
    """The dtype a binary operation on dtypes ``a`` and ``b`` computes in (JAX's lattice).

    Like ``jnp.promote_types``: the Python types ``int``, ``float`` and ``complex`` stand for
    weakly typed values, and the result is not canonicalized (with x64 disabled the lattice
    still avoids creating 64-bit types from narrower ones).

    Examples
    --------
    >>> promote_types(np.int8, np.uint8), promote_types(np.float16, float)
    (dtype('int16'), dtype('float16'))
    """
    x64 = _config_flags["jax_enable_x64"]
    nodes = tuple(_PY_WEAK_NODE[t] if (t is int or t is float or t is complex)
                  else _node(np.dtype(t), False) for t in (a, b))
    node = _least_upper_bound(nodes, _promotion_mode(), x64)
    kind = _WEAK_NODE_KIND.get(node)
    if kind is not None:  # both weak: numpy's dtype of the Python type
        return _DEFAULT_OF_KIND[kind][True]
    return _NODE_DTYPE[node]


_lattice_cache: dict = {}


def lattice_result(*pairs) -> tuple:
    """Result dtype and weak flag of combining ``(dtype, weak_type)`` pairs, as ``a + b`` does.

    The core of binary-operation promotion: input dtypes are canonicalized, weakly typed ones
    are promoted as their kind's weak node, and the result is canonical. A Python scalar
    counts as ``(python_scalar_dtype(x), True)``.

    Examples
    --------
    >>> lattice_result((int8, False), (int32, True))  # int8 array + Python int
    (dtype('int8'), False)
    """
    key = (pairs, _config_flags["jax_enable_x64"],
           _config_flags.get("jax_numpy_dtype_promotion", "standard"))
    try:
        return _lattice_cache[key]
    except KeyError:
        pass
    out = _lattice_result(pairs, key[1], key[2])
    _lattice_cache[key] = out
    return out


def _lattice_result(pairs, x64: bool, mode: str) -> tuple:
    if not pairs:
        raise ValueError("at least one array or dtype is required")
    dts = []
    weaks = []
    for dt, weak in pairs:
        if not isinstance(dt, ExtendedDType):
            dt = np.dtype(dt)
            if not x64:
                dt = _TO_32.get(dt, dt)
        dts.append(dt)
        weaks.append(bool(weak))
    first = dts[0]
    if len(dts) == 1:
        out, weak = first, weaks[0]
    elif all(d == first for d in dts) and not all(weaks):
        out, weak = first, False  # also lets equal extended dtypes through
    elif all(weaks) and mode != "strict":
        # All weak: promote the strong counterparts, then mark the result weak.
        nodes = tuple(dict.fromkeys(_node(d, False) for d in dts))
        out, weak = _node_to_dtype(_least_upper_bound(nodes, mode, x64), x64), True
    else:
        nodes = tuple(dict.fromkeys(_node(d, w) for d, w in zip(dts, weaks)))
        node = _least_upper_bound(nodes, mode, x64)
        out, weak = _node_to_dtype(node, x64), node in _WEAK_NODE_KIND
    return out, weak and out != bool_


def _dtype_and_weak(x) -> tuple:
    if x is None:
        return default_float_dtype(), False
    if x is int or x is float or x is complex:
        return python_scalar_dtype(x), True
    if isinstance(x, (str, np.dtype)) or (isinstance(x, type) and issubclass(x, np.generic)):
        # The warning for a truncated 64-bit dtype points at result_type's caller.
        return check_and_canonicalize_user_dtype(x, "dtype", stacklevel=4), False
    return dtype(x, canonicalize=True), is_weakly_typed(x)


def result_type(*args, return_weak_type_flag: bool = False):
    """The dtype JAX's NumPy promotion gives a set of values and dtype-likes.

    Python scalars and the types ``int``, ``float``, ``complex`` count as weakly typed;
    ``None`` stands for the default float dtype. A weakly typed result is reported as the
    default dtype of its kind.

    Parameters
    ----------
    *args
        Arrays, scalars, tracers or dtype-likes.
    return_weak_type_flag : bool
        Return ``(dtype, weak_type)`` instead of ``dtype``.

    Examples
    --------
    >>> result_type(np.int8, 1.0)  # x64 disabled
    dtype('float32')
    >>> result_type(1, return_weak_type_flag=True)
    (dtype('int32'), True)
    """
    if not args:
        raise ValueError("at least one array or dtype is required")
    dt, weak = lattice_result(*map(_dtype_and_weak, args))  # map: no extra Python frame
    if weak:
        dt = default_dtype_of_kind(_kind(dt))
    return (dt, weak) if return_weak_type_flag else dt


# --------------------------------------------------------------------------------------------
# user-requested dtypes and Python ints


def check_and_canonicalize_user_dtype(dtype_, fun_name: str | None = None,
                                      stacklevel: int = 3):
    """Validate a dtype a user asked for and return its canonical form.

    Python scalar types give the default dtype of their kind silently; an explicitly
    requested 64-bit dtype with x64 disabled warns (``UserWarning``) and is truncated,
    as in JAX.
    """
    if dtype_ is None:
        raise ValueError("dtype must be specified.")
    if isinstance(dtype_, ExtendedDType) or (
            isinstance(dtype_, type) and issubclass(dtype_, extended)):
        return dtype_
    if isinstance(dtype_, type) and dtype_ in _PY_SCALAR_DTYPE:
        return python_scalar_dtype(dtype_)
    if not isinstance(dtype_, (type, str, np.dtype)) and hasattr(dtype_, "shape"):
        raise ValueError("Passing an array as a dtype argument is no longer supported; "
                         "instead of dtype=arr use dtype=arr.dtype.")
    dt = np.dtype(dtype_)
    if dt not in _valid_dtypes:
        msg = f"JAX only supports number, bool, and string dtypes, got dtype {dtype_}"
        raise TypeError(msg + (f" in {fun_name}" if fun_name else ""))
    if _config_flags["jax_enable_x64"]:
        return dt
    out = _TO_32.get(dt, dt)
    if out is not dt:
        where = f" requested in {fun_name}" if fun_name else ""
        warnings.warn(
            f"Explicitly requested dtype {dt}{where} is not available, and will be truncated "
            f"to dtype {out.name}. To enable more dtypes, set the jax_enable_x64 "
            "configuration option or the JAX_ENABLE_X64 shell environment variable. "
            "See https://github.com/jax-ml/jax#current-gotchas for more.",
            stacklevel=stacklevel)
    return out


def check_user_dtype_supported(dtype_, fun_name: str | None = None) -> None:
    """Raise for dtypes JAX arrays cannot have; warn for 64-bit ones when x64 is disabled."""
    if dtype_ is not None:
        check_and_canonicalize_user_dtype(dtype_, fun_name, stacklevel=4)


def python_int_fits(value: int, dtype_) -> bool:
    """True if the Python int ``value`` is representable in integer dtype ``dtype_``
    (always True for inexact dtypes; 0 and 1 only for bool)."""
    dt = np.dtype(dtype_)
    k = _kind(dt)
    if k in "iu":
        info = iinfo(dt)
        return info.min <= value <= info.max
    if k == "b":
        return value in (0, 1)
    return True


def check_python_int(value: int, dtype_=None) -> None:
    """Raise ``OverflowError`` if ``value`` does not fit ``dtype_`` (default: the canonical
    int), as ``jnp.array(2**31)`` does with x64 disabled."""
    dt = default_int_dtype() if dtype_ is None else np.dtype(dtype_)
    if not python_int_fits(value, dt):
        raise OverflowError(f"Python int {value} too large to convert to {dt.name}")


def coerce_python_int(value: int, dtype_):
    """Convert a weakly typed Python int operand to ``dtype_`` the way a binary op does.

    The int must fit the canonical default int (``OverflowError`` otherwise, as in JAX);
    it then wraps into narrower integer dtypes: ``int8`` + 300 uses 44, so 1 + 300 is 45.
    Returns a NumPy scalar of ``dtype_``.
    """
    check_python_int(value)
    dt = np.dtype(dtype_)
    k = _kind(dt)
    if k in "iu":
        return np.array(value, default_int_dtype()).astype(dt)[()]
    if k == "b":
        return np.bool_(value != 0)
    return np.array(value, dt)[()]
