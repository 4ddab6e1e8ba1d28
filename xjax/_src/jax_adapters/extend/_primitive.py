"""``jax.extend.core.Primitive``: a primitive whose rules are attached after it is created.

xjax's own primitives (:class:`xjax.core.primitive.Primitive`) receive every rule when they
are defined. Programs written for JAX create a primitive by name and attach its rules one at
a time (``def_impl``, ``def_abstract_eval``, ``ad.primitive_jvps[p] = ...``,
``batching.primitive_batchers[p] = ...``, ``mlir.register_lowering(p, ...)``). This class
starts with placeholder rules that raise JAX's errors, and the ``def_*`` methods and the
registries of :mod:`xjax.interpreters.ad`, :mod:`~xjax.interpreters.batching` and
:mod:`~xjax.interpreters.mlir` replace them with rules in xjax's conventions.

Unlike xjax's primitives, these are not entered in ``xjax.core.primitive.registry``: JAX lets
several primitives share a name, and the registry is the table of lax's primitives.
"""

from __future__ import annotations

import numpy as np

from xjax._src.core import primitive as _primitive, trace as _trace
from xjax._src.core.array import Array, frozen_value
from xjax._src.core.avals import ShapedArray
from xjax._src.jax_adapters.interpreters_mlir import dispatching_lowering, has_lowering
from xjax._src.interpreters.eval import EvalTrace, concrete_operand, run_primitive_with_xla


def _missing(message: str):
    """A placeholder rule that raises ``NotImplementedError(message)`` when called."""

    def rule(*_args, **_params):
        raise NotImplementedError(message)
    rule.missing = True
    return rule


def is_missing(rule) -> bool:
    """Whether ``rule`` is a placeholder left by :class:`Primitive` (no rule given)."""
    return getattr(rule, "missing", False) is True


def _as_array(value):
    """A NumPy value as an xjax Array (what JAX's impl rules receive)."""
    if isinstance(value, Array):
        return value
    npy = frozen_value(np.asarray(value), value)
    return Array._from_numpy(npy, ShapedArray(npy.shape, npy.dtype, False))


def _to_numpy(value):
    return np.asarray(value)


def _check_aval(name: str, aval):
    if not isinstance(aval, ShapedArray):
        raise TypeError(f"abstract evaluation rule for '{name}' must return a ShapedArray "
                        f"(xjax.core.ShapedArray), got {aval!r}")
    return aval


class _AnyPrimitive(type):
    """``isinstance(p, jax.extend.core.Primitive)`` holds for every primitive, xjax's own
    (``lax.add_p``) included, as in JAX, where they are all of that class (Equinox's
    type-checked jaxpr passes test it)."""

    def __instancecheck__(cls, instance):
        return isinstance(instance, _primitive.Primitive) if cls is Primitive \
            else super().__instancecheck__(instance)


