"""``xjax.debug``: printing, logging and callbacks for debugging, eagerly and inside ``jit``.

``print``, ``log`` and ``callback`` go through the ``debug_callback`` primitive
(xjax/callback.py): eagerly it calls at once; under ``jit`` it is a host callback from the
compiled program (an XLA FFI custom call), so values print when the program runs, once per
call; under ``vmap`` once per batch element. NumPy's print options in effect where ``print``
or ``log`` is called are used to format the values, as in JAX.

``DebugEffect`` and ``OrderedDebugEffect`` are JAX's effect types, for code that names
them; xjax's jaxprs do not carry effect sets (side-effecting callbacks are ordered by
tokens when lowered), so nothing in xjax holds instances of them.
"""

from __future__ import annotations

import logging
import string
import sys

import numpy as np
from xjax._src.core import source_info
from xjax._src.higher_order.callbacks import debug_callback
from xjax._src.core.trace import Tracer
from xjax._src.runtime import default_device

logger = logging.getLogger("xjax.debug")


class DebugEffect:
    """JAX's effect of unordered debug callbacks (``str``: ``"Debug"``)."""

    __slots__ = ()

    def __str__(self):
        return "Debug"


class OrderedDebugEffect:
    """JAX's effect of ordered debug callbacks (``str``: ``"OrderedDebug"``)."""

    __slots__ = ()

    def __str__(self):
        return "OrderedDebug"


debug_effect = DebugEffect()
ordered_debug_effect = OrderedDebugEffect()


def _format_message(fmt, has_placeholders, printoptions, args, kwargs) -> str:
    if has_placeholders:
        if printoptions is None:
            return fmt.format(*args, **kwargs)
        with np.printoptions(**dict(printoptions)):
            return fmt.format(*args, **kwargs)
    return " ".join((fmt, *(str(a) for a in args)))


def _format_print(fmt, has_placeholders, *args, **kwargs):
    sys.stdout.write(_format_message(fmt, has_placeholders, None, args, kwargs) + "\n")


def _printoptions():
    """NumPy's current print options, hashable (None when some option is not)."""
    options = tuple(sorted(np.get_printoptions().items()))
    try:
        hash(options)
    except TypeError:  # e.g. a dict of formatters
        return None
    return options


class _PrintCallback:
    """``fmt`` as a hashable callback (so retracing reuses the compiled program)."""

    __slots__ = ("fmt", "has_placeholders", "printoptions")

    def __init__(self, fmt, has_placeholders, printoptions=None):
        self.fmt = fmt
        self.has_placeholders = has_placeholders
        self.printoptions = printoptions

    def _key(self):
        return (type(self), self.fmt, self.has_placeholders, self.printoptions)

    def __call__(self, *args, **kwargs):
        msg = _format_message(self.fmt, self.has_placeholders, self.printoptions, args, kwargs)
        sys.stdout.write(msg + "\n")

    def __eq__(self, other):
        return type(other) is type(self) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return f"print({self.fmt!r})"


class _LogCallback(_PrintCallback):
    """A ``log`` call: the message goes to the ``xjax.debug`` logger at INFO, as a record
    naming the file and line of the user's call."""

    __slots__ = ("pathname", "lineno")

    def __init__(self, fmt, has_placeholders, printoptions, pathname, lineno):
        super().__init__(fmt, has_placeholders, printoptions)
        self.pathname = pathname
        self.lineno = lineno

    def _key(self):
        return super()._key() + (self.pathname, self.lineno)

    def __call__(self, *args, **kwargs):
        msg = _format_message(self.fmt, self.has_placeholders, self.printoptions, args, kwargs)
        # As JAX: the record is handed to the logger's handlers without the logger's level
        # check (a handler's own level still applies).
        logger.handle(logger.makeRecord(logger.name, logging.INFO, self.pathname,
                                        self.lineno, msg, (), None))

    def __repr__(self):
        return f"log({self.fmt!r})"


class _FormatChecker(string.Formatter):
    """JAX's check of ``print``/``log`` arguments: every argument is used by ``fmt``."""

    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused_args = [arg for i, arg in enumerate(args) if i not in used_args]
        unused_kwargs = [k for k in kwargs if k not in used_args]
        if unused_args:
            raise ValueError(
                f"Unused positional arguments to `jax.debug.print`: {unused_args}")
        if unused_kwargs:
            raise ValueError(
                f"Unused keyword arguments to `jax.debug.print`: {unused_kwargs}. "
                "You may be passing an f-string (i.e, `f\"{x}\"`) into "
                "`jax.debug.print` and instead should pass in a regular string.")


