"""Krylov-subspace solvers for ``xjax.scipy.sparse.linalg``: ``cg``, ``bicgstab`` and ``gmres``.

The implementation and its full description: :mod:`xjax._src.scipy.sparse.linalg`."""

from xjax._src.scipy.sparse.linalg import (  # noqa: F401
    bicgstab as bicgstab, cg as cg, gmres as gmres,
)
from xjax._src.scipy.sparse.linalg import __all__ as __all__  # noqa: F401
