"""The ``out_sharding`` argument of array-producing functions (``jnp.zeros``, ``jnp.dot``,
``jnp.reshape``, ``lax.conv_general_dilated``, ...), checked as JAX checks it: a
``PartitionSpec`` names the mesh set with ``set_mesh``, and the axes it splits over must be
Explicit (JAX's ValueError otherwise). A valid ``out_sharding`` changes no value, only how
the result is laid out over devices (and its type).
"""

from __future__ import annotations

from xjax._src.core.sharding_types import (AxisType, NamedSharding, PartitionSpec, get_mesh,
                                           spec_names)

__all__ = ["check_out_sharding", "require_explicit_axes"]


def check_out_sharding(out_sharding, api_name: str):
    """``out_sharding`` as a ``NamedSharding`` (a ``PartitionSpec`` is taken over the mesh
    set with ``set_mesh``), or None.

    Raises
    ------
    TypeError
        For anything but a ``NamedSharding``, a ``PartitionSpec`` or None.
    ValueError
        For a ``PartitionSpec`` outside a mesh context.
    """
    if out_sharding is None or isinstance(out_sharding, NamedSharding):
        return out_sharding
    if isinstance(out_sharding, PartitionSpec):
        mesh = get_mesh()
        if mesh.empty:
            raise ValueError(
                "Using PartitionSpec when you are not under a mesh context is not allowed. "
                "Please pass a NamedSharding instance or enter into a mesh context via "
                f"`jax.set_mesh`. Got {out_sharding}")
        return NamedSharding(mesh, out_sharding)
    raise TypeError(f"`out_sharding` argument of {api_name} only supports instances of "
                    f"`NamedSharding` or `PartitionSpec`. Got {out_sharding} of type: "
                    f"{type(out_sharding)}")


def require_explicit_axes(sharding: NamedSharding, api_name: str) -> None:
    """JAX's ValueError for a sharding whose spec splits over an Auto or Manual mesh axis,
    which ``api_name`` (a function that types its result by the spec) cannot take."""
    types = dict(zip(sharding.mesh.axis_names, sharding.mesh.axis_types, strict=True))
    for entry in sharding.spec:
        for axis in spec_names(entry):
            if types.get(axis, AxisType.Explicit) is not AxisType.Explicit:
                raise ValueError(
                    f"PartitionSpec passed to {api_name} cannot contain axis names that are "
                    f"of type Auto or Manual. Got PartitionSpec: {sharding.spec} with axis "
                    f"name: {axis} of type: {types[axis]}.")
