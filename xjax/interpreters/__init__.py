"""xjax's interpreters (eval, staging, jvp, transpose, batching, partial evaluation, ...).

The public modules of ``jax.interpreters`` are here too: :mod:`~xjax.interpreters.ad`,
:mod:`~xjax.interpreters.batching` (``primitive_batchers``, ``defvectorized``, ...),
:mod:`~xjax.interpreters.mlir` (``register_lowering``, ``lower_fun``) and
:mod:`~xjax.interpreters.xla` (``apply_primitive``), for primitives defined with
:class:`xjax.extend.core.Primitive`.
"""

from xjax.interpreters import batching as batching  # noqa: F401
from xjax.interpreters import mlir as mlir  # noqa: F401
from xjax.interpreters import partial_eval as partial_eval  # noqa: F401
from xjax.interpreters import ad as ad  # noqa: F401
from xjax.interpreters import xla as xla  # noqa: F401
