"""Derivative rules of every primitive (DESIGN.md §4): jvp against finite differences and
vjp against jvp (the transpose rules), to second order, eagerly and under jit; and the
registry check that no primitive lacks a rule without a documented reason."""

import numpy as np
import pytest

import xjax
from xjax._src.core import dtypes
from xjax._src.core.primitive import JVP_TODO, TRANSPOSE_TODO, Absent, registry
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


def test_no_primitive_lacks_a_derivative_rule_without_a_reason():
    missing_jvp = sorted(n for n, p in registry.items() if p.jvp is JVP_TODO)
    missing_transpose = sorted(n for n, p in registry.items() if p.transpose is TRANSPOSE_TODO)
    assert not missing_jvp, f"primitives without a jvp rule: {missing_jvp}"
    assert not missing_transpose, f"primitives without a transpose rule: {missing_transpose}"


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
    if any(isinstance(registry[record.primitive].transpose, Absent) and
           registry[record.primitive].transpose is TRANSPOSE_TODO for _ in [0]):
        modes = tuple(m for m in modes if m != "rev")
    check_grads(fun, [args[i] for i in diff], order=record.grad_order, modes=modes,
                atol=record.grad_tol, rtol=record.grad_tol)
