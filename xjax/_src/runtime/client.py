"""PJRT clients, devices, buffers and executables: xjax's runtime layer.

One client per platform, created lazily. The hot paths (execute, transfers,
to_numpy) are in the C extension `_pjrt`; this module finds plugins, describes
devices and encodes compile options. It imports nothing of xjax.

Example
-------
>>> import numpy as np
>>> from xjax.runtime import get_client
>>> c = get_client("cpu")
>>> exe = c.compile('''
... module @m {
...   func.func public @main(%a: tensor<2xf32>) -> (tensor<2xf32>) {
...     %0 = "stablehlo.add"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
...     return %0 : tensor<2xf32>
...   }
... }''')
>>> exe.execute([np.array([1.0, 2.0], np.float32)])[0].to_numpy()
array([2., 4.], dtype=float32)
"""

from __future__ import annotations

import atexit
import ctypes
import glob
import importlib.metadata
import importlib.util
import logging
import os
import re
import struct
import tempfile
import threading

import numpy as np

from . import _dtypes, _pjrt

__all__ = [
    "Client",
    "Device",
    "DeviceBuffer",
    "Executable",
    "XlaRuntimeError",
    "default_backend",
    "default_client",
    "default_device",
    "devices",
    "get_client",
    "plugin_version",
]

# JAX's platform names for the plugins' own: CUDA and ROCm devices are JAX's "gpu".
_JAX_PLATFORM_NAMES = {"cuda": "gpu", "rocm": "gpu"}

# Set to 1 in tests: the "gpu" platform is a second client of the CPU plugin, named as
# the CUDA one, so that the paths for a non-CPU default backend (eager operations
# compiled on its device, transfers between clients, per-platform caches) run on
# machines without a GPU. Never a GPU's numbers or speed.
STAND_IN_GPU = "XJAX_STAND_IN_GPU"


def _standing_in() -> bool:
    return os.environ.get(STAND_IN_GPU) == "1"

XlaRuntimeError = _pjrt.XlaRuntimeError
DeviceBuffer = _pjrt.DeviceBuffer
Executable = _pjrt.Executable

_dtypes.configure()

# Numpy arguments of execute() at least this large are aliased by PJRT (zero-copy,
# when 64-byte aligned) instead of copied during the call. Measured on the CPU
# plugin: equal below 4 KiB, aliasing is ~2x faster from 4 KiB up. An aliased
# array is referenced until PJRT is done with it; it must not be mutated meanwhile.
ALIAS_THRESHOLD_BYTES = 4096
_pjrt.set_alias_threshold(ALIAS_THRESHOLD_BYTES)

# A wait for a result (block_until_ready, reading an array) polls it this long before
# sleeping. Waking a thread asleep on a futex costs 20-50 us on virtual machines, more
# than a whole small program runs (a jitted 64x64 matmul: 60 us with a sleeping wait,
# 11 us polling; JAX sleeps: 55 us); polls yield the core, so the plugin's workers keep
# it. 300 us covers mid-size programs too (a 1000-step scan: 190 -> 165 us); 1000 us
# slowed multi-threaded ones on 2 cores. XJAX_SPIN_WAIT_US sets it (0: sleep at once).
def _spin_wait_us() -> int:
    text = os.environ.get("XJAX_SPIN_WAIT_US", "300")
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"XJAX_SPIN_WAIT_US must be a whole number of microseconds >= 0 "
                         f"(0: sleep at once), got {text!r}")
    return value


SPIN_WAIT_US = _spin_wait_us()
_pjrt.set_spin_wait(SPIN_WAIT_US)


_process_index = [0]  # this process's index in a job (set by xjax.distributed.initialize)


def set_process_index(index: int) -> None:
    """Record this process's index in a job of several processes (0 when it ends)."""
    _process_index[0] = index


