"""Emitting StableHLO text in MLIR's generic operation form (DESIGN.md §6).

No MLIR bindings: a module is a list of functions, a function a list of lines. Every
operation is written ``%r = "stablehlo.op"(%a, %b) {attrs} : (types) -> types`` so that no
pretty-printer corner case can break parsing; constants are hex ``dense<"0x...">`` so values
round-trip bit-exactly. Spec: https://github.com/openxla/stablehlo/blob/main/docs/spec.md
"""

from __future__ import annotations

import numpy as np

from xjax._src.core import dtypes

_ELEMENT_TYPES = {
    "bool": "i1", "int4": "i4", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint4": "ui4", "uint8": "ui8", "uint16": "ui16", "uint32": "ui32", "uint64": "ui64",
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "complex64": "complex<f32>", "complex128": "complex<f64>",
    "float8_e4m3fn": "f8E4M3FN", "float8_e5m2": "f8E5M2", "float8_e4m3fnuz": "f8E4M3FNUZ",
    "float8_e5m2fnuz": "f8E5M2FNUZ", "float8_e4m3b11fnuz": "f8E4M3B11FNUZ",
    "float8_e3m4": "f8E3M4", "float8_e4m3": "f8E4M3", "float8_e8m0fnu": "f8E8M0FNU",
}


def element_type(dtype) -> str:
    """MLIR element type of a NumPy dtype: float32 -> f32, bool -> i1 (and float0, the
    dtype of tangents of integers, which carries no data: i1, as JAX lowers it)."""
    if np.dtype(dtype) == dtypes.float0:
        return "i1"
    try:
        return _ELEMENT_TYPES[np.dtype(dtype).name]
    except KeyError:
        raise NotImplementedError(f"dtype {dtype} has no StableHLO element type") from None


def tensor_type(shape, dtype) -> str:
    """``tensor<3x4xf32>``; ``tensor<f32>`` for a scalar."""
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{element_type(dtype)}>"


def type_shape(type_str: str) -> tuple[int, ...]:
    """The shape of a ``tensor<3x4xf32>`` type: ``(3, 4)``."""
    return tuple(int(d) for d in type_str[len("tensor<"):-1].split("x")[:-1])


def aval_type(aval) -> str:
    return tensor_type(aval.shape, aval.dtype)


def dense_layout(minor_to_major) -> str:
    """A custom call's operand or result layout attribute (dimensions minor first)."""
    if not minor_to_major:
        return "dense<> : tensor<0xindex>"
    return (f"dense<[{', '.join(map(str, minor_to_major))}]> : "
            f"tensor<{len(minor_to_major)}xindex>")


def i64_array(values) -> str:
    """A ``array<i64: ...>`` attribute (dense array of dimension numbers etc.)."""
    values = list(values)
    if not values:
        return "array<i64>"
    return "array<i64: " + ", ".join(str(int(v)) for v in values) + ">"


def bool_array(values) -> str:
    values = list(values)
    if not values:
        return "array<i1>"
    return "array<i1: " + ", ".join("true" if v else "false" for v in values) + ">"


def dense_elements(value: np.ndarray, type_str: str) -> str:
    """A ``dense<"0x...">`` attribute holding ``value``'s bytes exactly (little-endian)."""
    value = np.ascontiguousarray(value)
    if value.size == 0:  # (a nested bool literal of an empty array has the wrong shape)
        return f"dense<> : {type_str}"
    if value.dtype == np.bool_:
        # i1 has no byte-per-element hex form: write the elements out.
        if value.size and (value == value.flat[0]).all():
            return f"dense<{'true' if value.flat[0] else 'false'}> : {type_str}"
        return f"dense<{_bool_literal(value)}> : {type_str}"
    if value.dtype.name in ("int4", "uint4"):
        raw = value.astype(np.int8 if value.dtype.name == "int4" else np.uint8).tobytes()
    else:
        raw = value.astype(value.dtype.newbyteorder("<")).tobytes()
    if value.size == 0:
        return f"dense<> : {type_str}"
    return f'dense<"0x{raw.hex().upper()}"> : {type_str}'


def _bool_literal(value: np.ndarray) -> str:
    if value.ndim == 0:
        return "true" if value else "false"
    return "[" + ", ".join(_bool_literal(v) for v in value) + "]"


