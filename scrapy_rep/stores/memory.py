"""The default store: entries in this process only, bounded by a least-recently-used limit."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence

from ._base import Entry, HistoryVersion, StoredEntry
from ._codec import encode


class MemoryStore:
    """Keeps at most ``max_origins`` entries; the least recently read or written one goes first.

    Leases are always granted: within one process the middleware's per-origin state machine already ensures a
    single fetch per origin (SPEC 2.1), so there is nobody else to exclude.
    """

    #: Entries are kept as objects, so none can be corrupt; counted by the other stores.
    corrupt_records = 0
    #: Writes cost nothing more one at a time.
    batches_writes = False

    def __init__(self, max_origins: int) -> None:
        if max_origins < 1:
            raise ValueError(f"max_origins must be at least 1, got {max_origins!r}")
        self.max_origins = max_origins
        self.where = f"memory (this process only, at most {max_origins:,} origins)"
        self._entries: OrderedDict[str, Entry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    async def get(self, origin: str) -> Entry | None:
        entry = self._entries.get(origin)
        if entry is not None:
            self._entries.move_to_end(origin)
        return entry

    async def count(self) -> int:
        return len(self._entries)

    async def put(self, entry: Entry) -> None:
        self._entries[entry.origin] = entry
        self._entries.move_to_end(entry.origin)
        while len(self._entries) > self.max_origins:
            self._entries.popitem(last=False)

    async def acquire_lease(self, origin: str, holder: str, ttl: float) -> bool:
        return True

    async def release_lease(self, origin: str, holder: str) -> None:
        return None

    async def lookup(self, origin: str, holder: str, ttl: float) -> tuple[Entry | None, bool]:
        entry = await self.get(origin)
        return entry, entry is None

    async def put_and_release(self, entry: Entry, holder: str) -> None:
        await self.put(entry)

    async def put_and_release_all(self, entries: Sequence[Entry], holder: str) -> None:
        for entry in entries:
            await self.put(entry)

    async def entries(self) -> AsyncIterator[StoredEntry]:
        """Every entry, least recently used first, without touching their recency; ``size`` is what the record
        would take in a persistent store."""
        for entry in list(self._entries.values()):
            yield StoredEntry(entry.origin, entry, len(encode(entry)))

    async def inspect(self, origin: str) -> StoredEntry | None:
        entry = self._entries.get(origin)
        return None if entry is None else StoredEntry(origin, entry, len(encode(entry)))

    async def history(self, origin: str) -> list[HistoryVersion]:
        """Always ``[]``: the memory store keeps no history. It dies with the process, and the history is evidence to
        read later, by ``scrapy-rep cache history``, which reads the persistent stores only."""
        return []

    async def delete(self, origin: str) -> bool:
        return self._entries.pop(origin, None) is not None

    async def close(self) -> None:
        self._entries.clear()
