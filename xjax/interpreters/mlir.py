"""``xjax.interpreters.mlir``: lowering rules of primitives, as ``jax.interpreters.mlir``.

xjax writes StableHLO as text and has no MLIR Python bindings, so the lowering rules it
accepts are the ones written as JAX code: ``register_lowering(p, lower_fun(fun))`` lowers
each application of ``p`` by tracing ``fun`` (written with ``xjax.numpy``/``xjax.lax``) on
the operands' shapes and emitting the traced program in place. A rule may also emit a host
callback with ``emit_python_callback``; a rule that builds MLIR operations itself
(``hlo.AddOp(...)``) raises NotImplementedError when it runs.

>>> import numpy as np, xjax, xjax.numpy as jnp
>>> from xjax.core import ShapedArray
>>> from xjax.extend.core import Primitive
>>> from xjax.interpreters import mlir
>>> cube_p = Primitive("cube")
>>> _ = cube_p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
>>> _ = mlir.register_lowering(cube_p, mlir.lower_fun(lambda x: x * x * x,
...                                                    multiple_results=False))
>>> xjax.jit(cube_p.bind)(2.0)
Array(8., dtype=float32)
"""

from xjax._src.jax_adapters.interpreters_mlir import (  # noqa: F401
    LoweringFunction as LoweringFunction, LoweringRuleContext as LoweringRuleContext,
    ModuleContext as ModuleContext, emit_python_callback as emit_python_callback,
    lower_fun as lower_fun, register_lowering as register_lowering,
)
from xjax._src.jax_adapters.interpreters_mlir import __getattr__ as __getattr__  # noqa: F401
from xjax._src.jax_adapters.interpreters_mlir import __all__ as __all__  # noqa: F401
