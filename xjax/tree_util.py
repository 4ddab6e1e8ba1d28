"""Utilities for pytrees: nested containers of arrays (mirrors ``jax.tree_util``).

The flattening machinery lives in :mod:`xjax.core.pytree`; this module adds the public
functions built on it (``tree_map`` with JAX's structure-error messages, reductions,
transposition, broadcasting), :class:`Partial` and :func:`register_dataclass`.

>>> import xjax.tree_util as tu
>>> tu.tree_map(lambda x: x * 2, {'a': 1, 'b': (2, None)})
{'a': 2, 'b': (4, None)}
"""

from xjax._src.core.pytree import (  # noqa: F401
    DictKey as DictKey, FlattenedIndexKey as FlattenedIndexKey, GetAttrKey as GetAttrKey,
    KeyEntry as KeyEntry, KeyPath as KeyPath, PyTreeDef as PyTreeDef,
    SequenceKey as SequenceKey, keystr as keystr, register_pytree_node as register_pytree_node,
    register_pytree_with_keys as register_pytree_with_keys, tree_unflatten as tree_unflatten,
    treedef_children as treedef_children, treedef_is_leaf as treedef_is_leaf,
    treedef_tuple as treedef_tuple,
)
from xjax._src.core.tree_util import (  # noqa: F401
    flatten_one_level as flatten_one_level,
    flatten_one_level_with_keys as flatten_one_level_with_keys, is_tree_node as is_tree_node,
    tree_flatten as tree_flatten, tree_flatten_with_path as tree_flatten_with_path,
    tree_leaves as tree_leaves, tree_leaves_with_path as tree_leaves_with_path,
    tree_structure as tree_structure,
)
from xjax._src.core.tree_util import (  # noqa: F401
    Partial as Partial, all_leaves as all_leaves, default_registry as default_registry,
    register_dataclass as register_dataclass,
    register_pytree_node_class as register_pytree_node_class,
    register_pytree_with_keys_class as register_pytree_with_keys_class,
    register_static as register_static, tree_all as tree_all, tree_broadcast as tree_broadcast,
    tree_map as tree_map, tree_map_with_path as tree_map_with_path, tree_reduce as tree_reduce,
    tree_reduce_associative as tree_reduce_associative, tree_transpose as tree_transpose,
)
from xjax._src.core.tree_util import __all__ as __all__  # noqa: F401
