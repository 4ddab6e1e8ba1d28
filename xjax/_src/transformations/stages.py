"""Ahead-of-time stages of a jitted function, under JAX's names (``jax.stages``).

``jit(f).trace(*args)`` gives a :class:`Traced` (the jaxpr), whose ``lower()`` gives a
:class:`Lowered` (the StableHLO module text), whose ``compile()`` gives a :class:`Compiled`
(an XLA executable, called with the same dynamic arguments). ``jit(f).lower(*args)`` is
``jit(f).trace(*args).lower()``. Every stage shares the trace of ``jit(f)``'s cache, so
``jit(f)(*args)`` after ``jit(f).lower(*args).compile()`` compiles nothing again.

Differences from JAX, stated:

- ``compiler_ir()`` (``dialect="stablehlo"``) needs MLIR's Python objects, which xjax does
  not have: it returns None (JAX's answer when unavailable; ``as_text()`` gives the text).
  ``compiler_ir("hlo")`` gives an :class:`HloModule` whose ``as_hlo_text()`` is the HLO
  text XLA converts the module to (XLA dumps it while compiling the module once); its
  printing differs from JAX's in names (``%Arg_0.1`` for ``x.1``).
- ``cost_analysis()`` is an estimate read from the jaxpr (xjax's runtime does not ask XLA):
  ``flops`` (2*M*N*K per contraction, one per element of other arithmetic, one per reduced
  element), ``transcendentals`` and ``bytes accessed`` (the program's inputs and outputs).
- ``memory_analysis()`` gives the argument, output and alias sizes, which the signature
  determines; the sizes only XLA knows (temporaries, generated code) are None.
- ``compile(compiler_options)`` passes the options to XLA (which rejects unknown names and
  bad values, as in JAX), except the four JAX sets on the build options
  (``exec_time_optimization_effort``, ``memory_fitting_effort``, ``optimization_level``,
  ``memory_fitting_level``), which raise NotImplementedError. A program compiled with
  options is not shared with ``jit(f)``'s cache.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol, Union

import numpy as np

from xjax._src.core.pytree import tree_flatten, tree_unflatten
from xjax._src.core.config import config
from xjax._src.core.jaxpr import ClosedJaxpr, Jaxpr
from xjax._src.higher_order.jit_call import (check_compiler_options, compile_closed_jaxpr,
                                             merge_options)
from xjax._src.lowering.lower_jaxpr import lower_module
from xjax._src.runtime import default_backend, default_client
from xjax._src.transformations import debug_flags as flag_checks
from xjax._src.transformations.jit import ShapeDtypeStruct, shaped_abstractify

__all__ = ["ArgInfo", "Compiled", "CompilerOptions", "HloModule", "Lowered", "Traced",
           "Wrapped"]

CompilerOptions = dict[str, Union[str, bool]]


class ArgInfo:
    """An argument's abstract value and whether the caller donates it."""

    __slots__ = ("_aval", "donated")

    def __init__(self, aval, donated: bool):
        self._aval = aval
        self.donated = bool(donated)

    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)

    def __eq__(self, other):
        return (isinstance(other, ArgInfo) and self._aval == other._aval
                and self.donated == other.donated)

    def __hash__(self):
        return hash((self._aval, self.donated))

    def __repr__(self):
        return f"ArgInfo(_aval={self._aval!r}, donated={self.donated})"


class CompiledMemoryStats(NamedTuple):
    """Sizes in bytes of a compiled program's memory (None where only XLA knows them)."""

    argument_size_in_bytes: int
    output_size_in_bytes: int
    alias_size_in_bytes: int
    temp_size_in_bytes: Any = None
    generated_code_size_in_bytes: Any = None


def _nbytes(aval) -> int:
    return int(np.prod(aval.shape, dtype=np.int64)) * np.dtype(aval.dtype).itemsize


