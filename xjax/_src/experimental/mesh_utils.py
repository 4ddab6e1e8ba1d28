"""``xjax.experimental.mesh_utils``: device arrays for ``xjax.sharding.Mesh``.

JAX orders devices along physical torus axes on TPUs; xjax has one CPU device, so a
mesh is the device list reshaped (JAX's non-TPU, non-GPU path).
"""

from __future__ import annotations

import collections
import math

import numpy as np
from xjax._src import runtime
from xjax._src.api.devices import process_index

__all__ = ["create_device_mesh", "create_hybrid_device_mesh", "device_kind_handler_dict"]

# JAX maps TPU device kinds to topology-aware mesh builders; xjax has none.
device_kind_handler_dict: dict = {}


def _axis_sizes(mesh_shape):
    """``mesh_shape`` as a tuple of ints, or None when an entry is not convertible."""
    try:
        return tuple(int(s) for s in mesh_shape)
    except (TypeError, ValueError):
        return None


def _default_devices():
    return runtime.devices()


def create_device_mesh(mesh_shape, devices=None, *, contiguous_submeshes=False,
                       allow_split_physical_axes=False) -> np.ndarray:
    """An object array of devices of shape ``mesh_shape``, for ``xjax.sharding.Mesh``.

    Parameters
    ----------
    mesh_shape : sequence of int
        Logical mesh shape; its product must equal the number of devices.
    devices : sequence of Device, optional
        Defaults to ``xjax.devices()``.
    contiguous_submeshes, allow_split_physical_axes : bool
        Accepted for JAX compatibility; a flat device list needs neither.

    Raises
    ------
    ValueError
        If ``mesh_shape`` is not a sequence of ints, or its product differs from the number
        of devices.

    Examples
    --------
    >>> from xjax.experimental import mesh_utils
    >>> mesh_utils.create_device_mesh((1, 1)).shape
    (1, 1)
    """
    del contiguous_submeshes, allow_split_physical_axes
    if devices is None:
        devices = _default_devices()
    shape = _axis_sizes(mesh_shape)
    if shape is None:
        raise ValueError("`mesh_shape` passed to `create_device_mesh` should be a sequence of"
                         f" ints. Got {mesh_shape}")
    if math.prod(shape) != len(devices):
        raise ValueError(f"Number of devices {len(devices)} must equal the product "
                         f"of mesh_shape {shape}")
    grid = np.empty(len(devices), dtype=object)
    grid[:] = list(devices)
    return grid.reshape(shape)


def _granule_key(device, attr):
    if attr == "process_index" and not hasattr(device, attr):
        return process_index()  # xjax devices all belong to this process
    return getattr(device, attr)


def create_hybrid_device_mesh(mesh_shape, dcn_mesh_shape, devices=None, *,
                              process_is_granule=False, should_sort_granules_by_key=True,
                              allow_split_physical_axes=False) -> np.ndarray:
    """A device mesh for hybrid parallelism: ``mesh_shape`` within a granule (slice or
    process) times ``dcn_mesh_shape`` across granules, elementwise.

    Parameters
    ----------
    mesh_shape : sequence of int
        The mesh of each granule's devices.
    dcn_mesh_shape : sequence of int
        The mesh of granules, same rank as ``mesh_shape``.
    devices : sequence of Device, optional
        Defaults to ``xjax.devices()``.
    process_is_granule : bool
        Group devices by process instead of by ``slice_index`` (which CPU devices lack).
    should_sort_granules_by_key : bool
        Order granules by their key.

    Raises
    ------
    ValueError
        If devices lack the granule attribute (``slice_index`` without
        ``process_is_granule``), or the granule count or per-granule device count does not
        match the shapes.

    Examples
    --------
    >>> from xjax.experimental import mesh_utils
    >>> mesh_utils.create_hybrid_device_mesh((1,), (1,), process_is_granule=True).shape
    (1,)
    """
    if devices is None:
        devices = _default_devices()
    attr = "process_index" if process_is_granule else "slice_index"
    if attr == "slice_index" and not hasattr(devices[0], attr):
        raise ValueError(f"Device {devices[0]} does not have attribute {attr}. See"
                         " `process_is_granule` option.")
    groups = collections.defaultdict(list)
    for device in devices:
        groups[_granule_key(device, attr)].append(device)
    keys = sorted(groups) if should_sort_granules_by_key else list(groups)
    granules = [groups[k] for k in keys]
    if np.prod(dcn_mesh_shape) != len(granules):
        raise ValueError(f"Number of slices {len(granules)} must equal the product of "
                         f"dcn_mesh_shape {dcn_mesh_shape}")
    meshes = [create_device_mesh(mesh_shape, g,
                                 allow_split_physical_axes=allow_split_physical_axes)
              for g in granules]
    # Lay the per-granule meshes out as blocks of the dcn grid.
    order = np.arange(len(granules)).reshape(dcn_mesh_shape)
    blocks = np.empty(order.shape, dtype=object)
    for index, i in np.ndenumerate(order):
        blocks[index] = meshes[i]
    return np.block(blocks.tolist())
