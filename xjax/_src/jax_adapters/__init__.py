"""Thin adapters for the JAX names that libraries reach into beyond the everyday API
(``jax.extend``, ``jax.interpreters.ad``/``mlir``/``xla``, ...), each mapped onto xjax's own
machinery. Nothing in the rest of ``xjax._src`` imports from here: ``_src`` is not shaped
around them."""
