"""``xjax.lax.linalg``: the linear-algebra primitives and their wrappers (JAX's
``jax.lax.linalg``). Every primitive takes leading batch dimensions.

How each is computed eagerly and under ``jit``, and why: see ``linalg_common``'s docstring.
"""

from xjax._src.higher_order.linalg.triangular import (cholesky, cholesky_p, triangular_solve,  # noqa: F401
                                        triangular_solve_p)
from xjax._src.higher_order.linalg.lu import (lu, lu_p, lu_pivots_to_permutation,  # noqa: F401
                                lu_pivots_to_permutation_p)
from xjax._src.higher_order.linalg.qr import householder_product, qr, qr_p  # noqa: F401
from xjax._src.higher_order.linalg.eigh import EighImplementation, eigh, eigh_p  # noqa: F401
from xjax._src.higher_order.linalg.svd import SvdAlgorithm, svd, svd_p  # noqa: F401
from xjax._src.higher_order.linalg.eig import EigImplementation, eig, eig_p  # noqa: F401
from xjax._src.higher_order.linalg.schur import schur, schur_p  # noqa: F401
from xjax._src.higher_order.linalg.hessenberg import (cholesky_update, hessenberg,  # noqa: F401
                                        symmetric_product, tridiagonal, tridiagonal_solve)
from xjax._src.higher_order.linalg.common import mH, matmul, shape
from xjax._src.lax.operands import to_operand
from xjax._src import lax as _lax


def qdwh(x, *, is_hermitian: bool = False, max_iterations=None, eps=None,
         dynamic_shape=None):
    """QDWH polar decomposition: not implemented in xjax (``xjax.scipy.linalg.polar``
    computes the polar decomposition through the SVD)."""
    raise NotImplementedError("lax.linalg.qdwh is not implemented in xjax; use "
                              "xjax.scipy.linalg.polar (through the SVD)")


def ormqr(a, taus, c, *, left: bool = True, transpose: bool = False):
    """``op(Q) @ c`` (``left``) or ``c @ op(Q)`` for ``Q`` given by Householder reflectors, as
    LAPACK ormqr (``op`` is the conjugate transpose when ``transpose``)."""
    a, c = to_operand(a), to_operand(c)
    m = shape(a)[-2]
    k = shape(taus)[-1]
    square = _lax.pad(a, _lax.full((), 0, a.aval.dtype),
                      [(0, 0, 0)] * (len(shape(a)) - 1) + [(0, m - shape(a)[-1], 0)]) \
        if shape(a)[-1] < m else _lax.slice_in_dim(a, 0, m, 1, len(shape(a)) - 1)
    taus_full = _lax.pad(to_operand(taus), _lax.full((), 0, a.aval.dtype),
                         [(0, 0, 0)] * (len(shape(taus)) - 1) + [(0, m - k, 0)])
    q = householder_product(square, taus_full)
    if transpose:
        q = mH(q)
    return matmul(q, c) if left else matmul(c, q)
