"""The bounds on live compiled executables (runtime.live_executables): caches drop their
oldest executables, dropped ones are compiled again when needed, and dropping one gives its
memory mappings back (XLA's JIT fails once a process runs out of them)."""

import gc
import os

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src.interpreters import eval as eval_interpreter
from xjax._src.runtime.live_executables import BoundedCache, LiveBound
from xjax._src.transformations import jit as jit_module


def test_bounded_cache_drops_the_earliest_added():
    cache = BoundedCache(3)
    for k in "abcd":
        cache[k] = k.upper()
    assert list(cache) == ["b", "c", "d"]
    cache["b"] = "again"  # replacing keeps its place
    cache["e"] = "E"
    assert list(cache) == ["c", "d", "e"]


class _Holder:
    def __init__(self, name):
        self.name = name


def test_live_bound_releases_the_longest_admitted_live_holder():
    released = []
    bound = LiveBound(2, lambda h: released.append(h.name))
    a, b, c = _Holder("a"), _Holder("b"), _Holder("c")
    bound.admit(a)
    bound.admit(b)
    bound.admit(a)  # admitted again: now the newest
    bound.admit(c)
    assert released == ["b"]
    del a
    gc.collect()  # a dead holder does not count against the bound
    assert len(bound) == 1
    bound.admit(_Holder("d"))
    assert released == ["b"]


def test_jit_recompiles_a_dropped_executable(monkeypatch):
    monkeypatch.setattr(jit_module._live_entries, "max_live", 2)
    funs = [xjax.jit(lambda x, k=k: x * k + 1.0) for k in range(4)]
    x = np.arange(3, dtype=np.float32)
    for f in funs:
        f(x)
    first_entry = next(iter(funs[0]._cache.values()))
    assert first_entry.compiled is None  # dropped: four entries, a bound of two
    np.testing.assert_array_equal(funs[0](x), x * 0 + 1.0)
    assert first_entry.compiled is not None
    np.testing.assert_array_equal(funs[3](x), x * 3 + 1.0)


def test_aot_compiled_keeps_its_executable_after_the_entry_drops_it(monkeypatch):
    monkeypatch.setattr(jit_module._live_entries, "max_live", 1)
    f = xjax.jit(lambda x: x - 2.0)
    compiled = f.lower(np.float32(5)).compile()
    xjax.jit(lambda x: x + 7.0)(np.float32(1))  # drops f's entry's executable
    assert compiled(np.float32(5)) == 3.0


def _memory_mappings() -> int:
    with open("/proc/self/maps") as maps:
        return sum(1 for _ in maps)


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs Linux's /proc")
def test_dropped_executables_return_their_memory_mappings(monkeypatch):
    # Eager operations on large operands run compiled, one executable per primitive and
    # shape; with a bound of 8 the 120 distinct ones compiled here keep at most 8 alive.
    monkeypatch.setattr(eval_interpreter._xla_primitive_cache, "max_entries", 8)
    eval_interpreter._xla_primitive_cache.clear()
    gc.collect()
    before = _memory_mappings()
    for n in range(120):
        x = jnp.arange(eval_interpreter.LARGE_ELEMENTS + n, dtype=jnp.float32)
        np.testing.assert_array_equal(np.asarray(x * 2.0)[-1], 2.0 * (x.shape[0] - 1))
    gc.collect()
    grown = _memory_mappings() - before
    # Every live executable holds at least 3 mappings: keeping all 120 would add 360 or more.
    assert grown < 150, f"{grown} more memory mappings after 120 compiles with 8 kept"
