"""Short names for the pytree utilities (mirrors ``jax.tree``).

>>> import xjax
>>> xjax.tree.map(lambda x: x + 1, {'a': 1, 'b': [2, 3]})
{'a': 2, 'b': [3, 4]}
"""

from __future__ import annotations

import dataclasses as _dataclasses

from xjax._src.core.tree_util import (  # noqa: F401
    tree_all as all,
    tree_broadcast as broadcast,
    tree_flatten as flatten,
    tree_flatten_with_path as flatten_with_path,
    tree_leaves as leaves,
    tree_leaves_with_path as leaves_with_path,
    tree_map as map,
    tree_map_with_path as map_with_path,
    tree_reduce as reduce,
    tree_reduce_associative as reduce_associative,
    tree_structure as structure,
    tree_transpose as transpose,
    tree_unflatten as unflatten,
)

__all__ = ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path",
           "map", "map_with_path", "reduce", "reduce_associative", "static", "structure",
           "transpose", "unflatten"]


def static(**kwargs):
    """A ``dataclasses.field`` marked static, for :func:`xjax.tree_util.register_dataclass`.

    Examples
    --------
    >>> import dataclasses
    >>> dataclasses.field(default=1).metadata.get('static'), static(default=1).metadata['static']
    (None, True)
    """
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return _dataclasses.field(metadata=metadata, **kwargs)
