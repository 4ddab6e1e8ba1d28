"""``vectorize`` (NumPy's generalized-ufunc signatures, implemented with ``vmap``) and the
``ufunc`` class of ``frompyfunc``: a scalar function with NumPy's ufunc methods
(``outer``, ``reduce``, ``accumulate``, ``at``, ``reduceat``) built from ``vmap`` and
``lax.scan``.

``vmap`` sits above the numpy layer, so it is imported when a vectorized function runs.
"""

from __future__ import annotations

import functools
import re

import numpy as np

from xjax._src import higher_order as control_flow
import xjax._src.numpy as jnp
from xjax._src.numpy._promotion import aval_of, canonicalize_axis, check_arraylike, to_jax
from xjax._src.transformations.vmap import vmap

_DIMENSION = r"\w+"
_CORE_DIMENSIONS = rf"(?:{_DIMENSION}(?:,{_DIMENSION})*)?"
_ARGUMENT = rf"\({_CORE_DIMENSIONS}\)"
_ARGUMENT_LIST = rf"{_ARGUMENT}(?:,{_ARGUMENT})*"
_SIGNATURE = rf"^{_ARGUMENT_LIST}->{_ARGUMENT_LIST}$"


def _shape(x):
    return tuple(aval_of(x).shape)


def _vmap(fun, **kwargs):
    return vmap(fun, **kwargs)


def _parse_signature(signature: str):
    """``([core dims per input], [core dims per output])`` of a gufunc signature such as
    ``'(n,m),(m)->(n)'``."""
    signature = re.sub(r"\s+", "", signature)
    if not re.match(_SIGNATURE, signature):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    inputs, outputs = signature.split("->")

    def parse(part):
        return [tuple(re.findall(_DIMENSION, arg)) for arg in re.findall(_ARGUMENT, part)]

    return parse(inputs), parse(outputs)


def _describe(excluded, signature):
    return f"on vectorized function with excluded={excluded!r} and signature={signature!r}"


def _core_sizes(args, input_core_dims, error_context):
    sizes = {}
    for arg, core in zip(args, input_core_dims, strict=True):
        shape = _shape(arg)
        if len(core) > len(shape):
            raise ValueError(f"input with shape {shape} does not have enough dimensions for "
                             f"all core dimensions {core} {error_context}")
        for name, size in zip(core, shape[len(shape) - len(core):], strict=True):
            if sizes.setdefault(name, size) != size:
                raise ValueError(f"inconsistent size for core dimension {name!r}: {size} vs "
                                 f"{sizes[name]} {error_context}")
    return sizes


def vectorize(pyfunc, *, excluded=frozenset(), signature: str | None = None):
    """``pyfunc`` applied elementwise over broadcast arguments (or over the loop
    dimensions of a gufunc ``signature`` such as ``'(n),(n)->()'``), by ``vmap``.

    Parameters
    ----------
    pyfunc : callable
    excluded : set of int or str
        Positional indices or keyword names passed through unvectorized (keyword
        arguments are always passed through).
    signature : str, optional

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> dot = jnp.vectorize(jnp.dot, signature='(n),(n)->()')
    >>> dot(jnp.ones((2, 3)), jnp.ones(3))
    Array([3., 3.], dtype=float32)
    """
    if any(not isinstance(e, (int, str)) for e in excluded):
        raise TypeError("jax.numpy.vectorize can only exclude integer or string arguments, "
                        f"but excluded={excluded!r}")
    excluded = frozenset(excluded)

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        static = {i: a for i, a in enumerate(args) if i in excluded}
        mapped_positions = [i for i in range(len(args)) if i not in excluded]
        mapped = [to_jax(args[i]) for i in mapped_positions]

        def call(*values):
            full = list(args)
            for i, v in zip(mapped_positions, values, strict=True):
                full[i] = v
            for i, v in static.items():
                full[i] = v
            return pyfunc(*full, **kwargs)

        if not mapped:
            return call()
        if signature is None:
            input_core, output_core = [()] * len(mapped), None
        else:
            input_core, output_core = _parse_signature(signature)
            if len(input_core) != len(mapped):
                raise TypeError(f"wrong number of positional arguments: expected "
                                f"{len(input_core)}, got {len(mapped)} "
                                f"{_describe(excluded, signature)}")
        _core_sizes(mapped, input_core, _describe(excluded, signature))
        loop_shapes = [_shape(a)[:len(_shape(a)) - len(c)] for a, c in
                       zip(mapped, input_core, strict=True)]
        loop_shape = jnp.broadcast_shapes(*loop_shapes)
        mapped = [jnp.broadcast_to(a, loop_shape + _shape(a)[len(s):])
                  for a, s in zip(mapped, loop_shapes, strict=True)]
        fun = call
        for _ in loop_shape:
            fun = _vmap(fun)
        out = fun(*mapped)
        if output_core is not None:
            outs = out if isinstance(out, tuple) else (out,)
            if len(outs) != len(output_core):
                raise ValueError(f"wrong number of output arguments: expected "
                                 f"{len(output_core)}, got {len(outs)} "
                                 f"{_describe(excluded, signature)}")
        return out

    return wrapped