class Device:
    """A device of a platform: `platform`, `id`, `device_kind`, `local_hardware_id`,
    `process_index` (this process's); repr `CpuDevice(id=0)`."""

    __slots__ = ("platform", "id", "device_kind", "local_hardware_id", "_repr", "_client",
                 "_name")

    def __init__(self, client, platform, id, device_kind, description, local_hardware_id,
                 name=None):
        self._client = client
        self.platform = platform
        self._name = name or platform  # the plugin's platform name: str(device) is "cuda:0"
        self.id = id
        self.device_kind = device_kind
        self.local_hardware_id = local_hardware_id
        self._repr = description

    @property
    def client(self) -> Client:
        return self._client

    @property
    def process_index(self) -> int:
        """Index of the process the device belongs to: this process's (xjax lists only its
        own devices), 0 outside a job of several processes."""
        return _process_index[0]

    @property
    def host_id(self) -> int:
        """Deprecated in JAX in favour of ``process_index`` (the same value)."""
        return _process_index[0]

    @property
    def task_id(self) -> int:
        """Deprecated in JAX in favour of ``process_index`` (the same value)."""
        return _process_index[0]

    def __repr__(self) -> str:
        return self._repr

    def __str__(self) -> str:  # JAX's: the plugin's platform name and the id
        return f"{self._name}:{self.id}"

    def __eq__(self, other) -> bool:
        return self is other or (
            isinstance(other, Device) and (self.platform, self.id) == (other.platform, other.id)
        )

    def __hash__(self) -> int:
        return hash((self.platform, self.id))

    def __reduce__(self):
        return (_device_by_id, (self.platform, self.id))


def _device_by_id(platform: str, id: int) -> Device:
    for d in get_client(platform).devices:
        if d.id == id:
            return d
    raise ValueError(f"no {platform} device with id {id}")


# ---------------------------------------------------------------------------
# compile options: a CompileOptionsProto, written by hand (no protobuf dependency)


def _varint(n: int) -> bytes:
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, value) -> bytes:
    if isinstance(value, bytes):  # length-delimited
        return _varint(number << 3 | 2) + _varint(len(value)) + value
    return _varint(number << 3) + _varint(int(value))


def _option_override(name: str, value) -> bytes:
    """An OptionOverrideProto: string (1), bool (2), int64 (3) or double (4)."""
    if isinstance(value, (bool, np.bool_)):
        return _field(2, bool(value))
    if isinstance(value, (int, np.integer)):
        return _field(3, int(value))
    if isinstance(value, (float, np.floating)):
        return _varint(4 << 3 | 1) + struct.pack("<d", float(value))
    if isinstance(value, str):
        return _field(1, value.encode())
    raise TypeError(f"compiler option {name!r}: the value must be a str, bool, int or float, "
                    f"got {value!r} of type {type(value).__name__}")


def compile_options(device_id: int | None = None, overrides: dict | None = None, *,
                    partition_devices: tuple[int, ...] | None = None) -> bytes:
    """CompileOptionsProto bytes: one replica and one partition, optionally on `device_id`;
    or, with `partition_devices`, one partition per device id listed (XLA's SPMD
    partitioner, Shardy's form of the module's shardings).

    `executable_build_options` (3) = {num_replicas (4), num_partitions (5),
    use_spmd_partitioning (6), device_assignment (9): DeviceAssignmentProto{replica_count
    (1), computation_count (2), computation_devices (3): [{replica_device_ids (1): [id]}]
    (one per partition)}, use_shardy_partitioner (19)}.
    `overrides` (XLA options by name, as JAX's ``compiler_options``) go to
    `env_option_overrides` (7), a map of name (1) to OptionOverrideProto (2); XLA checks
    the names and values when compiling.
    """
    if partition_devices is not None:
        ids = [int(i) for i in partition_devices]
        build = _field(4, 1) + _field(5, len(ids)) + _field(6, 1)
        assignment = _field(1, 1) + _field(2, len(ids))
        for i in ids:
            assignment += _field(3, _field(1, i))
        build += _field(9, assignment) + _field(19, 1)
    else:
        build = _field(4, 1) + _field(5, 1)
        if device_id is not None:
            assignment = _field(1, 1) + _field(2, 1) + _field(3, _field(1, device_id))
            build += _field(9, assignment)
    out = _field(3, build)
    for name, value in (overrides or {}).items():
        out += _field(7, _field(1, str(name).encode()) + _field(2, _option_override(name,
                                                                                   value)))
    return out


# ---------------------------------------------------------------------------
# clients


