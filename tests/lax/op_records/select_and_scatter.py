"""Rule-check records of the derivative primitives of max/min pooling
(``select_and_gather_add``, ``select_and_scatter_add``), of the general
``select_and_scatter``, of the placement identities ``device_put``,
``sharding_constraint`` and ``reshard`` (over one device), and of ``approx_top_k``.

Operands are distinct values: under ties XLA's compiled reduce_window may visit a window in
another order than the row-major NumPy impl (both pick a maximal element)."""

import numpy as np

from xjax import lax
from xjax._src.lax.select_and_scatter import select_and_gather_add_p, select_and_scatter_add_p
from xjax._src.lax.windowed import reduce_window_shape_tuple
from op_records.shape import by_precision
from op_table import BOOL, FLOATS, INTS, OpRecord
from xjax._src.higher_order.reduce_window import select_and_scatter
from xjax._src.core.sharding_types import Mesh, NamedSharding, PartitionSpec, SingleDeviceSharding
from xjax._src.lax.placement import ArrayCopySemantics, device_put_p, reshard_p
from xjax._src.runtime import devices

_SHAPE = (5, 6)

_GATHER_CONFIGS = {
    "pool": dict(window_dimensions=(2, 2), window_strides=(2, 2), padding=((0, 0), (0, 0)),
                 base_dilation=(1, 1), window_dilation=(1, 1)),
    "padded": dict(window_dimensions=(3, 2), window_strides=(1, 2), padding=((1, 1), (0, 1)),
                   base_dilation=(1, 1), window_dilation=(1, 1)),
    "base-dilated": dict(window_dimensions=(2, 2), window_strides=(2, 1),
                         padding=((1, 0), (0, 1)), base_dilation=(2, 1),
                         window_dilation=(1, 1)),
    "window-dilated": dict(window_dimensions=(2, 2), window_strides=(1, 1),
                           padding=((0, 0), (0, 0)), base_dilation=(1, 1),
                           window_dilation=(2, 2)),
}

_SCATTER_CONFIGS = {
    "pool": dict(window_dimensions=(2, 2), window_strides=(2, 2), padding=((0, 0), (0, 0))),
    "overlap": dict(window_dimensions=(3, 2), window_strides=(1, 1),
                    padding=((1, 1), (0, 1))),
    "negative-pad": dict(window_dimensions=(2, 3), window_strides=(1, 2),
                         padding=((-1, 1), (1, 0))),
}


def _distinct(dtype, shape, rng):
    """A permutation scaled into a range each dtype holds exactly (no ties)."""
    n = int(np.prod(shape))
    values = rng.permutation(n).astype(np.float64) - n // 2
    if np.issubdtype(np.dtype(dtype), np.unsignedinteger):
        values = values + n // 2
    return (values * (0.25 if np.dtype(dtype).kind == "f" or dtype not in INTS else 1)
            ).reshape(shape).astype(dtype)


def _gather_args(rng, shapes, dtype):
    t = rng.uniform(-2, 2, shapes[0]).astype(dtype)
    return [t, _distinct(dtype, shapes[1], rng)]


def _scatter_args(rng, shapes, dtype):
    if np.dtype(dtype).kind == "f":
        source = rng.uniform(-2, 2, shapes[0]).astype(dtype)
    else:
        source = rng.integers(0, 10, shapes[0]).astype(dtype)
    return [source, _distinct(dtype, shapes[1], rng)]


def _gather(select_prim, config):
    def fun(t, x):
        return select_and_gather_add_p.bind(t, x, select_prim=select_prim, **config)
    return fun


def _scatter(select_prim, config):
    def fun(s, x):
        return select_and_scatter_add_p.bind(s, x, select_prim=select_prim, **config)
    return fun


def _gather_records():
    records = []
    for label, config in _GATHER_CONFIGS.items():
        for select_prim in (lax.ge_p, lax.le_p):
            name = f"{label}-{select_prim.name}"
            fun = _gather(select_prim, config)
            for record in by_precision("select_and_gather_add", fun, [_SHAPE, _SHAPE],
                                       _gather_args, name, f32_tol=0.0, with_complex=False):
                record.tol = 0.0  # a selection: bit-exact in every dtype
                records.append(record)
    return records


def _scatter_records():
    records = []
    for label, config in _SCATTER_CONFIGS.items():
        out_shape = reduce_window_shape_tuple(_SHAPE, config["window_dimensions"],
                                              config["window_strides"], config["padding"])
        for select_prim in (lax.ge_p, lax.le_p):
            records += by_precision("select_and_scatter_add", _scatter(select_prim, config),
                                    [out_shape, _SHAPE], _scatter_args,
                                    f"{label}-{select_prim.name}", with_complex=False,
                                    exact_dtypes=INTS)
    return records


def _general(x, s):
    return select_and_scatter(x, lax.ge, (2, 3), (1, 2), ((0, 0), (0, 0)), s,
                              np.zeros((), s.dtype), lax.add)


def _general_args(rng, shapes, dtype):
    return [_distinct(dtype, shapes[0], rng), rng.integers(0, 10, shapes[1]).astype(dtype)]


def _device_put(x):
    return device_put_p.bind(x, devices=(None,), srcs=(None,),
                             copy_semantics=(ArrayCopySemantics.REUSE_INPUT,))[0]


def _sharding_constraint(x):
    return lax.with_sharding_constraint(x, SingleDeviceSharding(devices()[0]))


def _reshard(x):
    mesh = Mesh(np.array(devices()[:1]), ("x",))
    return reshard_p.bind(x, dst_sharding=NamedSharding(mesh, PartitionSpec()),
                          concrete_mesh=None)


def _distinct_floats(rng, shapes, dtype):
    return [_distinct(dtype, s, rng) for s in shapes]


RECORDS = [
    OpRecord("approx_top_k", lambda x: lax.approx_max_k(x, 3), [(4, 6)], FLOATS,
             make_args=_distinct_floats, name="max", grad_order=0),
    OpRecord("approx_top_k", lambda x: lax.approx_min_k(x, 2, reduction_dimension=0),
             [(4, 6)], FLOATS, make_args=_distinct_floats, name="min", grad_order=0),
    # derivatives of the values (the indices are integers)
    OpRecord("approx_top_k", lambda x: lax.approx_max_k(x, 3)[0], [(4, 6)], (np.float32,),
             make_args=_distinct_floats, name="max-values"),
    OpRecord("approx_top_k", lambda x: lax.approx_min_k(x, 2, reduction_dimension=0)[0],
             [(4, 6)], (np.float32,), make_args=_distinct_floats, name="min-values"),
    OpRecord("device_put", _device_put, [(3, 4)], FLOATS + INTS + BOOL),
    OpRecord("sharding_constraint", _sharding_constraint, [(3, 4)], FLOATS + INTS + BOOL),
    OpRecord("reshard", _reshard, [(3, 4)], FLOATS + INTS + BOOL),
    *_gather_records(),
    *_scatter_records(),
    # the general form holds traced computations; JAX gives it no derivative rules
    OpRecord("select_and_scatter", _general, [_SHAPE, (4, 2)], (np.float32, np.int32),
             make_args=_general_args, grad_order=0),
]
