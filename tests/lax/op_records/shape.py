"""Rule-check records of the structural primitives (broadcast_in_dim, reshape, squeeze,
transpose, rev, concatenate, pad, iota, split, stack, unstack, tile), and helpers the
slicing, reduce and dot records share."""

import numpy as np

from xjax import lax
from xjax._src.core import dtypes
from op_table import ALL, NUMERIC, OpRecord, random_array

F32 = (np.float32, np.complex64)
F16 = (np.float16,)
BF16 = (dtypes.bfloat16,)
NARROW_TOL = {"f16": 2e-3, "bf16": 2e-2}


def by_precision(primitive, fun, shapes, make_args=None, name="", f32_tol=1e-5,
                 with_complex=True, exact_dtypes=()):
    """Records splitting dtypes by tolerance: float32 (+ complex64), float16, bfloat16, and
    ``exact_dtypes`` (integers, bool) compared exactly."""
    prefix = f"{name}-" if name else ""
    f32 = F32 if with_complex else F32[:1]
    records = [OpRecord(primitive, fun, shapes, f32, make_args, f32_tol, prefix + "f32"),
               OpRecord(primitive, fun, shapes, F16, make_args, NARROW_TOL["f16"],
                        prefix + "f16"),
               OpRecord(primitive, fun, shapes, BF16, make_args, NARROW_TOL["bf16"],
                        prefix + "bf16")]
    if exact_dtypes:
        records.append(OpRecord(primitive, fun, shapes, exact_dtypes, make_args, 0.0,
                                prefix + "exact"))
    return records


def with_scalars(*scalars):
    """Operands of ``dtype`` for the shapes, then fixed scalar operands (e.g. int32 starts)."""

    def make(rng, shapes, dtype):
        return [random_array(rng, s, dtype) for s in shapes] + [np.asarray(v) for v in scalars]

    return make


def _pad_args(rng, shapes, dtype):
    return [random_array(rng, shapes[0], dtype), random_array(rng, (), dtype)]


def _iota_records():
    records = []
    for dtype in NUMERIC:
        records.append(OpRecord("iota", lambda dtype=dtype: lax.broadcasted_iota(dtype, (3, 5), 1),
                                [], [dtype], name=f"2d-{np.dtype(dtype).name}"))
    return records


RECORDS = [
    OpRecord("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1, 2)),
             [(3, 1)], ALL),
    OpRecord("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (4, 2, 3), (2, 0)),
             [(3, 4)], ALL, name="unsorted-dims"),
    OpRecord("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 3), ()),
             [()], ALL, name="scalar"),
    OpRecord("reshape", lambda x: lax.reshape(x, (2, 6)), [(3, 4)], ALL),
    OpRecord("reshape", lambda x: lax.reshape(x, (6, 2), (1, 0)), [(3, 4)], ALL,
             name="dimensions"),
    OpRecord("squeeze", lambda x: lax.squeeze(x, (1, -1)), [(3, 1, 4, 1)], ALL),
    OpRecord("transpose", lambda x: lax.transpose(x, (2, 0, 1)), [(2, 3, 4)], ALL),
    OpRecord("rev", lambda x: lax.rev(x, (0, 2)), [(2, 3, 4)], ALL),
    OpRecord("concatenate", lambda x, y, z: lax.concatenate([x, y, z], 1),
             [(2, 3), (2, 1), (2, 4)], ALL),
    OpRecord("pad", lambda x, v: lax.pad(x, v, ((1, 2, 1), (-1, 0, 2), (0, -2, 0))),
             [(3, 4, 5)], ALL, make_args=_pad_args),
    OpRecord("pad", lambda x, v: lax.pad(x, v, ((-3, 1, 1),)), [(3,)], ALL,
             make_args=_pad_args, name="crop-into-interior"),
    *_iota_records(),
    OpRecord("split", lambda x: lax.split(x, (1, 0, 3), -1), [(2, 4)], ALL),
    OpRecord("stack", lambda x, y: lax.stack([x, y, x], 1), [(2, 3), (2, 3)], ALL),
    OpRecord("unstack", lambda x: lax.unstack(x, 1), [(2, 3, 2)], ALL),
    OpRecord("tile", lambda x: lax.tile(x, (2, 1, 3)), [(2, 3, 1)], ALL),
]
