"""The ``out_sharding`` argument of array-producing functions (``jnp.zeros``, ``jnp.dot``,
``jnp.reshape``, ``lax.conv_general_dilated``, ...), checked as JAX checks it.

xjax keeps every array whole on one device (see ``jit_shardings``), which is how JAX lays out
any sharding over a one-device mesh, so a valid ``out_sharding`` changes no value; a wrong
one raises JAX's error.
"""

from __future__ import annotations

from xjax._src.core.sharding_types import NamedSharding, PartitionSpec, get_mesh

__all__ = ["check_out_sharding"]


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
