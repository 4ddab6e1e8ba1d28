"""xjax's runtime layer: PJRT clients, devices, buffers, compilation and execution.

Knows nothing of jaxprs; imports nothing of xjax. See `client.py`.
"""

from .client import (
    Client,
    Device,
    DeviceBuffer,
    Executable,
    XlaRuntimeError,
    compile_options,
    default_backend,
    default_client,
    default_device,
    devices,
    get_client,
    plugin_version,
)

__all__ = [
    "Client",
    "Device",
    "DeviceBuffer",
    "Executable",
    "XlaRuntimeError",
    "compile_options",
    "default_backend",
    "default_client",
    "default_device",
    "devices",
    "get_client",
    "plugin_version",
]
