"""Run JAX programs and libraries on xjax unchanged: an import hook that makes ``import jax``
(and every ``jax.*`` module, ``jax._src`` included) resolve to xjax.

Once :func:`install` has run, ``import jax.numpy`` gives ``xjax.numpy`` itself (the same module
object), ``jax._src.X`` gives the adapter ``xjax._src.jax_adapters.jax_src.X`` (the JAX-internal
names libraries reach for, mapped onto xjax's own code) and ``jax`` is a small module of its own
that forwards every attribute to ``xjax`` but reports the JAX version xjax matches, so that
libraries' version gates take their modern paths. The hook sits first on ``sys.meta_path``, so it
wins over a real JAX installed in the same environment.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

import xjax  # the names ``jax`` forwards to are the public package's
from xjax._src.core.version import jax_version, jax_version_info

# JAX module prefixes that resolve somewhere other than the same path under ``xjax``: the
# longest prefix that matches wins.
_REDIRECTS = {
    "jax._src": "xjax._src.jax_adapters.jax_src",
    "jax.version": "xjax._src.jax_adapters.jax_version",
    "jaxlib": "xjax._src.jax_adapters.jaxlib",
}
_REDIRECT_ORDER = sorted(_REDIRECTS, key=len, reverse=True)
_TOP_LEVEL = ("jax", "jaxlib")


def target_module_name(name: str) -> str | None:
    """The xjax module that the JAX module ``name`` resolves to (None: not a JAX module).

    Examples
    --------
    >>> target_module_name("jax.numpy")
    'xjax.numpy'
    >>> target_module_name("jax._src.traceback_util")
    'xjax._src.jax_adapters.jax_src.traceback_util'
    """
    if name.split(".")[0] not in _TOP_LEVEL:
        return None
    for prefix in _REDIRECT_ORDER:
        if name == prefix or name.startswith(prefix + "."):
            return _REDIRECTS[prefix] + name[len(prefix):]
    return "x" + name


def _jax_module() -> types.ModuleType:
    """The module ``import jax`` gives: xjax's names, JAX's version."""
    module = types.ModuleType("jax", xjax.__doc__)
    module.__version__ = jax_version
    module.__version_info__ = jax_version_info
    module.__path__ = []  # a package, so that ``import jax.numpy`` asks the finders
    module.__getattr__ = lambda name: _jax_attribute(module, name)
    module.__dir__ = lambda: sorted(set(dir(xjax)) | set(module.__dict__))
    module.xjax = xjax  # where the names come from, for a curious user
    return module


def _jax_attribute(module, name: str):
    """``jax.<name>`` not yet bound: xjax's, except where JAX's module is an adapter
    (``jax._src``, ``jax.version``), which is imported through the hook. xjax's public names
    never change, so the first lookup binds it: later ones cost a plain attribute read."""
    if target_module_name("jax." + name) != "xjax." + name:
        return importlib.import_module("jax." + name)
    value = getattr(xjax, name)
    module.__dict__[name] = value
    return value


class _AliasLoader(importlib.abc.Loader):
    """Gives an already importable xjax module under a JAX name."""

    def __init__(self, target: str | None):
        self.target = target
        self.saved_spec = None

    def create_module(self, spec):
        if self.target is None:
            return _jax_module()
        module = importlib.import_module(self.target)
        # The import system overwrites ``__spec__`` of the module it is given; keep xjax's.
        self.saved_spec = getattr(module, "__spec__", None)
        return module

    def exec_module(self, module):
        if self.target is not None:
            module.__spec__ = self.saved_spec


class JaxToXjaxFinder(importlib.abc.MetaPathFinder):
    """The meta path finder of :func:`install`."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "jax":
            return importlib.machinery.ModuleSpec("jax", _AliasLoader(None), is_package=True)
        name = target_module_name(fullname)
        if name is None:
            return None
        try:
            found = importlib.util.find_spec(name)
        except ModuleNotFoundError:
            found = None
        if found is None:
            return None  # the import fails as a missing ``jax.*`` module does
        return importlib.machinery.ModuleSpec(
            fullname, _AliasLoader(name),
            is_package=found.submodule_search_locations is not None)


_FINDER = JaxToXjaxFinder()


def install() -> None:
    """Make ``import jax`` and ``import jaxlib`` resolve to xjax from now on.

    Raises
    ------
    ImportError
        If a real JAX was imported before: its modules would mix with xjax's.

    Examples
    --------
    >>> install()
    >>> import jax, xjax
    >>> jax.numpy is xjax.numpy
    True
    """
    for name in _TOP_LEVEL:
        loaded = sys.modules.get(name)
        if loaded is not None and not isinstance(loaded.__spec__.loader, _AliasLoader):
            raise ImportError(
                f"{name} was imported before xjax's import hook was installed, so its modules "
                "would mix with xjax's; install the hook first (`import xjax.as_jax` as the "
                "first import, `python -m xjax.run`, or `pytest -p xjax.as_jax`)")
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def installed() -> bool:
    """Whether :func:`install` has run in this interpreter."""
    return _FINDER in sys.meta_path
