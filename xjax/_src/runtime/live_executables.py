"""Bounds on how many compiled executables a process keeps alive.

Every executable XLA's CPU compiler produces holds its machine code in a few memory
mappings of its own (about 3 for a single operation, more for larger programs). Linux
allows a process ``vm.max_map_count`` mappings (65530 by default); past that XLA's JIT
fails with "Failed to materialize symbols" / "Cannot allocate memory". Caches that never
evict reach that limit in a long process that compiles many distinct programs (a test
suite, a sweep over shapes), so every cache of executables is bounded here: the oldest
entries are dropped, and compiled again if they are needed again.
"""

from __future__ import annotations

import weakref


class BoundedCache(dict):
    """A dict of at most ``max_entries`` entries: adding one past the bound drops the
    entry added first (lookups cost what a dict's do: nothing is tracked on a hit)."""

    __slots__ = ("max_entries",)

    def __init__(self, max_entries: int):
        super().__init__()
        self.max_entries = max_entries

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        while len(self) > self.max_entries:
            del self[next(iter(self))]


class LiveBound:
    """Holders of one executable each (a jit wrapper's entry for one signature), at most
    ``max_live`` of them holding one at a time: ``admit(holder)`` after a holder compiled;
    past the bound, ``release(holder)`` runs on the holder admitted longest ago. Holders
    are weakly referenced, so a dead function's entries do not count."""

    def __init__(self, max_live: int, release):
        self.max_live = max_live
        self._release = release
        self._holders = weakref.WeakKeyDictionary()  # holder -> None, oldest admitted first

    def admit(self, holder) -> None:
        holders = self._holders
        holders.pop(holder, None)  # admitted again (compiled again): now the newest
        holders[holder] = None
        while len(holders) > self.max_live:
            oldest = next(iter(holders))
            del holders[oldest]
            self._release(oldest)

    def __len__(self) -> int:
        return len(self._holders)
