"""The history of versions (stores/_history.py) in a real SQLite file and a real redis-server: one row per body and
outcome with its first and last sighting, bodies kept once, the retention, 0 = off at no cost, only fresh downloads
recorded, every write path, and a file of layout 1 upgraded when opened."""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
import redis

from scrapy_rep.stores import Entry, HistoryVersion, MemoryStore, Outcome, SQLiteStore, Store, Version, open_store

from .storetools import Backend, RedisServer, run

T = TypeVar("T")
ORIGIN = "https://example.com"
OTHER = "https://other.example"
DAY = 86400.0
V1 = b"User-agent: *\nDisallow: /private\n"
V2 = b"User-agent: *\nDisallow: /\n"


def seen(origin: str, body: bytes, at: float, *, status: int = 200, url: str | None = None,
         outcome: Outcome = Outcome.RULES) -> Entry:
    """A fresh download's entry: ``body`` served at ``at``."""
    kept = body if outcome is Outcome.RULES else b""
    return Entry(origin, outcome, at, at + DAY, body=kept, status=status,
                 version=Version.of(kept, at, status, url or f"{origin}/robots.txt"))


def with_store(uri: str, work: Callable[[Store], Awaitable[T]], versions: int = 100) -> T:
    async def scenario() -> T:
        store = open_store(uri, history_versions=versions)
        try:
            return await work(store)
        finally:
            await store.close()

    return run(scenario())


def put_all(uri: str, *entries: Entry, versions: int = 100) -> list[HistoryVersion]:
    """Each entry put in turn; then ``ORIGIN``'s history."""
    async def work(store: Store) -> list[HistoryVersion]:
        for item in entries:
            await store.put(item)
        return await store.history(ORIGIN)

    return with_store(uri, work, versions)


def summary(versions: list[HistoryVersion]) -> list[tuple[str, str, float, float, int | None, str | None]]:
    return [(v.id[:8], v.outcome.value, v.first_seen, v.last_seen, v.status, v.url) for v in versions]


def short(body: bytes) -> str:
    return Version.of(body, 0.0, None, None).id[:8]


def test_each_version_is_kept_once_with_its_first_and_last_sighting(shared_backend: Backend) -> None:
    """V1 at 1000 and 2000, V2 at 3000, V1 again at 4000 from another URL, then a late write of V1 seen at 500:
    two rows, newest first; first/last seen widened; status and URL of the latest sighting only."""
    history = put_all(shared_backend.uri, seen(ORIGIN, V1, 1000.0), seen(ORIGIN, V1, 2000.0),
                      seen(ORIGIN, V2, 3000.0, status=203),
                      seen(ORIGIN, V1, 4000.0, url="https://www.example.com/robots.txt"),
                      seen(ORIGIN, V1, 500.0, status=299, url="https://late.example/robots.txt"))
    assert summary(history) == [
        (short(V1), "rules", 500.0, 4000.0, 200, "https://www.example.com/robots.txt"),
        (short(V2), "rules", 3000.0, 3000.0, 203, f"{ORIGIN}/robots.txt"),
    ]
    assert [v.body for v in history] == [V1, V2]
    assert history[0].packed_body != V1  # kept compressed, as entries are


def test_an_empty_200_and_a_404_are_two_versions_of_one_body(shared_backend: Backend) -> None:
    history = put_all(shared_backend.uri, seen(ORIGIN, b"", 1000.0),
                      seen(ORIGIN, b"", 2000.0, status=404, outcome=Outcome.ALLOW_ALL))
    assert summary(history) == [(short(b""), "allow-all", 2000.0, 2000.0, 404, f"{ORIGIN}/robots.txt"),
                                (short(b""), "rules", 1000.0, 1000.0, 200, f"{ORIGIN}/robots.txt")]
    assert [v.body for v in history] == [b"", b""]


def test_only_fresh_downloads_are_recorded(shared_backend: Backend) -> None:
    """A copy kept on error (stale-on-error: the old version, a failure streak) is not a sighting of its version;
    neither is a failure with no copy, nor an entry without a version."""
    kept = seen(ORIGIN, V1, 1000.0)
    kept_on_error = Entry(ORIGIN, Outcome.RULES, 1000.0, 9000.0, body=V1, status=503, error="HTTP 503",
                          first_failure_at=5000.0, failures=1, version=kept.version)
    no_copy = Entry(OTHER, Outcome.DISALLOW_ALL, 5000.0, 6000.0, status=503, first_failure_at=5000.0, failures=1)

    async def work(store: Store) -> tuple[list[HistoryVersion], list[HistoryVersion]]:
        for item in (kept, kept_on_error, no_copy, Entry(OTHER, Outcome.RULES, 1.0, 2.0, body=V2, status=200)):
            await store.put(item)
        return await store.history(ORIGIN), await store.history(OTHER)

    history, other = with_store(shared_backend.uri, work)
    assert summary(history) == [(short(V1), "rules", 1000.0, 1000.0, 200, f"{ORIGIN}/robots.txt")]
    assert other == []


