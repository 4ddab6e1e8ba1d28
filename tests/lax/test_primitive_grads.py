"""Derivative rules of every primitive (DESIGN.md §4): jvp against finite differences and
vjp against jvp (the transpose rules), to second order, eagerly and under jit; and the
registry check that no primitive lacks a rule without a documented reason."""

import numpy as np
import pytest

import xjax
from xjax._src.core import dtypes
from xjax._src.core.primitive import Absent, registry
from xjax._src.testing.check_grads import check_grads
from op_table import all_records

RECORDS = all_records()


def _float_dtype(record):
    for d in record.dtypes:
        if np.dtype(d) == np.float32:
            return np.float32
    for d in record.dtypes:
        if np.dtype(d) == np.complex64:
            return np.complex64
    return None


def _grad_cases():
    cases = []
    for r in RECORDS:
        primitive = registry[r.primitive]
        if isinstance(primitive.jvp, Absent) or _float_dtype(r) is None or r.grad_order == 0:
            continue
        cases.append(r)
    return cases


GRAD_CASES = _grad_cases()


def _unexplained(rule_name):
    """Primitives whose ``rule_name`` rule is neither callable nor an ``Absent`` with a reason."""
    bad = []
    for name, primitive in registry.items():
        rule = getattr(primitive, rule_name)
        if isinstance(rule, Absent):
            if not rule.reason.strip():
                bad.append(name)
        elif not callable(rule):
            bad.append(name)
    return sorted(bad)


def test_every_derivative_rule_is_callable_or_absent_with_a_reason():
    assert not _unexplained("jvp"), f"jvp rules neither callable nor reasoned: {_unexplained('jvp')}"
    assert not _unexplained("transpose"), \
        f"transpose rules neither callable nor reasoned: {_unexplained('transpose')}"


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("record", GRAD_CASES,
                         ids=[f"{r.primitive}{'-' + r.name if r.name else ''}"
                              for r in GRAD_CASES])
def test_check_grads(record, jit):
    dtype = _float_dtype(record)
    rng = np.random.default_rng(0)
    args = [xjax.numpy.asarray(a) for a in record.args(rng, dtype)]
    diff = [i for i, a in enumerate(args) if dtypes.is_float(a.dtype) or
            dtypes.is_complex(a.dtype)]
    const = {i: a for i, a in enumerate(args) if i not in diff}

    def f(*diff_args):
        full = list(args)
        for i, value in zip(diff, diff_args, strict=True):
            full[i] = value
        for i, value in const.items():
            full[i] = value
        return record.fun(*full)

    fun = xjax.jit(f) if jit else f
    modes = record.grad_modes
    check_grads(fun, [args[i] for i in diff], order=record.grad_order, modes=modes,
                atol=record.grad_tol, rtol=record.grad_tol)
