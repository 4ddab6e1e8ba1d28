"""``ragged_dot`` and ``ragged_dot_general`` (one primitive, ``ragged_dot_general``).

It is computed as JAX computes it on the CPU: the ragged operand is expanded into a dense
``[g, ...]`` array masked by group (rows outside a group are zero) and contracted with
``dot_general``; the lowering traces that lax program, which is why the primitive sits with
the higher-order primitives. Spec of the ragged modes: ``jax.lax.ragged_dot_general``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.ad_util import get_aval
from xjax._src.core.avals import ShapedArray
from xjax._src.core.primitive import Primitive
from xjax._src.lax.ad_helpers import late_rule, operand_aval
from xjax._src.lax.ad_rules import jvp_by_parts, transpose_by_parts
from xjax._src.lax.batch_rules import bdim_at_front, batch_size
from xjax._src.lax.dot import (_dimension_numbers, _dot_dtype, _dot_general_impl, _dot_shape,
                               _is_algorithm, canonicalize_precision, dot_general_p)
from xjax._src.higher_order.linalg.common import lower_via_lax
from xjax._src.lax.shape import as_operand
from xjax._src.lax.convert import convert_element_type
from xjax._src.lax.shape import transpose
from xjax._src import lax


# -- ragged dot --


@dataclasses.dataclass(frozen=True)
class RaggedDotDimensionNumbers:
    """The dimensions of a ragged dot: ``dot_dimension_numbers`` as for ``dot_general``,
    the lhs ragged dimension (exactly one) and the rhs group dimensions (one when the
    ragged dimension is a free lhs dimension, none otherwise).

    Examples
    --------
    >>> from xjax import lax
    >>> lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0]).lhs_ragged_dimensions
    (0,)
    """

    dot_dimension_numbers: tuple
    lhs_ragged_dimensions: tuple
    rhs_group_dimensions: tuple

    def __init__(self, dot_dimension_numbers, lhs_ragged_dimensions, rhs_group_dimensions):
        dims = tuple(tuple(tuple(int(d) for d in side) for side in pair)
                     for pair in dot_dimension_numbers)
        object.__setattr__(self, "dot_dimension_numbers", dims)
        object.__setattr__(self, "lhs_ragged_dimensions",
                           tuple(int(d) for d in lhs_ragged_dimensions))
        object.__setattr__(self, "rhs_group_dimensions",
                           tuple(int(d) for d in rhs_group_dimensions))


_BASIC_RAGGED_DIMS = RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])

# the three ragged modes: the lhs ragged dimension is free, contracting, or a batch dim
NONCONTRACTING, CONTRACTING, BATCH = "noncontracting", "contracting", "batch"


def _remaining(n, *taken):
    used = set().union(*map(set, taken))
    return [d for d in range(n) if d not in used]


def _mode(lhs_ndim, dims):
    ragged = dims.lhs_ragged_dimensions[0]
    (lc, _), (lb, _) = dims.dot_dimension_numbers
    free = _remaining(lhs_ndim, lc, lb)
    if ragged in free:
        return NONCONTRACTING, ragged
    if ragged in lc:
        return CONTRACTING, ragged
    if ragged in lb:
        return BATCH, ragged
    raise TypeError(f"lhs_ragged_dim {ragged} not found in lhs_noncontracting {free}, "
                    f"lhs_contracting {list(lc)}, or lhs_batch {list(lb)}.")


def _prefix_dims(mode, ndim, ragged, batch, contract):
    """The operand's dims that ``group_sizes``' leading dims follow: ``[b..., x..., g]``."""
    batch, contract = list(batch), list(contract)
    free = _remaining(ndim, contract, batch)
    if mode == NONCONTRACTING:
        return batch + free[:free.index(ragged)]
    if mode == CONTRACTING:
        return batch + contract[:contract.index(ragged)]
    return batch[:batch.index(ragged)]


def _check_in_range(dim, rank, dim_name, arg_name):
    if dim < 0 or dim >= rank:
        raise TypeError(f"ragged_dot_general requires {dim_name} numbers to be nonnegative "
                        f"and less than the number of axes of the {arg_name} value, got {dim} "
                        f"for {arg_name} of rank {rank}.")


def _ragged_dot_general_abstract_eval(lhs, rhs, group_sizes, *, ragged_dot_dimension_numbers,
                                      precision, preferred_element_type, group_offset,
                                      out_sharding):
    dims = ragged_dot_dimension_numbers
    if len(dims.lhs_ragged_dimensions) != 1:
        raise TypeError("ragged_dot_general expects exactly one lhs ragged dimension.")
    _check_in_range(dims.lhs_ragged_dimensions[0], lhs.ndim, "lhs ragged dimension", "lhs")
    mode, ragged = _mode(lhs.ndim, dims)
    (lc, rc), (lb, rb) = dims.dot_dimension_numbers
    if group_sizes.ndim == 0:
        raise TypeError("expected rank of group_sizes to be >=1.")
    if group_sizes.ndim != 1:
        expected = tuple(lhs.shape[d] for d in _prefix_dims(mode, lhs.ndim, ragged, lb, lc))
        expected += (group_sizes.shape[-1],)
        if tuple(group_sizes.shape) != expected:
            raise TypeError(f"expected group_sizes to have shape {expected}, got "
                            f"{tuple(group_sizes.shape)}.")
    groups = group_sizes.shape[-1]
    group_dims = dims.rhs_group_dimensions
    if mode in (CONTRACTING, BATCH):
        if group_dims:
            raise TypeError("ragged_dot_general requires zero group dimensions in the rhs "
                            "when lhs ragged dimension is contracting or batch.")
    else:
        if len(group_dims) != 1:
            raise TypeError("ragged_dot_general requires exactly one rhs group dimension "
                            "when lhs ragged dimension is noncontracting.")
        gd = group_dims[0]
        _check_in_range(gd, rhs.ndim, "rhs group dimension", "rhs")
        if gd in rb or gd in rc:
            raise TypeError("ragged_dot_general requires rhs group dimension numbers to be "
                            "distinct from contracting and batch dimensions.")
        if rhs.shape[gd] != groups:
            raise TypeError(f"expected rhs group dimension size to be {groups}, got "
                            f"{rhs.shape[gd]}.")
    # the shape dot_general gives, with the rhs group dim counted as free (JAX's rule)
    shape = _dot_shape(tuple(lhs.shape), tuple(rhs.shape),
                            _dimension_numbers(dims.dot_dimension_numbers))
    if mode == NONCONTRACTING:  # ...except that the group dim is not in the output
        n_before = lhs.ndim - len(lc) + len([d for d in range(rhs.ndim) if d < gd
                                             and d not in rc and d not in rb])
        shape = shape[:n_before] + shape[n_before + 1:]
    if mode == CONTRACTING:
        shape = (groups,) + shape
    if not dtypes.issubdtype(group_sizes.dtype, np.integer):
        raise TypeError("ragged_dot_general requires that group_sizes.dtype is subtype of "
                        "np.integer.")
    try:
        dtype = _dot_dtype(lhs.dtype, rhs.dtype, preferred_element_type,
                                check_bit_width=not _is_algorithm(precision))
    except TypeError as e:
        raise TypeError(str(e).replace("lax.dot_general", "lax.ragged_dot_general")) from None
    return ShapedArray(shape, dtype)


def _contraction_plan(lhs_shape, rhs_ndim, dims):
    """How ragged_dot_general becomes one dot_general: ``(mode, lhs expansion, rhs
    expansion, dot dimension numbers)``; an expansion is ``(ragged dim, prefix dims)`` of
    that operand (None: used as it is). An expanded operand has the group axis first."""
    ndim = len(lhs_shape)
    mode, ragged = _mode(ndim, dims)
    (lc, rc), (lb, rb) = dims.dot_dimension_numbers
    l_prefix = _prefix_dims(mode, ndim, ragged, lb, lc)

    def up(ds):
        return tuple(d + 1 for d in ds)

    if mode == NONCONTRACTING:
        dn = ((up(lc) + (0,), tuple(rc) + (dims.rhs_group_dimensions[0],)), (up(lb), tuple(rb)))
        return mode, (ragged, l_prefix), None, dn
    if mode == CONTRACTING:
        r_ragged = rc[list(lc).index(ragged)]
        r_prefix = _prefix_dims(mode, rhs_ndim, r_ragged, rb, rc)
        dn = ((up(lc), up(rc)), ((0,) + up(lb), (0,) + up(rb)))
        return mode, (ragged, l_prefix), (r_ragged, r_prefix), dn
    return mode, None, None, dims.dot_dimension_numbers  # group sizes are not used


def _group_bounds_numpy(group_sizes, prefix, shape, dim):
    """Start and end of each group along ``dim``, shaped ``[g, *shape]`` with ones where
    ``group_sizes`` does not vary (its dims follow ``prefix`` of the operand)."""
    ends = np.cumsum(group_sizes, axis=-1, dtype=group_sizes.dtype)
    starts = ends - group_sizes
    order = np.argsort(prefix)
    target = [group_sizes.shape[-1]] + [shape[d] if d in prefix else 1
                                        for d in range(len(shape))]

    def place(v):
        v = np.moveaxis(v, -1, 0)
        v = np.transpose(v, [0] + [1 + int(i) for i in order])
        return v.reshape(target)

    return place(starts), place(ends)


def _expand_numpy(x, group_sizes, ragged, prefix):
    starts, ends = _group_bounds_numpy(group_sizes, prefix, x.shape, ragged)
    # the positions in group_sizes' dtype, as JAX's iota (so narrow types wrap alike)
    index = np.arange(x.shape[ragged]).astype(group_sizes.dtype).reshape(
        [1] * (ragged + 1) + [x.shape[ragged]] + [1] * (x.ndim - ragged - 1))
    mask = (starts <= index) & (index < ends)
    return np.where(mask, x[None], np.zeros((), x.dtype))


def _full_group_sizes(group_sizes, lhs_shape, prefix, xp_broadcast):
    """``[g]`` group sizes broadcast to ``[*prefix shape, g]``."""
    if len(group_sizes.shape) == 1 and prefix:
        shape = tuple(lhs_shape[d] for d in prefix) + tuple(group_sizes.shape)
        return xp_broadcast(group_sizes, shape)
    return group_sizes


def _ragged_dot_general_impl(lhs, rhs, group_sizes, *, ragged_dot_dimension_numbers,
                             precision, preferred_element_type, group_offset, out_sharding):
    lhs, rhs, group_sizes = np.asarray(lhs), np.asarray(rhs), np.asarray(group_sizes)
    mode, l_exp, r_exp, dn = _contraction_plan(lhs.shape, rhs.ndim,
                                               ragged_dot_dimension_numbers)
    if l_exp is not None:
        group_sizes = _full_group_sizes(group_sizes, lhs.shape, l_exp[1], np.broadcast_to)
        lhs = _expand_numpy(lhs, group_sizes, *l_exp)
    if r_exp is not None:
        rhs = _expand_numpy(rhs, group_sizes, *r_exp)
    return _dot_general_impl(lhs, rhs, dimension_numbers=_dimension_numbers(dn),
                                  precision=precision,
                                  preferred_element_type=preferred_element_type,
                                  out_sharding=None)


def _expand_lax(x, group_sizes, ragged, prefix):
    """``_expand_numpy`` written with lax (the lowering's program)."""
    shape = tuple(get_aval(x).shape)
    g = get_aval(group_sizes).shape[-1]
    full = (g,) + shape
    gs_dims = tuple(sorted(d + 1 for d in prefix))
    order = [int(i) for i in np.argsort(prefix)]
    ends = lax.cumsum(group_sizes, axis=len(prefix))
    starts = lax.sub(ends, group_sizes)

    def place(v):  # gs layout [*prefix, g] -> [g, *sorted prefix] -> broadcast to full
        v = lax.transpose(v, (len(prefix),) + tuple(order))
        return lax.broadcast_in_dim(v, full, (0,) + gs_dims)

    index = lax.broadcasted_iota(get_aval(group_sizes).dtype, full, ragged + 1)
    mask = lax.bitwise_and(lax.le(place(starts), index), lax.lt(index, place(ends)))
    xb = lax.broadcast_in_dim(x, full, tuple(range(1, len(full))))
    return lax.select(mask, xb, lax.full(full, 0, get_aval(x).dtype))


def _ragged_dot_general_lax(lhs, rhs, group_sizes, *, ragged_dot_dimension_numbers,
                            precision, preferred_element_type, group_offset, out_sharding):
    mode, l_exp, r_exp, dn = _contraction_plan(tuple(get_aval(lhs).shape),
                                               get_aval(rhs).ndim,
                                               ragged_dot_dimension_numbers)
    if l_exp is not None:
        group_sizes = _full_group_sizes(
            group_sizes, get_aval(lhs).shape, l_exp[1],
            lambda gs, shape: lax.broadcast_in_dim(gs, shape, (len(shape) - 1,)))
        lhs = _expand_lax(lhs, group_sizes, *l_exp)
    if r_exp is not None:
        rhs = _expand_lax(rhs, group_sizes, *r_exp)
    return dot_general_p.bind(lhs, rhs, dimension_numbers=_dimension_numbers(dn),
                                   precision=precision,
                                   preferred_element_type=preferred_element_type,
                                   out_sharding=None)


# -- derivatives: bilinear in lhs and rhs --


def _ragged_jvp_lhs(t, ans, lhs, rhs, group_sizes, **params):
    return ragged_dot_general_p.bind(t, rhs, group_sizes, **params)


def _ragged_jvp_rhs(t, ans, lhs, rhs, group_sizes, **params):
    return ragged_dot_general_p.bind(lhs, t, group_sizes, **params)


def _ranges_like(*lists):
    start, out = 0, []
    for xs in lists:
        out.append(list(range(start, start + len(xs))))
        start += len(xs)
    return out


def _ragged_transpose_dims(x_ndim, y_ndim, dims, for_lhs):
    """Dimension numbers of the ragged dot giving the cotangent of lhs (``for_lhs``) or
    rhs, and the operand's axes in the order that dot produces them."""
    (x_contract, y_contract), (x_batch, y_batch) = dims.dot_dimension_numbers
    x_kept = _remaining(x_ndim, x_contract, x_batch)
    y_group = list(dims.rhs_group_dimensions)
    y_kept = _remaining(y_ndim, y_contract, y_batch, y_group)
    mode, ragged = _mode(x_ndim, dims)
    if mode != NONCONTRACTING:
        which = "grad_x_dims" if for_lhs else "grad_y_dims"
        mode_name = "RAGGED_CONTRACTING" if mode == CONTRACTING else "RAGGED_BATCH"
        raise NotImplementedError(f"Unimplemented {which} for ragged dot general in mode "
                                  f"{mode_name}.")
    ans_batch, ans_x, ans_y = _ranges_like(x_batch, x_kept, y_kept)
    if for_lhs:
        new = RaggedDotDimensionNumbers(((ans_y, y_kept), (ans_batch, y_batch)),
                                        [len(x_batch) + x_kept.index(ragged)], y_group)
        by_y = [x_contract[i] for i in np.argsort(y_contract)]
        return new, list(x_batch) + x_kept + by_y
    new = RaggedDotDimensionNumbers(((x_kept, ans_x), (x_batch, ans_batch)), [ragged], [])
    by_x = [y_contract[i] for i in np.argsort(x_contract)]
    return new, y_group + list(y_batch) + by_x + y_kept


def _ragged_transpose_lhs(ct, lhs, rhs, group_sizes, *, ragged_dot_dimension_numbers,
                          **params):
    return _ragged_ct(ct, rhs, group_sizes, operand_aval(lhs), operand_aval(rhs).ndim,
                      ragged_dot_dimension_numbers, True, params)


def _ragged_transpose_rhs(ct, lhs, rhs, group_sizes, *, ragged_dot_dimension_numbers,
                          **params):
    return _ragged_ct(ct, lhs, group_sizes, operand_aval(rhs), operand_aval(lhs).ndim,
                      ragged_dot_dimension_numbers, False, params)


def _ragged_ct(ct, other, group_sizes, aval, other_ndim, dims, for_lhs, params):
    x_ndim, y_ndim = (aval.ndim, other_ndim) if for_lhs else (other_ndim, aval.ndim)
    new, axes = _ragged_transpose_dims(x_ndim, y_ndim, dims, for_lhs)
    a, b = (ct, other) if for_lhs else (other, ct)
    out = ragged_dot_general_p.bind(a, b, group_sizes, ragged_dot_dimension_numbers=new,
                                    **params)
    perm = tuple(int(i) for i in np.argsort(axes))
    if perm != tuple(range(len(perm))):
        out = transpose(out, perm)
    if get_aval(out).dtype != aval.dtype:
        out = convert_element_type(out, aval.dtype)
    return out


# -- batching: a new leading batch dimension pair --


def _ragged_dot_general_batch(args, dims, *, ragged_dot_dimension_numbers, **params):
    """Every operand gets the batch axis first (unmapped ones are broadcast); it becomes a
    new leading batch dimension of lhs and rhs, and a leading dim of the group sizes."""
    size = batch_size(args, dims)
    lhs, rhs, gs = (bdim_at_front(x, d, size) for x, d in zip(args, dims, strict=True))
    rd = ragged_dot_dimension_numbers
    (lc, rc), (lb, rb) = rd.dot_dimension_numbers

    def up(ds):
        return [d + 1 for d in ds]

    new = RaggedDotDimensionNumbers(((up(lc), up(rc)), ([0] + up(lb), [0] + up(rb))),
                                    up(rd.lhs_ragged_dimensions), up(rd.rhs_group_dimensions))
    lhs_shape = tuple(get_aval(lhs).shape)
    mode, ragged = _mode(len(lhs_shape) - 1, rd)
    prefix = _prefix_dims(mode, len(lhs_shape), ragged + 1, [0] + up(lb), up(lc))
    full = tuple(lhs_shape[d] for d in prefix) + (get_aval(gs).shape[-1],)
    if tuple(get_aval(gs).shape) != full:  # [B, g] for a [g] that was broadcast
        gs = lax.broadcast_in_dim(gs, full, (0, len(full) - 1))
    out = ragged_dot_general_p.bind(lhs, rhs, gs, ragged_dot_dimension_numbers=new, **params)
    return out, 1 if mode == CONTRACTING else 0


ragged_dot_general_p = Primitive(
    "ragged_dot_general", abstract_eval=_ragged_dot_general_abstract_eval,
    impl=_ragged_dot_general_impl,
    lower=lower_via_lax(_ragged_dot_general_lax, "ragged_dot_general"),
    jvp=late_rule(lambda p: jvp_by_parts(p, _ragged_jvp_lhs, _ragged_jvp_rhs, None),
                  "ragged_dot_general"),
    transpose=transpose_by_parts(_ragged_transpose_lhs, _ragged_transpose_rhs, None),
    batch=_ragged_dot_general_batch,
    hidden_params=("out_sharding", "precision", "preferred_element_type", "group_offset"))


def _canonical_preferred(preferred_element_type):
    if preferred_element_type is None:
        return None
    return dtypes.check_and_canonicalize_user_dtype(preferred_element_type,
                                                    "ragged_dot_general")


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None, out_sharding=None):
    """Ragged matrix multiplication with ``dot_general``'s batch and contracting dims.

    ``lhs`` has one ragged dimension, split into consecutive groups of the sizes
    ``group_sizes`` holds; three modes, by the kind of the ragged dimension:

    1. free (``m``): ``[b..., m..., k...], [g, b..., k..., n...] -> [b..., m..., n...]``,
       each group of rows contracted with its own slice of ``rhs``' group dimension;
    2. contracting (``k``): ``[b..., m..., k...], [b..., k..., n...] -> [g, b..., m..., n...]``,
       one product per group of the contracting dimension;
    3. batch: ``dot_general`` (the group sizes are not used).

    Rows outside every group give zeros. ``group_sizes`` is ``[g]`` or
    ``[b..., x..., g]`` (``x...``: the dims of the ragged kind outer to it).

    Parameters
    ----------
    lhs, rhs : array_like
    group_sizes : array_like of integers
    ragged_dot_dimension_numbers : RaggedDotDimensionNumbers
    precision, preferred_element_type :
        As for :func:`~xjax.lax.dot_general`.
    group_offset : None
        Not supported (as in JAX on the CPU): raises NotImplementedError.
    out_sharding : None
        Ignored (one device).

    Returns
    -------
    Array

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> dims = lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])
    >>> lhs, rhs = jnp.ones((3, 2)), jnp.stack([jnp.ones((2, 2)), 2 * jnp.ones((2, 2))])
    >>> lax.ragged_dot_general(lhs, rhs, jnp.array([1, 2]), dims)
    Array([[2., 2.],
           [4., 4.],
           [4., 4.]], dtype=float32)
    """
    if group_offset is not None:
        raise NotImplementedError("Unimplemented group_offset support.")
    if not isinstance(ragged_dot_dimension_numbers, RaggedDotDimensionNumbers):
        raise TypeError("ragged_dot_general expects a RaggedDotDimensionNumbers, got "
                        f"{ragged_dot_dimension_numbers!r}.")
    return ragged_dot_general_p.bind(
        as_operand(lhs), as_operand(rhs), as_operand(group_sizes),
        ragged_dot_dimension_numbers=ragged_dot_dimension_numbers,
        precision=canonicalize_precision(precision),
        preferred_element_type=_canonical_preferred(preferred_element_type),
        group_offset=None, out_sharding=None)


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None, out_sharding=None):
    """Ragged matrix multiplication: row group ``i`` of ``lhs`` times ``rhs[i]``.

    Parameters
    ----------
    lhs : array_like, shape (m, k)
    rhs : array_like, shape (g, k, n)
    group_sizes : array_like of integers, shape (g,)
        The sizes of the consecutive row groups of ``lhs``; rows past their sum give zeros.
    precision, preferred_element_type :
        As for :func:`~xjax.lax.dot`.
    group_offset : None
        Not supported (as in JAX on the CPU): raises NotImplementedError.
    out_sharding : None
        Ignored (one device).

    Returns
    -------
    Array of shape (m, n).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lhs = jnp.arange(6.0).reshape(3, 2)
    >>> rhs = jnp.stack([jnp.eye(2), -jnp.eye(2)])
    >>> lax.ragged_dot(lhs, rhs, jnp.array([2, 1]))
    Array([[ 0.,  1.],
           [ 2.,  3.],
           [-4., -5.]], dtype=float32)
    """
    return ragged_dot_general(lhs, rhs, group_sizes, _BASIC_RAGGED_DIMS, precision=precision,
                              preferred_element_type=preferred_element_type,
                              group_offset=group_offset, out_sharding=out_sharding)


__all__ = ["RaggedDotDimensionNumbers", "ragged_dot", "ragged_dot_general", "ragged_dot_general_p"]