def bodies_stored(backend: Backend) -> int:
    if backend.name == "sqlite":
        with sqlite3.connect(backend.uri.removeprefix("sqlite:///")) as conn:
            count: int = conn.execute("SELECT COUNT(*) FROM rep_bodies").fetchone()[0]
        conn.close()
        return count
    with redis.Redis.from_url(backend.uri) as client:
        return len(client.keys("rep:body:*"))


def test_the_retention_keeps_the_versions_last_seen_latest_and_drops_unused_bodies(shared_backend: Backend) -> None:
    """At most 3 rows per origin: a fifth version drops the two last seen longest ago (V1 was seen again, so it
    stays); a body no row names any more goes, one another origin's row names stays."""
    bodies = [f"Disallow: /{n}\n".encode() for n in range(5)]
    entries = [seen(ORIGIN, body, 1000.0 * (n + 1)) for n, body in enumerate(bodies)]
    history = put_all(shared_backend.uri, seen(OTHER, bodies[0], 10.0), entries[0], entries[1], entries[2],
                      seen(ORIGIN, bodies[1], 3500.0), entries[3], entries[4], versions=3)
    assert [(v.body, v.last_seen) for v in history] == [(bodies[4], 5000.0), (bodies[3], 4000.0), (bodies[1], 3500.0)]
    assert bodies_stored(shared_backend) == 4  # bodies[2] went; bodies[0] is OTHER's too
    other = with_store(shared_backend.uri, lambda store: store.history(OTHER))
    assert [v.body for v in other] == [bodies[0]]


def test_deleting_an_entry_keeps_its_history(shared_backend: Backend) -> None:
    """``cache purge`` forces a fetch; it does not rewrite what the origin served."""
    async def work(store: Store) -> tuple[bool, list[HistoryVersion]]:
        await store.put(seen(ORIGIN, V1, 1000.0))
        return await store.delete(ORIGIN), await store.history(ORIGIN)  # type: ignore[attr-defined]

    deleted, history = with_store(shared_backend.uri, work)
    assert deleted and [v.body for v in history] == [V1]


def test_put_and_release_all_records_every_entry_with_its_lease_released(shared_backend: Backend) -> None:
    async def work(store: Store) -> tuple[list[list[bytes]], bool]:
        for origin in (ORIGIN, OTHER):
            assert await store.acquire_lease(origin, "me", 60)
        await store.put_and_release_all([seen(ORIGIN, V1, 1000.0), seen(OTHER, V2, 1000.0)], "me")
        await store.put_and_release(seen(ORIGIN, V2, 2000.0), "me")
        histories = [[v.body for v in await store.history(origin)] for origin in (ORIGIN, OTHER)]
        return histories, await store.acquire_lease(OTHER, "other", 60)

    assert with_store(shared_backend.uri, work) == ([[V2, V1], [V2]], True)


def test_redis_records_through_a_script_the_server_forgot(redis_server: RedisServer) -> None:
    """After SCRIPT FLUSH (a restarted server) the pipelined scripts fail with NOSCRIPT and run again, loaded."""
    async def work(store: Store) -> list[HistoryVersion]:
        await store.put_and_release_all([seen(ORIGIN, V1, 1000.0)], "me")
        with redis.Redis(port=redis_server.port) as client:
            client.script_flush()
        await store.put_and_release_all([seen(ORIGIN, V2, 2000.0)], "me")
        return await store.history(ORIGIN)

    assert [v.body for v in with_store(redis_server.url, work)] == [V2, V1]


def test_redis_history_keys_never_expire(redis_server: RedisServer) -> None:
    put_all(redis_server.url, seen(ORIGIN, V1, 1000.0))
    with redis.Redis(port=redis_server.port) as client:
        assert client.pttl(f"rep:history:{ORIGIN}") == -1
        assert client.pttl(f"rep:body:{Version.of(V1, 0, None, None).id}") == -1
        assert client.pttl(f"rep:entry:{ORIGIN}") > 0


