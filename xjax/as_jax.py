"""``import xjax.as_jax``: from this import on, ``import jax`` (and every ``jax.*`` module,
``jax._src`` included) resolves to xjax, so a JAX program and the libraries it uses run on xjax
unchanged. Import it first, before anything imports jax. ``python -m xjax.run script.py`` and
``pytest -p xjax.as_jax`` do the same for a whole program or test run.

Examples
--------
>>> import xjax.as_jax
>>> import jax, jax.numpy as jnp
>>> jnp.sum(jnp.arange(4))
Array(6, dtype=int32)
"""

from xjax._src.jax_adapters.as_jax import import_hook as import_hook  # noqa: F401
from xjax._src.jax_adapters.import_hook import install as install  # noqa: F401
from xjax._src.jax_adapters.import_hook import installed as installed  # noqa: F401