class FunctionBuilder:
    """Accumulates the operations of one ``func.func`` and names their results."""

    def __init__(self, module: "ModuleBuilder", name: str, arg_types, visibility="private"):
        self.module = module
        self.name = name
        self.visibility = visibility
        self.arg_types = list(arg_types)
        self.args = [f"%arg{i}" for i in range(len(self.arg_types))]
        self.arg_attrs: list[str | None] = [None] * len(self.arg_types)  # e.g. donation
        self.types = dict(zip(self.args, self.arg_types, strict=True))
        self.lines: list[str] = []
        self.result_types: list[str] = []
        self.result_attrs: dict[int, str] = {}  # result index -> attribute (e.g. sharding)
        # value -> (kind, operands, attributes, region lines): how some values were made, for
        # rules that rewrite an operation depending on its operands' origin (see origin)
        self._origins: dict[str, tuple] = {}
        self.value_uses: dict[str, int] = {}  # SSA value -> reads in the jaxpr lowered
        self._count = 0
        self._indent = "    "
        self.region_depth = 0  # > 0 while a region's body (a loop's, a branch's) is built

    def fresh(self) -> str:
        name = f"%{self._count}"
        self._count += 1
        return name

    def op(self, name: str, operands, result_types, attributes: str | dict | None = None,
           regions=None) -> list[str]:
        """Emit one operation and return the names of its results."""
        operands = list(operands)
        result_types = list(result_types)
        base = self.fresh()
        if len(result_types) == 1:
            results = [base]
            lhs = f"{base} = "
        elif result_types:
            results = [f"{base}#{i}" for i in range(len(result_types))]
            lhs = f"{base}:{len(result_types)} = "
        else:
            results, lhs = [], ""
        for result, type_str in zip(results, result_types, strict=True):
            self.types[result] = type_str
        if isinstance(attributes, dict):
            attributes = ", ".join(f"{k} = {v}" for k, v in attributes.items())
        if name == "stablehlo.broadcast_in_dim":
            self._origins[base] = ("broadcast", operands, attributes, self.lines)
        attrs = f" {{{attributes}}}" if attributes else ""
        region_text = ""
        if regions:
            region_text = " (" + ", ".join(regions) + ")"
        in_types = ", ".join(self.types[o] for o in operands)
        out_types = ", ".join(result_types)
        if len(result_types) != 1:
            out_types = f"({out_types})"
        self.lines.append(f'{self._indent}{lhs}"{name}"({", ".join(operands)}){region_text}'
                          f"{attrs} : ({in_types}) -> {out_types}")
        return results

    def note_origin(self, value: str, kind: str, operands, attributes=None) -> None:
        """Record that ``value`` was made as ``kind`` of ``operands`` (``origin`` returns it).
        Broadcasts (kind "broadcast") are recorded by ``op`` itself."""
        self._origins[value] = (kind, list(operands), attributes, self.lines)

    def origin(self, value: str):
        """``(kind, operands, attributes)`` recorded for ``value`` in the current region,
        else None."""
        record = self._origins.get(value)
        if record is None or record[3] is not self.lines:
            return None
        return record[:3]

    def op1(self, name, operands, result_type, attributes=None, regions=None) -> str:
        return self.op(name, operands, [result_type], attributes, regions)[0]

    def constant(self, value: np.ndarray, dtype=None) -> str:
        value = np.asarray(value, dtype=dtype)
        if value.dtype == dtypes.float0:
            value = np.zeros(value.shape, bool)
        type_str = tensor_type(value.shape, value.dtype)
        return self.op1("stablehlo.constant", [], type_str,
                        {"value": dense_elements(value, type_str)})

    def region(self, arg_types, body, terminator="stablehlo.return") -> str:
        """A region ``{ ^bb0(args): ... "stablehlo.return"(...) }`` built by ``body(fb, args)``.

        ``body`` receives this builder and the block-argument names, emits operations, and
        returns the values to return (with ``terminator``: ``sdy.return`` ends a
        ``sdy.manual_computation``'s body).
        """
        saved_lines, saved_indent = self.lines, self._indent
        self.lines = []
        self._indent = saved_indent + "  "
        block_args = [f"%rarg{self._count}_{i}" for i in range(len(arg_types))]
        self._count += 1
        for arg, type_str in zip(block_args, arg_types, strict=True):
            self.types[arg] = type_str
        self.region_depth += 1
        try:
            results = list(body(self, block_args))
            types = ", ".join(self.types[r] for r in results)
            self.lines.append(f'{self._indent}"{terminator}"({", ".join(results)}) : '
                              f"({types}) -> ()")
            inner = self.lines
        finally:
            self.lines, self._indent = saved_lines, saved_indent
            self.region_depth -= 1
        header = ", ".join(f"{a}: {t}" for a, t in zip(block_args, arg_types, strict=True))
        block = f"{self._indent}^bb0({header}):\n" if arg_types else ""
        return "{\n" + block + "\n".join(inner) + f"\n{self._indent}}}"

    def ret(self, values) -> None:
        values = list(values)
        self.result_types = [self.types[v] for v in values]
        types = ", ".join(self.result_types)
        self.lines.append(f'{self._indent}"func.return"({", ".join(values)}) : ({types}) -> ()')

    def text(self) -> str:
        args = ", ".join(f"{a}: {t}" + (f" {{{attr}}}" if attr else "")
                         for a, t, attr in zip(self.args, self.arg_types, self.arg_attrs,
                                               strict=True))
        results = ", ".join(t + (f" {{{self.result_attrs[i]}}}" if i in self.result_attrs
                                 else "") for i, t in enumerate(self.result_types))
        head = f"  func.func {self.visibility} @{self.name}({args}) -> ({results}) {{"
        return "\n".join([head, *self.lines, "  }"])


