"""The SQLite store's statements (``sqlite.SQLiteStore``) on the tables of ``_sqlite_file``, how several run in one
transaction, and a statement waiting for the worker (``Call``). Each statement alone is atomic across the processes
sharing the file. Parameters in the order the comments give."""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import dataclass
from typing import Any

from scrapy_rep.stores._base import StoreError

GET = "SELECT record FROM rep_entries WHERE origin = ?"  # origin
COUNT = "SELECT COUNT(*) FROM rep_entries"
#: A page of the listing in origin order (keyset: no read transaction is held between pages): after, limit.
PAGE = "SELECT origin, record FROM rep_entries WHERE origin > ? ORDER BY origin LIMIT ?"
PUT = "INSERT OR REPLACE INTO rep_entries (origin, record) VALUES (?, ?)"  # origin, record
DELETE = "DELETE FROM rep_entries WHERE origin = ?"  # origin
RELEASE = "DELETE FROM rep_leases WHERE origin = ? AND holder = ?"  # origin, holder

# Take over a lease that has lapsed or is already ours; with no row to take over, the insert goes in.
_TAKE_OVER = """
ON CONFLICT (origin) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
WHERE rep_leases.expires_at <= ? OR rep_leases.holder = excluded.holder
"""

#: Atomic acquire: insert, or take over; rowcount 0 means refused. Parameters: origin, holder, expires_at, now.
ACQUIRE = "INSERT INTO rep_leases (origin, holder, expires_at) VALUES (?, ?, ?)" + _TAKE_OVER

#: The lease only while the origin has no entry (``lookup``): one statement, so atomic; the parameters are
#: ACQUIRE's with the origin again before ``now``.
ACQUIRE_IF_NO_ENTRY = """
INSERT INTO rep_leases (origin, holder, expires_at)
SELECT ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM rep_entries WHERE origin = ?)""" + _TAKE_OVER


@dataclass(slots=True)
class Call:
    """One statement waiting for the store's worker, and the future its caller awaits."""

    sql: str
    params: tuple[Any, ...]
    future: asyncio.Future[tuple[list[Any], int]]


#: A statement's rows and row count, or the StoreError it raised.
StatementOutcome = tuple[list[Any], int] | StoreError


def writes(sql: str) -> bool:
    """The statement may write (anything but a SELECT)."""
    return not sql.lstrip().upper().startswith("SELECT")


def transaction(conn: sqlite3.Connection,
                statements: list[tuple[str, tuple[Any, ...]]]) -> list[tuple[list[Any], int]]:
    """Each statement's rows and row count, all in one transaction (``BEGIN IMMEDIATE`` when one writes: the write
    lock is taken first, under the connection's busy timeout); on failure it is rolled back and the error raised."""
    conn.execute("BEGIN IMMEDIATE" if any(writes(sql) for sql, _ in statements) else "BEGIN")
    try:
        done = []
        for sql, params in statements:
            cursor = conn.execute(sql, params)
            done.append((cursor.fetchall(), cursor.rowcount))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return done


def results_or_error(outcomes: list[tuple[list[Any], int] | BaseException]) -> list[tuple[list[Any], int]]:
    """The outcomes' results (rows, row count) of statements run together, or the first one's error raised."""
    results = []
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
        results.append(outcome)
    return results