class Client(_pjrt.Client):
    """A PJRT client for one platform (use `get_client`, which shares them).

    Attributes: `platform` (str), `devices` (tuple of Device), `plugin_version` (str).
    Methods: `compile(mlir_text, device=None) -> Executable`,
    `buffer_from_numpy(array, device=None, may_alias=False) -> DeviceBuffer`.
    """

    def __new__(cls, plugin, options=None, *, stand_in_for=None):
        return super().__new__(cls, plugin, options)

    def __init__(self, plugin, options=None, *, stand_in_for=None):
        # `stand_in_for`: the platform name ("cuda") a CPU client takes in tests of the
        # paths for several platforms on a machine without that device (XJAX_STAND_IN_GPU).
        name = stand_in_for or _pjrt.Client.platform.__get__(self)
        self._platform = _JAX_PLATFORM_NAMES.get(name, name)
        prefix = {"cpu": "Cpu", "cuda": "Cuda", "rocm": "Rocm"}.get(name, name.capitalize())
        devs = []
        for id_, kind, text, hw in self.device_info():
            text = None if stand_in_for else text
            devs.append(Device(self, self._platform, id_, kind,
                               text or f"{prefix}Device(id={id_})", hw, name))
        self.devices = tuple(devs)

    @property
    def platform(self) -> str:
        """JAX's name of the platform: "cpu", or "gpu" for the CUDA and ROCm plugins."""
        return self._platform

    def compile(self, mlir_text: str | bytes, device: Device | None = None, *,
                compiler_options: dict | None = None) -> Executable:
        """Compiles a StableHLO module (MLIR text or bytecode) for `device` (default: first).

        `compiler_options` are XLA options by name (``{"xla_cpu_enable_fast_math": True}``).
        Raises XlaRuntimeError with XLA's message (e.g. a parse error, an unknown option)
        on failure.
        """
        device_id = None
        if device is not None and device is not self.devices[0]:
            self._check_device(device)
            device_id = device.id
        return super().compile(mlir_text, compile_options(device_id, compiler_options))

    def compile_partitioned(self, mlir_text: str | bytes, devices, *,
                            compiler_options: dict | None = None) -> Executable:
        """Compiles a module with shardings (``mhlo.num_partitions``, ``sdy`` shardings)
        into one SPMD program partitioned over `devices`, run with
        ``Executable.execute_sharded`` (one argument list per device, in this order)."""
        for device in devices:
            self._check_device(device)
        return super().compile(mlir_text, compile_options(
            None, compiler_options,
            partition_devices=tuple(d.id for d in devices)))

    def _check_device(self, device) -> None:
        if device not in self.devices:
            raise ValueError(f"{device!r} is not a device of the {self.platform} client")

    def hlo_text(self, mlir_text: str | bytes) -> str:
        """The HLO text of a StableHLO module, as XLA converts it (before its passes).

        XLA dumps it while compiling the module once, into a temporary directory.
        """
        with tempfile.TemporaryDirectory(prefix="xjax-hlo-") as tmp:
            self.compile(mlir_text, compiler_options={
                "xla_dump_to": tmp, "xla_dump_hlo_as_text": True,
                "xla_dump_disable_metadata": True})
            found = sorted(glob.glob(os.path.join(tmp, "*.before_optimizations.txt")))
            if not found:
                raise NotImplementedError(f"the {self.platform} plugin dumped no HLO text")
            with open(found[0]) as f:
                return f.read()

    @property
    def plugin_version(self) -> str:
        return self._plugin_version

    def __repr__(self) -> str:
        return f"<xjax.runtime.Client platform={self.platform!r} devices={len(self.devices)}>"


def _find_plugin(platform: str) -> tuple[str, str]:
    """(path of the plugin .so, distribution name) for a platform, or raise."""
    env = os.environ.get(f"XJAX_PJRT_PLUGIN_{platform.upper()}")
    if env:
        return env, os.path.basename(env)
    if platform == "cpu":
        spec = importlib.util.find_spec("xla_plugins.xla_cpu_pjrt")
        if spec is None or not spec.submodule_search_locations:
            raise RuntimeError("the CPU backend needs `pip install xla-cpu-pjrt==0.0.1`")
        root = list(spec.submodule_search_locations)[0]
        return os.path.join(root, "xla_cpu_pjrt.so"), "xla-cpu-pjrt"
    if platform in ("gpu", "cuda"):
        if _standing_in():
            return _find_plugin("cpu")
        for mod, dist in (("jax_plugins.xla_cuda13", "jax-cuda13-pjrt"),
                          ("jax_plugins.xla_cuda12", "jax-cuda12-pjrt")):
            try:
                spec = importlib.util.find_spec(mod)
            except ModuleNotFoundError:
                spec = None
            if spec is not None and spec.submodule_search_locations:
                path = os.path.join(list(spec.submodule_search_locations)[0],
                                    "xla_cuda_plugin.so")
                if os.path.exists(path):
                    return path, dist
        raise RuntimeError('no CUDA PJRT plugin found (pip install -e ".[cuda13]", which '
                           "installs jax-cuda13-pjrt, or set XJAX_PJRT_PLUGIN_GPU to a "
                           "plugin's path)")
    raise RuntimeError(f"unknown platform {platform!r}")


