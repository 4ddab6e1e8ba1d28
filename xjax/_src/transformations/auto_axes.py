"""``auto_axes``: run a function with some Explicit mesh axes taken out of its arguments'
types, then give its results a chosen sharding (``jax.sharding.auto_axes``).

It is what the ``out_sharding=`` arguments of indexing rest on: a gather or scatter whose
result split JAX's rules cannot decide runs on operands unsplit over those axes, and the
result is resharded to the split the caller asked for.
"""

from __future__ import annotations

from xjax._src.core.ad_util import get_aval
from xjax._src.core.pytree import tree_flatten, tree_map
from xjax._src.core.sharding_types import (AxisType, Mesh, NamedSharding, PartitionSpec,
                                           Sharding, get_mesh, spec_names, with_axis_types)
from xjax._src.transformations.pmap import reshard
from xjax._src.transformations.wrapping import wraps


def auto_axes(fun=None, /, *, axes=None, out_sharding=None):
    """``fun`` with the mesh axes ``axes`` (default: every Explicit axis of the current
    mesh) removed from its array arguments' types; its results are resharded to
    ``out_sharding`` (a ``PartitionSpec`` over the current mesh, a ``NamedSharding``, or a
    pytree prefix of them; given here or as an ``out_sharding=`` keyword of the call).

    Inside ``fun`` the axes are Auto, as in JAX: the current mesh says so
    (``get_abstract_mesh().axis_types``), and a PartitionSpec over them cannot type a
    result (``jnp.zeros(..., out_sharding=P('x'))`` raises JAX's ValueError there).

    Raises
    ------
    TypeError
        When no ``out_sharding`` is given, or it is not shardings.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> from xjax.sharding import PartitionSpec as P
    >>> mesh = xjax.make_mesh((1,), ("x",))
    >>> with xjax.set_mesh(mesh):
    ...     table = xjax.reshard(jnp.arange(8.0).reshape(4, 2), P("x"))
    ...     rows = xjax.sharding.auto_axes(lambda t, i: t[i], out_sharding=P("x"))(
    ...         table, jnp.array([3, 0]))
    >>> rows.tolist()
    [[6.0, 7.0], [0.0, 1.0]]
    """
    if fun is None:
        return lambda f: auto_axes(f, axes=axes, out_sharding=out_sharding)

    @wraps(fun)
    def run(*args, **kwargs):
        target = out_sharding
        if target is None:
            if "out_sharding" not in kwargs:
                raise TypeError("Missing required keyword argument: 'out_sharding'")
            target = kwargs.pop("out_sharding")
        _check_shardings(target)
        mesh = get_mesh()
        if mesh.empty and isinstance(target, NamedSharding):
            mesh = target.mesh
        names = (mesh.explicit_axes if axes is None
                 else (axes,) if isinstance(axes, str) else tuple(axes))
        if not names:
            return fun(*args, **kwargs)
        if not isinstance(mesh, Mesh) or get_mesh() is not mesh:  # a target's mesh
            args, kwargs = tree_map(lambda x: _without_axes(x, names, mesh), (args, kwargs))
            return reshard(fun(*args, **kwargs), target)
        # Inside, the axes are Auto (as in JAX): the arguments' types are over that mesh.
        inner = mesh.update(axis_types=tuple(
            AxisType.Auto if n in names else t
            for n, t in zip(mesh.axis_names, mesh.axis_types, strict=True)))
        args, kwargs = tree_map(lambda x: _without_axes(x, names, inner), (args, kwargs))
        with with_axis_types(inner):
            out = fun(*args, **kwargs)
        return reshard(out, target)

    return run


def _check_shardings(target) -> None:
    is_leaf = lambda s: s is None or isinstance(s, (Sharding, PartitionSpec))  # noqa: E731
    for leaf in tree_flatten(target, is_leaf=is_leaf)[0]:
        if not is_leaf(leaf):
            raise TypeError("auto_axes out_sharding must be a PartitionSpec, a Sharding or a "
                            f"pytree of them, got {leaf!r} of type {type(leaf).__name__}")


def _without_axes(x, names, mesh):
    """``x`` resharded onto ``mesh`` so that its type splits over none of ``names``
    (others kept)."""
    try:
        sharding = getattr(get_aval(x), "_sharding", None)
    except TypeError:  # not an array (a Python scalar is one; other leaves pass through)
        return x
    if sharding is None:
        return x
    entries = [_entry_without(e, names) for e in sharding.spec]
    if entries == list(sharding.spec) and sharding.mesh == mesh.abstract_mesh:
        return x
    return reshard(x, NamedSharding(mesh, PartitionSpec(*entries)))


def _entry_without(entry, names):
    kept = tuple(n for n in spec_names(entry) if n not in names)
    return None if not kept else kept[0] if len(kept) == 1 else kept