class ufunc:
    """A universal function from a scalar Python function (``jnp.frompyfunc``): calls
    broadcast with ``vectorize``; ``outer``, ``reduce``, ``accumulate``, ``at`` and
    ``reduceat`` loop with ``vmap`` and ``lax.scan``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> add = jnp.frompyfunc(lambda a, b: a + b, 2, 1, identity=0)
    >>> add.reduce(jnp.arange(4))
    Array(6, dtype=int32)
    """

    def __init__(self, func, /, nin: int, nout: int, *, name: str | None = None,
                 nargs: int | None = None, identity=None):
        self._func = func
        self.nin = int(nin)
        self.nout = int(nout)
        self.nargs = int(nargs if nargs is not None else nin)
        self.identity = identity
        self.__name__ = name or getattr(func, "__name__", "ufunc")

    def __repr__(self) -> str:
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args, out=None, where=None):
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        if len(args) != self.nin:
            raise TypeError(f"{self} takes {self.nin} positional arguments, got {len(args)}")
        return vectorize(self._func)(*args)

    def _binary(self, method):
        if self.nin != 2 or self.nout != 1:
            raise ValueError(f"{method} only supported for binary ufuncs with a single "
                             f"output; got nin={self.nin}, nout={self.nout}")

    def outer(self, A, B, /):
        """``self(a, b)`` for every pair of elements: shape ``A.shape + B.shape``."""
        self._binary("outer")
        check_arraylike("outer", A, B)
        a, b = to_jax(A), to_jax(B)
        a = jnp.reshape(a, _shape(a) + (1,) * len(_shape(b)))
        return self(a, b)

    def _fold(self, moved, initial, emit):
        """Fold ``moved`` along its first axis from ``initial`` (or from its first
        element): the final value and, with ``emit``, every intermediate one."""
        if initial is None:
            if _shape(moved)[0] == 0:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} "
                                 "which has no identity")
            carry, rest = moved[0], moved[1:]
        else:
            carry = jnp.broadcast_to(jnp.asarray(initial, moved.dtype), _shape(moved)[1:])
            rest = moved

        def step(c, x):
            new = self(c, x)
            return new, (new if emit else None)

        return control_flow.scan(step, carry, rest)

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims: bool = False,
               initial=None, where=None):
        """Fold ``a`` along ``axis`` with this binary function (left to right)."""
        self._binary("reduce")
        if out is not None or where is not None:
            raise NotImplementedError(f"out/where arguments of {self}.reduce")
        check_arraylike(f"{self.__name__}.reduce", a)
        arr = to_jax(a)
        if dtype is not None:
            arr = arr.astype(dtype)
        if axis is None:
            arr, axis = jnp.ravel(arr), 0
            keep_shape = (1,) * len(_shape(to_jax(a)))
        else:
            axis = canonicalize_axis(axis, len(_shape(arr)))
            keep_shape = _shape(arr)[:axis] + (1,) + _shape(arr)[axis + 1:]
        if initial is None:
            initial = self.identity
        result, _ = self._fold(jnp.moveaxis(arr, axis, 0), initial, emit=False)
        return jnp.reshape(result, keep_shape) if keepdims else result

    def accumulate(self, a, axis: int = 0, dtype=None, out=None):
        """The running fold of ``a`` along ``axis``."""
        self._binary("accumulate")
        if out is not None:
            raise NotImplementedError(f"out argument of {self}.accumulate")
        check_arraylike(f"{self.__name__}.accumulate", a)
        arr = to_jax(a)
        if dtype is not None:
            arr = arr.astype(dtype)
        axis = canonicalize_axis(axis, len(_shape(arr)))
        moved = jnp.moveaxis(arr, axis, 0)
        if _shape(moved)[0] == 0:
            return arr
        _, stacked = self._fold(moved, None, emit=True)
        stacked = jnp.concatenate([moved[:1], stacked])
        return jnp.moveaxis(stacked, 0, axis)

    def at(self, a, indices, b=None, /, *, inplace: bool = True):
        """``a`` with ``a[indices] = self(a[indices], b)`` applied one index at a time (so
        repeated indices accumulate). Needs ``inplace=False``."""
        if inplace:
            raise NotImplementedError("jax.numpy.ufunc.at: inplace=True is not supported; "
                                      "pass inplace=False to get an updated array")
        arr = to_jax(a)
        index = jnp.ravel(to_jax(indices))
        n = _shape(index)[0]
        if self.nin == 2:
            values = jnp.broadcast_to(to_jax(b), (n,) + _shape(arr)[1:])
        elif self.nin == 1:
            values = jnp.zeros((n,))
        else:
            raise ValueError(f"at only supported for unary and binary ufuncs; got {self}")

        def step(current, item):
            i, v = item
            old = current[i]
            new = self(old, v) if self.nin == 2 else self(old)
            return current.at[i].set(new), None

        result, _ = control_flow.scan(step, arr, (index, values))
        return result

    def reduceat(self, a, indices, axis: int = 0, dtype=None, out=None):
        """Reductions over the slices between consecutive ``indices`` (which must be
        concrete)."""
        self._binary("reduceat")
        if out is not None:
            raise NotImplementedError(f"out argument of {self}.reduceat")
        arr = to_jax(a)
        axis = canonicalize_axis(axis, len(_shape(arr)))
        starts = np.asarray(indices)
        n = _shape(arr)[axis]
        pieces = []
        for k, start in enumerate(starts):
            stop = starts[k + 1] if k + 1 < len(starts) else n
            if stop <= start:
                pieces.append(jnp.take(arr, int(start), axis=axis))
            else:
                part = jnp.take(arr, jnp.arange(int(start), int(stop)), axis=axis)
                pieces.append(self.reduce(part, axis=axis, dtype=dtype))
        return jnp.stack(pieces, axis=axis)


def frompyfunc(func, /, nin: int, nout: int, *, identity=None):
    """A :class:`ufunc` from a scalar Python function."""
    return ufunc(func, nin, nout, identity=identity)


__all__ = ["vectorize", "ufunc", "frompyfunc"]
