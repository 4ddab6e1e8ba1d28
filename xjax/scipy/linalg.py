"""``xjax.scipy.linalg``: SciPy's linear algebra on ``xjax.lax.linalg`` (JAX's
``jax.scipy.linalg``). Arguments SciPy uses to manage memory or checks (``overwrite_a``,
``check_finite``, ``lwork``, ...) are accepted and ignored, as in JAX.

>>> import xjax.numpy as jnp
>>> import xjax.scipy.linalg as jsl
>>> jsl.solve_triangular(jnp.array([[2., 0.], [1., 1.]]), jnp.array([2., 3.]), lower=True)
Array([1., 2.], dtype=float32)
"""

from xjax._src.scipy.linalg import (  # noqa: F401
    block_diag as block_diag, cho_factor as cho_factor, cho_solve as cho_solve,
    cholesky as cholesky, circulant as circulant, companion as companion,
    convolution_matrix as convolution_matrix, det as det, dft as dft, eigh as eigh,
    eigh_tridiagonal as eigh_tridiagonal, expm as expm, expm_frechet as expm_frechet,
    fiedler as fiedler, fiedler_companion as fiedler_companion, hadamard as hadamard,
    hankel as hankel, helmert as helmert, hessenberg as hessenberg, hilbert as hilbert,
    inv as inv, invhilbert as invhilbert, invpascal as invpascal, leslie as leslie, lu as lu,
    lu_factor as lu_factor, lu_solve as lu_solve, pascal as pascal, polar as polar, qr as qr,
    qr_multiply as qr_multiply, solve as solve, solve_sylvester as solve_sylvester,
    solve_triangular as solve_triangular, svd as svd, toeplitz as toeplitz,
)
from xjax._src.scipy._linalg_schur import (  # noqa: F401
    funm as funm, rsf2csf as rsf2csf, schur as schur, sqrtm as sqrtm,
)
from xjax._src.scipy.linalg import __all__ as __all__  # noqa: F401