class _Stage:
    """What every stage knows: the trace entry of ``jit(f)``'s cache, the name and the
    structure of the (dynamic) arguments."""

    __slots__ = ("_entry", "_name", "_in_tree")

    def __init__(self, entry, name: str, in_tree):
        self._entry = entry
        self._name = name
        self._in_tree = in_tree

    @property
    def in_tree(self):
        """The pytree structure of ``(args, kwargs)`` (dynamic arguments only)."""
        return self._in_tree

    @property
    def out_tree(self):
        """The pytree structure of the output."""
        return self._entry.out_tree

    @property
    def in_avals(self):
        """The abstract values of the arguments, as ``(args, kwargs)``."""
        return tree_unflatten(self._in_tree, list(self._entry.closed.in_avals))

    @property
    def args_info(self):
        """An :class:`ArgInfo` per argument, as ``(args, kwargs)``."""
        donated = self._entry.donated or (False,) * len(self._entry.closed.in_avals)
        infos = [ArgInfo(a, d) for a, d in zip(self._entry.closed.in_avals, donated,
                                                strict=True)]
        return tree_unflatten(self._in_tree, infos)

    @property
    def out_info(self):
        """A ``ShapeDtypeStruct`` per output, in the output's structure."""
        return tree_unflatten(self.out_tree, [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type)
                                              for a in self._entry.closed.out_avals])

    @property
    def donate_argnums(self):
        donated = self._entry.donated or ()
        return tuple(i for i, d in enumerate(donated) if d)


class Traced(_Stage):
    """A traced jitted function: its jaxpr for one signature (``jit(f).trace(*args)``)."""

    __slots__ = ()

    @property
    def jaxpr(self):
        """The closed jaxpr."""
        return self._entry.closed

    @property
    def fun_name(self) -> str:
        return self._name

    @property
    def out_avals(self):
        return tree_unflatten(self.out_tree, list(self._entry.closed.out_avals))

    def lower(self, *, lowering_platforms=None, _private_parameters=None) -> "Lowered":
        """Lower to StableHLO (for the default device's platform)."""
        if lowering_platforms is not None:
            if tuple(lowering_platforms) != (default_backend(),):
                raise NotImplementedError(
                    f"lowering for platforms {tuple(lowering_platforms)}: xjax lowers for the "
                    f"default backend ({default_backend()!r}) only")
        return Lowered(self._entry, self._name, self._in_tree)

    def __repr__(self):
        return f"Traced({self._name})"


class Lowered(_Stage):
    """The StableHLO module of a jitted function for one signature (one SPMD program over
    several devices when ``partitioned``, a ``jit_partitioned.PartitionedFunction``)."""

    __slots__ = ("_text", "_partitioned")

    def __init__(self, entry, name: str, in_tree, partitioned=None):
        super().__init__(entry, name, in_tree)
        self._text = None
        self._partitioned = partitioned

    def _stablehlo_text(self) -> str:
        if self._partitioned is not None:
            return self._partitioned.text
        if self._text is None:
            self._text = lower_module(self._entry.closed, self._name, self._entry.donated,
                                      platform=default_backend()).text
        return self._text

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """The module as StableHLO (MLIR) text, or as HLO text (``dialect="hlo"``).

        Raises
        ------
        ValueError
            For another dialect (as JAX).
        """
        dialect = _check_dialect(dialect)
        if dialect == "hlo":
            return self.compiler_ir("hlo").as_hlo_text()
        return self._stablehlo_text()

    def compiler_ir(self, dialect: str | None = None):
        """An :class:`HloModule` for ``dialect="hlo"``; None for StableHLO (xjax has no
        MLIR Python objects: use :meth:`as_text`).

        Raises
        ------
        ValueError
            For another dialect (as JAX).
        """
        if _check_dialect(dialect) == "stablehlo":
            return None
        text = default_client().hlo_text(self._stablehlo_text())
        return HloModule(text)

    def compile(self, compiler_options: CompilerOptions | None = None, *,
                device_assignment=None) -> "Compiled":
        """Compile with XLA (for the default device).

        Parameters
        ----------
        compiler_options : dict, optional
            XLA options by name (``{"xla_cpu_enable_fast_math": True}``), values str, bool,
            int or float. XLA rejects unknown names and bad values (a RuntimeError).
        device_assignment : None
            Anything else raises NotImplementedError.
        """
        if device_assignment is not None:
            raise NotImplementedError("device_assignment is not supported by xjax's compile")
        if self._partitioned is not None:
            if compiler_options:
                raise NotImplementedError("compiler_options for a program partitioned over "
                                          "several devices")
            self._partitioned.compile()
            return Compiled(self._entry, self._name, self._in_tree, self._partitioned)
        if compiler_options:  # on top of jit's own
            options = merge_options(self._entry.compiler_options,
                                    check_compiler_options(compiler_options))
            compiled = compile_closed_jaxpr(self._entry.closed, self._name,
                                            self._entry.donated, options)
            return Compiled(self._entry, self._name, self._in_tree, compiled)
        self._entry.executable(self._name)
        return Compiled(self._entry, self._name, self._in_tree)

    def cost_analysis(self) -> dict:
        """Estimated costs (see the module's docstring)."""
        return _cost_analysis(self._entry.closed)

    def __repr__(self):
        return f"Lowered({self._name})"


