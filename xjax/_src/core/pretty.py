"""Printing jaxprs in JAX's format."""

from __future__ import annotations

import enum

import numpy as np

from xjax._src.core.sharding_types import AbstractMesh, Mesh
from xjax._src.core.jaxpr import (
    ClosedJaxpr,
    DropVar,
    Jaxpr,
    Literal,
    literal_value_repr,
)

_WIDTH = 80


def _name(index: int) -> str:
    """0 -> a, 25 -> z, 26 -> ba, ... as JAX names variables."""
    letters = []
    while True:
        letters.append(chr(ord("a") + index % 26))
        index //= 26
        if index == 0:
            break
    return "".join(reversed(letters))


class _Names:
    def __init__(self, source_info: bool = False):
        self.names = {}
        self.count = 0  # names handed out (shared names do not count)
        self.source_info = source_info  # end each equation with "# file:line:col (fn)"

    def __call__(self, var) -> str:
        if type(var) is Literal:
            return literal_value_repr(var.val, var.aval)
        if type(var) is DropVar:
            return "_"
        name = self.names.get(var)
        if name is None:
            name = self.names[var] = _name(self.count)
            self.count += 1
        return name

    def binder(self, var) -> str:
        return f"{self(var)}:{var.aval.str_short(True)}"


def _param_repr(value, names: _Names, indent: int, offset: int = 0) -> str:
    """``offset``: columns before the value on its first line (``key=``)."""
    if isinstance(value, (Jaxpr, ClosedJaxpr)):
        jaxpr = value.jaxpr if isinstance(value, ClosedJaxpr) else value
        return _pp_jaxpr(jaxpr, names, indent, offset)
    if isinstance(value, tuple) and value and all(isinstance(v, (Jaxpr, ClosedJaxpr))
                                                  for v in value):
        pad = " " * (indent + 2)
        inner = "\n".join(pad + _param_repr(v, names, indent + 2) for v in value)
        return f"(\n{inner}\n{' ' * indent})"
    if isinstance(value, str):
        return value
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    if isinstance(value, enum.Enum):  # as JAX: str() (RNG_DEFAULT; 1 for an IntEnum)
        return str(value)
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    if isinstance(value, (Mesh, AbstractMesh)):  # JAX prints a mesh param by its str
        return str(value)
    return repr(value)


def _hidden(primitive, name, value) -> bool:
    """Whether jaxprs leave a param out, as JAX prints them. A primitive's ``hidden_params``
    holds names (hidden while None) and (name, default) pairs (hidden while equal to the
    default; ``...`` as the default hides it always)."""
    for entry in getattr(primitive, "hidden_params", ()):
        if entry == name:
            return value is None
        if isinstance(entry, tuple) and entry[0] == name:
            return entry[1] is ... or _equal(value, entry[1])
    return False


def _equal(a, b) -> bool:
    try:
        return bool(a == b)
    except Exception:
        return False


def _share_call_names(eqn, names: _Names) -> None:
    """As JAX prints a jit's jaxpr: its inputs and outputs take the names of the call's
    operands and results (a literal operand's input gets a fresh name)."""
    closed = eqn.params.get("jaxpr")
    jaxpr = closed.jaxpr if isinstance(closed, ClosedJaxpr) else closed
    if not isinstance(jaxpr, Jaxpr):
        return
    for inner, outer in zip(jaxpr.invars, eqn.invars):
        if type(outer) is not Literal and inner not in names.names:
            names.names[inner] = names(outer)
    for inner, outer in zip(jaxpr.outvars, eqn.outvars):
        if (type(inner) is not Literal and inner not in names.names
                and outer in names.names):
            names.names[inner] = names.names[outer]


def _param_order(item) -> tuple:
    """Params sorted by name, except that ``name`` comes first (JAX prints jit's that way)."""
    return (item[0] != "name", item[0])


