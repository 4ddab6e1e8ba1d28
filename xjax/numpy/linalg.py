"""``xjax.numpy.linalg``: NumPy's linear algebra on ``xjax.lax.linalg``.

Solvers go through the LU decomposition and triangular solves (so their derivatives follow
from those primitives' rules, as JAX's do); determinants through LU; norms of matrices,
ranks, pseudo-inverses and least squares through the SVD. Functions take leading batch
dimensions, as NumPy's do.

>>> import xjax.numpy as jnp
>>> jnp.linalg.solve(jnp.array([[2., 0.], [0., 4.]]), jnp.array([2., 2.]))
Array([1. , 0.5], dtype=float32)
"""

from xjax._src.numpy.linalg import (  # noqa: F401
    EighResult as EighResult, QRResult as QRResult, SVDResult as SVDResult,
    SlogdetResult as SlogdetResult, cholesky as cholesky, cond as cond, cross as cross,
    det as det, diagonal as diagonal, eig as eig, eigh as eigh, eigvals as eigvals,
    eigvalsh as eigvalsh, inv as inv, lstsq as lstsq, matmul as matmul,
    matrix_norm as matrix_norm, matrix_power as matrix_power, matrix_rank as matrix_rank,
    matrix_transpose as matrix_transpose, multi_dot as multi_dot, norm as norm, outer as outer,
    pinv as pinv, qr as qr, slogdet as slogdet, solve as solve, svd as svd, svdvals as svdvals,
    tensordot as tensordot, tensorinv as tensorinv, tensorsolve as tensorsolve, trace as trace,
    vecdot as vecdot, vector_norm as vector_norm,
)
from xjax._src.numpy.linalg import __all__ as __all__  # noqa: F401