# The CUDA libraries a CUDA 13 plugin opens at run time, by NVIDIA's wheel folders
# (site-packages/nvidia/<folder>/lib). The plugin's RPATH finds them beside it in the same
# site-packages; loading them first (as JAX does) also covers other layouts, such as the
# plugin in a user site and the libraries in the system's.
_CUDA13_LIBRARIES = {
    "cu13": ["libcudart.so.13", "libnvrtc.so.13", "libnvJitLink.so.13", "libcublasLt.so.13",
             "libcublas.so.13", "libcupti.so.13", "libcusparse.so.12", "libcusolver.so.12",
             "libcufft.so.12"],
    "cudnn": ["libcudnn.so.9"],
    "nccl": ["libnccl.so.2"],
    "nvshmem": ["libnvshmem_host.so.3"],
}


def _load_cuda_libraries() -> None:
    """Load NVIDIA's pip-installed CUDA libraries where they exist; a missing one is left
    for the plugin to report (or to find on the system's library path)."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return
    roots = list(spec.submodule_search_locations or []) if spec else []
    for folder, names in _CUDA13_LIBRARIES.items():
        for root in roots:
            for name in names:
                path = os.path.join(root, folder, "lib", name)
                if os.path.exists(path):
                    try:
                        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
                    except OSError:
                        pass  # the plugin names what it could not open


def _dist_version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


_clients: dict[str, Client] = {}
_failed: dict[str, Exception] = {}
_lock = threading.Lock()


_cpu_device_count: list[int] = []  # set by the jax_num_cpu_devices flag


def set_cpu_device_count(count: int) -> None:
    """The number of CPU devices the CPU client will have (-1: as the environment says).

    Raises
    ------
    RuntimeError
        Once the CPU client exists, as JAX does: the count is fixed when it is created.
    """
    if "cpu" in _clients:
        raise RuntimeError(
            "jax_num_cpu_devices config should be updated before backends are initialized "
            "i.e. before any JAX operation is executed. You should initialize this config "
            "immediately after `import jax`.")
    _cpu_device_count[:] = [count] if count >= 0 else []


def _client_options(platform: str) -> dict:
    """Client create options. On the CPU, one device unless asked for more (as JAX):
    the jax_num_cpu_devices flag, XJAX_NUM_CPU_DEVICES=N, or
    XLA_FLAGS=--xla_force_host_platform_device_count=N."""
    opts = {}
    if platform == "gpu" and _standing_in():
        opts["cpu_device_count"] = 1
    elif platform == "gpu":
        opts.update(_gpu_memory_options())
    elif platform == "cpu" and _cpu_device_count:
        opts["cpu_device_count"] = _cpu_device_count[0]
    elif platform == "cpu":
        count = os.environ.get("XJAX_NUM_CPU_DEVICES")
        m = re.search(r"--xla_force_host_platform_device_count=(\d+)",
                      os.environ.get("XLA_FLAGS", ""))
        opts["cpu_device_count"] = int(count) if count else int(m.group(1)) if m else 1
    return opts


def _gpu_memory_options() -> dict:
    """The GPU plugin's memory options from JAX's environment variables:
    XLA_PYTHON_CLIENT_PREALLOCATE=false (allocate as needed instead of 75% of the memory
    at start), XLA_PYTHON_CLIENT_MEM_FRACTION=.5 (the part preallocated) and
    XLA_PYTHON_CLIENT_ALLOCATOR=platform|bfc|cuda_async."""
    opts = {}
    preallocate = os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE", "")
    if preallocate:
        opts["preallocate"] = preallocate.lower() not in ("false", "0")
    fraction = (os.environ.get("XLA_CLIENT_MEM_FRACTION")
                or os.environ.get("XLA_PYTHON_CLIENT_MEM_FRACTION"))
    if fraction:
        opts["memory_fraction"] = float(fraction)
    allocator = os.environ.get("XLA_PYTHON_CLIENT_ALLOCATOR", "").lower()
    if allocator and allocator != "default":
        opts["allocator"] = allocator
    return opts


# XLA options xjax needs, unless the user's XLA_FLAGS already sets them:
# - the CPU compiler's fast min/max drops NaN, where JAX (and lax.max) propagate it;
# - the CPU plugin's XNNPACK kernels keep packed weights in a cache keyed by the buffer's
#   address, and serve them again when freed memory is reused for a new buffer with other
#   values: a matmul of a fresh array then reads an old one's numbers (tests/runtime/
#   test_memory_safety.py). Without XNNPACK, XLA's own kernels run (same speed in
#   benchmarks/run.py) and addresses carry no state between calls.
_DEFAULT_XLA_FLAGS = {"--xla_cpu_enable_fast_min_max": "false",
                      "--xla_cpu_use_xnnpack": "false"}


def _set_default_xla_flags() -> None:
    flags = os.environ.get("XLA_FLAGS", "")
    extra = [f"{k}={v}" for k, v in _DEFAULT_XLA_FLAGS.items() if k not in flags]
    if extra:
        os.environ["XLA_FLAGS"] = " ".join([flags, *extra]).strip()


def _unavailable(platform: str, error: Exception) -> str:
    """JAX's message for a backend that cannot be used (its reason appended)."""
    present = sorted(_clients) or ["cpu"]
    if platform == "gpu":
        return (f"Unknown backend: 'gpu' requested, but no platforms that are instances of gpu "
                f"are present. Platforms present are: {','.join(present)} ({error})")
    if platform == "tpu":
        return (f"Backend 'tpu' failed to initialize: {error}. Available backends are "
                f"{present}")
    return f"Unknown backend {platform}. Available backends are {present}"


