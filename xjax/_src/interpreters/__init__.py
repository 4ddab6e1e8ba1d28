"""xjax's interpreters (eval, staging, jvp, transpose, batching, partial evaluation, ...).

The public modules of ``jax.interpreters`` are here too: :mod:`~xjax.interpreters.ad`,
:mod:`~xjax.interpreters.batching` (``primitive_batchers``, ``defvectorized``, ...),
:mod:`~xjax.interpreters.mlir` (``register_lowering``, ``lower_fun``) and
:mod:`~xjax.interpreters.xla` (``apply_primitive``), for primitives defined with
:class:`xjax.extend.core.Primitive`.
"""
