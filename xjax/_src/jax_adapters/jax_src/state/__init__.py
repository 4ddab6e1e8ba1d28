"""``jax._src.state`` under the import hook."""