def _pp_eqn(eqn, names: _Names, indent: int, used=None) -> str:
    pad = " " * indent
    # as JAX's jaxprs, an output no later equation (or the jaxpr's result) reads is ``_``
    outs = " ".join(names.binder(v) if used is None or v in used
                    else f"_:{v.aval.str_short(True)}" for v in eqn.outvars)
    ins = " ".join(names(a) for a in eqn.invars)
    if eqn.primitive.name == "jit":
        _share_call_names(eqn, names)
    printed = getattr(eqn.primitive, "printed_params", None)  # a primitive printed as JAX's
    source = eqn.params if printed is None else printed(eqn.params)
    params = {k: v for k, v in sorted(source.items(), key=_param_order)
              if not _hidden(eqn.primitive, k, v)}
    head = f"{pad}{outs} = {eqn.primitive.name}" if outs else f"{pad}{eqn.primitive.name}"
    if not params:
        return f"{head} {ins}"
    one_line_params = " ".join(f"{k}={_param_repr(v, names, indent + 4)}"
                               for k, v in params.items())
    line = f"{head}[{one_line_params}] {ins}"
    if len(line) <= _WIDTH and "\n" not in line:
        return line
    body = "\n".join(f"{pad}  {k}={_param_repr(v, names, indent + 2, len(k) + 1)}"
                     for k, v in params.items())
    return f"{head}[\n{body}\n{pad}] {ins}"


def _pp_jaxpr(jaxpr: Jaxpr, names: _Names, indent: int, offset: int = 0) -> str:
    """Multi-line, or on one line (equations joined by ``; ``) when that fits in the width,
    as JAX lays jaxprs out."""
    pad = " " * indent
    consts = " ".join(names.binder(v) for v in jaxpr.constvars)
    ins = " ".join(names.binder(v) for v in jaxpr.invars)
    head = f"{{ lambda {consts}; {ins}. let"
    used = {v for eqn in jaxpr.eqns for v in eqn.invars if type(v) is not Literal}
    used.update(v for v in jaxpr.outvars if type(v) is not Literal)
    eqns = [_pp_eqn(eqn, names, indent + 4, used) for eqn in jaxpr.eqns]
    outs = ", ".join(names(v) for v in jaxpr.outvars)
    if len(jaxpr.outvars) == 1:
        outs += ","
    if names.source_info:
        eqns = _with_sources(eqns, jaxpr.eqns)
    one_line = f"{head} {'; '.join(e.lstrip() for e in eqns)} in ({outs}) }}"
    if (indent + offset + len(one_line) <= _WIDTH and not names.source_info
            and not any("\n" in e for e in eqns)):
        return one_line
    return "\n".join([head, *eqns, f"{pad}  in ({outs}) }}"])


_MARK = "\x00"  # where an equation's source comment goes, until the layout is known


def _with_sources(texts, eqns) -> list:
    """Each equation's first line marked with ``# <its source>`` (see _align_sources)."""
    out = []
    for text, eqn in zip(texts, eqns, strict=True):
        if eqn.source_info is None:
            out.append(text)
            continue
        first, newline, rest = text.partition("\n")
        out.append(f"{first}{_MARK}{eqn.source_info.summary()}{newline}{rest}")
    return out


def _align_sources(text: str) -> str:
    """The comments one column past the longest line of the whole text (nested jaxprs
    included), as JAX aligns them."""
    lines = text.split("\n")
    width = max(len(line.partition(_MARK)[0]) for line in lines) + 1
    aligned = []
    for line in lines:
        code, mark, source = line.partition(_MARK)
        aligned.append(f"{code}{' ' * (width - len(code))}# {source}" if mark else line)
    return "\n".join(aligned)


def pp_jaxpr(jaxpr: Jaxpr, source_info: bool = False) -> str:
    """The text of ``jaxpr`` as ``jax.make_jaxpr`` prints it (``source_info``: each
    equation followed by where the user's code staged it)."""
    text = _pp_jaxpr(jaxpr, _Names(source_info), 0)
    return _align_sources(text) if source_info else text


def pp_eqn(eqn) -> str:
    return _pp_eqn(eqn, _Names(), 0)
