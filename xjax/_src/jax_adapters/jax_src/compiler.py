"""``jax._src.compiler`` under the import hook: the function every compile goes through.

Libraries replace ``backend_compile_and_load`` to restrict or count compiles (Chex's
``restrict_backends``): assigning it here routes xjax's compiles through the new function
(:func:`xjax._src.higher_order.jit_call.set_compile_wrapper`), which receives a backend with
JAX's ``platform`` attribute.
"""

from __future__ import annotations

import sys
import types

from xjax._src.higher_order import jit_call
from xjax._src.jax_adapters.extend.backend import Backend


def backend_compile_and_load(backend, module, executable_devices=None, options=None,
                             host_callbacks=()):
    """Compile ``module`` (StableHLO text) on ``backend``'s client."""
    return jit_call.compile_on_client(backend.client, module, options)


_original = backend_compile_and_load


def _route(replacement):
    """Make xjax's compiles call ``replacement`` (JAX's signature) instead of the original."""
    if replacement is _original:
        jit_call.set_compile_wrapper(None)
        return

    def wrapper(client, text, compiler_options, compile_on_client):
        return replacement(Backend(client), text, None, compiler_options, ())
    jit_call.set_compile_wrapper(wrapper)


class _CompilerModule(types.ModuleType):
    """This module, noticing when a library replaces ``backend_compile_and_load``."""

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if name == "backend_compile_and_load":
            _route(value)


sys.modules[__name__].__class__ = _CompilerModule
