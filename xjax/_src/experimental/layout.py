"""``xjax.experimental.layout``: memory layouts of arrays, as ``jax.experimental.layout``.

xjax keeps every array in XLA's default (row-major) layout, so a :class:`Format` describes
and compares like JAX's, and :func:`with_layout_constraint` accepts the default layout only.
"""

from __future__ import annotations


class _AutoLayout:
    """Let the compiler choose the layout (``Layout.AUTO``)."""

    def __repr__(self):
        return "AUTO"


class Layout:
    """A memory layout: the order of dimensions from most to least major, and tiling.

    Examples
    --------
    >>> Layout((1, 0))
    Layout(major_to_minor=(1, 0), tiling=None, sub_byte_element_size_in_bits=0)
    """

    AUTO = _AutoLayout()
    __slots__ = ("major_to_minor", "tiling", "sub_byte_element_size_in_bits")

    def __init__(self, major_to_minor, tiling=None, sub_byte_element_size_in_bits: int = 0):
        self.major_to_minor = tuple(major_to_minor)
        self.tiling = None if tiling is None else tuple(tuple(t) for t in tiling)
        self.sub_byte_element_size_in_bits = sub_byte_element_size_in_bits

    def _key(self):
        return (self.major_to_minor, self.tiling, self.sub_byte_element_size_in_bits)

    def __eq__(self, other):
        return isinstance(other, Layout) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return (f"Layout(major_to_minor={self.major_to_minor}, tiling={self.tiling}, "
                f"sub_byte_element_size_in_bits={self.sub_byte_element_size_in_bits})")

    def is_default_for(self, ndim: int) -> bool:
        """Whether this is XLA's default (row-major, untiled) layout for rank ``ndim``."""
        return self.major_to_minor == tuple(range(ndim)) and not self.tiling


class Format:
    """A layout and a sharding together (either may be None).

    Raises
    ------
    ValueError
        For a concrete :class:`Layout` without a concrete sharding, as JAX.
    """

    __slots__ = ("layout", "sharding")

    def __init__(self, layout=None, sharding=None):
        if isinstance(layout, Layout) and sharding is None:
            raise ValueError(
                "Sharding has to be concrete when layout is of type "
                f"{type(layout)}. Please pass a `jax.sharding.NamedSharding` or "
                "`jax.sharding.SingleDeviceSharding` to the sharding argument. Got sharding "
                f"{sharding}")
        self.layout = layout
        self.sharding = sharding

    def __eq__(self, other):
        return isinstance(other, Format) and (self.layout, self.sharding) == \
            (other.layout, other.sharding)

    def __hash__(self):
        return hash((self.layout, self.sharding))

    def __repr__(self):
        return f"Format(layout={self.layout}, sharding={self.sharding})"


def with_layout_constraint(x, layouts):
    """``x`` with the given layouts: xjax holds arrays in the default layout only.

    Raises
    ------
    NotImplementedError
        For a layout other than the default (row-major) one.
    """
    leaves_ok = layouts is None or (isinstance(layouts, Layout) and
                                    layouts.is_default_for(len(getattr(x, "shape", ()))))
    if not leaves_ok:
        raise NotImplementedError("xjax keeps arrays in XLA's default row-major layout only; "
                                  f"with_layout_constraint({layouts}) is not supported")
    return x


__all__ = ["Format", "Layout", "with_layout_constraint"]
