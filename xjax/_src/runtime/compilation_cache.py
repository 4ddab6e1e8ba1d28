"""A persistent compilation cache: compiled executables stored on disk, keyed by program.

Opt in with ``xjax.config.update("jax_compilation_cache_dir", path)`` (or the environment
variable ``JAX_COMPILATION_CACHE_DIR``), as in JAX. A later
process (or the same one after ``xjax.clear_caches()``) that compiles the same StableHLO
with the same options on the same plugin build loads the executable instead of compiling.

Key: SHA-256 of the StableHLO text, the CompileOptionsProto bytes, the plugin's version
string (distribution, PJRT C API, XLA and StableHLO versions, platform, client options), the
plugin file's identity (path, size, modification time), ``XLA_FLAGS``, and whatever the
caller adds (xjax passes its version and the relevant config flags).

Entry file (``<key>.xjaxexe``): a 64-byte header, then the payload that
``Executable.serialize()`` returned::

    magic b"XJAXEXE\\0" | format version u32 | compile time u32 | payload size u64 |
    SHA-256 of the payload (32 bytes) | first 8 bytes of the key

The compile time is in milliseconds (0: unknown, as in entries written before it was
recorded); a cache hit reports the compile time it saved to ``xjax.monitoring``.

A file whose magic, version, size, checksum or key does not match (truncated, corrupted,
written by another format, copied under another name), or that the plugin refuses to
deserialize, is ignored with a ``UserWarning`` naming it, and the program is recompiled
and the entry rewritten. Entries are written atomically (a temporary file, then
``os.replace``), so concurrent writers and crashes never leave a partial entry under the
final name.

JAX's thresholds are honoured: ``jax_persistent_cache_min_compile_time_secs`` (default
1.0, as JAX: programs compiling faster are not written) and
``jax_persistent_cache_min_entry_size_bytes`` (default 0: entries smaller than this are not
written). They only decide what is written; every existing entry is read. There is no size
limit or eviction: delete the directory to reclaim space.

This module imports nothing of xjax (the runtime layer); ``xjax.interpreters.jit_call``
reads the config and calls :func:`compile_or_load`.
"""

from __future__ import annotations

import hashlib
import os
import struct
import tempfile
import time
import warnings

from . import client as _client_mod

__all__ = ["compile_or_load", "cache_key", "entry_path", "MAGIC", "FORMAT_VERSION"]

MAGIC = b"XJAXEXE\0"
FORMAT_VERSION = 1
_HEADER = struct.Struct("<8sIIQ32s8s")  # magic, version, compile ms, size, sha256, key prefix
HEADER_SIZE = _HEADER.size  # 64
SUFFIX = ".xjaxexe"


def _plugin_identity(client) -> str:
    path = getattr(client.plugin, "path", "") or ""
    try:
        st = os.stat(path)
        return f"{path}:{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        return path


def cache_key(client, mlir_text: str | bytes, options: bytes, extra: str = "") -> str:
    """The hex SHA-256 naming a program's entry (see the module docstring for its parts)."""
    h = hashlib.sha256()
    text = mlir_text.encode() if isinstance(mlir_text, str) else mlir_text
    for part in (b"xjax-compilation-cache", str(FORMAT_VERSION).encode(), text, options,
                 client.plugin_version.encode(), _plugin_identity(client).encode(),
                 os.environ.get("XLA_FLAGS", "").encode(), extra.encode()):
        h.update(struct.pack("<Q", len(part)))
        h.update(part)
    return h.hexdigest()


def entry_path(cache_dir: str, key: str) -> str:
    return os.path.join(os.fspath(cache_dir), key + SUFFIX)


