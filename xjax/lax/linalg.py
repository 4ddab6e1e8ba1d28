"""``xjax.lax.linalg``: the linear-algebra primitives and their wrappers (JAX's
``jax.lax.linalg``). Every primitive takes leading batch dimensions.

How each is computed eagerly and under ``jit``, and why: see ``linalg_common``'s docstring.
"""

from xjax._src.higher_order.linalg.eig import (  # noqa: F401
    EigImplementation as EigImplementation, eig as eig, eig_p as eig_p,
)
from xjax._src.higher_order.linalg.eigh import (  # noqa: F401
    EighImplementation as EighImplementation, eigh as eigh, eigh_p as eigh_p,
)
from xjax._src.higher_order.linalg.svd import (  # noqa: F401
    SvdAlgorithm as SvdAlgorithm, svd as svd, svd_p as svd_p,
)
from xjax._src.higher_order.linalg.triangular import (  # noqa: F401
    cholesky as cholesky, cholesky_p as cholesky_p, triangular_solve as triangular_solve,
    triangular_solve_p as triangular_solve_p,
)
from xjax._src.higher_order.linalg.hessenberg import (  # noqa: F401
    cholesky_update as cholesky_update, hessenberg as hessenberg,
    symmetric_product as symmetric_product, tridiagonal as tridiagonal,
    tridiagonal_solve as tridiagonal_solve,
)
from xjax._src.higher_order.linalg.qr import (  # noqa: F401
    householder_product as householder_product, qr as qr, qr_p as qr_p,
)
from xjax._src.higher_order.linalg.lu import (  # noqa: F401
    lu as lu, lu_p as lu_p, lu_pivots_to_permutation as lu_pivots_to_permutation,
    lu_pivots_to_permutation_p as lu_pivots_to_permutation_p,
)
from xjax._src.higher_order.linalg.api import (  # noqa: F401
    ormqr as ormqr, qdwh as qdwh,
)
from xjax._src.higher_order.linalg.schur import (  # noqa: F401
    schur as schur, schur_p as schur_p,
)
