"""The abstract value of a mutable array reference (``jax.ref.AbstractRef``).

A ``Ref`` is typed by the array it holds (its *inner* aval); the Ref itself never reaches a
primitive (xjax discharges reads and writes into functional updates while tracing, see
docs/design-notes.md "Refs"), so this type lives beside ``ShapedArray`` for ``typeof``,
jit's cache keys and error messages only.

``Slice`` (what ``jax.ds`` makes) lives here too: both Ref indexing and ``jnp`` array
indexing accept it.
"""

from __future__ import annotations

import math

from xjax._src.core.avals import AbstractValue, ShapedArray
from xjax._src.core.trace import Tracer


class AbstractRef(AbstractValue):
    """The type of a :class:`xjax.ref.Ref`: the aval of the array it holds.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.typeof(xjax.new_ref(jnp.zeros(3)))
    Ref{float32[3]}
    """

    __slots__ = ("inner_aval", "memory_space", "kind")

    def __init__(self, inner_aval: ShapedArray, memory_space=None, kind=None):
        if not isinstance(inner_aval, ShapedArray):
            raise TypeError(f"AbstractRef holds a ShapedArray, got {inner_aval!r}")
        self.inner_aval = inner_aval
        self.memory_space = memory_space
        self.kind = kind

    shape = property(lambda self: self.inner_aval.shape)
    dtype = property(lambda self: self.inner_aval.dtype)
    weak_type = property(lambda self: self.inner_aval.weak_type)
    ndim = property(lambda self: len(self.inner_aval.shape))
    size = property(lambda self: math.prod(self.inner_aval.shape))

    def update(self, inner_aval=None, memory_space=None, kind=None) -> "AbstractRef":
        return AbstractRef(self.inner_aval if inner_aval is None else inner_aval,
                           self.memory_space if memory_space is None else memory_space,
                           self.kind if kind is None else kind)

    def str_short(self, short_dtypes: bool = False) -> str:
        inner = self.inner_aval.str_short(short_dtypes)
        if self.memory_space is not None:
            return f"Ref<{self.memory_space}>{{{inner}}}"
        return f"Ref{{{inner}}}"

    def __repr__(self) -> str:
        return self.str_short()

    __str__ = __repr__

    def __eq__(self, other) -> bool:
        return (type(other) is AbstractRef and self.inner_aval == other.inner_aval
                and self.memory_space == other.memory_space)

    def __hash__(self) -> int:
        return hash((AbstractRef, self.inner_aval, self.memory_space))


class Slice:
    """``ds(start, size, stride)``: ``size`` elements from ``start`` (which may be traced)
    every ``stride``. Static starts must keep the slice in range; traced starts are clamped.
    """

    __slots__ = ("start", "size", "stride")

    def __init__(self, start, size, stride: int = 1):
        if stride < 0:
            raise ValueError("`stride` must be >= 0.")
        self.start, self.size, self.stride = start, size, stride

    @property
    def is_dynamic_start(self) -> bool:
        return isinstance(self.start, Tracer)

    @property
    def is_dynamic_size(self) -> bool:
        return isinstance(self.size, Tracer)

    @classmethod
    def from_slice(cls, slc: slice, size: int) -> "Slice":
        start, stop, step = slc.indices(size)
        if step < 1:
            raise ValueError(f"slice must have a step >= 1 (found: {step})")
        return cls(start, len(range(start, stop, step)), step)

    def __eq__(self, other):
        return (type(other) is Slice and self.start is other.start or
                type(other) is Slice and _same(self.start, other.start)
                and self.size == other.size and self.stride == other.stride)

    def __hash__(self):
        return hash((Slice, self.size, self.stride))

    def __repr__(self):
        return f"Slice(start={self.start}, size={self.size}, stride={self.stride})"


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except Exception:
        return a is b


def is_ref(x) -> bool:
    """Whether ``x`` is a mutable array reference (its aval is an AbstractRef)."""
    return type(getattr(x, "aval", None)) is AbstractRef
