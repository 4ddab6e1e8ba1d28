"""``xjax.debug``: printing and callbacks for debugging, eagerly and inside ``jit``.

Both go through the ``debug_callback`` primitive (xjax/callback.py): eagerly it calls at
once; under ``jit`` it is a host callback from the compiled program (an XLA FFI custom call),
so values print when the program runs, once per call; under ``vmap`` once per batch element.
"""

from __future__ import annotations

import string


def _format_print(fmt, has_placeholders, *args, **kwargs):
    if has_placeholders:
        msg = fmt.format(*args, **kwargs)
    else:
        msg = " ".join((fmt, *(str(a) for a in args)))
    import sys
    sys.stdout.write(msg + "\n")


class _PrintCallback:
    """``fmt`` as a hashable callback (so retracing reuses the compiled program)."""

    __slots__ = ("fmt", "has_placeholders")

    def __init__(self, fmt, has_placeholders):
        self.fmt = fmt
        self.has_placeholders = has_placeholders

    def __call__(self, *args, **kwargs):
        _format_print(self.fmt, self.has_placeholders, *args, **kwargs)

    def __eq__(self, other):
        return type(other) is _PrintCallback and (self.fmt, self.has_placeholders) == (
            other.fmt, other.has_placeholders)

    def __hash__(self):
        return hash((_PrintCallback, self.fmt, self.has_placeholders))

    def __repr__(self):
        return f"print({self.fmt!r})"


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
    callback(_PrintCallback(fmt, has_placeholders), *args, ordered=ordered, **kwargs)


def callback(fun, *args, ordered: bool = False, partitioned: bool = False, **kwargs) -> None:
    """Call ``fun(*args, **kwargs)`` on the values of the arguments for its side effects,
    eagerly or from compiled code (its return value is ignored).

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.jit(lambda x: xjax.debug.callback(lambda v: print("got", v), x))(jnp.ones(2))
    got [1. 1.]
    """
    from xjax.callback import debug_callback
    debug_callback(fun, *args, ordered=ordered, **kwargs)


def breakpoint(*, backend=None, filter_frames=True, num_frames=None, ordered=False,
               token=None, **kwargs):  # noqa: A001
    """Enter the Python debugger (eagerly only)."""
    import pdb
    pdb.set_trace()


def visualize_array_sharding(arr, **kwargs) -> None:
    import builtins
    builtins.print(f"{arr.shape} on {next(iter(arr.devices()))} (not sharded)")


def inspect_array_sharding(value, *, callback):
    callback(None)
