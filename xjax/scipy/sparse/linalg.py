"""Krylov-subspace solvers for ``xjax.scipy.sparse.linalg``: ``cg``, ``bicgstab`` and
``gmres``.

Design
------
Every solver is the ``solve`` (and ``transpose_solve``) callback of
``lax.custom_linear_solve``, so derivatives never flow through the iterations: the
tangent or cotangent of a solve is another solve with the same method (implicit
differentiation). Inside that callback the right-hand side, whatever pytree it is, is laid
out as one flat vector of a single inexact dtype (see :class:`_FlatLayout`); the operator
and the preconditioner are wrapped to act on such vectors. The algorithms below are
therefore written for plain 1-D arrays, each iterating a small ``NamedTuple`` through
``lax.while_loop``.

Stopping follows SciPy's (non-legacy) convention: iterate until
``norm(b - A x) <= max(tol * norm(b), atol)`` or the iteration budget is spent. GMRES
minimises the left-preconditioned residual ``M (b - A x)``, so it measures that residual
against the same target rescaled by ``norm(M b) / norm(b)``.

References: Y. Saad, *Iterative Methods for Sparse Linear Systems* (2nd ed., SIAM 2003),
Algorithms 6.9 (GMRES), 6.18 (CG), 7.7 (BiCGSTAB) and 9.1 (preconditioned CG); H. van der
Vorst, "Bi-CGSTAB", SIAM J. Sci. Stat. Comput. 13 (1992).
"""

from xjax._src.scipy.sparse.linalg import (  # noqa: F401
    bicgstab as bicgstab, cg as cg, gmres as gmres,
)
from xjax._src.scipy.sparse.linalg import __all__ as __all__  # noqa: F401
