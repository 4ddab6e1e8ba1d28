"""Global configuration flags, read on hot paths as plain attributes.

``xjax.config.update("jax_enable_x64", True)`` works as in JAX. Every flag is an attribute
of the single ``config`` object so a hot path reads it with one attribute lookup.
"""

from __future__ import annotations

import contextlib
import os

_DEFAULTS = {
    # 64-bit types are off by default: float64 requests become float32, int64 int32.
    "jax_enable_x64": False,
    # JAX 0.10's default Threefry mode.
    "jax_threefry_partitionable": True,
    # Run each eager primitive through its XLA lowering instead of its NumPy impl.
    "xjax_eager_via_xla": False,
    # Type-check every jaxpr built by staging (pytest turns this on).
    "xjax_check_jaxprs": False,
    # Persistent compilation cache (xjax/runtime/compilation_cache.py): off unless a
    # directory is set; JAX's thresholds decide which programs are written.
    "jax_compilation_cache_dir": None,
    "jax_enable_compilation_cache": True,
    "jax_persistent_cache_min_compile_time_secs": 1.0,
    "jax_persistent_cache_min_entry_size_bytes": 0,
    "jax_platforms": None,
    "jax_default_matmul_precision": None,
    "jax_numpy_rank_promotion": "allow",
    "jax_debug_nans": False,
    "jax_disable_jit": False,
}


# Flags whose initial value an environment variable sets, as in JAX (upper-cased name):
# ``JAX_COMPILATION_CACHE_DIR=/path python train.py``.
_FROM_ENVIRONMENT = {
    "jax_compilation_cache_dir": str,
    "jax_enable_compilation_cache": lambda v: v.strip().lower() in ("1", "true", "yes", "on"),
    "jax_persistent_cache_min_compile_time_secs": float,
    "jax_persistent_cache_min_entry_size_bytes": int,
}


def _environment_values() -> dict:
    values = {}
    for name, parse in _FROM_ENVIRONMENT.items():
        text = os.environ.get(name.upper())
        if text:
            try:
                values[name] = parse(text)
            except ValueError:
                raise ValueError(f"bad value {text!r} for environment variable "
                                 f"{name.upper()}") from None
    return values


class Config:
    """Holds the flags; change them with :meth:`update` so listeners hear of it."""

    def __init__(self):
        self.__dict__.update(_DEFAULTS)
        self.__dict__.update(_environment_values())
        self._listeners = []

    def update(self, name: str, value) -> None:
        """Set flag ``name`` to ``value``.

        Examples
        --------
        >>> import xjax
        >>> xjax.config.update("jax_enable_x64", False)
        """
        if name not in _DEFAULTS:
            raise AttributeError(f"Unrecognized config option: {name!r}. "
                                 f"Known options: {sorted(_DEFAULTS)}")
        self.__dict__[name] = value
        for listener in self._listeners:
            listener(name, value)

    def read(self, name: str):
        return self.__dict__[name]

    def add_listener(self, listener) -> None:
        self._listeners.append(listener)

    @contextlib.contextmanager
    def override(self, **flags):
        """Temporarily set flags, e.g. ``with config.override(jax_enable_x64=True):``."""
        old = {name: self.read(name) for name in flags}
        try:
            for name, value in flags.items():
                self.update(name, value)
            yield
        finally:
            for name, value in old.items():
                self.update(name, value)


config = Config()


def enable_x64(new_val: bool = True):
    """Context manager enabling (or disabling) 64-bit types, like ``jax.experimental.enable_x64``."""
    return config.override(jax_enable_x64=new_val)
