"""A persistent store in one SQLite file, shared by the crawler processes of one machine (SPEC 3.2).

A statement runs on the event loop's thread when it cannot wait, else in the store's one worker thread:

- *Inline first* (issue 21). A statement alone takes tens of microseconds. The reactor thread has its own connection
  with a busy timeout of 0 and no automatic checkpoint: a statement that would wait for another connection's lock
  fails at once (SQLITE_BUSY) and nothing of it is done, and the WAL checkpoint (which syncs the file to disk) runs
  in the worker every CHECKPOINT_EVERY inline writes, holding no statement back. So the reactor never waits on a
  lock or a disk sync. Before, every statement went through the worker, and under a busy crawl a hand-off waited
  for the GIL at each step: 120-206 ms per statement on average at 3,000 origins (p90 325-489 ms), which kept the
  robots.txt fetches' downloader places (robots.places) waiting on the store. A call of several statements
  (``put_and_release``: the record written, the version recorded, the lease freed) runs them in one transaction; its
  ``BEGIN IMMEDIATE`` is refused at once while another connection writes, and then the whole call goes to the worker.
- *The worker*, when a statement would wait (another process writes the file: SQLite's busy handler sleeps 1-100
  ms at a time, and bench_stores measured p99 waits of ~13 ms and stalls near 100 ms with four processes writing),
  on its own connection with the generous ``timeout``: the wait delays only the one origin. While the worker runs,
  later statements wait in ``_pending`` (in call order; a call's statements together); when it is free it takes them
  all as one batch (issue 26), in one transaction (``BEGIN IMMEDIATE`` when the batch writes: the write lock is
  taken first, under the busy timeout), and answers each call. A batch that fails is rolled back and its statements
  run again one by one, so each statement gets its own result or error (a call raises its first statement's).

The first call opens the inline connection (busy timeout 0: it waits for nothing), so a crawl's first robots.txt
fetches do not all wait for the worker; if that fails, the worker tries again after each of its batches. Under a
non-asyncio Twisted reactor there is no event loop to wait on, so statements run inline there, with the busy
``timeout``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from scrapy_rep.config.evidence import HISTORY_VERSIONS
from scrapy_rep.stores._base import Entry, HistoryVersion, StoredEntry, StoreError
from scrapy_rep.stores._codec import describe, read
from scrapy_rep.stores._sqlite_file import open_inline, prepare_within
from scrapy_rep.stores._sqlite_history import LIST, listed, put_statements
from scrapy_rep.stores._sqlite_sql import (
    ACQUIRE,
    ACQUIRE_IF_NO_ENTRY,
    COUNT,
    DELETE,
    GET,
    PAGE,
    RELEASE,
    Call,
    StatementOutcome,
    results_or_error,
    transaction,
    writes,
)

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: Rows per statement when listing entries (``PAGE``).
_PAGE = 500

#: Inline writes between two WAL checkpoints, which run in the worker (SQLite's own default: every 1,000 pages).
CHECKPOINT_EVERY = 500


class SQLiteStore:
    """Entries and fetch leases in the SQLite file at ``path`` (created on first use).

    The file is opened lazily on the first call, so opening the store never fails; an unreadable, corrupt or
    locked database raises ``StoreError`` from the call and the next call reconnects. Lease times come from
    ``clock`` (epoch seconds), so processes sharing the file must share a wall clock, as on one machine. Each fresh
    download's version is kept in the history, ``history_versions`` per origin at most (0: none; ``_sqlite_history``).
    """

    #: A write runs inline, tens of microseconds, or joins the worker's next batch by itself.
    batches_writes = False

    def __init__(self, path: str, *, clock: Callable[[], float], timeout: float,
                 history_versions: int = HISTORY_VERSIONS) -> None:
        self.path = path
        self._history_versions = history_versions
        self.where = f"SQLite file {os.path.abspath(path)}"
        self.corrupt_records = 0
        self._clock = clock
        self._timeout = timeout
        self._conn: sqlite3.Connection | None = None  # the worker's (or, without asyncio, the reactor's)
        self._inline: sqlite3.Connection | None = None  # the reactor thread's: busy timeout 0, no auto-checkpoint
        self._inline_writes = 0  # since the last checkpoint
        self._inline_tried = False  # the first call tried to open the inline connection
        self._checkpoint: asyncio.Future[None] | None = None
        self._worker: ThreadPoolExecutor | None = None
        self._pending: list[Call] = []  # called while a batch runs: the next batch
        self._running: asyncio.Future[list[StatementOutcome]] | None = None  # the batch in the worker

    def check(self) -> None:
        """Open the file once, creating it and its tables if new, and close it: ``StoreError`` saying why if its
        directory is missing or it cannot be opened (start-up: stores/startup.py). Blocking, up to the timeout."""
        directory = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isdir(directory):
            raise StoreError(f"the directory {directory} does not exist")
        try:
            self._connection()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open {os.path.abspath(self.path)}: {exc}") from None
        finally:
            self._disconnect()  # the worker thread opens its own on the first call

    async def get(self, origin: str) -> Entry | None:
        rows, _ = await self._run(GET, (origin,))
        return read(self, logger, self.path, origin, rows[0][0]) if rows else None

    async def lookup(self, origin: str, holder: str, ttl: float) -> tuple[Entry | None, bool]:
        """The read, then the lease taken only if there is still no entry (one statement); refused, the read again
        (another crawler may have stored meanwhile). A corrupt record: the lease as ``acquire_lease`` takes it."""
        rows, _ = await self._run(GET, (origin,))
        if rows:
            entry = read(self, logger, self.path, origin, rows[0][0])
            return (entry, False) if entry is not None else (None, await self.acquire_lease(origin, holder, ttl))
        now = self._clock()
        _, changed = await self._run(ACQUIRE_IF_NO_ENTRY, (origin, holder, now + ttl, origin, now))
        return (None, True) if changed == 1 else (await self.get(origin), False)

    async def put_and_release(self, entry: Entry, holder: str) -> None:
        """The put and the release in one transaction: one commit, one set of pages written to the WAL (issue 21)."""
        await self.put_and_release_all([entry], holder)

    async def put_and_release_all(self, entries: Sequence[Entry], holder: str) -> None:
        """Every put (its history with it) and release in one transaction."""
        await self._run_all([statement for entry in entries for statement in (
            *put_statements(entry, self._history_versions), (RELEASE, (entry.origin, holder)))])

    async def put(self, entry: Entry) -> None:
        """The record alone, or with its history in one transaction."""
        await self._run_all(put_statements(entry, self._history_versions))

    async def history(self, origin: str) -> list[HistoryVersion]:
        rows, _ = await self._run(LIST, (origin,))
        return listed(origin, rows)

    async def count(self) -> int:
        rows, _ = await self._run(COUNT, ())
        return int(rows[0][0])

    async def acquire_lease(self, origin: str, holder: str, ttl: float) -> bool:
        now = self._clock()
        _, changed = await self._run(ACQUIRE, (origin, holder, now + ttl, now))
        return changed == 1

    async def release_lease(self, origin: str, holder: str) -> None:
        await self._run(RELEASE, (origin, holder))

    async def entries(self) -> AsyncIterator[StoredEntry]:
        """Every stored record in origin order, corrupt ones described (``scrapy-rep cache``). Read a page at a
        time, so crawlers writing meanwhile are not held up; an entry written during the listing may be missed."""
        after = ""
        while True:
            rows, _ = await self._run(PAGE, (after, _PAGE))
            for origin, record in rows:
                yield describe(origin, record)
            if len(rows) < _PAGE:
                return
            after = rows[-1][0]

    async def inspect(self, origin: str) -> StoredEntry | None:
        """``origin``'s record, corrupt or not; ``None`` when there is none."""
        rows, _ = await self._run(GET, (origin,))
        return describe(origin, rows[0][0]) if rows else None

    async def delete(self, origin: str) -> bool:
        """Remove ``origin``'s entry (its robots.txt is fetched again when next needed); ``False`` if there was
        none. A fetch lease is left alone: it lapses by itself."""
        _, changed = await self._run(DELETE, (origin,))
        return changed == 1

    async def close(self) -> None:
        while self._running is not None:  # statements already called are answered first
            await asyncio.shield(self._running)
        if self._checkpoint is not None:
            await self._checkpoint
        if self._inline is not None:
            self._inline.close()
            self._inline = None
        await self._offload(self._disconnect)
        if self._worker is not None:
            self._worker.shutdown(wait=False)
            self._worker = None

    async def _run(self, sql: str, params: tuple[Any, ...]) -> tuple[list[Any], int]:
        """The rows and row count of one statement (``_run_all``)."""
        return (await self._run_all([(sql, params)]))[0]

    async def _run_all(self, statements: list[tuple[str, tuple[Any, ...]]]) -> list[tuple[list[Any], int]]:
        """Each statement's rows and row count, the statements run in one transaction: inline if nothing holds them
        up, else in the worker thread, in the next batch (whose transaction then holds them all). The first
        statement's ``StoreError``, if any, is raised."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # driven by a non-asyncio Twisted reactor: nothing to wait on, run inline
            return results_or_error(list(self._statements(statements)))
        if self._inline is None and not self._inline_tried:
            self._inline_tried = True  # once here; after that the worker tries again after each batch
            self._open_inline()  # busy timeout 0: waits for nothing
        if self._running is None and self._inline is not None:
            done = self._run_inline(loop, statements)
            if done is not None:
                return done
        calls = [Call(sql, params, loop.create_future()) for sql, params in statements]
        self._pending.extend(calls)  # together, so that they are in one batch
        if self._running is None:
            self._next_batch(loop)
        # every future's outcome retrieved (asyncio logs an exception nobody retrieved), the first error raised
        return results_or_error(list(await asyncio.gather(*(call.future for call in calls), return_exceptions=True)))

    def _run_inline(self, loop: asyncio.AbstractEventLoop,
                    statements: list[tuple[str, tuple[Any, ...]]]) -> list[tuple[list[Any], int]] | None:
        """The statements run on the reactor thread, or None if they would wait (a lock: the worker runs them). One
        statement runs in autocommit mode, several in one transaction (``BEGIN IMMEDIATE`` when they write: the
        write lock is taken first, or refused at once); when it fails, nothing of it was done."""
        assert self._inline is not None
        conn = self._inline
        try:
            if len(statements) == 1:
                cursor = conn.execute(*statements[0])
                done = [(cursor.fetchall(), cursor.rowcount)]
            else:
                done = transaction(conn, statements)
        except sqlite3.Error:  # locked (SQLITE_BUSY at once), or any failure: the worker runs them and says why
            if conn.in_transaction:  # not even rolled back: the worker opens another after its next batch
                conn.close()
                self._inline = None
            return None
        written = sum(writes(sql) for sql, _ in statements)
        if written:
            self._inline_writes += written
            if self._inline_writes >= CHECKPOINT_EVERY and (self._checkpoint is None or self._checkpoint.done()):
                self._inline_writes = 0
                self._checkpoint = loop.run_in_executor(self._executor(), self._run_checkpoint)
        return done

    def _run_checkpoint(self) -> None:
        """In the worker: copy the WAL into the file where no reader needs it (PASSIVE: it holds nobody back); the
        next write then starts the WAL over (the test: 19 writes after a checkpoint leave the WAL about as long as
        the 19 before it). A TRUNCATE checkpoint emptied the WAL but held every write back meanwhile: under a busy
        crawl the fetches waited, the downloader's places filled up and the engine moved all its start requests
        into the scheduler (docs/performance.md)."""
        try:
            self._connection().execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except sqlite3.Error:
            self._disconnect()  # the next one, CHECKPOINT_EVERY writes later, tries again

    def _next_batch(self, loop: asyncio.AbstractEventLoop) -> None:
        """Hand every pending statement to the worker as one batch; the next starts when it is answered."""
        batch, self._pending = self._pending, []
        running = self._running = loop.run_in_executor(self._executor(), self._execute_batch,
                                                       [(call.sql, call.params) for call in batch])

        def answer(done: asyncio.Future[list[StatementOutcome]]) -> None:
            self._running = None
            try:
                outcomes = done.result()
            except BaseException as exc:  # the worker itself failed (shut down): every call gets it
                outcomes = [StoreError(f"SQLite store {self.path}: {exc!r}")] * len(batch)
            for call, outcome in zip(batch, outcomes, strict=True):
                if call.future.done():  # its caller was cancelled
                    continue
                if isinstance(outcome, StoreError):
                    call.future.set_exception(outcome)
                else:
                    call.future.set_result(outcome)
            if self._pending:
                self._next_batch(loop)

        running.add_done_callback(answer)

    def _execute_batch(self, statements: list[tuple[str, tuple[Any, ...]]]) -> list[StatementOutcome]:
        """In the worker: ``statements`` in one transaction (one statement: auto-committed), each one's outcome.
        A failed transaction is rolled back and its statements run again one by one. Then, if the reactor thread
        has no connection yet, it is opened here."""
        try:
            return self._statements(statements)
        finally:
            if self._inline is None:
                self._open_inline()

    def _open_inline(self) -> None:
        """The reactor thread's connection (``_sqlite_file.open_inline``), if the file is ready for one."""
        self._inline = open_inline(self.path)

    def _statements(self, statements: list[tuple[str, tuple[Any, ...]]]) -> list[StatementOutcome]:
        if len(statements) > 1:
            try:
                return list(transaction(self._connection(), statements))
            except sqlite3.Error:
                self._disconnect()  # one by one below, each with its own error
        return [self._outcome(sql, params) for sql, params in statements]

    def _outcome(self, sql: str, params: tuple[Any, ...]) -> StatementOutcome:
        try:
            return self._execute(sql, params)
        except StoreError as exc:
            return exc

    async def _offload(self, function: Callable[..., T], *args: Any) -> T:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # driven by a non-asyncio Twisted reactor: nothing to wait on, run inline
            return function(*args)
        return await loop.run_in_executor(self._executor(), function, *args)

    def _executor(self) -> ThreadPoolExecutor:
        """The store's one worker thread (started at the first call)."""
        if self._worker is None:
            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rep-sqlite")
        return self._worker

    def _execute(self, sql: str, params: tuple[Any, ...]) -> tuple[list[Any], int]:
        """Any SQLite failure becomes ``StoreError`` and drops the connection, so the next call starts afresh."""
        try:
            cursor = self._connection().execute(sql, params)
            return cursor.fetchall(), cursor.rowcount
        except sqlite3.Error as exc:
            self._disconnect()
            raise StoreError(f"SQLite store {self.path}: {exc}") from exc

    def _disconnect(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            # Not bound to a thread: every statement runs on the one worker (or, inline, the reactor thread).
            conn = sqlite3.connect(self.path, timeout=self._timeout, isolation_level=None, check_same_thread=False)
            try:
                prepare_within(conn, self.path, self._timeout)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return self._conn

