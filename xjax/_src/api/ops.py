"""Segment reductions (``jax.ops``): ``segment_sum``, ``segment_prod``, ``segment_min``,
``segment_max``.

Each reduces the rows of ``data`` that share a segment id into one output row. They are
scatters (``lax.scatter_add`` and friends) into an output filled with the reduction's
identity, so ``jit``, ``vmap``, ``grad`` and ``jvp`` go through the scatter rules. As in JAX:

- ids outside ``[0, num_segments)``, negative ones included, are dropped (``mode=None``);
  ``mode='clip'`` clamps them into range instead;
- an empty segment holds the identity: 0, 1, the dtype's largest value (``+inf`` for
  inexact types, True for bool) for ``min``, its smallest for ``max``;
- without ``num_segments`` the output length is ``max(segment_ids) + 1``, read from the
  concrete ids; traced ids then raise :class:`xjax.errors.ConcretizationTypeError`.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from xjax._src import lax
from xjax._src.core import dtypes
from xjax._src.core.trace import Tracer
from xjax._src.numpy._promotion import check_arraylike, concrete_value
from xjax._src.numpy.creation import laid_out
import xjax._src.numpy as jnp

__all__ = ["segment_sum", "segment_prod", "segment_min", "segment_max"]

# kind -> (lax scatter, name of the xjax.numpy reduction that merges buckets)
_SCATTERS = {"sum": (lambda: lax.scatter_add, "sum"),
             "prod": (lambda: lax.scatter_mul, "prod"),
             "min": (lambda: lax.scatter_min, "min"),
             "max": (lambda: lax.scatter_max, "max")}


def _identity(kind: str, dtype: np.dtype):
    """The value an empty segment holds: the reduction's identity in ``dtype``."""
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    smallest = kind == "max"
    if dtype == np.bool_:
        return not smallest
    if dtypes.is_integer(dtype):
        info = np.iinfo(dtype)
        return info.min if smallest else info.max
    return -np.inf if smallest else np.inf


def _num_segments(num_segments, segment_ids, name: str) -> int:
    """The output length, concrete: ``num_segments`` or ``max(segment_ids) + 1``."""
    context = f"{name}() `num_segments` argument."
    if num_segments is None:
        ids = concrete_value(segment_ids, context)
        num_segments = np.max(ids) + 1  # an empty ids array raises NumPy's ValueError, as JAX
    elif isinstance(num_segments, Tracer):
        num_segments = concrete_value(num_segments, context)
    num_segments = operator.index(num_segments)
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    return num_segments


def _checked_ids(segment_ids):
    dtype = segment_ids.dtype
    if dtype == np.bool_:
        raise NotImplementedError(
            "boolean segment_ids are not supported: JAX reads them as a mask over the "
            "segments (NumPy boolean indexing), not as ids; pass integer segment ids")
    if not dtypes.is_integer(dtype):
        raise TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                        f"{dtype.name}")
    return segment_ids


def _scatter_rows(kind, out, index_arrays, data, mode, indices_are_sorted, unique_indices):
    """``out`` with the rows of ``data`` combined into ``out[index_arrays]`` by ``kind``.

    ``index_arrays`` are integer arrays of one shape ``B``, one per leading dimension of
    ``out`` they address; ``data`` is broadcast to ``B + out.shape[len(index_arrays):]``.
    """
    batch = index_arrays[0].shape
    n_indexed = len(index_arrays)
    updates = jnp.broadcast_to(data, batch + out.shape[n_indexed:])
    indices = jnp.stack(index_arrays, axis=-1)
    window = tuple(range(len(batch), len(batch) + out.ndim - n_indexed))
    dnums = lax.ScatterDimensionNumbers(
        update_window_dims=window, inserted_window_dims=tuple(range(n_indexed)),
        scatter_dims_to_operand_dims=tuple(range(n_indexed)), operand_batching_dims=(),
        scatter_indices_batching_dims=())
    scatter = _SCATTERS[kind][0]()
    return scatter(out, indices, updates, dnums, indices_are_sorted=indices_are_sorted,
                   unique_indices=unique_indices, mode=mode)


