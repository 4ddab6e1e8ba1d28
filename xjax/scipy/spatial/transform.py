"""``xjax.scipy.spatial.transform``: rotations in 3 dimensions (JAX's
``jax.scipy.spatial.transform``).

A :class:`Rotation` holds unit quaternions in SciPy's scalar-last order ``(x, y, z, w)``,
shape ``(4,)`` for one rotation or ``(..., 4)`` for a batch. :class:`Rotation` and
:class:`Slerp` are named tuples, hence pytrees that pass through ``jit``, ``vmap`` and
``grad``. Conventions follow SciPy: ``r.apply(v)`` rotates ``v`` actively, ``p * q`` applies
``q`` first, Euler sequences in lower case are extrinsic (fixed axes), in upper case
intrinsic (moving axes).

>>> import xjax.numpy as jnp
>>> from xjax.scipy.spatial.transform import Rotation
>>> quarter_turn = Rotation.from_euler("z", 90, degrees=True)
>>> quarter_turn.apply(jnp.array([1.0, 0.0, 0.0])).round(6)
Array([0., 1., 0.], dtype=float32)
"""

from xjax._src.scipy.spatial.transform import (  # noqa: F401
    Rotation as Rotation, Slerp as Slerp,
)
from xjax._src.scipy.spatial.transform import __all__ as __all__  # noqa: F401
