"""The Store contract (SPEC 3.2-3.3), run against the memory, SQLite and Redis stores alike."""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable

import pytest

from scrapy_rep.stores import Entry, Outcome, open_store

from .storetools import DEADLINE, Backend, current_form, entry, old_form, run

ORIGIN = "https://example.com"


def test_round_trip_keeps_every_field(backend: Backend) -> None:
    """SPEC 3.3: outcome, body, fetch time, expiry, failure state all come back as written."""
    written = Entry(
        origin="https://xn--exmple-cua.com:8443", outcome=Outcome.RULES, fetched_at=1000.5, expires_at=87400.5,
        body=b"User-agent: *\nDisallow: /\x00\xff", status=503, error="TimeoutError",
        first_failure_at=5000.0, failures=3,
    )

    async def scenario() -> tuple[Entry | None, Entry | None]:
        store = backend.open()
        await store.put(written)
        read, missing = await store.get(written.origin), await store.get("https://other.example")
        await store.close()
        return read, missing

    read, missing = run(scenario())
    assert read == written
    assert missing is None


def test_put_replaces_the_previous_entry(backend: Backend) -> None:
    async def scenario() -> Entry | None:
        store = backend.open()
        await store.put(entry(ORIGIN))
        await store.put(entry(ORIGIN, body=b"", status=404, fetched_at=2000.0))
        read = await store.get(ORIGIN)
        await store.close()
        return read

    read = run(scenario())
    assert read is not None
    assert (read.status, read.body, read.fetched_at) == (404, b"", 2000.0)


@pytest.mark.parametrize("form", [current_form, old_form])
@pytest.mark.parametrize("version", [0, 2, "1"])
def test_record_of_another_format_version_reads_as_missing(shared_backend: Backend, version: object,
                                                           form: Callable[..., bytes]) -> None:
    """A record written by an older or newer release is skipped (and then re-fetched), not misread."""
    backend = shared_backend

    async def scenario() -> tuple[Entry | None, int]:
        store = backend.open()
        await store.put(entry("https://setup.example"))  # creates the tables
        backend.write_raw(ORIGIN, form(entry(ORIGIN), v=version))
        read = await store.get(ORIGIN)
        await store.close()
        return read, store.corrupt_records  # type: ignore[attr-defined]

    assert run(scenario()) == (None, 1)


def test_a_record_written_before_the_current_form_is_still_read(shared_backend: Backend) -> None:
    """A file or server filled by a release from before 2026-11-27 (records of the old form) needs no re-fetch."""
    written = entry(ORIGIN, status=503, error="TimeoutError", first_failure_at=1500.0, failures=2)

    async def scenario() -> tuple[Entry | None, int]:
        store = shared_backend.open()
        await store.put(entry("https://setup.example"))
        shared_backend.write_raw(ORIGIN, old_form(written))
        read = await store.get(ORIGIN)
        await store.close()
        return read, store.corrupt_records  # type: ignore[attr-defined]

    assert run(scenario()) == (written, 0)


@pytest.mark.parametrize(
    "data",
    [zlib.compress(b"{not json"), zlib.compress(b"\xff\xfe"), zlib.compress(b"[]"), zlib.compress(b'{"v": 1}'),
     zlib.compress(b"null"), b"{}", b"\x78\x01garbage",  # the old form (zlib), broken
     b"\x01{not json\n", b"\x01" + entry(ORIGIN).dumps(), b'\x01{"v": 1}\n', b"\x01null\n",  # the current form
     current_form(entry(ORIGIN))[:-3]],  # the current form with its body cut short
)
def test_corrupt_record_reads_as_missing_and_is_counted(shared_backend: Backend, data: bytes) -> None:
    """Issue 4: corrupt entries are ignored (and re-fetched), whether the JSON or its compression is broken."""
    backend = shared_backend

    async def scenario() -> tuple[Entry | None, tuple[Entry | None, bool], int, Entry | None]:
        store = backend.open()
        await store.put(entry("https://setup.example"))
        backend.write_raw(ORIGIN, data)
        read = await store.get(ORIGIN)
        looked_up = await store.lookup(ORIGIN, "crawler-a", 60)  # as missing: the lease is taken
        count = store.corrupt_records  # type: ignore[attr-defined]
        await store.put_and_release(entry(ORIGIN), "crawler-a")  # the re-fetch overwrites it
        again = await store.get(ORIGIN)
        await store.close()
        return read, looked_up, count, again

    read, looked_up, count, again = run(scenario())
    assert (read, looked_up, count) == (None, (None, True), 2)
    assert again == entry(ORIGIN)


