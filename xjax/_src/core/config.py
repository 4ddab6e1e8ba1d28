"""Global configuration flags, read on hot paths as plain attributes.

``xjax.config.update("jax_enable_x64", True)`` works as in JAX. Every flag is an attribute
of the single ``config`` object so a hot path reads it with one attribute lookup.

Each flag JAX exposes as a context manager (``jax.debug_nans``, ``jax.log_compiles``, ...) is
a :class:`State` here: ``with xjax.debug_infs(True):`` sets the flag for the block,
``xjax.debug_infs.value`` reads it. Unlike JAX, the value is process-wide, not thread-local:
hot paths read one plain attribute.

Besides the flags, :class:`Config` keeps *derived* attributes recomputed on every update so
hot paths test several flags at once: ``xjax_jit_context`` (the flags a traced jaxpr depends
on; part of ``jit``'s cache key), ``xjax_jit_checks`` (a jitted call must take the checked
path: ``disable_jit``, ``debug_nans``/``debug_infs``, ``no_execution``, a host-to-device
transfer guard) and ``xjax_eager_checks`` (eager primitives are checked).
"""

from __future__ import annotations

import contextlib
import enum
import functools
import itertools
import os
import sys

from xjax._src.runtime import client
from xjax._src.runtime.sharded import note_multi_device


class NumpyDtypePromotion(enum.StrEnum):
    """Values of ``jax_numpy_dtype_promotion``."""

    STANDARD = "standard"
    STRICT = "strict"


class LegacyPrngKeyState(enum.StrEnum):
    """Values of ``jax_legacy_prng_key``."""

    ALLOW = "allow"
    WARN = "warn"
    ERROR = "error"


_TRANSFER_GUARD_LEVELS = ["allow", "log", "disallow", "log_explicit", "disallow_explicit"]
_PRNG_IMPLS = ["threefry2x32", "threefry4x32", "rbg", "unsafe_rbg", "philox2x32", "philox4x32"]
_TRANSFER_GUARD_FLAGS = ("jax_transfer_guard_host_to_device",
                         "jax_transfer_guard_device_to_device",
                         "jax_transfer_guard_device_to_host")

_DEFAULTS = {
    # 64-bit types are off by default: float64 requests become float32, int64 int32.
    "jax_enable_x64": False,
    # JAX 0.10's default Threefry mode.
    "jax_threefry_partitionable": True,
    # Run each eager primitive through its XLA lowering instead of its NumPy impl.
    "xjax_eager_via_xla": False,
    # Type-check every jaxpr built by staging (pytest turns this on).
    "xjax_check_jaxprs": False,
    # Warn when a retrace finds changed globals/closure values that earlier compiled versions
    # froze, and when a loop body advances a captured Python iterator (core/purity.py).
    "xjax_purity_warnings": True,
    # Persistent compilation cache (xjax/runtime/compilation_cache.py): off unless a
    # directory is set; JAX's thresholds decide which programs are written.
    "jax_compilation_cache_dir": None,
    "jax_enable_compilation_cache": True,
    "jax_persistent_cache_min_compile_time_secs": 1.0,
    "jax_persistent_cache_min_entry_size_bytes": 0,
    "jax_platforms": None,
    # The device uncommitted arrays go to and computations run on: a Device, a platform
    # name ("cpu", "gpu"), or None (the default backend's first device).
    "jax_default_device": None,
    "jax_default_matmul_precision": None,
    "jax_numpy_rank_promotion": "allow",
    "jax_numpy_dtype_promotion": NumpyDtypePromotion.STANDARD,
    "jax_debug_nans": False,
    "jax_debug_infs": False,
    "jax_disable_jit": False,
    "jax_log_compiles": False,
    "jax_explain_cache_misses": False,
    # None means "allow" (JAX leaves the default to its guard library).
    "jax_transfer_guard": None,
    "jax_transfer_guard_host_to_device": None,
    "jax_transfer_guard_device_to_device": None,
    "jax_transfer_guard_device_to_host": None,
    "jax_check_tracer_leaks": False,
    "jax_enable_checks": False,
    "jax_debug_key_reuse": False,
    "jax_default_prng_impl": "threefry2x32",
    "jax_enable_custom_prng": False,
    "jax_legacy_prng_key": LegacyPrngKeyState.ALLOW,
    "jax_softmax_custom_jvp": False,
    "jax2tf_associative_scan_reductions": False,
    "jax_allow_f16_reductions": True,
    "jax_array_garbage_collection_guard": None,
    "jax_thread_guard": False,
    "jax_no_tracing": False,
    "jax_no_execution": False,
    "jax_auto_pcast": True,
    "jax_remove_size_one_mesh_axis_from_type": False,
    # How tracebacks through jax._src.traceback_util.api_boundary are filtered (libraries
    # register their files); xjax's own frames are not filtered.
    "jax_traceback_filtering": "auto",
    # CPU devices of the CPU client; -1: as XLA_FLAGS/XJAX_NUM_CPU_DEVICES say (else one).
    "jax_num_cpu_devices": -1,
    # The values of the contexts made by jax.make_user_context (part of jit's cache key).
    "xjax_user_contexts": (),
}


