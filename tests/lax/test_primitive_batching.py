"""Batching rules of every primitive (DESIGN.md §4): ``vmap`` of each rule-check record's
function against a Python loop over the batch, stacked, for several ``in_axes`` (0, 1 where
the ranks allow, -1, and one operand unmapped), eagerly and under jit; and the registry
check that no primitive is left without a batching rule."""

import numpy as np
import pytest

import xjax
from xjax._src.core import dtypes
from xjax._src.core.primitive import Absent, registry
from xjax._src.core.pytree import tree_leaves
from op_table import all_records

RECORDS = all_records()
BATCH = 3


def test_every_batching_rule_is_callable_or_absent_with_a_reason():
    bad = sorted(name for name, p in registry.items()
                 if not (callable(p.batch) or (isinstance(p.batch, Absent) and p.batch.reason.strip())))
    assert not bad, f"batching rules neither callable nor reasoned: {bad}"


def _dtype(record):
    for d in record.dtypes:
        if np.dtype(d) == np.float32:
            return np.dtype(np.float32)
    return np.dtype(record.dtypes[0])


def _in_axes_cases(ranks):
    """Named in_axes tuples for operands of ``ranks`` (per example)."""
    n = len(ranks)
    cases = {"axis0": (0,) * n}
    if any(r >= 1 for r in ranks):
        cases["axis1"] = tuple(min(1, r) for r in ranks)
    cases["axis-1"] = (-1,) * n
    if n > 1:  # the first operand unmapped; the others mapped at alternating ends
        cases["mixed"] = (None,) + tuple(0 if i % 2 else -1 for i in range(n - 1))
    return cases


def _assert_close(got, want, tol, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    if tol == 0 or not (dtypes.is_float(got.dtype) or dtypes.is_complex(got.dtype)):
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        wide = np.complex128 if dtypes.is_complex(got.dtype) else np.float64
        np.testing.assert_allclose(got.astype(wide), want.astype(wide), rtol=tol, atol=tol,
                                   equal_nan=True, err_msg=what)


def _looped(record, examples, axes):
    """``record.fun`` applied to each example (unmapped operands from the first), stacked."""
    outs = []
    for example in examples:
        args = [a if ax is not None else a0
                for a, a0, ax in zip(example, examples[0], axes, strict=True)]
        outs.append([np.asarray(leaf) for leaf in tree_leaves(record.fun(*args))])
    return [np.stack(leaves) for leaves in zip(*outs, strict=True)]


def _batched_args(examples, axes):
    return [examples[0][i] if ax is None else np.stack([e[i] for e in examples], axis=ax)
            for i, ax in enumerate(axes)]


def _ids():
    return [f"{r.primitive}{'-' + r.name if r.name else ''}" for r in RECORDS]


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("record", RECORDS, ids=_ids())
def test_vmap_agrees_with_a_loop(record, jit):
    if isinstance(registry[record.primitive].batch, Absent):
        pytest.skip(f"{record.primitive}: {registry[record.primitive].batch.reason}")
    dtype = _dtype(record)
    examples = [[np.asarray(a) for a in record.args(np.random.default_rng(i), dtype)]
                for i in range(BATCH)]
    if not examples[0]:
        pytest.skip("no operand to map over")
    ranks = [a.ndim for a in examples[0]]
    for label, axes in _in_axes_cases(ranks).items():
        what = f"{record.primitive} {dtype.name} in_axes={axes} ({label})"
        fun = xjax.vmap(record.fun, in_axes=axes)
        fun = xjax.jit(fun) if jit else fun
        got = tree_leaves(fun(*_batched_args(examples, axes)))
        want = _looped(record, examples, axes)
        assert len(got) == len(want), f"{what}: {len(got)} outputs, expected {len(want)}"
        for g, w in zip(got, want, strict=True):
            _assert_close(g, w, record.tol, what)
