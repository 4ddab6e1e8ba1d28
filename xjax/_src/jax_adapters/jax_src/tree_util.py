"""``jax._src.tree_util`` under the import hook: xjax's pytree functions, and ``_registry``
(the node types, which Flax tests membership in)."""

from collections.abc import Mapping

from xjax._src.core import pytree
from xjax._src.core.tree_util import *  # noqa: F401,F403
from xjax._src.core.tree_util import prefix_errors  # noqa: F401  (Flax's tests import it)

_BUILT_IN_NODES = (tuple, list, dict, type(None))


class _RegistryView(Mapping):
    """JAX's registry of pytree node types, read-only: the built-in containers and every
    registered type, but not xjax's leaf nodes (typed key arrays are leaves in JAX)."""

    def _types(self):
        return [*_BUILT_IN_NODES, *(t for t in pytree._registry
                                    if not pytree.is_leaf_node_type(t))]

    def __getitem__(self, typ):
        if typ in _BUILT_IN_NODES:
            return typ
        if typ in pytree._registry and not pytree.is_leaf_node_type(typ):
            return pytree._registry[typ]
        raise KeyError(typ)

    def __contains__(self, typ):
        return typ in _BUILT_IN_NODES or (
            typ in pytree._registry and not pytree.is_leaf_node_type(typ))

    def __iter__(self):
        return iter(self._types())

    def __len__(self):
        return len(self._types())


_registry = _RegistryView()
