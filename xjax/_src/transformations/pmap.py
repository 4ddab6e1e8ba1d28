"""Top-level SPMD and sharding API: ``make_mesh``, ``set_mesh``, ``reshard``,
``NamedSharding``, ``P``, ``Shard``, ``shard_map``, ``smap`` and ``pmap``.

xjax executes SPMD programs with its vmap machinery on one device (see ``xjax.spmd``):
values, shapes and errors are JAX's; the parallelism is not.
"""

from __future__ import annotations

import math

from xjax._src.core.ad_util import get_aval
from xjax._src.core.out_sharding import require_explicit_axes
from xjax._src.core.pytree import tree_flatten, tree_unflatten
from xjax._src.core.sharding_types import (AbstractMesh, AxisType, Mesh, NamedSharding, P,
                                           PartitionSpec, Shard, Sharding, concrete_mesh_for,
                                           get_mesh, set_mesh, spec_names, spelled_as_typed)
from xjax._src.core.trace import Tracer
from xjax._src.lax.placement import reshard_p
from xjax._src.transformations.shard_map import _shard_map, shard_map, smap
from xjax._src import lax, runtime
from xjax._src.transformations.jit import device_put, jit
from xjax._src.transformations.vmap import _broadcast_prefix, normalize_mapped_axis
from xjax._src.transformations.wrapping import wraps


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None) -> Mesh:
    """A ``Mesh`` of the first ``prod(axis_shapes)`` devices, in device order.

    Parameters
    ----------
    axis_shapes : sequence of int
    axis_names : sequence of str
    axis_types : tuple of AxisType, optional
        Defaults to ``AxisType.Explicit`` for every axis, as in JAX.
    devices : sequence of Device, optional
        Defaults to ``xjax.devices()``.

    Raises
    ------
    ValueError
        If there are fewer devices than the mesh needs, or ``axis_shapes`` is not a sequence
        of ints.

    Examples
    --------
    >>> import xjax
    >>> xjax.make_mesh((1,), ('x',))
    Mesh(axis_sizes=(1,), axis_names=('x',), axis_types=(Explicit,))
    """
    import numpy as np
    if devices is None:
        devices = runtime.devices()
    devices = list(devices)
    try:
        shapes = tuple(int(s) for s in axis_shapes)
        if any(not isinstance(s, (int, np.integer)) for s in axis_shapes):
            raise TypeError
    except TypeError:
        raise ValueError("`axis_shapes` passed to `make_mesh` should be a sequence of ints. "
                         f"Got {axis_shapes}") from None
    size = math.prod(shapes)
    if size > len(devices):
        raise ValueError(f"Number of devices {len(devices)} must be >= the product of "
                         f"mesh_shape {shapes}")
    grid = np.empty(len(devices[:size]), dtype=object)
    grid[:] = devices[:size]
    if axis_types is None:
        axis_types = (AxisType.Explicit,) * len(shapes)
    return Mesh(grid.reshape(shapes), axis_names, axis_types=axis_types)


