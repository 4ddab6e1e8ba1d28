"""``xjax.extend.core.primitives``: xjax's lax primitives by their JAX names (``add_p``,
``sin_p``, ``dot_general_p``, ...), found in xjax's modules when first asked for."""

from __future__ import annotations

import sys
from xjax._src.core.primitive import Primitive
import xjax._src.higher_order
import xjax._src.lax  # noqa: F401  (loads every lax primitive, so the scan finds them)

_found: dict = {}


def _scan() -> dict:
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith("xjax.") or module is None:
            continue
        for name, value in list(vars(module).items()):
            if name.endswith("_p") and not name.startswith("_") and isinstance(value, Primitive):
                _found.setdefault(name, value)
    return _found


def __getattr__(name: str):
    found = _found or _scan()
    if name in found:
        return found[name]
    raise AttributeError(f"module 'xjax.extend.core.primitives' has no attribute '{name}'")


def __dir__():
    return sorted(_found or _scan())