# Every JAX flag takes its initial value from the environment variable of its upper-cased
# name, as in JAX: ``JAX_ENABLE_X64=1 python train.py``.
_TRUE_WORDS = ("y", "yes", "t", "true", "on", "1")
_FALSE_WORDS = ("n", "no", "f", "false", "off", "0")


# xjax's own flags that also read an environment variable (XJAX_PURITY_WARNINGS=0).
_XJAX_ENVIRONMENT = ("xjax_purity_warnings", "xjax_eager_via_xla")


def _env_bool(text: str) -> bool:
    word = text.strip().lower()
    if word not in _TRUE_WORDS + _FALSE_WORDS:
        raise ValueError(f"invalid truth value {text!r}")
    return word in _TRUE_WORDS


def _env_parser(default):
    """How the text of an environment variable becomes a value of a flag like ``default``."""
    if isinstance(default, bool):
        return _env_bool
    if isinstance(default, int) and not isinstance(default, enum.Enum):
        return int
    if isinstance(default, float):
        return float
    return str


def _environment_values() -> dict:
    values = {}
    for name, default in _DEFAULTS.items():
        read = name.startswith("jax_") or name in _XJAX_ENVIRONMENT
        text = os.environ.get(name.upper()) if read else None
        if text:
            try:
                values[name] = _env_parser(default)(text)
            except ValueError:
                raise ValueError(f"bad value {text!r} for environment variable "
                                 f"{name.upper()}") from None
    return values


# -- parsing: JAX's validation of new values --

def _enum_parser(values):
    def parse(new_val):
        if type(new_val) is not str or new_val not in values:
            raise ValueError(f"new enum value must be in {values}, "
                             f"got {new_val} of type {type(new_val)}.")
        return new_val
    return parse


def _optional_enum_parser(values):
    def parse(new_val):
        if new_val is not None and (type(new_val) is not str or new_val not in values):
            raise ValueError(f"new enum value must be None or in {values}, "
                             f"got {new_val} of type {type(new_val)}.")
        return new_val
    return parse


def _enum_class_parser(enum_class):
    def parse(new_val):
        if isinstance(new_val, str):
            return enum_class(new_val)  # ValueError: "'x' is not a valid <class name>"
        if not isinstance(new_val, enum_class):
            raise TypeError(f"new enum value must be an instance of {enum_class}, got "
                            f"{new_val} of type {type(new_val)}.")
        return new_val
    return parse


# jax_default_matmul_precision's values, in JAX's order: the precision names, then the
# names of lax.DotAlgorithmPreset (lax/dot_algorithms.py).
_MATMUL_PRECISIONS = [
    "default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
    "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
    "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16",
    "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "BF16_BF16_F32_X9",
    "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64"]

_BOOL_FLAGS = ("jax_debug_nans", "jax_debug_infs", "jax_log_compiles",
               "jax_explain_cache_misses", "jax_check_tracer_leaks", "jax_enable_checks",
               "jax_debug_key_reuse", "jax_enable_custom_prng", "jax_softmax_custom_jvp",
               "jax2tf_associative_scan_reductions", "jax_allow_f16_reductions",
               "jax_thread_guard", "jax_no_tracing", "jax_no_execution", "jax_auto_pcast",
               "jax_remove_size_one_mesh_axis_from_type")

def _default_device_value(value):
    """jax_default_device's value: None, a device, or a platform name."""
    if value is None or isinstance(value, client.Device):
        return value
    if isinstance(value, str):
        return value.lower()
    raise ValueError(f"jax_default_device must be a Device, a platform name or None, "
                     f"got {value!r}")


_PARSERS = {name: bool for name in _BOOL_FLAGS}
_PARSERS.update({
    "jax_numpy_dtype_promotion": _enum_class_parser(NumpyDtypePromotion),
    "jax_numpy_rank_promotion": _enum_parser(["allow", "warn", "raise"]),
    "jax_legacy_prng_key": _enum_class_parser(LegacyPrngKeyState),
    "jax_default_prng_impl": _enum_parser(_PRNG_IMPLS),
    "jax_array_garbage_collection_guard": _optional_enum_parser(["allow", "log", "fatal"]),
    "jax_traceback_filtering": _enum_parser(["off", "tracebackhide", "remove_frames",
                                             "quiet_remove_frames", "auto"]),
    "jax_num_cpu_devices": int,
    "jax_default_matmul_precision": _optional_enum_parser(_MATMUL_PRECISIONS),
    "jax_default_device": _default_device_value,
    "jax_transfer_guard": _optional_enum_parser(_TRANSFER_GUARD_LEVELS),
    **{name: _optional_enum_parser(_TRANSFER_GUARD_LEVELS) for name in _TRANSFER_GUARD_FLAGS},
})

