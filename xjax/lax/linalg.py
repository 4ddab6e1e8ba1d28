"""``xjax.lax.linalg``: the linear-algebra primitives and their wrappers (JAX's
``jax.lax.linalg``). Every primitive takes leading batch dimensions.

How each is computed eagerly and under ``jit``, and why: see ``linalg_common``'s docstring.
"""

from xjax.lax.linalg_triangular import (cholesky, cholesky_p, triangular_solve,  # noqa: F401
                                        triangular_solve_p)
from xjax.lax.linalg_lu import (lu, lu_p, lu_pivots_to_permutation,  # noqa: F401
                                lu_pivots_to_permutation_p)
from xjax.lax.linalg_qr import householder_product, qr, qr_p  # noqa: F401
from xjax.lax.linalg_eigh import EighImplementation, eigh, eigh_p  # noqa: F401
from xjax.lax.linalg_svd import SvdAlgorithm, svd, svd_p  # noqa: F401
from xjax.lax.linalg_eig import EigImplementation, eig, eig_p  # noqa: F401
