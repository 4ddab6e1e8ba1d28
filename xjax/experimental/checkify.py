"""``xjax.experimental.checkify``: functional error checks (JAX's
``jax.experimental.checkify``).

``check(pred, msg)`` raises eagerly and cannot be staged by ``jit``/``scan`` on its own;
``checkify(f)`` makes ``f`` return an :class:`Error` value beside its output instead, so that
checks work under every transformation. The error is a pytree of arrays: per error category
(an :class:`ErrorEffect`, the exception class and its payload's shapes) a flag, a code
naming which check fired first (codes are handed out in tracing order) and the payload
(the check's formatting arguments, an out-of-bounds index). ``checkify`` can also add
automatic checks (NaNs produced, division by zero, out-of-bounds indexing): see
``_checkify_rules.py`` for the interpreter that threads the error through a jaxpr.

>>> import xjax, xjax.numpy as jnp
>>> from xjax.experimental import checkify
>>> def f(x):
...     checkify.check(x > 0, "{x} needs to be positive!", x=x)
...     return 1 / x
>>> err, out = xjax.jit(checkify.checkify(f))(jnp.float32(-3.))
>>> err.get()
'-3.0 needs to be positive! (`check` failed)'
"""

from xjax._src.experimental.checkify import (  # noqa: F401
    Error as Error, ErrorCategory as ErrorCategory, JaxRuntimeError as JaxRuntimeError,
    all_checks as all_checks, automatic_checks as automatic_checks, check as check,
    check_error as check_error, checkify as checkify, debug_check as debug_check,
    div_checks as div_checks, float_checks as float_checks, index_checks as index_checks,
    init_error as init_error, nan_checks as nan_checks, user_checks as user_checks,
)
from xjax._src.experimental.checkify import __all__ as __all__  # noqa: F401