def get_client(platform: str = "cpu") -> Client:
    """The (lazily created, shared) client for `platform` ("cpu", or "gpu" / "cuda")."""
    platform = "gpu" if platform == "cuda" else platform
    c = _clients.get(platform)
    if c is not None:
        return c
    with _lock:
        c = _clients.get(platform)
        if c is not None:
            return c
        if platform in _failed:
            raise RuntimeError(_unavailable(platform, _failed[platform])) from _failed[platform]
        try:
            path, dist = _find_plugin(platform)
            # XLA's INFO logs (e.g. "cpu_device_count set via create_options") would
            # go to stderr of every program; keep warnings and errors.
            os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
            _set_default_xla_flags()
            if dist == "jax-cuda13-pjrt":
                _load_cuda_libraries()
            plugin = _pjrt.load_plugin(path)
            options = _client_options(platform)
            stand_in = platform == "gpu" and _standing_in()
            c = Client(plugin, options, stand_in_for="cuda" if stand_in else None)
        except Exception as e:  # remember, so that probing stays cheap
            _failed[platform] = e
            raise RuntimeError(_unavailable(platform, e)) from e
        attrs = plugin.attributes()
        major, minor = plugin.api_version
        c._plugin_version = ";".join([
            f"{dist}={_dist_version(dist)}",
            f"pjrt_c_api={major}.{minor}",
            f"xla={attrs.get('xla_version', '?')}",
            f"stablehlo={attrs.get('stablehlo_current_version', '?')}",
            f"platform={c.platform} {c.platform_version}",
            f"options={sorted(options.items())}",
        ])
        _clients[platform] = c
        return c


@atexit.register
def _wait_for_runs() -> None:
    """At exit, wait for every computation still running (and release the host memory it
    reads) while the interpreter is alive: XLA's threads must not run while the process
    tears down, whether or not a client object survives to its finalizer."""
    for client in list(_clients.values()):
        client._wait_for_runs()


_platforms: list[str] = []  # the jax_platforms flag, when set in code or its variable
_default_device: list[Device] = []  # the default backend's first device, once chosen