# Values JAX accepts whose effect xjax does not implement: name -> (accepted values, why).
_SUPPORTED_ONLY = {
    "jax_debug_key_reuse": ((False,), "xjax does not track the use of PRNG keys"),
    "jax_enable_custom_prng": ((False,), "xjax implements no custom PRNG upgrade: random "
                               "functions return keys of the kind they are given"),
    "jax_default_prng_impl": (("threefry2x32",), "xjax implements only the threefry2x32 "
                              "PRNG"),
    "jax_legacy_prng_key": (("allow",), "xjax.random does not check for legacy uint32 keys"),
    "jax_softmax_custom_jvp": ((False,), "xjax.nn.softmax implements JAX's default "
                               "(jax_softmax_custom_jvp=False) only"),
    "jax_auto_pcast": ((True,), "xjax's shard_map runs on vmap, where an operand that does "
                       "not vary over a manual axis is always broadcast against one that "
                       "does (an automatic pvary); it has no varying-manual-axes types to "
                       "reject the mix"),
}


def _check_supported(name, value):
    accepted, why = _SUPPORTED_ONLY[name]
    if not any(value is a or (type(a) is str and value == a) for a in accepted):
        raise NotImplementedError(f"{name}={value!r} is not supported by xjax: {why}. "
                                  f"Supported: {', '.join(map(repr, accepted))}.")


class Config:
    """Holds the flags; change them with :meth:`update` so listeners hear of it."""

    def __init__(self):
        self.__dict__.update(_DEFAULTS)
        self._listeners = []
        self._derive()
        for name, value in _environment_values().items():
            try:  # validated as a value set in code would be
                self.update(name, value)
            except (ValueError, TypeError, NotImplementedError) as error:
                raise type(error)(f"environment variable {name.upper()}: {error}") from None

    def update(self, name: str, value) -> None:
        """Set flag ``name`` to ``value`` (validated as JAX validates it).

        Raises
        ------
        AttributeError
            For an unknown flag.
        ValueError, TypeError
            For a value JAX rejects.
        NotImplementedError
            For a value JAX accepts whose effect xjax does not implement.

        Examples
        --------
        >>> import xjax
        >>> xjax.config.update("jax_enable_x64", False)
        """
        if name not in _DEFAULTS:
            raise AttributeError(f"Unrecognized config option: {name!r}. "
                                 f"Known options: {sorted(_DEFAULTS)}")
        parse = _PARSERS.get(name)
        if parse is not None:
            value = parse(value)
        if name in _SUPPORTED_ONLY:
            _check_supported(name, value)
        if name == "jax_num_cpu_devices":
            client.set_cpu_device_count(value)  # raises once the CPU client exists
        elif name == "jax_platforms":
            client.set_platforms(value)  # read when the default backend is chosen
        elif name == "jax_default_device":
            client.set_default_device(value)
            if value is not None:
                note_multi_device()  # eager operations look for their device from now on
        self.__dict__[name] = value
        if name == "jax_transfer_guard":  # a set-only flag that sets every direction
            for direction in _TRANSFER_GUARD_FLAGS:
                self.__dict__[direction] = value
        self._derive()
        for listener in self._listeners:
            listener(name, value)

    def _derive(self) -> None:
        d = self.__dict__
        d["xjax_jit_context"] = (d["jax_enable_x64"], d["jax_threefry_partitionable"],
                                 d["jax_numpy_dtype_promotion"], d["jax_allow_f16_reductions"],
                                 d["jax_default_matmul_precision"],
                                 d["jax_remove_size_one_mesh_axis_from_type"],
                                 d["xjax_user_contexts"], d["jax_default_device"])
        h2d = d["jax_transfer_guard_host_to_device"]
        guarded = any(d[f] not in (None, "allow") for f in _TRANSFER_GUARD_FLAGS)
        d["xjax_transfer_guards"] = guarded
        d["xjax_eager_checks"] = bool(d["jax_debug_nans"] or d["jax_debug_infs"]
                                      or d["jax_no_execution"] or h2d not in (None, "allow"))
        d["xjax_jit_checks"] = bool(d["jax_disable_jit"] or d["xjax_eager_checks"])
        # xjax.numpy's eager shortcuts (NumPy on whole arrays, no primitives) are off.
        # So are they where the default backend may be a GPU: arrays live there, and
        # every eager operation runs compiled on it.
        gpu = client.may_use_gpu()
        d["xjax_eager_slow"] = bool(d["xjax_eager_via_xla"] or d["xjax_eager_checks"] or gpu)
        if gpu:
            note_multi_device()  # eager operations look for their device from now on

    def read(self, name: str):
        return self.__dict__[name]

    @property
    def x64_enabled(self) -> bool:
        """``jax_enable_x64`` under JAX's older attribute name (libraries still read it)."""
        return self.jax_enable_x64

    def parse_flags_with_absl(self) -> None:
        """Set flags from ``--jax_<name>=<value>`` command-line arguments (those before a
        ``--``), and mark absl's flags as parsed when absl is installed, as JAX does (test
        files call this so absltest's ``--test_tmpdir`` and friends are readable).

        Examples
        --------
        >>> import sys, xjax
        >>> argv, sys.argv = sys.argv, ["train.py", "--jax_debug_nans=true"]
        >>> xjax.config.parse_flags_with_absl()
        >>> xjax.config.jax_debug_nans
        True
        >>> sys.argv = argv
        >>> xjax.config.update("jax_debug_nans", False)
        """
        arguments = itertools.takewhile(lambda a: a != "--", sys.argv[1:])
        for argument in arguments:
            if argument.startswith("--jax_"):
                name, _, text = argument[2:].partition("=")
                if name in _DEFAULTS:
                    self.update(name, _flag_value(name, text))
        try:  # absl is optional: only programs that use absltest have it
            import absl.flags
        except ImportError:
            return
        if not absl.flags.FLAGS.is_parsed():
            absl.flags.FLAGS([sys.argv[0] if sys.argv else ""], known_only=True)

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


