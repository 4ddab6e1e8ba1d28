"""Exporting jitted functions as serialized StableHLO (``jax.export``).

``export(jit(f))(*arg_specs)`` traces and lowers ``f`` for the given shapes and dtypes
(``ShapeDtypeStruct`` values or arrays) into an :class:`Exported`; ``serialize()`` turns it
into bytes and ``deserialize(bytes)`` back, and ``Exported.call(*args)`` runs it, without the
Python function.

Differences from JAX, stated:

- **The serialized format is xjax's own** (a magic line, a JSON header with the avals, pytree
  structures and platforms, the StableHLO text, and the constants passed to ``main`` as NumPy
  ``.npy`` blobs). It is *not* JAX's flatbuffer: bytes from ``jax.export`` cannot be read here
  nor the reverse.
- Pytree structures are stored for tuples, lists, dicts (str or int keys) and None; other
  nodes (namedtuples, dataclasses, custom nodes) raise NotImplementedError at ``serialize``.
- Shape polymorphism (``symbolic_shape``, ``symbolic_args_specs``) and exporting for several
  platforms or devices are not supported (NotImplementedError).
- ``Exported.call`` runs the compiled module directly at top level; under a transformation
  (``jit``, ``vmap``) it runs it as a host callback (``pure_callback``, vmapped sequentially),
  so it is not differentiable (differentiation raises, as for any callback).
"""

from __future__ import annotations

import io
import json

import numpy as np

from xjax._src.core.avals import ShapedArray
from xjax._src.core.pytree import tree_flatten, tree_unflatten
from xjax._src.core.ad_util import get_aval
from xjax._src.core.array import Array
from xjax._src.higher_order.jit_call import compile_text
from xjax._src.lax.operands import to_operand
from xjax._src.lowering.lower_jaxpr import lower_module
from xjax._src.runtime import default_backend
from xjax._src.transformations.jit import PjitFunction, ShapeDtypeStruct
from xjax._src.higher_order.callbacks import pure_callback
from xjax._src.transformations.custom_derivatives import _at_top_level

__all__ = ["DisabledSafetyCheck", "Exported", "SymbolicScope", "default_export_platform",
           "deserialize", "export", "is_symbolic_dim",
           "maximum_supported_calling_convention_version",
           "minimum_supported_calling_convention_version", "register_namedtuple_serialization",
           "register_pytree_node_serialization", "symbolic_args_specs", "symbolic_shape"]

_MAGIC = b"XJAX-EXPORT-1\n"
minimum_supported_calling_convention_version = 9
maximum_supported_calling_convention_version = 9
_CALLING_CONVENTION = 9

_SHAPE_POLY = ("shape polymorphism (symbolic dimensions) is not supported by xjax.export: "
               "export with concrete shapes")


class DisabledSafetyCheck:
    """Safety checks ``export`` may skip (accepted and ignored: xjax checks platforms only)."""

    def __init__(self, name):
        self.name = name

    @classmethod
    def platform(cls):
        return cls("platform")

    @classmethod
    def custom_call(cls, target_name):
        return cls(f"custom_call:{target_name}")

    def __eq__(self, other):
        return isinstance(other, DisabledSafetyCheck) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