def _user_frame():
    """The file and line of the innermost caller outside xjax."""
    frame = source_info.user_frame()
    if frame is None:
        return "(unknown file)", 0
    return frame.f_code.co_filename, frame.f_lineno


def print(fmt: str | None = None, *args, ordered: bool = False,  # noqa: A001
          partitioned: bool = False, skip_format_check: bool = False, **kwargs):
    """Print ``fmt.format(*args, **kwargs)`` with array values, also from compiled code.

    Parameters
    ----------
    fmt : str
        A ``str.format`` string (not an f-string: formatting happens when the values are
        known). Without placeholders the values are appended, separated by spaces.
    *args, **kwargs
        Pytrees of arrays to format.
    ordered : bool
        Keep program order among ordered prints and callbacks (xjax keeps program order for
        all of them).
    partitioned, skip_format_check : bool
        Accepted for JAX's signature; without effect here.

    With ``fmt`` omitted, returns a print function with these options (JAX's two-call form,
    ``xjax.debug.print(ordered=True)("x = {}", x)``).

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.debug.print("x = {}", jnp.arange(3))
    x = [0 1 2]
    >>> @xjax.jit
    ... def f(x):
    ...     xjax.debug.print("x + 1 = {y}", y=x + 1)
    ...     return x
    >>> _ = f(jnp.arange(3))
    x + 1 = [1 2 3]
    """
    if fmt is None:
        def print_with_options(fmt, *args, **kwargs):
            return print(fmt, *args, ordered=ordered, **kwargs)
        return print_with_options
    has_placeholders = any(field is not None for _, field, _, _ in string.Formatter().parse(fmt))
    callback(_PrintCallback(fmt, has_placeholders, _printoptions()), *args, ordered=ordered,
             **kwargs)


