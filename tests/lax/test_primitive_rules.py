"""The rule check (DESIGN.md §4): every registered primitive has a record; its NumPy impl
agrees with its XLA lowering for every dtype; abstract eval agrees with what impl makes."""

import numpy as np
import pytest

import xjax
from xjax._src.core import dtypes
from xjax._src.core.primitive import registry
from op_table import NO_RECORD, all_records

RECORDS = all_records()


def _ids():
    return [f"{r.primitive}{'-' + r.name if r.name else ''}-{np.dtype(d).name}"
            for r in RECORDS for d in r.dtypes]


def _cases():
    return [(r, d) for r in RECORDS for d in r.dtypes]


def test_every_primitive_has_a_record():
    recorded = {r.primitive for r in RECORDS}
    missing = sorted(set(registry) - recorded - set(NO_RECORD))
    assert not missing, f"primitives without a rule-check record: {missing}"


def _assert_close(got, want, tol, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    if dtypes.is_float(got.dtype) and tol == 0:  # NaN == NaN also for ml_dtypes floats
        np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64),
                                      err_msg=what)
    elif tol == 0 or not (dtypes.is_float(got.dtype) or dtypes.is_complex(got.dtype)):
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        wide = np.complex128 if dtypes.is_complex(got.dtype) else np.float64
        np.testing.assert_allclose(got.astype(wide), want.astype(wide), rtol=tol, atol=tol,
                                   equal_nan=True, err_msg=what)


@pytest.mark.parametrize("record,dtype", _cases(), ids=_ids())
def test_impl_agrees_with_xla(record, dtype):
    rng = np.random.default_rng(0)
    args = record.args(rng, dtype)
    eager = record.fun(*args)
    with xjax.config.override(xjax_eager_via_xla=True):
        compiled = record.fun(*args)
    eager_leaves = eager if isinstance(eager, (list, tuple)) else [eager]
    compiled_leaves = compiled if isinstance(compiled, (list, tuple)) else [compiled]
    for e, c in zip(eager_leaves, compiled_leaves, strict=True):
        assert e.dtype == np.asarray(e).dtype, "abstract eval dtype differs from impl's"
        assert e.shape == np.asarray(e).shape, "abstract eval shape differs from impl's"
        _assert_close(np.asarray(e), np.asarray(c), record.tol, f"{record.primitive} {dtype}")


@pytest.mark.parametrize("record,dtype", _cases(), ids=_ids())
def test_jit_agrees_with_eager(record, dtype):
    rng = np.random.default_rng(1)
    args = record.args(rng, dtype)
    eager = record.fun(*args)
    jitted = xjax.jit(record.fun)(*args)
    eager_leaves = eager if isinstance(eager, (list, tuple)) else [eager]
    jit_leaves = jitted if isinstance(jitted, (list, tuple)) else [jitted]
    for e, j in zip(eager_leaves, jit_leaves, strict=True):
        assert e.aval == j.aval, f"eager aval {e.aval} != jit aval {j.aval}"
        _assert_close(np.asarray(j), np.asarray(e), record.tol, f"{record.primitive} {dtype}")