class ModuleBuilder:
    """A module of functions; ``main`` is public, helpers private. A module partitioned
    over several devices says how many (``num_partitions``) and names its device meshes
    (``meshes``: name -> Shardy mesh text, e.g. ``<["x"=2, "y"=2]>``)."""

    def __init__(self, name: str = "xjax_module", platform: str | None = None):
        self.name = _sanitize(name)
        # The platform the module is compiled for ("cpu", "gpu"), when known: rules may
        # then emit a form that platform's compiler runs faster (None: portable forms).
        self.platform = platform
        # How many of the module's reduces are short enough along the minor dimension to
        # run without XLA's tree reduction rewrite (see lower_jaxpr.TREE_REWRITE_OPTIONAL).
        self.short_minor_reductions = 0
        # Whether a max/min along a short minor stretch may be emitted as one plain reduce,
        # fast only in a module compiled without that rewrite; lower_jaxpr.lower_module
        # lowers again with False when the module keeps the rewrite and one was emitted.
        self.plain_short_extremes = True
        self.plain_extremes_emitted = 0
        self.num_partitions = 1
        self.meshes: dict[str, str] = {}
        self.partition_mesh = None  # the device mesh of a partitioned module ("mesh")
        self.manual_axes = frozenset()  # the mesh axes the code being emitted is manual over
        self.functions: list[FunctionBuilder] = []
        self._names: set[str] = set()
        self.cache: dict = {}  # lets lowering rules share helper functions

    def function(self, name: str, arg_types, visibility="private") -> FunctionBuilder:
        name = _sanitize(name)
        unique, i = name, 0
        while unique in self._names:
            i += 1
            unique = f"{name}_{i}"
        self._names.add(unique)
        fb = FunctionBuilder(self, unique, arg_types, visibility)
        self.functions.append(fb)
        return fb

    def text(self) -> str:
        body = "\n".join([*(f"  sdy.mesh @{name} = {mesh}" for name, mesh in
                            self.meshes.items()), *(f.text() for f in self.functions)])
        return (f"module @{self.name} attributes {{mhlo.num_partitions = "
                f"{self.num_partitions} : i32, mhlo.num_replicas = 1 : i32}} "
                f"{{\n{body}\n}}\n")


def sharding_value(axes_per_dim, open_dims=()) -> str:
    """A Shardy sharding over the module's ``mesh``: per dimension, the mesh axes it is
    split over; ``open_dims`` are left for the partitioner to choose."""
    return f"#sdy.sharding{tensor_sharding(axes_per_dim, open_dims)}"


def tensor_sharding(axes_per_dim, open_dims=()) -> str:
    """The body of a Shardy sharding, ``<@mesh, [{"x"}, {}]>`` (as in
    ``#sdy.sharding_per_value<[...]>``); see :func:`sharding_value`."""
    dims = ", ".join("{" + ", ".join(f'"{axis}"' for axis in axes)
                     + (", ?" if axes and d in open_dims else "?" if d in open_dims else "")
                     + "}" for d, axes in enumerate(axes_per_dim))
    return f"<@mesh, [{dims}]>"


def _sanitize(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return cleaned or "fn"


def scalar_dtype_name(dtype) -> str:
    return dtypes.short_dtype_name(np.dtype(dtype))