def _check_dialect(dialect) -> str:
    """``"stablehlo"`` (also for None) or ``"hlo"``; JAX's ValueError for another."""
    dialect = "stablehlo" if dialect is None else dialect
    if dialect not in ("stablehlo", "hlo"):
        raise ValueError(f"unknown dialect: {dialect}")
    return dialect


class HloModule:
    """An HLO module, as ``Lowered.compiler_ir("hlo")`` gives it (JAX's ``XlaComputation``:
    ``as_hlo_text()`` and ``name()``)."""

    __slots__ = ("_text",)

    def __init__(self, text: str):
        self._text = text

    def as_hlo_text(self, print_large_constants: bool = False) -> str:
        """The module as HLO text (``HloModule <name>, ...`` then its computations)."""
        return self._text

    def name(self) -> str:
        """The module's name (``jit_f`` for ``jit(f)``)."""
        return self._text.split(None, 2)[1].rstrip(",")

    def __repr__(self):
        return f"<HloModule {self.name()}>"


class Compiled(_Stage):
    """An XLA executable for one signature; call it with arguments of that signature (the
    dynamic ones: static arguments were fixed when tracing)."""

    __slots__ = ("_compiled",)

    def __init__(self, entry, name: str, in_tree, compiled=None):
        super().__init__(entry, name, in_tree)
        self._compiled = entry.compiled if compiled is None else compiled

    def as_text(self) -> str:
        """The StableHLO text it was compiled from."""
        return self._compiled.text

    def cost_analysis(self) -> dict:
        """Estimated costs (see the module's docstring)."""
        return _cost_analysis(self._entry.closed)

    def memory_analysis(self) -> CompiledMemoryStats:
        """Argument, output and alias sizes in bytes; XLA-only sizes are None."""
        closed = self._entry.closed
        compiled = self._compiled
        alias = sum(_nbytes(closed.in_avals[i]) for i in compiled.donated)
        return CompiledMemoryStats(
            argument_size_in_bytes=sum(_nbytes(a) for a in closed.in_avals),
            output_size_in_bytes=sum(_nbytes(a) for a in closed.out_avals),
            alias_size_in_bytes=alias)

    def runtime_executable(self):
        """The runtime's (PJRT) executable."""
        return self._compiled.executable

    def __call__(self, *args, **kwargs):
        flat, tree = tree_flatten((args, kwargs))
        if tree != self._in_tree:
            raise TypeError("Function compiled with input pytree does not match the input "
                            f"pytree it was called with: compiled for {self._in_tree}, "
                            f"called with {tree}")
        mismatches = []
        for i, (x, aval) in enumerate(zip(flat, self._entry.closed.in_avals, strict=True)):
            got = shaped_abstractify(x)
            if got.shape != aval.shape or got.dtype != aval.dtype:
                mismatches.append(f"Argument {i} compiled with {aval.str_short()} and called "
                                  f"with {got.str_short()}")
        if mismatches:
            raise TypeError("Argument types differ from the types for which this computation "
                            "was compiled. Perhaps you are calling the compiled executable "
                            "with a different enable_x64 mode than when it was AOT compiled? "
                            "The mismatches are:\n" + "\n".join(mismatches))
        if config.xjax_jit_checks:
            flag_checks.check_execution(self._name, flat)
        outs = self._compiled(*flat)
        if config.xjax_jit_checks:
            flag_checks.check_outputs(self._name, outs, lambda: None)
        return tree_unflatten(self._entry.out_tree, outs)

    call = __call__

    def __repr__(self):
        return f"Compiled({self._name})"


