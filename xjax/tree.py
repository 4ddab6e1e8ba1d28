"""Short names for the pytree utilities (mirrors ``jax.tree``).

>>> import xjax
>>> xjax.tree.map(lambda x: x + 1, {'a': 1, 'b': [2, 3]})
{'a': 2, 'b': [3, 4]}
"""

from xjax._src.api.tree import (  # noqa: F401
    all as all, broadcast as broadcast, flatten as flatten,
    flatten_with_path as flatten_with_path, leaves as leaves,
    leaves_with_path as leaves_with_path, map as map, map_with_path as map_with_path,
    reduce as reduce, reduce_associative as reduce_associative, static as static,
    structure as structure, transpose as transpose, unflatten as unflatten,
)
from xjax._src.api.tree import __all__ as __all__  # noqa: F401