#: What redis-py sends when it connects, whatever the store does.
_HANDSHAKE = {"hello", "client|setinfo", "select", "ping"}


def test_off_redis_writes_no_history_and_no_other_command(redis_server: RedisServer) -> None:
    with redis.Redis(port=redis_server.port) as client:
        client.config_resetstat()
        assert put_all(redis_server.url, seen(ORIGIN, V1, 1000.0), versions=0) == []
        commands = {name.removeprefix("cmdstat_") for name in client.info("commandstats")} - _HANDSHAKE
        assert client.keys() == [f"rep:entry:{ORIGIN}".encode()]
    assert commands == {"set", "hgetall", "config|resetstat"}  # the put is one SET; history() reads nothing more


def inline_statements(uri: str, versions: int, step: Callable[[Store], Awaitable[Any]]) -> list[str]:
    """The first word of each statement ``step`` runs on the SQLite store's inline connection."""
    async def work(store: Store) -> list[str]:
        assert isinstance(store, SQLiteStore)
        store.check()
        await store.get(ORIGIN)  # opens the inline connection
        assert store._inline is not None
        statements: list[str] = []
        store._inline.set_trace_callback(statements.append)
        await step(store)
        store._inline.set_trace_callback(None)
        return [statement.split()[0] for statement in statements]

    return with_store(uri, work, versions)


def test_off_sqlite_runs_no_extra_statement(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path}/rep.db"
    assert inline_statements(uri, 0, lambda store: store.put(seen(ORIGIN, V1, 1000.0))) == ["INSERT"]
    assert inline_statements(uri, 0, lambda store: store.put_and_release(seen(ORIGIN, V1, 2000.0), "me")) == [
        "BEGIN", "INSERT", "DELETE", "COMMIT"]
    assert with_store(uri, lambda store: store.history(ORIGIN)) == []
    on = inline_statements(uri, 100, lambda store: store.put(seen(ORIGIN, V1, 3000.0)))
    assert on == ["BEGIN", "INSERT", "INSERT", "INSERT", "DELETE", "COMMIT"]  # entry, body, row, retention


_V1_LAYOUT = """
CREATE TABLE rep_entries (origin TEXT PRIMARY KEY, record BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE rep_leases (origin TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at REAL NOT NULL) WITHOUT ROWID;
PRAGMA user_version = 1;
"""


def test_a_layout_1_file_is_upgraded_in_place_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "rep.db"
    first = seen(ORIGIN, V1, 1000.0)
    with_store(f"sqlite:///{path}", lambda store: store.put(first), versions=0)
    with sqlite3.connect(path) as conn:  # back to the layout of the release before: its tables and version only
        record = conn.execute("SELECT record FROM rep_entries").fetchone()[0]
    conn.close()
    path.unlink()
    conn = sqlite3.connect(path)
    conn.executescript(_V1_LAYOUT)
    conn.execute("INSERT INTO rep_entries VALUES (?, ?)", (ORIGIN, record))
    conn.commit()
    conn.close()

    async def work(store: Store) -> tuple[Entry | None, list[HistoryVersion]]:
        found = await store.get(ORIGIN)
        await store.put(seen(ORIGIN, V2, 2000.0))
        return found, await store.history(ORIGIN)

    found, history = with_store(f"sqlite:///{path}", work)
    assert found == first
    assert [v.body for v in history] == [V2]
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
    conn.close()


def test_a_damaged_row_is_skipped_and_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A body whose SHA-256 is not its id (edited by hand) is not shown as the version's bytes."""
    path = tmp_path / "rep.db"
    put_all(f"sqlite:///{path}", seen(ORIGIN, V1, 1000.0), seen(ORIGIN, V2, 2000.0))
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE rep_bodies SET body = ? WHERE id = ?", (b"", Version.of(V2, 0, None, None).id))
    conn.close()
    history = with_store(f"sqlite:///{path}", lambda store: store.history(ORIGIN))
    assert [v.body for v in history] == [V1]
    assert "Skipping a damaged history row of https://example.com" in caplog.text


def test_the_memory_store_keeps_no_history() -> None:
    async def work() -> list[HistoryVersion]:
        store = MemoryStore(10)
        await store.put(seen(ORIGIN, V1, 1000.0))
        return await store.history(ORIGIN)

    assert run(work()) == []