class SymbolicScope:
    """Symbolic dimensions' scope: shape polymorphism is not supported."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(_SHAPE_POLY)


def symbolic_shape(shape_spec, *, constraints=(), scope=None, like=None):
    """Not supported: raises NotImplementedError."""
    raise NotImplementedError(_SHAPE_POLY)


def symbolic_args_specs(args, shapes_specs, constraints=(), scope=None):
    """Not supported: raises NotImplementedError."""
    raise NotImplementedError(_SHAPE_POLY)


def is_symbolic_dim(p) -> bool:
    """False: xjax has no symbolic dimensions."""
    return False


def default_export_platform() -> str:
    return default_backend()


def register_pytree_node_serialization(nodetype, *, serialized_name, serialize_auxdata,
                                       deserialize_auxdata, from_children=None):
    raise NotImplementedError("serializing custom pytree nodes is not supported by "
                              "xjax._src.api.export")


def register_namedtuple_serialization(nodetype, *, serialized_name):
    raise NotImplementedError("serializing namedtuples is not supported by xjax.export")


# -- pytree structures as JSON --

def _tree_to_json(treedef):
    example = tree_unflatten(treedef, [0] * treedef.num_leaves)

    def encode(x):
        if x is None:
            return None
        if type(x) is int:
            return "*"
        if type(x) is tuple:
            return {"tuple": [encode(c) for c in x]}
        if type(x) is list:
            return {"list": [encode(c) for c in x]}
        if type(x) is dict:
            items = []
            for k, v in x.items():
                if type(k) not in (str, int):
                    raise NotImplementedError(f"export: dict keys of type {type(k).__name__} "
                                              "cannot be serialized")
                items.append([type(k).__name__, k, encode(v)])
            return {"dict": items}
        raise NotImplementedError(f"export: pytree nodes of type {type(x).__name__} cannot be "
                                  "serialized (tuples, lists, dicts and None can)")
    return encode(example)


def _tree_from_json(data):
    def decode(x):
        if x is None:
            return None
        if x == "*":
            return 0
        if "tuple" in x:
            return tuple(decode(c) for c in x["tuple"])
        if "list" in x:
            return [decode(c) for c in x["list"]]
        return {(int(k) if t == "int" else k): decode(v) for t, k, v in x["dict"]}
    return tree_flatten(decode(data))[1]


def _aval_to_json(aval):
    return [list(aval.shape), np.dtype(aval.dtype).name]


def _aval_from_json(data):
    import ml_dtypes  # noqa: F401  (bfloat16 and friends by name)
    shape, dtype = data
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = np.dtype(getattr(ml_dtypes, dtype))
    return ShapedArray(tuple(shape), dt)


# -- Exported --

class Exported:
    """A function lowered for fixed argument shapes: serializable and callable.

    Attributes
    ----------
    fun_name : str
    in_tree, out_tree : PyTreeDef
        The structures of ``(args, kwargs)`` and of the output.
    in_avals, out_avals : tuple of ShapedArray
    platforms : tuple of str
    calling_convention_version : int
    nr_devices : int
    """

    def __init__(self, fun_name, in_tree, in_avals, out_tree, out_avals, platforms,
                 module_text, const_args):
        self.fun_name = fun_name
        self.in_tree = in_tree
        self.in_avals = tuple(in_avals)
        self.out_tree = out_tree
        self.out_avals = tuple(out_avals)
        self.platforms = tuple(platforms)
        self.calling_convention_version = _CALLING_CONVENTION
        self.nr_devices = 1
        self.disabled_safety_checks = ()
        self._text = module_text
        self._const_args = [np.asarray(c) for c in const_args]
        self._compiled = None

    def mlir_module(self) -> str:
        """The StableHLO module text (its ``main`` takes the large constants first)."""
        return self._text

    @property
    def mlir_module_serialized(self) -> bytes:
        return self._text.encode()

    def in_shardings_hlo(self):
        return (None,) * len(self.in_avals)

    def out_shardings_hlo(self):
        return (None,) * len(self.out_avals)

    def serialize(self, vjp_order: int = 0) -> bytes:
        """xjax's own byte format (not JAX's flatbuffer); read back with :func:`deserialize`."""
        if vjp_order:
            raise NotImplementedError("export: serializing VJPs (vjp_order > 0) is not "
                                      "supported by xjax")
        header = {"fun_name": self.fun_name, "platforms": list(self.platforms),
                  "in_tree": _tree_to_json(self.in_tree),
                  "out_tree": _tree_to_json(self.out_tree),
                  "in_avals": [_aval_to_json(a) for a in self.in_avals],
                  "out_avals": [_aval_to_json(a) for a in self.out_avals],
                  "calling_convention_version": self.calling_convention_version}
        blobs = []
        for c in self._const_args:
            buf = io.BytesIO()
            np.save(buf, c, allow_pickle=False)
            blobs.append(buf.getvalue())
        header["consts"] = [len(b) for b in blobs]
        text = self._text.encode()
        header["module_bytes"] = len(text)
        head = json.dumps(header).encode()
        return _MAGIC + len(head).to_bytes(8, "little") + head + text + b"".join(blobs)

    def _executable(self):
        if self._compiled is None:
            if default_backend() not in self.platforms:
                raise ValueError(f"Function '{self.fun_name}' was exported for platforms "
                                 f"{self.platforms} but it is used on "
                                 f"('{default_backend()}',).")
            self._compiled = compile_text(self._text)
        return self._compiled

    def _run(self, *flat):
        values = [np.ascontiguousarray(np.asarray(x, a.dtype))
                  for x, a in zip(flat, self.in_avals, strict=True)]
        buffers = self._executable().execute(list(self._const_args) + values)
        return [Array._from_buffer(b, a) for b, a in zip(buffers, self.out_avals, strict=True)]

    def call(self, *args, **kwargs):
        """Run the exported function on arguments of the exported shapes and dtypes."""
        flat, tree = tree_flatten((args, kwargs))
        if tree != self.in_tree:
            raise ValueError(f"The invocation args and kwargs must have the same pytree "
                             f"structure as when the function '{self.fun_name}' was "
                             f"exported, but they have the following structural "
                             f"differences: expected {self.in_tree}, got {tree}")
        flat = [to_operand(x) for x in flat]
        for i, (x, aval) in enumerate(zip(flat, self.in_avals, strict=True)):
            got = get_aval(x)
            if got.shape != aval.shape or got.dtype != aval.dtype:
                raise ValueError(f"Function {self.fun_name} was exported for an argument "
                                 f"{i} of type {aval.str_short()} but is called with "
                                 f"{got.str_short()}")
        if _at_top_level():
            outs = self._run(*flat)
        else:
            specs = [ShapeDtypeStruct(a.shape, a.dtype) for a in self.out_avals]
            outs = pure_callback(lambda *xs: [np.asarray(o) for o in self._run(*xs)], specs,
                                 *flat, vmap_method="sequential")
        return tree_unflatten(self.out_tree, list(outs))

    def __repr__(self):
        return f"Exported({self.fun_name}, in_avals={self.in_avals}, out_avals={self.out_avals})"


def export(fun_jit, *, platforms=None, disabled_checks=(), _override_lowering_rules=None):
    """Export a jitted function: ``export(jit(f))(*arg_specs, **kwarg_specs) -> Exported``.

    Parameters
    ----------
    fun_jit : the result of ``xjax.jit``
    platforms : sequence of str, optional
        The platforms to export for: only the default backend's (``("cpu",)``) is supported.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> exp = xjax.export.export(xjax.jit(jnp.sin))(xjax.ShapeDtypeStruct((3,), jnp.float32))
    >>> xjax.export.deserialize(exp.serialize()).call(jnp.zeros(3))
    Array([0., 0., 0.], dtype=float32)
    """
    if not isinstance(fun_jit, PjitFunction):
        raise ValueError(f"Function to be exported must be the result of `jit` but is: "
                         f"{fun_jit}")
    target = default_export_platform()
    platforms = (target,) if platforms is None else tuple(p.lower() for p in platforms)
    platforms = tuple("cuda" if p == "gpu" else p for p in platforms)
    if platforms != (target,):
        raise NotImplementedError(f"export for platforms {platforms}: xjax exports for the "
                                  f"default backend ({target!r}) only")

    def do_export(*args_specs, **kwargs_specs):
        entry, _, in_tree = fun_jit._entry(args_specs, kwargs_specs)
        lowered = lower_module(entry.closed, fun_jit._name)
        return Exported(fun_jit._name, in_tree, entry.closed.in_avals, entry.out_tree,
                        entry.closed.out_avals, platforms, lowered.text,
                        [np.asarray(c) for c in lowered.const_args])

    return do_export


def deserialize(blob) -> Exported:
    """Read an :class:`Exported` from bytes made by ``Exported.serialize`` (xjax's format)."""
    blob = bytes(blob)
    if not blob.startswith(_MAGIC):
        raise ValueError("not an xjax export (xjax reads only its own format, not JAX's "
                         "flatbuffers)")
    pos = len(_MAGIC)
    n = int.from_bytes(blob[pos:pos + 8], "little")
    pos += 8
    header = json.loads(blob[pos:pos + n])
    pos += n
    text = blob[pos:pos + header["module_bytes"]].decode()
    pos += header["module_bytes"]
    consts = []
    for size in header["consts"]:
        consts.append(np.load(io.BytesIO(blob[pos:pos + size]), allow_pickle=False))
        pos += size
    exported = Exported(header["fun_name"], _tree_from_json(header["in_tree"]),
                        [_aval_from_json(a) for a in header["in_avals"]],
                        _tree_from_json(header["out_tree"]),
                        [_aval_from_json(a) for a in header["out_avals"]],
                        header["platforms"], text, consts)
    exported.calling_convention_version = header["calling_convention_version"]
    return exported