def _segment_reduce(kind, data, segment_ids, num_segments, indices_are_sorted,
                    unique_indices, bucket_size, mode):
    name = f"segment_{kind}"
    check_arraylike(name, data, segment_ids)
    data, segment_ids = jnp.asarray(data), _checked_ids(jnp.asarray(segment_ids))
    # Ids are not wrapped: a negative id is out of range like any other.
    mode = lax.GatherScatterMode.from_any(mode)
    num_segments = _num_segments(num_segments, segment_ids, name)
    dtype = data.dtype
    fill = _identity(kind, dtype)
    if bucket_size is None:
        out = jnp.full((num_segments,) + data.shape[1:], fill, dtype=dtype)
        return _scatter_rows(kind, out, [segment_ids], data, mode, indices_are_sorted,
                             unique_indices)
    # Reduce each bucket of ``bucket_size`` consecutive ids separately, then the buckets:
    # shorter chains of sums and products round less.
    bucket_size = operator.index(bucket_size)
    n_buckets = -(-math.prod(segment_ids.shape) // bucket_size)
    out = jnp.full((n_buckets, num_segments) + data.shape[1:], fill, dtype=dtype)
    buckets = lax.div(lax.iota(np.dtype(np.int32), segment_ids.shape[0]),
                      np.int32(bucket_size))
    # JAX pairs the bucket of each position along the first axis with ``segment_ids[None]``
    # by broadcasting; for 1-D ids that is one row of (bucket, id) pairs.
    ids = segment_ids[None]
    shape = np.broadcast_shapes(buckets.shape, ids.shape)
    index_arrays = [jnp.broadcast_to(buckets.astype(ids.dtype), shape),
                    jnp.broadcast_to(ids, shape)]
    out = _scatter_rows(kind, out, index_arrays, data, mode, indices_are_sorted,
                        unique_indices)
    reducer = getattr(jnp, _SCATTERS[kind][1])
    return reducer(out, axis=0).astype(dtype)


_PARAMETERS = """
    Parameters
    ----------
    data : array_like
        The values; ``data[i]`` belongs to segment ``segment_ids[i]``.
    segment_ids : array_like of integers
        The segment of each row of ``data``. Ids outside ``[0, num_segments)`` (negative
        ones included) are dropped unless ``mode`` says otherwise.
    num_segments : int, optional
        The number of segments (the output's length). Default: ``max(segment_ids) + 1``,
        which needs concrete ids: under ``jit`` pass it as a static value.
    indices_are_sorted : bool
        Promise that ``segment_ids`` is sorted.
    unique_indices : bool
        Promise that ``segment_ids`` has no repeats.
    bucket_size : int, optional
        Reduce each run of ``bucket_size`` consecutive rows separately, then the runs
        (shorter chains of operations round less). Default: no buckets.
    mode : lax.GatherScatterMode or str, optional
        How out-of-range ids are handled: dropped (None, ``'drop'``), or clamped into range
        (``'clip'``).
    out_sharding : NamedSharding or PartitionSpec, optional
        How the result is laid out over devices (and split in its type), as
        ``jnp.zeros(out_sharding=)`` takes it.

    Returns
    -------
    Array
        Shape ``(num_segments,) + data.shape[1:]``, dtype of ``data``; an empty segment
        holds {identity}.
"""


def _document(fn, what, identity, example):
    fn.__doc__ = (f"The {what} of the rows of ``data`` in each segment "
                  f"(``jax.ops.{fn.__name__}``).\n" + _PARAMETERS.format(identity=identity)
                  + "\n    Examples\n    --------\n"
                  "    >>> import xjax, xjax.numpy as jnp\n"
                  "    >>> data = jnp.arange(6)\n"
                  "    >>> segment_ids = jnp.array([0, 0, 1, 1, 2, -1])\n" + example +
                  "\n    ``num_segments`` must be static under ``jit``:\n\n"
                  f"    >>> f = xjax.jit(xjax.ops.{fn.__name__}, static_argnums=2)\n"
                  "    >>> f(data, segment_ids, 3).shape\n    (3,)\n")
    return fn


def segment_sum(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None, out_sharding=None):
    return laid_out(_segment_reduce("sum", data, segment_ids, num_segments,
                                    indices_are_sorted, unique_indices, bucket_size, mode),
                    out_sharding, "segment_sum")


def segment_prod(data, segment_ids, num_segments=None, indices_are_sorted=False,
                 unique_indices=False, bucket_size=None, mode=None, out_sharding=None):
    return laid_out(_segment_reduce("prod", data, segment_ids, num_segments,
                                    indices_are_sorted, unique_indices, bucket_size, mode),
                    out_sharding, "segment_prod")


def segment_max(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None, out_sharding=None):
    return laid_out(_segment_reduce("max", data, segment_ids, num_segments,
                                    indices_are_sorted, unique_indices, bucket_size, mode),
                    out_sharding, "segment_max")


def segment_min(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None, out_sharding=None):
    return laid_out(_segment_reduce("min", data, segment_ids, num_segments,
                                    indices_are_sorted, unique_indices, bucket_size, mode),
                    out_sharding, "segment_min")


_document(segment_sum, "sum", "0",
          "    >>> xjax.ops.segment_sum(data, segment_ids)  # the id -1 is dropped\n"
          "    Array([1, 5, 4], dtype=int32)\n"
          "    >>> xjax.ops.segment_sum(data, segment_ids, num_segments=4)\n"
          "    Array([1, 5, 4, 0], dtype=int32)\n")
_document(segment_prod, "product", "1",
          "    >>> xjax.ops.segment_prod(data, segment_ids)\n"
          "    Array([0, 6, 4], dtype=int32)\n")
_document(segment_max, "maximum", "the dtype's smallest value (-inf for inexact types, "
          "False for bool)",
          "    >>> xjax.ops.segment_max(data, segment_ids, num_segments=4)\n"
          "    Array([          1,           3,           4, -2147483648], dtype=int32)\n")
_document(segment_min, "minimum", "the dtype's largest value (+inf for inexact types, "
          "True for bool)",
          "    >>> xjax.ops.segment_min(data, segment_ids)\n"
          "    Array([0, 2, 4], dtype=int32)\n")