def log(fmt: str | None = None, *args, ordered: bool = False, partitioned: bool = False,
        skip_format_check: bool = False, **kwargs):
    """Log ``fmt.format(*args, **kwargs)`` with array values at INFO level, also from
    compiled code.

    Like :func:`print`, but the message becomes a record of the ``xjax.debug`` logger,
    naming the file and line of this call (under ``jit``: the record is made when the
    program runs, with the place recorded when it was traced). As in JAX the record goes to
    the logger's handlers without the logger's own level check, so it shows wherever a
    handler is configured (``logging.basicConfig()``), whatever the root logger's level.

    Parameters
    ----------
    fmt : str
        A ``str.format`` string; every argument must be used by it (``ValueError``
        otherwise, JAX's check) unless ``skip_format_check``, in which case arguments with
        no placeholders are appended, separated by spaces.
    *args, **kwargs
        Pytrees of arrays to format.
    ordered, partitioned, skip_format_check : bool
        As for :func:`print`. With ``fmt`` omitted, returns a log function with these
        options (the two-call form).

    Examples
    --------
    >>> import logging, sys, xjax, xjax.numpy as jnp
    >>> handler = logging.StreamHandler(sys.stdout)
    >>> logging.getLogger("xjax.debug").addHandler(handler)
    >>> xjax.jit(lambda x: xjax.debug.log("x = {}", x))(jnp.arange(3))
    x = [0 1 2]
    >>> logging.getLogger("xjax.debug").removeHandler(handler)
    """
    def _log(fmt, *args, **kwargs):
        if not skip_format_check:
            _FormatChecker().format(fmt, *args, **kwargs)
        has_placeholders = False
        if fmt:
            _, field, *_ = next(iter(string.Formatter().parse(fmt)))
            has_placeholders = field is not None
        pathname, lineno = _user_frame()
        fun = _LogCallback(fmt, has_placeholders, _printoptions(), pathname, lineno)
        callback(fun, *args, ordered=ordered, **kwargs)

    if fmt is not None:
        _log(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError("debug_print received unexpected arguments in the two-call form:"
                        f" {args=} {kwargs=}")
    return _log


def callback(fun, *args, ordered: bool = False, partitioned: bool = False, **kwargs) -> None:
    """Call ``fun(*args, **kwargs)`` on the values of the arguments for its side effects,
    eagerly or from compiled code (its return value is ignored).

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.jit(lambda x: xjax.debug.callback(lambda v: print("got", v), x))(jnp.ones(2))
    got [1. 1.]
    """
    debug_callback(fun, *args, ordered=ordered, **kwargs)


def breakpoint(*, backend=None, filter_frames=True, num_frames=None, ordered=False,
               token=None, **kwargs):  # noqa: A001
    """Enter the Python debugger (eagerly only)."""
    import pdb
    pdb.set_trace()


def _sharding_devices(sharding):
    devices = getattr(sharding, "device_set", None)
    if devices is None:
        raise TypeError(f"visualize_sharding expects a Sharding (with a device_set), got "
                        f"{type(sharding).__name__}")
    return list(devices)


def visualize_sharding(shape, sharding, *, use_color: bool = True, scale: float = 1.0,
                       min_width: int = 9, max_width: int = 80, color_map=None) -> None:
    """Print a box diagram of which device holds which part of an array of ``shape``.

    Draws JAX's diagram (made there with ``rich``) as plain text: one box, scaled as JAX
    scales it, for an array on one device. Colour is not drawn (JAX draws none either when
    its output is not a terminal or matplotlib is missing), so ``use_color`` and
    ``color_map`` have no effect.

    Parameters
    ----------
    shape : sequence of int
        The array's shape, of 1 or 2 dimensions (``ValueError`` otherwise, as in JAX).
    sharding : Sharding
        Any object with a ``device_set``; more than one device raises
        ``NotImplementedError`` (xjax does not shard arrays across devices yet).
    scale, min_width, max_width : float, int, int
        The diagram's size, as in JAX.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.debug.visualize_array_sharding(jnp.ones(4))
    ┌───────┐
    │ CPU 0 │
    └───────┘
    """
    shape = tuple(shape)
    if len(shape) > 2 or len(shape) < 1:
        raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
    devices = _sharding_devices(sharding)
    if len(devices) != 1:
        raise NotImplementedError(
            f"xjax.debug.visualize_sharding: a sharding over {len(devices)} devices; xjax "
            "draws single-device shardings only.")
    _print_single_device_box(shape, devices[0], scale, min_width, max_width)


def _print_single_device_box(shape, device, scale, min_width, max_width):
    """JAX's layout (xjax's own code) for one block covering the whole array."""
    base_height = int(10 * scale)
    aspect_ratio = (shape[1] if len(shape) == 2 else 1) / shape[0]
    base_width = int(base_height * aspect_ratio)
    entry = f"{device.platform.upper()} {device.id}"
    width = min(max(int(base_width * 2.5), min_width), max_width)
    height = base_height if len(shape) == 2 else 1
    if len(entry) + 2 > max_width:
        raise NotImplementedError(
            f"xjax.debug.visualize_sharding: max_width={max_width} is too narrow for "
            f"{entry!r} (JAX's rich would wrap it)")
    left, remainder = divmod(width - len(entry) - 2, 2)
    right = left + remainder
    top, remainder = divmod(height - 2, 2)
    bottom = top + remainder
    left, right, top, bottom = (max(p, 0) for p in (left, right, top, bottom))
    inner = left + len(entry) + right
    blank = "│" + " " * inner + "│"
    lines = (["┌" + "─" * inner + "┐"] + [blank] * top
             + ["│" + " " * left + entry + " " * right + "│"] + [blank] * bottom
             + ["└" + "─" * inner + "┘"])
    sys.stdout.write("\n".join(lines) + "\n")


class _OneDevice:
    """The sharding of an array on one device (until ``xjax.sharding`` provides one)."""

    __slots__ = ("device_set",)

    def __init__(self, device):
        self.device_set = {device}


def _array_sharding(arr):
    sharding = getattr(arr, "sharding", None)
    if sharding is not None and getattr(sharding, "device_set", None) is not None:
        return sharding
    if isinstance(arr, Tracer):  # under jit: the device the program is compiled for
        return _OneDevice(default_device())
    return _OneDevice(next(iter(arr.devices())))


def visualize_array_sharding(arr, **kwargs) -> None:
    """Print :func:`visualize_sharding`'s diagram for ``arr``'s sharding (under ``jit``,
    when the function is traced; in JAX, when it is compiled).

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.debug.visualize_array_sharding(jnp.ones((8, 8)), scale=0.4)
    ┌────────┐
    │        │
    │ CPU 0  │
    │        │
    └────────┘
    """
    visualize_sharding(arr.shape, _array_sharding(arr), **kwargs)


def inspect_array_sharding(value, *, callback):
    callback(None)