def test_lease_excludes_a_second_holder_until_released(shared_backend: Backend) -> None:
    backend = shared_backend

    async def scenario() -> list[bool]:
        a, b = backend.open(), backend.open()
        steps = [
            await a.acquire_lease(ORIGIN, "crawler-a", 60),
            await b.acquire_lease(ORIGIN, "crawler-b", 60),
            await a.acquire_lease(ORIGIN, "crawler-a", 60),  # the holder may renew
            await b.acquire_lease("https://other.example", "crawler-b", 60),  # leases are per origin
        ]
        await b.release_lease(ORIGIN, "crawler-b")  # not the holder: no effect
        steps.append(await b.acquire_lease(ORIGIN, "crawler-b", 60))
        await a.release_lease(ORIGIN, "crawler-a")
        steps.append(await b.acquire_lease(ORIGIN, "crawler-b", 60))
        await a.close()
        await b.close()
        return steps

    assert run(scenario()) == [True, False, True, True, False, True]


def test_lookup_takes_the_lease_only_where_there_is_no_entry(shared_backend: Backend) -> None:
    """``lookup`` (issue 21): no entry and a free lease, the lease is taken; no entry and the lease held, refused;
    an entry, it is returned and the lease is left alone. ``put_and_release`` stores and frees the lease for the
    next crawler, and leaves another holder's lease alone."""
    backend = shared_backend
    other = "https://other.example"

    async def scenario() -> list[object]:
        a, b = backend.open(), backend.open()
        steps: list[object] = [
            await a.lookup(ORIGIN, "crawler-a", 60),  # (None, True): the lease is a's
            await b.lookup(ORIGIN, "crawler-b", 60),  # (None, False): a holds it
            await a.lookup(ORIGIN, "crawler-a", 60),  # (None, True): the holder's own lease, renewed
        ]
        await a.put_and_release(entry(ORIGIN), "crawler-a")
        steps.append(await b.lookup(ORIGIN, "crawler-b", 60))  # (the entry, False)
        steps.append(await b.acquire_lease(ORIGIN, "crawler-b", 60))  # True: a released it
        await b.acquire_lease(other, "crawler-b", 60)
        await a.put_and_release(entry(other), "crawler-a")  # not the holder: stored, b's lease kept
        steps.append(await a.acquire_lease(other, "crawler-a", 60))  # False
        steps.append(await a.get(other))
        await a.close()
        await b.close()
        return steps

    assert run(scenario()) == [(None, True), (None, False), (None, True), (entry(ORIGIN), False), True, False,
                               entry(other)]


def test_put_and_release_all_stores_each_entry_and_frees_only_the_holders_leases(shared_backend: Backend) -> None:
    """``put_and_release_all`` (issue 21: what the crawler writes behind, in batches, to a store that
    ``batches_writes``) is ``put_and_release`` of each entry, on every store."""
    names = [f"https://site{i}.example" for i in range(5)]

    async def scenario() -> tuple[list[Entry | None], list[bool]]:
        a, b = shared_backend.open(), shared_backend.open()
        for name in names[:-1]:
            assert await a.acquire_lease(name, "crawler-a", 60)
        assert await b.acquire_lease(names[-1], "crawler-b", 60)
        await a.put_and_release_all([entry(name) for name in names], "crawler-a")
        stored = [await b.get(name) for name in names]
        taken = [await b.acquire_lease(name, "crawler-b", 60) for name in names]
        await a.close()
        await b.close()
        return stored, taken

    stored, taken = run(scenario())
    assert stored == [entry(name) for name in names]
    assert taken == [True] * 5  # a's leases freed; b's own lease still b's


def test_memory_store_lookup_grants_the_lease_for_a_new_origin() -> None:
    backend = Backend("memory", "memory", None)

    async def scenario() -> list[object]:
        store = backend.open()
        first = await store.lookup(ORIGIN, "a", 60)
        await store.put_and_release(entry(ORIGIN), "a")
        await store.put_and_release_all([entry("https://other.example")], "a")
        return [first, await store.lookup(ORIGIN, "b", 60), await store.get("https://other.example")]

    assert run(scenario()) == [(None, True), (entry(ORIGIN), False), entry("https://other.example")]


