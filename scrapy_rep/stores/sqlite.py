"""A persistent store in one SQLite file, shared by the crawler processes of one machine (SPEC 3.2).

Calls run inline on the calling (reactor) thread, not in a worker thread. The middleware keeps its own in-process
cache, so the store is consulted once per origin per expiry, not per request; each call is one primary-key
statement in WAL mode, where readers never wait and a writer waits only for another writer's single-row
transaction (tens of microseconds: see docs/stores.md). Inline calls also work under any Twisted reactor, which
a thread hand-off awaited from a coroutine would not. The busy timeout bounds the worst case: a lock held longer
than ``timeout`` raises ``StoreError`` instead of stalling the crawl.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from typing import Any

from scrapy_rep.stores._base import CorruptEntry, Entry, StoreError
from scrapy_rep.stores._codec import decode, encode

logger = logging.getLogger(__name__)

#: ``PRAGMA user_version`` of the table layout below; a file with another non-zero version is refused.
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rep_entries (origin TEXT PRIMARY KEY, record BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rep_leases (
    origin TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at REAL NOT NULL
) WITHOUT ROWID;
"""

# Atomic acquire: insert, or take over a lease that has lapsed or is already ours; rowcount 0 means refused.
_ACQUIRE = """
INSERT INTO rep_leases (origin, holder, expires_at) VALUES (?, ?, ?)
ON CONFLICT (origin) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
WHERE rep_leases.expires_at <= ? OR rep_leases.holder = excluded.holder
"""


class SQLiteStore:
    """Entries and fetch leases in the SQLite file at ``path`` (created on first use).

    The file is opened lazily on the first call, so opening the store never fails; an unreadable, corrupt or
    locked database raises ``StoreError`` from the call and the next call reconnects. Lease times come from
    ``clock`` (epoch seconds), so processes sharing the file must share a wall clock, as on one machine.
    """

    def __init__(self, path: str, *, clock: Callable[[], float], timeout: float) -> None:
        self.path = path
        self.corrupt_records = 0
        self._clock = clock
        self._timeout = timeout
        self._conn: sqlite3.Connection | None = None

    async def get(self, origin: str) -> Entry | None:
        rows = self._run("SELECT record FROM rep_entries WHERE origin = ?", (origin,)).fetchall()
        if not rows:
            return None
        try:
            return decode(rows[0][0])
        except CorruptEntry as exc:
            self.corrupt_records += 1
            logger.warning("Ignoring corrupt robots.txt cache record for %s in %s: %s", origin, self.path, exc)
            return None

    async def put(self, entry: Entry) -> None:
        self._run(
            "INSERT OR REPLACE INTO rep_entries (origin, record) VALUES (?, ?)",
            (entry.origin, encode(entry)),
        )

    async def acquire_lease(self, origin: str, holder: str, ttl: float) -> bool:
        now = self._clock()
        return self._run(_ACQUIRE, (origin, holder, now + ttl, now)).rowcount == 1

    async def release_lease(self, origin: str, holder: str) -> None:
        self._run("DELETE FROM rep_leases WHERE origin = ? AND holder = ?", (origin, holder))

    async def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _run(self, sql: str, params: tuple[Any, ...]) -> sqlite3.Cursor:
        """Execute one auto-committed statement; any SQLite failure becomes ``StoreError`` and drops the
        connection so that the next call starts afresh."""
        try:
            return self._connection().execute(sql, params)
        except sqlite3.Error as exc:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            raise StoreError(f"SQLite store {self.path}: {exc}") from exc

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite3.connect(self.path, timeout=self._timeout, isolation_level=None)
            try:
                _prepare_within(conn, self.path, self._timeout)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return self._conn


def _prepare_within(conn: sqlite3.Connection, path: str, timeout: float) -> None:
    """``_prepare``, retried for up to ``timeout`` seconds while the file is locked: switching a new file to WAL
    needs an exclusive lock, and SQLite refuses it at once, without its busy timeout, when several processes
    open the new file together."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            _prepare(conn, path)
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.005)  # as SQLite's own busy handler does; only while a new file is being set up


def _prepare(conn: sqlite3.Connection, path: str) -> None:
    """Switch to WAL and check the table layout, creating it in a new file. An existing file needs no write
    lock here, so reconnecting while another process writes does not wait."""
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if mode != "wal":
        # e.g. a network file system: still correct, but writers block readers.
        logger.warning("SQLite store %s runs in journal mode %r, not WAL", path, mode)
    conn.execute("PRAGMA synchronous = NORMAL")  # a cache: a power loss may drop the last writes, never corrupt
    if _schema_version(conn) == SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _schema_version(conn) == 0:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _schema_version(conn: sqlite3.Connection) -> int:
    """The file's layout version: 0 for a new file; another release's layout raises."""
    version: int = conn.execute("PRAGMA user_version").fetchone()[0]
    if version not in (0, SCHEMA_VERSION):
        raise sqlite3.DatabaseError(f"unknown schema version {version} (this release reads {SCHEMA_VERSION})")
    return version
