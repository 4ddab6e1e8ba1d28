"""NumPy's floating-point warnings, silenced while xjax computes with NumPy.

XLA never warns: ``0 / 0`` is NaN and ``exp(1000)`` is inf, silently. xjax's eager path
computes with NumPy, which warns on the same inputs (and raises where warnings are errors,
as under pytest's ``-W error``), so the eager interpreter runs every NumPy implementation in
a state that ignores floating-point errors, as JAX's results carry no warning either.

NumPy 2 keeps that state in a context variable: setting it costs about 0.1 us, against
2 us for entering ``np.errstate``, which matters on the eager hot path. With an older NumPy
(or if NumPy moves the variable) ``np.errstate`` is used.
"""

from __future__ import annotations

import functools

import numpy as np

try:
    from numpy._core._ufunc_config import _extobj_contextvar as _error_state

    with np.errstate(all="ignore"):
        _IGNORING = _error_state.get()
except (ImportError, AttributeError):  # NumPy 1.x
    _error_state = None

__all__ = ["ignore_floating_errors", "restore_floating_errors"]


if _error_state is not None:
    # C-level callables: this pair runs around every eager NumPy kernel, where two Python
    # calls would cost more than the state change itself.
    ignore_floating_errors = functools.partial(_error_state.set, _IGNORING)
    ignore_floating_errors.__doc__ = (
        "Start ignoring NumPy's floating-point errors; returns a token for "
        ":func:`restore_floating_errors`, which must be called (in a ``finally``).")
    restore_floating_errors = _error_state.reset
else:
    def ignore_floating_errors():
        """Start ignoring NumPy's floating-point errors; returns a token for
        :func:`restore_floating_errors`, which must be called (in a ``finally``)."""
        state = np.errstate(all="ignore")
        state.__enter__()
        return state

    def restore_floating_errors(token) -> None:
        """Undo the :func:`ignore_floating_errors` call that returned ``token``."""
        token.__exit__(None, None, None)
