"""The SQLite store: persistence across runs, several processes on one file, and failures -> StoreError."""

from __future__ import annotations

import asyncio
import multiprocessing
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scrapy_rep.stores import Entry, StoreError, open_store

from .storetools import entry, race_for_leases, race_for_lookups, run

ORIGIN = "https://example.com"


def test_entries_survive_a_restart(tmp_path: Path) -> None:
    """SPEC 2.2/2.4 across runs: the last good copy and first-failure time are still there after a reopen."""
    uri = f"sqlite:///{tmp_path}/cache.db"
    written = entry(ORIGIN, status=503, error="TimeoutError", first_failure_at=1500.0, failures=2)

    async def first_run() -> None:
        store = open_store(uri)
        await store.put(written)
        await store.close()

    async def second_run() -> Entry | None:
        store = open_store(uri)
        read = await store.get(ORIGIN)
        await store.close()
        return read

    run(first_run())
    assert run(second_run()) == written


def test_database_is_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"

    async def scenario() -> None:
        store = open_store(f"sqlite:///{path}")
        await store.put(entry(ORIGIN))
        await store.close()

    run(scenario())
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_each_connection_caches_at_most_cache_kib_of_pages(tmp_path: Path) -> None:
    """Both of the store's connections (the worker's, the reactor thread's) keep CACHE_KIB of pages, not SQLite's
    2 MiB default: at a few thousand origins the two default caches were most of the store's memory (issue 21)."""
    from scrapy_rep.stores import sqlite as module
    from scrapy_rep.stores._sqlite_file import CACHE_KIB

    async def scenario() -> tuple[int, int]:
        store = open_store(f"sqlite:///{tmp_path}/cache.db")
        assert isinstance(store, module.SQLiteStore)
        store.check()  # a worker's connection sets the file up
        await store.put(entry(ORIGIN))  # opens the inline connection
        assert store._inline is not None
        sizes = (store._connection().execute("PRAGMA cache_size").fetchone()[0],  # the worker's (as it opens it)
                 store._inline.execute("PRAGMA cache_size").fetchone()[0])
        await store.close()
        return sizes

    assert CACHE_KIB < 2000
    assert run(scenario()) == (-CACHE_KIB, -CACHE_KIB)


def test_relative_path_is_relative_to_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)

    async def scenario() -> None:
        store = open_store("sqlite:///./sub/../cache.db")
        await store.put(entry(ORIGIN))
        await store.close()

    run(scenario())
    assert (tmp_path / "cache.db").is_file()


def race(contender: Callable[..., list[str]], uri: str, origins: list[str]) -> tuple[list[str], list[list[str]]]:
    """Four spawned processes run ``contender(uri, holder, origins, barrier)`` at once: the holders' names, and the
    origins each won."""
    ctx = multiprocessing.get_context("spawn")
    holders = [f"process-{i}" for i in range(4)]
    with ctx.Manager() as manager:
        barrier = manager.Barrier(len(holders))
        with ctx.Pool(len(holders)) as pool:
            return holders, pool.starmap(contender, [(uri, holder, origins, barrier) for holder in holders])


def test_processes_sharing_one_file_each_win_distinct_leases(tmp_path: Path) -> None:
    """SPEC 3.2: four processes race for the leases of 200 origins on one file; each origin is won exactly
    once, every winner's entry is stored, and no process hit a lock error."""
    uri = f"sqlite:///{tmp_path}/shared.db"
    origins = [f"https://site{i}.example" for i in range(200)]
    holders, won = race(race_for_leases, uri, origins)

    assert sorted(origin for origins_won in won for origin in origins_won) == sorted(origins)

    async def stored() -> dict[str, str | None]:
        store = open_store(uri)
        result = {}
        for origin in origins:
            read = await store.get(origin)
            assert read is not None
            result[origin] = read.error
        await store.close()
        return result

    assert run(stored()) == {origin: holder for holder, ws in zip(holders, won, strict=True) for origin in ws}


def test_processes_looking_up_one_file_each_fetch_distinct_origins_and_free_every_lease(tmp_path: Path) -> None:
    """As crawlers do: four processes look up 200 new origins on one file (``lookup``), and the one granted an
    origin's lease stores its entry and frees the lease in one transaction (``put_and_release``); under their
    contention some steps go through the worker. Each origin is granted exactly once, its entry names the process
    it was granted to, and no lease is left."""
    path = tmp_path / "shared.db"
    origins = [f"https://site{i}.example" for i in range(200)]
    holders, won = race(race_for_lookups, f"sqlite:///{path}", origins)

    assert sorted(origin for origins_won in won for origin in origins_won) == sorted(origins)

    async def stored() -> dict[str, str | None]:
        store = open_store(f"sqlite:///{path}")
        result = {origin: (await store.get(origin)).error for origin in origins}  # type: ignore[union-attr]
        await store.close()
        return result

    assert run(stored()) == {origin: holder for holder, ws in zip(holders, won, strict=True) for origin in ws}
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM rep_leases").fetchone()[0] == 0
    conn.close()


