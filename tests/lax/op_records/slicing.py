"""Rule-check records of slice, dynamic_slice, dynamic_update_slice, gather and the scatters.

Index operands cover the out-of-bounds cases each mode defines: clamped dynamic starts,
filled and clipped gathers, dropped and clipped scatters.
"""

import numpy as np

from xjax import lax
from op_records.shape import with_scalars
from op_table import ALL, BOOL, COMPLEX, FLOATS, INTS, OpRecord, random_array

GDN = lax.GatherDimensionNumbers
SDN = lax.ScatterDimensionNumbers


def _dus_args(starts):
    def make(rng, shapes, dtype):
        return [random_array(rng, shapes[0], dtype), random_array(rng, shapes[1], dtype),
                *[np.int32(s) for s in starts]]
    return make


def _with_indices(indices, n_updates=0):
    """The operand of ``dtype``, fixed int32 ``indices``, then ``n_updates`` more operands."""

    def make(rng, shapes, dtype):
        out = [random_array(rng, shapes[0], dtype), np.asarray(indices, np.int32)]
        out += [random_array(rng, s, dtype) for s in shapes[1:1 + n_updates]]
        return out
    return make


# x[idx] along axis 0, as jnp indexing makes it
_ROWS = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
# x[i, j] pairs: a 2-component index vector, scalar windows
_POINTS = GDN(offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0, 1))
# windows of 2 columns starting at per-row column indices (operand batching over rows)
_BATCHED = GDN(offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(1,),
               operand_batching_dims=(0,), start_indices_batching_dims=(0,))


def _gather(dnums, sizes, **kw):
    return lambda x, i: lax.gather(x, i, dnums, sizes, **kw)


_FILLED = [  # (dimension numbers, slice sizes, operand shape, indices, label)
    (_ROWS, (1, 4), (5, 4), [[0], [4], [7], [-2]], "rows"),
    (_POINTS, (1, 1), (5, 4), [[0, 0], [4, 3], [2, 4], [1, 2]], "points"),
    (GDN((0,), (1,), (1,)), (5, 1), (5, 4), [[3], [1], [9]], "columns-offset-first"),
    (_BATCHED, (1, 2), (3, 5), [[0], [3], [4]], "batching"),
]
_GATHER = [
    (_gather(_ROWS, (1, 4), mode="clip"), [(5, 4)], [[0], [4], [7], [-2]], "rows-clip"),
    (_gather(_ROWS, (1, 4), mode="fill", fill_value=3), [(5, 4)], [[1], [5]], "fill-value"),
    (_gather(_ROWS, (1, 4)), [(5, 4)], [[[2], [1]], [[0], [3]]], "promise-2d-batch"),
    (_gather(GDN((0, 1), (), (0, 1)), (2, 3), mode="clip"), [(5, 4)], [[4, 3]],
     "window-2d-clip"),
    *[(_gather(dn, sizes, mode="fill"), [shape], idx, label + "-fill-nan")
      for dn, sizes, shape, idx, label in _FILLED],
]
_GATHER_GRAD = [(_gather(dn, sizes, mode="fill", fill_value=0.5), [shape], idx, label + "-fill")
                for dn, sizes, shape, idx, label in _FILLED]


def _scatter(fun, dnums, **kw):
    return lambda x, i, u: fun(x, i, u, dnums, **kw)


_ROWS_S = SDN(update_window_dims=(1,), inserted_window_dims=(0,),
              scatter_dims_to_operand_dims=(0,))
_POINTS_S = SDN(update_window_dims=(), inserted_window_dims=(0, 1),
                scatter_dims_to_operand_dims=(0, 1))
_BATCHED_S = SDN(update_window_dims=(1,), inserted_window_dims=(),
                 scatter_dims_to_operand_dims=(1,), operand_batching_dims=(0,),
                 scatter_indices_batching_dims=(0,))

