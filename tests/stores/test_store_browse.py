"""What ``scrapy-rep cache`` reads and deletes through: ``entries``, ``inspect`` and ``delete`` of every store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, cast

import redis

from scrapy_rep.stores import Entry, StoredEntry, open_store
from scrapy_rep.stores._codec import encode

from .storetools import Backend, RedisServer, current_form, entry, run

ORIGIN = "https://example.com"


class Browsable(Protocol):
    def entries(self) -> AsyncIterator[StoredEntry]: ...

    async def inspect(self, origin: str) -> StoredEntry | None: ...

    async def delete(self, origin: str) -> bool: ...

    async def put(self, entry: Entry) -> None: ...

    async def close(self) -> None: ...


def browsable(backend: Backend) -> Browsable:
    return cast(Browsable, backend.open())


def test_entries_lists_every_origin_with_its_stored_size(backend: Backend) -> None:
    written = [entry(f"https://site{i}.example") for i in range(3)]

    async def scenario() -> list[StoredEntry]:
        store = browsable(backend)
        for item in written:
            await store.put(item)
        listed = [stored async for stored in store.entries()]
        await store.close()
        return listed

    listed = run(scenario())
    assert sorted(listed, key=lambda stored: stored.origin) == [
        StoredEntry(item.origin, item, len(encode(item))) for item in written
    ]


def test_inspect_and_delete_one_origin(backend: Backend) -> None:
    async def scenario() -> tuple[StoredEntry | None, bool, bool, StoredEntry | None, StoredEntry | None]:
        store = browsable(backend)
        await store.put(entry(ORIGIN))
        await store.put(entry("https://kept.example"))
        found = await store.inspect(ORIGIN)
        deleted, again = await store.delete(ORIGIN), await store.delete(ORIGIN)
        gone = await store.inspect(ORIGIN)
        kept = await store.inspect("https://kept.example")
        await store.close()
        return found, deleted, again, gone, kept

    found, deleted, again, gone, kept = run(scenario())
    assert found is not None and found.entry == entry(ORIGIN)
    assert (deleted, again, gone) == (True, False, None)
    assert kept is not None and kept.entry == entry("https://kept.example")


def test_a_record_of_another_format_version_is_listed_as_corrupt(shared_backend: Backend) -> None:
    """Listed with its problem and size, not skipped and not raised: the CLI counts it."""
    data = current_form(entry(ORIGIN), v=2)

    async def scenario() -> tuple[list[StoredEntry], StoredEntry | None]:
        store = browsable(shared_backend)
        await store.put(entry("https://good.example"))
        shared_backend.write_raw(ORIGIN, data)
        listed = [stored async for stored in store.entries()]
        found = await store.inspect(ORIGIN)
        await store.close()
        return listed, found

    listed, found = run(scenario())
    corrupt = StoredEntry(ORIGIN, None, len(data), "unknown format version 2")
    assert corrupt in listed and found == corrupt
    assert [stored.origin for stored in listed if stored.entry is not None] == ["https://good.example"]


def test_listing_pages_through_more_than_one_batch(shared_backend: Backend) -> None:
    """More origins than one SQLite page / one SCAN+MGET batch (500), each listed exactly once."""
    origins = {f"https://site{i:04}.example" for i in range(1203)}

    async def scenario() -> list[str]:
        store = browsable(shared_backend)
        for origin in origins:
            await store.put(entry(origin))
        listed = [stored.origin async for stored in store.entries()]
        await store.close()
        return listed

    listed = run(scenario())
    assert len(listed) == len(origins) and set(listed) == origins


def test_redis_listing_keeps_to_its_prefix(redis_server: RedisServer) -> None:
    """SCAN matches this store's prefix only (glob characters in it are escaped); leases are not entries."""
    with redis.Redis(port=redis_server.port) as client:
        client.set("other:entry:https://elsewhere.example", encode(entry("https://elsewhere.example")))
        client.set("p1:entry:https://lookalike.example", encode(entry("https://lookalike.example")))

    async def scenario() -> list[str]:
        store = cast(Browsable, open_store(f"{redis_server.url}?prefix=p[1]:"))
        await store.put(entry(ORIGIN))
        leases = open_store(f"{redis_server.url}?prefix=p[1]:")
        assert await leases.acquire_lease(ORIGIN, "me", 60)
        await leases.close()
        listed = [stored.origin async for stored in store.entries()]
        await store.close()
        return listed

    assert run(scenario()) == [ORIGIN]