def test_non_text_record_reads_as_missing(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"

    async def scenario() -> tuple[Entry | None, int]:
        store = open_store(f"sqlite:///{path}")
        await store.put(entry(ORIGIN))
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE rep_entries SET record = 42")
        conn.close()
        return await store.get(ORIGIN), store.corrupt_records  # type: ignore[attr-defined]

    assert run(scenario()) == (None, 1)


def test_a_file_that_is_not_a_database_raises_store_error(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    path.write_bytes(b"this is not an SQLite database" * 100)

    async def scenario() -> None:
        store = open_store(f"sqlite:///{path}")
        with pytest.raises(StoreError, match="not a database"):
            await store.get(ORIGIN)
        with pytest.raises(StoreError):  # every call tries again, and fails again
            await store.put(entry(ORIGIN))

    run(scenario())


def test_an_unwritable_location_raises_store_error(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = open_store(f"sqlite:///{tmp_path}/missing-dir/cache.db")
        with pytest.raises(StoreError, match="unable to open"):
            await store.get(ORIGIN)

    run(scenario())


def test_a_database_of_another_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 7")
    conn.close()

    async def scenario() -> None:
        store = open_store(f"sqlite:///{path}")
        with pytest.raises(StoreError, match="schema version 7"):
            await store.get(ORIGIN)

    run(scenario())


def test_a_lock_held_too_long_raises_store_error_and_readers_carry_on(tmp_path: Path) -> None:
    """Another process holding the write lock past the busy timeout: writes fail with StoreError (not a
    stall), reads still work (WAL), and writes work again once the lock is gone."""
    path = tmp_path / "cache.db"

    async def scenario() -> None:
        store = open_store(f"sqlite:///{path}?timeout=0.05")
        await store.put(entry(ORIGIN))
        blocker = sqlite3.connect(path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        with pytest.raises(StoreError, match="locked"):
            await store.put(entry("https://other.example"))
        with pytest.raises(StoreError, match="locked"):
            await store.acquire_lease(ORIGIN, "a", 60)
        assert await store.get(ORIGIN) == entry(ORIGIN)
        blocker.execute("ROLLBACK")
        blocker.close()
        await store.put(entry("https://other.example"))
        assert await store.get("https://other.example") == entry("https://other.example")
        await store.close()

    run(scenario())


def test_a_lock_wait_happens_off_the_event_loop(tmp_path: Path) -> None:
    """While a put waits for another connection's write lock, the event loop keeps running: here the loop itself
    releases that lock, so the put succeeds. Run inline, the put would freeze the loop until its timeout and fail."""
    path = tmp_path / "cache.db"

    async def scenario() -> Entry | None:
        store = open_store(f"sqlite:///{path}?timeout=3")
        await store.put(entry(ORIGIN))
        blocker = sqlite3.connect(path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")

        async def release_lock() -> None:
            blocker.execute("ROLLBACK")
            blocker.close()

        await asyncio.gather(store.put(entry("https://other.example")), release_lock())
        read = await store.get("https://other.example")
        await store.close()
        return read

    assert run(scenario()) == entry("https://other.example")


def test_under_a_non_asyncio_reactor_statements_run_inline(tmp_path: Path) -> None:
    """With the select reactor there is no asyncio loop to wait on; the store still works, inline."""
    code = (
        "import sys\n"
        "from twisted.internet import selectreactor; selectreactor.install()\n"
        "from twisted.internet import defer, task\n"
        "from scrapy_rep.stores import Entry, Outcome, open_store\n"
        "async def main():\n"
        "    store = open_store(sys.argv[1])\n"
        "    await store.put(Entry('https://a.example', Outcome.ALLOW_ALL, 1.0, 2.0, status=404))\n"
        "    print('read', (await store.get('https://a.example')).status, await store.acquire_lease('o', 'h', 9))\n"
        "    await store.close()\n"
        "task.react(lambda reactor: defer.Deferred.fromCoroutine(main()))\n"
    )
    done = subprocess.run([sys.executable, "-c", code, f"sqlite:///{tmp_path}/cache.db"], capture_output=True,
                          text=True, timeout=60, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "read 404 True"


def test_statements_run_inline_when_nothing_holds_a_lock_and_the_wal_is_checkpointed_off_the_loop(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A statement that need not wait finishes without yielding to the event loop: no thread hand-off. Every
    CHECKPOINT_EVERY inline writes the worker copies the WAL into the file, holding nothing back, and the WAL
    starts over instead of growing."""
    from scrapy_rep.stores import sqlite as module

    monkeypatch.setattr(module, "CHECKPOINT_EVERY", 20)
    path = tmp_path / "cache.db"
    wal = path.with_name(path.name + "-wal")

    def finishes_at_once(coro: Any) -> Any:
        try:
            coro.send(None)
        except StopIteration as stop:
            return stop.value
        coro.close()
        raise AssertionError("it waited for the worker")

    async def scenario() -> None:
        store = open_store(f"sqlite:///{path}")
        assert isinstance(store, module.SQLiteStore)
        store.check()  # at start-up: sets the file up
        assert finishes_at_once(store.put(entry(ORIGIN))) is None  # the first call opens the inline connection
        assert finishes_at_once(store.get(ORIGIN)) == entry(ORIGIN)
        assert finishes_at_once(store.acquire_lease(ORIGIN, "me", 60)) is True
        for n in range(17):  # with the put and the lease, 19 writes inline (< CHECKPOINT_EVERY): the WAL grows
            finishes_at_once(store.put(entry(f"https://site-{n}.example")))
        grown = wal.stat().st_size
        assert grown > 17 * 1024
        finishes_at_once(store.put(entry("https://site-17.example")))  # the 20th: a checkpoint in the worker
        assert store._checkpoint is not None
        read = asyncio.ensure_future(store.get(ORIGIN))  # called meanwhile: not held back
        await store._checkpoint
        assert await read == entry(ORIGIN)
        for n in range(18, 37):  # 19 more writes, no checkpoint: the WAL starts over instead of growing
            finishes_at_once(store.put(entry(f"https://site-{n}.example")))
        assert wal.stat().st_size < grown * 3 // 2, (grown, wal.stat().st_size)  # grown on: twice
        for n in range(37, 99):
            await store.put(entry(f"https://site-{n}.example"))
        await store.close()

    run(scenario())
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM rep_entries").fetchone()[0] == 100


def test_put_and_release_is_one_transaction_inline(tmp_path: Path) -> None:
    """With nothing holding a lock, the entry is written and the lease freed on the reactor thread, in one
    transaction (one commit), without yielding to the event loop."""
    from scrapy_rep.stores import sqlite as module

    async def scenario() -> list[str]:
        store = open_store(f"sqlite:///{tmp_path}/cache.db")
        assert isinstance(store, module.SQLiteStore)
        store.check()
        assert await store.lookup(ORIGIN, "me", 60) == (None, True)  # opens the inline connection
        assert store._inline is not None
        statements: list[str] = []
        store._inline.set_trace_callback(statements.append)
        step = store.put_and_release(entry(ORIGIN), "me")
        with pytest.raises(StopIteration):
            step.send(None)  # done at once: no thread hand-off
        store._inline.set_trace_callback(None)
        assert await store.acquire_lease(ORIGIN, "other", 60) is True  # the lease is free
        assert await store.get(ORIGIN) == entry(ORIGIN)
        await store.close()
        return [statement.split()[0] for statement in statements]

    assert run(scenario()) == ["BEGIN", "INSERT", "DELETE", "COMMIT"]


def test_put_and_release_waits_for_a_lock_in_the_worker_and_fails_whole_past_the_timeout(tmp_path: Path) -> None:
    """Another connection holds the write lock: the step goes to the worker, which waits for the lock while the loop
    runs on (here the loop releases it). Held past the timeout, the step fails with StoreError, having neither
    stored the entry nor freed the lease."""
    path = tmp_path / "cache.db"

    async def scenario() -> None:
        store = open_store(f"sqlite:///{path}?timeout=3")
        assert await store.lookup(ORIGIN, "me", 60) == (None, True)
        blocker = sqlite3.connect(path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")

        async def release_lock() -> None:
            blocker.execute("ROLLBACK")

        await asyncio.gather(store.put_and_release(entry(ORIGIN), "me"), release_lock())
        assert await store.get(ORIGIN) == entry(ORIGIN)
        assert await store.acquire_lease(ORIGIN, "other", 60) is True  # freed
        await store.close()

        impatient = open_store(f"sqlite:///{path}?timeout=0.05")
        other = "https://other.example"
        assert await impatient.lookup(other, "me", 60) == (None, True)
        blocker.execute("BEGIN IMMEDIATE")
        with pytest.raises(StoreError, match="locked"):
            await impatient.put_and_release(entry(other), "me")
        blocker.execute("ROLLBACK")
        blocker.close()
        assert await impatient.get(other) is None
        assert await impatient.acquire_lease(other, "another", 60) is False  # still held by "me"
        await impatient.close()

    run(scenario())


def test_a_step_failing_inline_is_rolled_back_and_the_worker_says_why(tmp_path: Path) -> None:
    """The second statement of an inline step fails (its table is gone): the transaction is rolled back, not left
    open holding the write lock, the worker runs the statements and the call raises StoreError; the next calls
    work, inline."""
    path = tmp_path / "cache.db"

    async def scenario() -> None:
        store = open_store(f"sqlite:///{path}?timeout=0.5")
        assert await store.lookup(ORIGIN, "me", 60) == (None, True)
        with sqlite3.connect(path) as conn:
            conn.execute("DROP TABLE rep_leases")
        conn.close()
        with pytest.raises(StoreError, match="no such table"):
            await store.put_and_release(entry(ORIGIN), "me")
        assert store._inline is not None and not store._inline.in_transaction  # type: ignore[attr-defined]
        await store.put(entry("https://other.example"))
        assert await store.get("https://other.example") == entry("https://other.example")
        await store.close()

    run(scenario())