def _read_entry(path: str, key: str, compile_ms: list | None = None) -> bytes | None:
    """The payload of a valid entry; None if absent; warns and returns None if invalid.
    Appends the entry's recorded compile time (milliseconds) to ``compile_ms`` if given."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    except OSError as e:
        _warn(path, f"cannot be read ({e})")
        return None
    if len(data) < HEADER_SIZE:
        _warn(path, "is truncated (shorter than its header)")
        return None
    magic, version, ms, size, digest, key_prefix = _HEADER.unpack_from(data)
    if magic != MAGIC:
        _warn(path, "is not an xjax cache entry (bad magic)")
        return None
    if version != FORMAT_VERSION:
        _warn(path, f"has format version {version}, expected {FORMAT_VERSION}")
        return None
    payload = data[HEADER_SIZE:]
    if len(payload) != size:
        _warn(path, f"is truncated or padded ({len(payload)} payload bytes, header says "
                    f"{size})")
        return None
    if hashlib.sha256(payload).digest() != digest:
        _warn(path, "is corrupt (checksum mismatch)")
        return None
    if key_prefix != bytes.fromhex(key)[:8]:
        _warn(path, "belongs to another program (key mismatch)")
        return None
    if compile_ms is not None:
        compile_ms.append(ms)
    return payload


def _warn(path: str, why: str) -> None:
    warnings.warn(f"xjax compilation cache: ignoring entry {path}: it {why}; recompiling.",
                  UserWarning, stacklevel=4)


def _write_entry(cache_dir: str, path: str, key: str, payload: bytes,
                 compile_ms: int = 0) -> bool:
    """Write an entry atomically; False (with a warning) if it could not be written."""
    header = _HEADER.pack(MAGIC, FORMAT_VERSION, min(compile_ms, 0xFFFFFFFF), len(payload),
                          hashlib.sha256(payload).digest(), bytes.fromhex(key)[:8])
    tmp = None
    try:
        os.makedirs(cache_dir, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=SUFFIX, dir=cache_dir)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide entries from other users
        with os.fdopen(fd, "wb") as f:
            f.write(header)
            f.write(payload)
        os.replace(tmp, path)
        tmp = None
        return True
    except OSError as e:
        warnings.warn(f"xjax compilation cache: could not write {path}: {e}", UserWarning,
                      stacklevel=4)
        return False
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def compile_or_load(client, mlir_text: str | bytes, cache_dir, *, device=None,
                    extra_key: str = "", min_compile_time_secs: float = 1.0,
                    min_entry_size_bytes: int = 0, monitor=None, compiler_options=None):
    """Load the executable for ``mlir_text`` from ``cache_dir``, or compile and store it.

    Parameters
    ----------
    client : xjax.runtime.Client
        The client to compile with and load into.
    mlir_text : str or bytes
        The StableHLO module.
    cache_dir : str or os.PathLike
        The cache directory (created when first written).
    device : Device, optional
        The device to compile for (default: the client's first).
    extra_key : str
        More text the key depends on (the caller's version and semantic flags).
    min_compile_time_secs, min_entry_size_bytes : float, int
        Entries of programs that compiled faster, or that are smaller, are not written.
    monitor : module, optional
        Where to record JAX's cache events (``xjax.monitoring``, passed by the caller so
        that this layer imports nothing of xjax): ``cache_hits``,
        ``compile_time_saved_sec`` and ``cache_retrieval_time_sec`` on a hit,
        ``cache_misses`` when an entry is written.
    compiler_options : dict, optional
        XLA options by name; they are part of the key.

    Returns
    -------
    Executable

    Examples
    --------
    >>> import tempfile
    >>> from xjax.runtime import get_client
    >>> from xjax.runtime.compilation_cache import compile_or_load
    >>> text = '''module @m {
    ...   func.func public @main(%a: tensor<2xf32>) -> (tensor<2xf32>) {
    ...     return %a : tensor<2xf32>
    ...   }
    ... }'''
    >>> d = tempfile.mkdtemp()
    >>> exe = compile_or_load(get_client(), text, d, min_compile_time_secs=0)
    >>> exe2 = compile_or_load(get_client(), text, d)  # loaded from disk
    >>> exe2.num_outputs
    1
    """
    device_id = None
    if device is not None and device is not client.devices[0]:
        device_id = device.id
    options = _client_mod.compile_options(device_id, compiler_options)
    key = cache_key(client, mlir_text, options, extra_key)
    cache_dir = os.fspath(cache_dir)
    path = entry_path(cache_dir, key)
    read_start = time.monotonic()
    compile_ms = []
    payload = _read_entry(path, key, compile_ms)
    if payload is not None:
        try:
            executable = client.deserialize_executable(payload, options)
            if monitor is not None:
                _record_hit(monitor, compile_ms[0], time.monotonic() - read_start)
            return executable
        except Exception as e:  # a plugin that refuses it: recompile, rewrite
            _warn(path, f"could not be loaded by the plugin ({type(e).__name__}: {e})")
    start = time.perf_counter()
    executable = client.compile(mlir_text, device, compiler_options=compiler_options)
    elapsed = time.perf_counter() - start
    if elapsed >= min_compile_time_secs:
        try:
            data = executable.serialize()
        except NotImplementedError:
            return executable
        if len(data) >= min_entry_size_bytes:
            written = _write_entry(cache_dir, path, key, data, round(elapsed * 1000))
            if written and monitor is not None:
                monitor.record_event("/jax/compilation_cache/cache_misses")
    return executable


def _record_hit(monitor, compile_ms: int, retrieval_secs: float) -> None:
    monitor.record_event("/jax/compilation_cache/cache_hits")
    if compile_ms:  # unknown (0) in entries written before compile times were recorded
        monitor.record_event_duration_secs("/jax/compilation_cache/compile_time_saved_sec",
                                           compile_ms / 1000 - retrieval_secs)
    monitor.record_event_duration_secs("/jax/compilation_cache/cache_retrieval_time_sec",
                                       retrieval_secs)