def _flag_value(name: str, text: str):
    """A command-line flag's text as a value of the flag's type (``--jax_x`` alone: True)."""
    default = _DEFAULTS[name]
    if isinstance(default, bool) or (default is None and text.lower() in ("true", "false")):
        return text == "" or text.lower() in ("1", "true", "t", "yes", "y", "on")
    if isinstance(default, int) and not isinstance(default, enum.Enum):
        return int(text)
    if isinstance(default, float):
        return float(text)
    return text


config = Config()


class _NoDefault:
    def __repr__(self):
        return "<no default>"


no_default = _NoDefault()


class State:
    """A configuration flag as JAX exposes it: ``state(value)`` is a context manager (and a
    decorator) setting the flag inside; ``state.value`` reads it.

    Examples
    --------
    >>> import xjax
    >>> with xjax.debug_infs(True):
    ...     xjax.debug_infs.value
    True
    >>> xjax.config.jax_debug_infs
    False
    """

    def __init__(self, name: str, help: str, default_context_manager_value=no_default):
        self._name = name
        self.__name__ = name[4:] if name.startswith("jax_") else name
        self.__doc__ = f"Context manager for `{name}` config option.\n\n{help}"
        self._default_cm_value = default_context_manager_value

    @property
    def name(self) -> str:
        return self._name

    @property
    def value(self):
        return config.__dict__[self._name]

    def __bool__(self):
        raise TypeError("bool() not supported for instances of type 'State' "
                        "(did you mean to use 'State.value' instead?)")

    def __call__(self, new_val=no_default):
        if new_val is no_default:
            if self._default_cm_value is no_default:
                raise TypeError(f"Context manager for {self.__name__} config option requires "
                                "an argument representing the new value for the config "
                                "option.")
            new_val = self._default_cm_value
        parse = _PARSERS.get(self._name)
        if parse is not None:
            new_val = parse(new_val)  # a bad value fails here, as in JAX
        if self._name in _SUPPORTED_ONLY:
            _check_supported(self._name, new_val)
        return _StateContextManager(self._name, new_val)

    def __repr__(self):
        return f"<xjax State {self._name}={self.value!r}>"


class _StateContextManager:
    __slots__ = ("name", "new_val", "prev")

    def __init__(self, name, new_val):
        self.name = name
        self.new_val = new_val

    def __enter__(self):
        self.prev = config.read(self.name)
        config.update(self.name, self.new_val)

    def __exit__(self, *exc):
        config.update(self.name, self.prev)

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with _StateContextManager(self.name, self.new_val):
                return func(*args, **kwargs)
        return wrapper


def bool_state(name: str, help: str) -> State:
    """A boolean flag: ``state()`` with no argument sets it to True, as in JAX."""
    return State(name, help, default_context_manager_value=True)


def enable_x64(new_val: bool = True):
    """Context manager enabling (or disabling) 64-bit types (``jax.experimental.enable_x64``)."""
    return config.override(jax_enable_x64=new_val)
