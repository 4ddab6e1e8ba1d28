"""Importing this module installs the import hook (:mod:`.import_hook`): from then on
``import jax`` gives xjax. It is also a pytest plugin (``pytest -p xjax.as_jax``), which loads
it in every worker before any test module imports jax."""

from xjax._src.jax_adapters import import_hook

import_hook.install()
