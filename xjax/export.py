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

from xjax._src.api.export import (  # noqa: F401
    DisabledSafetyCheck as DisabledSafetyCheck, Exported as Exported,
    SymbolicScope as SymbolicScope, default_export_platform as default_export_platform,
    deserialize as deserialize, export as export, is_symbolic_dim as is_symbolic_dim,
    maximum_supported_calling_convention_version as maximum_supported_calling_convention_version,
    minimum_supported_calling_convention_version as minimum_supported_calling_convention_version,
    register_namedtuple_serialization as register_namedtuple_serialization,
    register_pytree_node_serialization as register_pytree_node_serialization,
    symbolic_args_specs as symbolic_args_specs, symbolic_shape as symbolic_shape,
)
from xjax._src.api.export import __all__ as __all__  # noqa: F401