def reshard(xs, out_shardings):
    """Give ``xs`` (a pytree) the shardings ``out_shardings`` (a NamedSharding, a
    PartitionSpec over the current mesh, or a pytree prefix of them).

    Eagerly each value is placed by its sharding (``device_put``); under a trace the
    value's type takes the sharding. A sharding over an ``AbstractMesh`` names the mesh
    set with ``set_mesh``.

    Raises
    ------
    ValueError
        If a PartitionSpec is given with no mesh set, a spec names an axis that is not
        Explicit (JAX's message), or a shape does not divide.
    """
    leaves, tree = tree_flatten(xs)
    is_leaf = lambda s: s is None or isinstance(s, (Sharding, PartitionSpec))  # noqa: E731
    targets, target_tree = tree_flatten(out_shardings, is_leaf=is_leaf)
    try:
        subtrees = target_tree.flatten_up_to(xs)
    except (ValueError, TypeError) as e:
        raise ValueError(f"reshard out_shardings {out_shardings!r} is not a tree prefix of the "
                         f"arguments' structure {tree}: {e}") from None
    flat_targets = []
    for target, sub in zip(targets, subtrees, strict=True):
        if isinstance(target, PartitionSpec):
            mesh = get_mesh()
            if mesh.empty:
                raise ValueError("reshard with a PartitionSpec requires a mesh: use "
                                 "`jax.set_mesh(mesh)` or pass a NamedSharding")
            target = NamedSharding(mesh, target)
        if not isinstance(target, Sharding):
            raise TypeError(f"reshard out_shardings must be Shardings or PartitionSpecs, got "
                            f"{target!r} of type {type(target)}")
        flat_targets.extend([target] * len(tree_flatten(sub)[0]))
    out = []
    for x, target in zip(leaves, flat_targets, strict=True):
        shape = x.shape if hasattr(x, "shape") else get_aval(x).shape
        if isinstance(target, NamedSharding):
            require_explicit_axes(target, "reshard")
            target.check_compatible_shape(shape)
            if isinstance(x, Tracer):  # JAX's reshard primitive: the type takes the split
                mesh = get_mesh()
                out.append(reshard_p.bind(x, dst_sharding=target,
                                          concrete_mesh=None if mesh.empty else mesh))
                continue
            if isinstance(target.mesh, AbstractMesh):
                mesh = _context_mesh_for(target, shape)
                if mesh is None:  # nothing split and no mesh to place on: as it is (JAX's)
                    out.append(x)
                    continue
                target = NamedSharding(mesh, target.spec)
            target = spelled_as_typed(target, len(shape))  # P('x', None), as JAX's
        out.append(device_put(x, target))
    return tree_unflatten(tree, out)


def _context_mesh_for(sharding, shape):
    """The mesh set with ``set_mesh`` that ``sharding``'s AbstractMesh stands for (an eager
    reshard places values on devices); None when there is none and ``sharding`` splits
    nothing, else a ValueError."""
    mesh = concrete_mesh_for(sharding.mesh)
    if mesh is None:
        if not any(spec_names(entry) for entry in sharding.spec.partitions):
            return None
        raise ValueError(f"reshard of a value of shape {tuple(shape)} onto a sharding over "
                         f"{sharding.mesh}: its devices are those of the mesh set with "
                         "`jax.set_mesh`, and no such mesh is set. Enter `jax.set_mesh(mesh)`"
                         " or pass a NamedSharding over a concrete Mesh.")
    return mesh


# -- pmap --

_PMAP_AXIS = "_internal_pmap_axis_name"


def _index_tuple(argnums) -> tuple:
    if isinstance(argnums, int):
        return (argnums,)
    return tuple(argnums)


def pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None, donate_argnums=()):
    """Map ``fun`` over the leading (or ``in_axes``) axis of its arguments, one instance per
    device, with ``axis_name`` bound for collectives.

    As in JAX 0.10.2, this is ``jit`` of a ``shard_map`` over a one-axis mesh of the first
    ``size`` devices with ``check_vma=False``: an output with ``out_axes=None`` is the first
    instance's. xjax computes all instances on one device.

    Parameters
    ----------
    fun : callable
    axis_name : hashable, optional
    in_axes : int, None or pytree prefix of the positional arguments
        Keyword arguments are mapped over axis 0.
    out_axes : int, None or pytree prefix of the output
    static_broadcasted_argnums : int or sequence of int
        Positional arguments passed to ``fun`` as static Python values.
    devices : sequence of Device, optional
    backend : str, optional
    axis_size : int, optional
        Must equal the mapped size when given.
    donate_argnums : int or sequence of int
        Accepted; xjax does not donate here.

    Raises
    ------
    ValueError
        If the mapped size exceeds the number of devices, no argument is mapped, or
        ``axis_size`` disagrees.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.pmap(lambda x: x / xjax.lax.psum(x, 'i'), 'i')(jnp.array([1.]))
    Array([1.], dtype=float32)
    """
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    if devices is not None:
        if not devices:
            raise ValueError("'devices' argument to pmap must be non-empty, or None.")
        devices = tuple(devices)
    name = _PMAP_AXIS if axis_name is None else axis_name
    static = _index_tuple(static_broadcasted_argnums)
    if not all(type(leaf) is int for leaf in tree_flatten(in_axes)[0]):
        raise TypeError("pmap in_axes must be an int, None, or (nested) container with those "
                        f"types as leaves, but got {in_axes}.")
    if not all(type(leaf) is int for leaf in tree_flatten(out_axes)[0]):
        raise TypeError("pmap out_axes must be an int, None, or (nested) container with those "
                        f"types as leaves, but got {out_axes}.")

    def impl(*args, **kwargs):
        if static and max(static) >= len(args):
            raise ValueError(
                f"pmapped function has static_broadcasted_argnums={static} but was called "
                f"with only {len(args)} positional argument{'s' if len(args) > 1 else ''}. "
                "All static broadcasted arguments must be passed positionally.")
        dyn_idx = [i for i in range(len(args)) if i not in static]
        dyn_args = tuple(args[i] for i in dyn_idx)
        if static and isinstance(in_axes, tuple):
            dyn_in_axes = tuple(in_axes[i] for i in dyn_idx)
        else:
            dyn_in_axes = in_axes
        flat, in_tree = tree_flatten((dyn_args, kwargs))
        flat_axes = _flat_in_axes(dyn_in_axes, dyn_args, kwargs, len(flat))
        flat_axes = [_normalize_axis(x, a) for x, a in zip(flat, flat_axes, strict=True)]
        size = _mapped_size(flat, flat_axes)
        if axis_size is not None and axis_size != size:
            raise ValueError(f"Specified axis_size {axis_size} doesn't match received "
                             f"axis_size {size}.")
        mesh_devices = _mesh_devices(devices, backend, size)
        mesh = Mesh(mesh_devices, (name,), axis_types=(AxisType.Auto,))
        in_specs = tuple(_axis_spec(name, a) for a in flat_axes)

        def per_device(*xs):
            xs = [x if a is None else lax.squeeze(x, (a,))
                  for x, a in zip(xs, flat_axes, strict=True)]
            call_args, call_kwargs = tree_unflatten(in_tree, xs)
            full = list(args)
            for i, a in zip(dyn_idx, call_args, strict=True):
                full[i] = a
            out = fun(*full, **call_kwargs)
            out_flat, out_tree = tree_flatten(out)
            axes = _out_axes_flat(out_axes, out)
            out_flat = [o if a is None else lax.expand_dims(o, (a,))
                        for o, a in zip(out_flat, axes, strict=True)]
            specs_box.append(tuple(_axis_spec(name, a) for a in axes))
            tree_box.append(out_tree)
            return tuple(out_flat)

        specs_box, tree_box = [], []
        # the out specs depend on the output's structure, known once traced: a thunk
        outs = _shard_map(per_device, mesh=mesh, in_specs=in_specs,
                          out_specs=lambda: specs_box[-1], axis_names={name},
                          check_vma=False)(*flat)
        return tree_unflatten(tree_box[-1], list(outs))

    jitted = jit(impl, static_argnums=static)

    @wraps(fun)
    def pmapped(*args, **kwargs):
        return jitted(*args, **kwargs)

    # Ahead-of-time compilation, as JAX's pmapped functions offer it (their one attribute).
    pmapped.lower = jitted.lower
    return pmapped


def _normalize_axis(x, axis):
    return None if axis is None else normalize_mapped_axis(x, axis, "pmap")


def _axis_spec(name, axis):
    return PartitionSpec() if axis is None else PartitionSpec(*[None] * axis, name)


def _flat_in_axes(in_axes, dyn_args, kwargs, n):
    if isinstance(in_axes, tuple) and len(in_axes) != len(dyn_args):
        raise ValueError(f"pmap in_axes specification must be a tree prefix of the "
                         f"corresponding value, got specification {in_axes} for value tree "
                         f"{tree_flatten(dyn_args)[1]}.")
    axes = _broadcast_prefix(in_axes, dyn_args, "in_axes")
    return axes + [0] * (n - len(axes))


def _out_axes_flat(out_axes, out):
    return _broadcast_prefix(out_axes, out, "out_axes")


def _mapped_size(flat, axes):
    for x, a in zip(flat, axes, strict=True):
        if a is not None:
            return int(get_aval(x).shape[a])
    raise ValueError("pmap requires at least one argument with a mapped axis.")


def _mesh_devices(devices, backend, size):
    available = tuple(devices) if devices is not None else tuple(runtime.devices(backend))
    if size > len(available):
        raise ValueError(f"compiling computation that requires {size} logical devices, but "
                         f"only {len(available)} XLA devices are available "
                         f"(num_replicas={size})")
    return available[:size]


__all__ = ["NamedSharding", "P", "Shard", "make_mesh", "pmap", "reshard", "set_mesh",
           "shard_map", "smap"]
