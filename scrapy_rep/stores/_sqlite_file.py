"""The SQLite store's file: its table layout and version, and the two kinds of connection the store opens on it
(``sqlite.SQLiteStore``): the worker's, which sets a new file up and may wait for locks, and the reactor thread's,
which waits for nothing."""

from __future__ import annotations

import logging
import sqlite3
import time

from scrapy_rep.stores._sqlite_history import TABLES as HISTORY_TABLES

logger = logging.getLogger("scrapy_rep.stores.sqlite")  # the store's own logger: one name for its every line

#: ``PRAGMA user_version`` of the table layout below. 1: entries and leases; 2 (2026-11-28) adds the history
#: (``_sqlite_history``), and a file of layout 1 is upgraded to it when opened. A file of a later layout is refused.
SCHEMA_VERSION = 2
#: Each connection's page cache, KiB (SQLite's default: 2,000). A crawl reads an origin's record once and writes it
#: once, so pages beyond the B-tree's upper levels are seldom read again: at 100,000 rows in random order the store's
#: CPU per origin is the same with 512 KiB (benchmarks/bench_sqlite_origins.py), and the two connections' caches were
#: most of the store's memory at a few thousand origins (issue 21).
CACHE_KIB = 512

#: Every table of the layout (``IF NOT EXISTS``: a file of an earlier layout gets the tables it lacks).
_TABLES = (
    "CREATE TABLE IF NOT EXISTS rep_entries (origin TEXT PRIMARY KEY, record BLOB NOT NULL) WITHOUT ROWID",
    """CREATE TABLE IF NOT EXISTS rep_leases (
    origin TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at REAL NOT NULL
) WITHOUT ROWID""",
    *HISTORY_TABLES,
)


def prepare_within(conn: sqlite3.Connection, path: str, timeout: float) -> None:
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
    """Switch to WAL and check the table layout, creating it in a new file and adding what a file of an earlier
    layout lacks. A file of this layout needs no write lock here, so reconnecting while another process writes does
    not wait."""
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if mode != "wal":
        # e.g. a network file system: still correct, but writers block readers.
        logger.warning("SQLite store %s runs in journal mode %r, not WAL", path, mode)
    conn.execute("PRAGMA synchronous = NORMAL")  # a cache: a power loss may drop the last writes, never corrupt
    conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
    if schema_version(conn) == SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if schema_version(conn) != SCHEMA_VERSION:  # read again under the lock: another process may have done it
            for statement in _TABLES:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def schema_version(conn: sqlite3.Connection) -> int:
    """The file's layout version: 0 for a new file, 1 for one to upgrade; a later release's layout raises."""
    version: int = conn.execute("PRAGMA user_version").fetchone()[0]
    if not 0 <= version <= SCHEMA_VERSION:
        raise sqlite3.DatabaseError(f"unknown schema version {version} (this release reads {SCHEMA_VERSION})")
    return version


def open_inline(path: str) -> sqlite3.Connection | None:
    """The reactor thread's connection: busy timeout 0, so a statement that would wait fails at once, and no automatic
    checkpoint (the store runs them in its worker). Only on a file the worker's connection has set up (WAL, this
    layout); otherwise None, and the worker runs every statement."""
    try:
        conn = sqlite3.connect(path, timeout=0, isolation_level=None, check_same_thread=False)
    except sqlite3.Error:
        return None
    try:
        conn.execute("PRAGMA wal_autocheckpoint = 0")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal" or schema_version(conn) != SCHEMA_VERSION:
            raise sqlite3.DatabaseError("not set up yet")
    except sqlite3.Error:
        conn.close()
        return None
    return conn