class Primitive(_primitive.Primitive, metaclass=_AnyPrimitive):
    """A named operation whose rules are attached after creation, as ``jax.extend.core.Primitive``.

    Parameters
    ----------
    name : str
        The name jaxprs print.

    Examples
    --------
    >>> import numpy as np
    >>> import xjax
    >>> from xjax.extend.core import Primitive
    >>> from xjax.core import ShapedArray
    >>> twice_p = Primitive("twice")
    >>> _ = twice_p.def_impl(lambda x: np.multiply(x, 2))
    >>> _ = twice_p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    >>> twice_p.bind(xjax.numpy.arange(3.0))
    Array([0., 2., 4.], dtype=float32)
    """

    # Class attributes, so that subclasses may set them as JAX's do (``multiple_results =
    # True`` in the class body); assigning on an instance shadows them.
    multiple_results = False
    call_primitive = False
    map_primitive = False
    # The jvp trace keeps what the user's jvp rule returns (a Python scalar stays one), as
    # JAX's does; xjax's own rules have their tangents made arrays.
    keeps_rule_values = True

    def __init__(self, name: str):
        if not isinstance(name, str):
            raise TypeError(f"Primitive name must be a str, got {name!r}")
        self.name = name
        self.hidden_params = ()
        self.abstract_eval = _missing(f"Abstract evaluation for '{name}' not implemented")
        self.impl = self._default_impl
        self.lower = dispatching_lowering(self)  # raises JAX's error until one is registered
        self.jvp = _missing(f"Differentiation rule for '{name}' not implemented")
        self.transpose = _missing(f"Transpose rule (for reverse-mode differentiation) for "
                                  f"'{name}' not implemented")
        self.batch = _missing(f"Batching rule for '{name}' not implemented")
        self.user_impl = None

    def __repr__(self) -> str:
        return self.name

    def bind(self, *args, **params):
        """Apply the primitive under the current trace. Evaluated eagerly without an
        abstract evaluation rule, it runs ``impl`` directly, as JAX does."""
        if is_missing(self.abstract_eval) and self.user_impl is not None:
            if type(_trace.ctx.trace) is EvalTrace:
                return self._eager_without_avals(args, params)
        return super().bind(*args, **params)

    def _eager_without_avals(self, args, params):
        operands = [Array._from_numpy(*concrete_operand(x)) for x in args]
        out = self.user_impl(*operands, **params)
        if self.multiple_results:
            return [Array._from_numpy(*concrete_operand(o)) for o in out]
        return Array._from_numpy(*concrete_operand(out))

    # -- rules --

    def def_impl(self, impl):
        """Set the eager rule: ``impl(*arrays, **params)`` returns an array (or a sequence
        of arrays with ``multiple_results``). It receives xjax Arrays and may return NumPy
        or xjax arrays. Returns ``impl``."""
        self.user_impl = impl
        return impl

    def def_abstract_eval(self, abstract_eval):
        """Set the shape rule: ``abstract_eval(*avals, **params)`` returns a ShapedArray (or a
        sequence of them with ``multiple_results``). Returns ``abstract_eval``."""
        name = self.name

        def rule(*avals, **params):
            out = abstract_eval(*avals, **params)
            if self.multiple_results:
                return [_check_aval(name, a) for a in out]
            return _check_aval(name, out)
        self.abstract_eval = rule
        return abstract_eval

    def def_effectful_abstract_eval(self, effectful_abstract_eval):
        """As :meth:`def_abstract_eval` for a rule returning ``(avals, effects)``. xjax has
        no user-defined effects: a non-empty effect set raises NotImplementedError when the
        rule runs."""
        name = self.name

        def plain(*avals, **params):
            out, effects = effectful_abstract_eval(*avals, **params)
            if effects:
                raise NotImplementedError(
                    f"primitive '{name}' declares effects {set(effects)}; xjax does not "
                    "support effects on primitives defined with jax.extend.core.Primitive")
            return out
        self.def_abstract_eval(plain)
        return effectful_abstract_eval

    def _default_impl(self, *values, **params):
        """The eager rule xjax's eval interpreter calls (NumPy in, NumPy out): the user's
        ``impl``, else the primitive compiled alone with its lowering, as JAX's
        ``dispatch.apply_primitive`` does.

        Called directly on xjax values (Arrays or tracers), as JAX code calls ``p.impl``
        to inline a primitive into the function being traced, it is the user's ``impl``
        itself: its result is returned unchanged, so tracers stay tracers."""
        if self.user_impl is not None and any(isinstance(v, (Array, _trace.Tracer))
                                              for v in values):
            return self.user_impl(*values, **params)
        if self.user_impl is not None:
            out = self.user_impl(*[_as_array(v) for v in values], **params)
            if self.multiple_results:
                return [_to_numpy(o) for o in out]
            return _to_numpy(out)
        if has_lowering(self):
            avals = [ShapedArray(np.shape(v), np.asarray(v).dtype, False) for v in values]
            outs = run_primitive_with_xla(self, list(values), avals, params)
            return outs if self.multiple_results else outs[0]
        raise NotImplementedError(f"Evaluation rule for '{self.name}' not implemented")
