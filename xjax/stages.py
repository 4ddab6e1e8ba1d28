"""Ahead-of-time stages of a jitted function, under JAX's names (``jax.stages``).

``jit(f).trace(*args)`` gives a :class:`Traced` (the jaxpr), whose ``lower()`` gives a
:class:`Lowered` (the StableHLO module text), whose ``compile()`` gives a :class:`Compiled`
(an XLA executable, called with the same dynamic arguments). ``jit(f).lower(*args)`` is
``jit(f).trace(*args).lower()``. Every stage shares the trace of ``jit(f)``'s cache, so
``jit(f)(*args)`` after ``jit(f).lower(*args).compile()`` compiles nothing again.

Differences from JAX, stated:

- ``as_text(dialect="hlo")`` and ``compiler_ir(...)`` need XLA's or MLIR's Python objects,
  which xjax does not have: the first raises NotImplementedError, the second returns None
  (JAX's answer when unavailable).
- ``cost_analysis()`` is an estimate read from the jaxpr (xjax's runtime does not ask XLA):
  ``flops`` (2*M*N*K per contraction, one per element of other arithmetic, one per reduced
  element), ``transcendentals`` and ``bytes accessed`` (the program's inputs and outputs).
- ``memory_analysis()`` gives the argument, output and alias sizes, which the signature
  determines; the sizes only XLA knows (temporaries, generated code) are None.
- ``compile(compiler_options)`` accepts no options (anything else raises NotImplementedError).
"""

from xjax._src.transformations.stages import (  # noqa: F401
    ArgInfo as ArgInfo, Compiled as Compiled, CompilerOptions as CompilerOptions,
    Lowered as Lowered, Traced as Traced, Wrapped as Wrapped,
)
from xjax._src.transformations.stages import __all__ as __all__  # noqa: F401
