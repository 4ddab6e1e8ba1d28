"""``jax._src.literals`` under the import hook.

JAX 0.10 passes Python and NumPy scalars into traced code as typed literal arrays
(``TypedNdArray``, ``LiteralArray``); xjax passes them as its own Arrays, so it has no such
types and the names are absent (``from jax._src.literals import TypedNdArray`` raises
ImportError, which libraries catch as for older JAX).
"""
