"""Rule-check record of ``custom_linear_solve``: a dense, diagonally dominant system solved
by LU, with ``matvec`` closing over the matrix so that derivatives flow through both the
matrix and the right-hand side (the implicit-differentiation rules)."""

import numpy as np

from xjax._src import higher_order as control_flow, lax
from op_table import FLOATS, OpRecord, random_array
import xjax._src.numpy as jnp

FLOAT_TOL = 1e-4


def _system(rng, shapes, dtype):
    (n, _), b_shape = shapes
    a = random_array(rng, (n, n), dtype, -1.0, 1.0) + np.asarray(3 * np.eye(n), dtype)
    return [a, random_array(rng, b_shape, dtype, -1.0, 1.0)]


def _dense_solve(a, b):
    return control_flow.custom_linear_solve(lambda x: lax.dot(a, x), b,
                                   lambda _, y: jnp.linalg.solve(a, y),
                                   lambda _, y: jnp.linalg.solve(lax.transpose(a, (1, 0)), y))


RECORDS = [
    OpRecord("custom_linear_solve", _dense_solve, [(3, 3), (3,)], FLOATS[:1], _system,
             FLOAT_TOL),
]