class Wrapped(Protocol):
    """A function ready to be traced, lowered and compiled (what ``jit`` returns)."""

    def __call__(self, *args, **kwargs): ...

    def trace(self, *args, **kwargs) -> Traced: ...

    def lower(self, *args, **kwargs) -> Lowered: ...


# -- cost estimate --

_TRANSCENDENTAL = {"exp", "exp2", "log", "log1p", "expm1", "sin", "cos", "tan", "tanh",
                   "logistic", "sqrt", "rsqrt", "cbrt", "pow", "atan2", "asin", "acos",
                   "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "erfc",
                   "erf_inv", "lgamma", "digamma"}
_FREE = {"reshape", "broadcast_in_dim", "transpose", "squeeze", "expand_dims",
         "convert_element_type", "slice", "dynamic_slice", "dynamic_update_slice",
         "concatenate", "pad", "iota", "copy", "copy_p", "gather", "rev",
         "bitcast_convert_type", "stop_gradient"}


def _size(aval) -> int:
    return int(np.prod(getattr(aval, "shape", ()), dtype=np.int64))


def _jaxpr_costs(jaxpr, scale: float, totals: dict) -> None:
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        inner = [p for p in eqn.params.values() if isinstance(p, (ClosedJaxpr, Jaxpr))]
        inner += [b for p in eqn.params.values() if isinstance(p, (tuple, list))
                  for b in p if isinstance(b, (ClosedJaxpr, Jaxpr))]
        if inner:
            times = scale * eqn.params.get("length", 1)
            for j in inner:
                _jaxpr_costs(getattr(j, "jaxpr", j), times, totals)
            continue
        out = sum(_size(v.aval) for v in eqn.outvars)
        if name == "dot_general":
            (lhs_contract, _), _ = eqn.params["dimension_numbers"]
            lhs = eqn.invars[0].aval
            k = int(np.prod([lhs.shape[d] for d in lhs_contract], dtype=np.int64))
            totals["flops"] += scale * 2.0 * out * k
        elif name.startswith("reduce_") or name.startswith("arg"):
            totals["flops"] += scale * max(_size(eqn.invars[0].aval) - out, 0)
        elif name in _TRANSCENDENTAL:
            totals["transcendentals"] += scale * out
        elif name == "select_n":  # one elementwise select per case after the first, as XLA
            totals["flops"] += scale * out * max(len(eqn.invars) - 2, 1)
        elif name not in _FREE:
            totals["flops"] += scale * out


def _cost_analysis(closed) -> dict:
    totals = {"flops": 0.0, "transcendentals": 0.0}
    _jaxpr_costs(closed.jaxpr, 1.0, totals)
    totals["bytes accessed"] = float(sum(_nbytes(a) for a in closed.in_avals)
                                     + sum(_nbytes(a) for a in closed.out_avals))
    return totals