_may_use_gpu: list[bool] = []  # may_use_gpu's guess, made once


def set_platforms(value: str | None) -> None:
    """The platforms to use, in order of preference (JAX's ``jax_platforms``: "cpu",
    "cuda,cpu"; None: every platform whose plugin is installed, then the CPU). Read when
    the default backend is first chosen; later changes have no effect, as in JAX."""
    _platforms[:] = [value] if value else []
    _may_use_gpu.clear()


def may_use_gpu() -> bool:
    """Whether the default backend is, or may turn out to be, a GPU: a guess that loads no
    plugin until the backend is chosen (paths that would compute on the host turn off)."""
    if _default_device:
        return _default_device[0].platform != "cpu"
    if not _may_use_gpu:
        order = _platform_order()
        _may_use_gpu.append(order[0] == "gpu" if order else gpu_plugin_installed())
    return _may_use_gpu[0]


def _platform_order() -> list[str]:
    """The platforms named by ``jax_platforms`` or XJAX_PLATFORMS ("cuda" read as "gpu")."""
    value = _platforms[0] if _platforms else os.environ.get("XJAX_PLATFORMS", "")
    return [_JAX_PLATFORM_NAMES.get(p, p) for p in
            (p.strip().lower() for p in value.split(",")) if p]


def gpu_plugin_installed() -> bool:
    """Whether a GPU plugin may be used (installed, named by XJAX_PJRT_PLUGIN_GPU, or the
    test stand-in), without loading it."""
    try:
        _find_plugin("gpu")  # also answers for XJAX_PJRT_PLUGIN_GPU and the stand-in
        return True
    except RuntimeError:
        return False


_default_override: list = []  # jax_default_device: a Device or a platform name


def set_default_device(value) -> None:
    """Where uncommitted arrays go and computations run (JAX's ``jax_default_device``): a
    Device, a platform name, or None for the default backend's first device."""
    _default_override[:] = [] if value is None else [value]


def default_device() -> Device:
    """The device uncommitted arrays go to and computations run on: ``jax_default_device``
    when set, else the default backend's first device."""
    if _default_override:
        value = _default_override[0]
        return get_client(value).devices[0] if isinstance(value, str) else value
    return _backend_device()


def _backend_device() -> Device:
    """The first device of the default backend (chosen once, on first use).

    Raises
    ------
    RuntimeError
        When a platform named by ``jax_platforms`` (or XJAX_PLATFORMS) cannot be used, with
        JAX's message and the plugin's reason.
    """
    if _default_device:
        return _default_device[0]
    order = _platform_order()
    if order:
        for platform in order:
            try:
                get_client(platform)
            except RuntimeError as error:
                reason = error.__cause__ or error
                raise RuntimeError(
                    f"Unable to initialize backend '{platform}': {reason} (you may need to "
                    "uninstall the failing plugin package, or set JAX_PLATFORMS=cpu to skip "
                    "this backend.)") from error
        platform = order[0]
    else:
        platform = "cpu"
        if gpu_plugin_installed():
            try:
                get_client("gpu")
                platform = "gpu"
            except RuntimeError as error:  # no driver, no GPU: JAX falls back to the CPU
                logging.getLogger("xjax").warning(
                    "Unable to initialize backend 'cuda': %s", error.__cause__ or error)
    device = get_client(platform).devices[0]
    _default_device[:] = [device]
    return device


def default_client() -> Client:
    """The client of the default device: where uncommitted arrays live and programs run."""
    return default_device().client


def default_backend() -> str:
    """The default backend's platform: "gpu" when a GPU plugin is installed and a GPU
    answers (unless ``jax_platforms`` says otherwise), else "cpu"."""
    return _backend_device().platform


def devices(platform: str | None = None) -> list[Device]:
    """The devices of `platform` (default: the default backend)."""
    client = get_client(platform) if platform else _backend_device().client
    return list(client.devices)


def plugin_version(platform: str | None = None) -> str:
    """A string identifying the plugin build, PJRT C API version and platform of
    `platform`'s client (default: the default backend's), for cache keys."""
    return (get_client(platform) if platform else _backend_device().client).plugin_version


# np.asarray(buffer) works through DeviceBuffer.__array__; keep numpy imported here
# so the C hooks it relies on are initialised before any buffer exists.
_ = np