def test_memory_store_grants_every_lease() -> None:
    """One process has one crawler state machine per origin, so the memory store never refuses (SPEC 2.1)."""
    backend = Backend("memory", "memory", None)

    async def scenario() -> list[bool]:
        store = backend.open()
        return [await store.acquire_lease(ORIGIN, holder, 60) for holder in ("a", "b")]

    assert run(scenario()) == [True, True]


def test_sqlite_lease_of_a_dead_holder_lapses_on_the_injected_clock(sqlite_backend: Backend) -> None:
    """SQLite dates leases with the store's injected clock."""
    backend = sqlite_backend
    now = [1000.0]

    async def scenario() -> list[bool]:
        a, b = backend.open(lambda: now[0]), backend.open(lambda: now[0])
        steps = [await a.acquire_lease(ORIGIN, "dead", 30)]
        await a.close()  # the holder dies without releasing
        now[0] += 29.9
        steps.append(await b.acquire_lease(ORIGIN, "alive", 30))
        now[0] += 0.1
        steps.append(await b.acquire_lease(ORIGIN, "alive", 30))
        await b.close()
        return steps

    assert run(scenario()) == [True, False, True]


def test_sqlite_renewal_extends_the_lease_from_now(sqlite_backend: Backend) -> None:
    """The holder's acquire renews (refresh.py renews every third of the TTL while fetching): the lease then lasts
    a full TTL from the renewal, not from the first acquire."""
    backend = sqlite_backend
    now = [1000.0]

    async def scenario() -> list[bool]:
        a, b = backend.open(lambda: now[0]), backend.open(lambda: now[0])
        steps = [await a.acquire_lease(ORIGIN, "holder", 15)]
        now[0] += 10
        steps.append(await a.acquire_lease(ORIGIN, "holder", 15))  # renewed: now lasts until 1025
        now[0] += 10
        steps.append(await b.acquire_lease(ORIGIN, "other", 15))  # 1020: past the first TTL, still held
        now[0] += 5
        steps.append(await b.acquire_lease(ORIGIN, "other", 15))  # 1025: lapsed
        await a.close()
        await b.close()
        return steps

    assert run(scenario()) == [True, True, False, True]


def test_redis_lease_of_a_dead_holder_lapses(redis_backend: Backend) -> None:
    """Redis lease lifetimes are server time (PX): a short real lifetime, polled with a bounded loop."""
    backend = redis_backend

    async def scenario() -> tuple[bool, bool, bool]:
        a, b = backend.open(), backend.open()
        first = await a.acquire_lease(ORIGIN, "dead", 60)
        refused = await b.acquire_lease(ORIGIN, "alive", 60)
        await a.acquire_lease(ORIGIN, "dead", 0.05)  # renewed with a short life, then the holder dies
        await a.close()
        deadline = time.monotonic() + DEADLINE
        while not await b.acquire_lease(ORIGIN, "alive", 60):
            assert time.monotonic() < deadline, "the dead holder's lease never lapsed"
        await b.close()
        return first, refused, True

    assert run(scenario()) == (True, False, True)


def test_memory_store_evicts_the_least_recently_used_origin() -> None:
    async def scenario() -> list[bool]:
        store = open_store("memory", max_origins=2)
        await store.put(entry("https://a.example"))
        await store.put(entry("https://b.example"))
        await store.get("https://a.example")  # a is now more recent than b
        await store.put(entry("https://c.example"))
        return [await store.get(f"https://{name}.example") is not None for name in "abc"]

    assert run(scenario()) == [True, False, True]


def test_count_and_where(backend: Backend) -> None:
    """``count`` is the number of origins with an entry (a put over an existing one adds none); ``where`` names the
    store's kind and file or server for the start-up line (reporting/startup.py)."""

    async def scenario() -> tuple[list[int], str]:
        store = backend.open()
        counts = [await store.count()]
        for origin in ("https://a.example", "https://b.example", "https://a.example"):
            await store.put(entry(origin))
            counts.append(await store.count())
        await store.close()
        return counts, store.where

    counts, where = run(scenario())
    assert counts == [0, 1, 2, 2]
    assert where.startswith(("memory (this process only, at most ", "SQLite file /", "redis://127.0.0.1:"))