# (suffix, dimension numbers, operand/updates shapes, indices, mode, unique indices?)
_SCATTER_CASES = [
    ("rows-drop", _ROWS_S, [(5, 4), (4, 4)], [[0], [3], [7], [-1]], None, True),
    ("rows-clip", _ROWS_S, [(5, 4), (3, 4)], [[1], [9], [-4]], "clip", False),
    ("points-dups", _POINTS_S, [(4, 3), (5,)], [[0, 0], [3, 2], [0, 0], [1, 1], [4, 0]],
     None, False),
    ("batching", _BATCHED_S, [(3, 5), (3, 2)], [[0], [3], [4]], None, True),
    ("window-partly-out", SDN((1,), (0,), (1,)), [(3, 4), (2, 2)], [[3], [1]], None, True),
]


def _scatter_records(name, fun, dtypes_exact, float_tol=1e-5, floats=FLOATS + COMPLEX,
                     unique_only=False, grads_need_unique=False):
    """``grads_need_unique``: as JAX's scatter-mul, derivatives exist only where the call
    promises unique indices; the unique cases promise it, the others skip derivatives."""
    records = []
    for suffix, dnums, shapes, indices, mode, unique in _SCATTER_CASES:
        if unique_only and not unique:
            continue
        kw = {} if mode is None else {"mode": mode}
        if grads_need_unique and unique:
            kw["unique_indices"] = True
        f = _scatter(fun, dnums, **kw)
        make = _with_indices(indices, 1)
        if floats:
            grad_order = 0 if grads_need_unique and not unique else 2
            records.append(OpRecord(name, f, shapes, floats, make, float_tol,
                                    suffix + "-float", grad_order=grad_order))
        records.append(OpRecord(name, f, shapes, dtypes_exact, make, 0.0, suffix + "-exact"))
    return records


RECORDS = [
    OpRecord("slice", lambda x: lax.slice(x, (1, 0), (4, 6), (2, 3)), [(5, 6)], ALL),
    OpRecord("slice", lambda x: lax.slice(x, (0, 2), (3, 3)), [(3, 4)], ALL, name="unit"),
    OpRecord("dynamic_slice", lambda x, i, j: lax.dynamic_slice(x, (i, j), (3, 2)),
             [(5, 6)], ALL, make_args=with_scalars(np.int32(4), np.int32(-1)),
             name="clamped"),
    OpRecord("dynamic_slice", lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 6)),
             [(5, 6)], ALL, make_args=with_scalars(np.int32(-9), np.int32(3)),
             name="negative"),
    OpRecord("dynamic_update_slice",
             lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)),
             [(5, 6), (2, 3)], ALL, make_args=_dus_args((4, -2)), name="clamped"),
    OpRecord("dynamic_update_slice",
             lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)),
             [(5, 6), (2, 3)], ALL, make_args=_dus_args((1, 2)), name="inside"),
    # floats go through the tolerant comparison, which (unlike the exact one) treats
    # bfloat16 NaNs as equal. NaN-filled windows make finite differences NaN where the
    # tangent is 0 (JAX's rule), so derivatives are checked on ``_GATHER_GRAD`` instead.
    *[OpRecord("gather", f, shapes, FLOATS + COMPLEX, _with_indices(idx), 1e-7,
               label + "-float", grad_order=0 if "nan" in label else 2)
      for f, shapes, idx, label in _GATHER],
    *[OpRecord("gather", f, shapes, (np.float32,), _with_indices(idx), 1e-7, label + "-grad")
      for f, shapes, idx, label in _GATHER_GRAD],
    *[OpRecord("gather", f, shapes, INTS + BOOL, _with_indices(idx), 0.0, label + "-exact")
      for f, shapes, idx, label in _GATHER],
    *_scatter_records("scatter", lax.scatter, INTS + BOOL, unique_only=True),
    *_scatter_records("scatter-add", lax.scatter_add, INTS),
    *_scatter_records("scatter-sub", lax.scatter_sub, INTS),
    *_scatter_records("scatter-mul", lax.scatter_mul, INTS, grads_need_unique=True),
    *_scatter_records("scatter-min", lax.scatter_min, INTS + BOOL),
    *_scatter_records("scatter-max", lax.scatter_max, INTS + BOOL),
]
