"""The SQLite store's history of versions (``_history``; docs/stores.md, "History"): its tables, the statements a put
adds to its transaction, and the listing.

``rep_history`` holds a row per (origin, version id, outcome), ``rep_bodies`` each body once per id (zlib-compressed,
as entries hold it). A put that records history adds three statements to its transaction: the body (ignored when
its id is stored), the row (inserted, or its times widened and, for a later sighting, its status and URL replaced),
and the retention (the origin's rows past ``versions``, last seen longest ago, deleted). A trigger deletes a body when
the last row naming it goes, through an index on the rows' ids (one more B-tree insert per new version, none per
sighting of a known one), so a file that changes at every download (a date in a comment) does not grow the file.
"""

from __future__ import annotations

from typing import Any

from scrapy_rep.stores._base import Entry, HistoryVersion
from scrapy_rep.stores._codec import encode
from scrapy_rep.stores._history import newest_first, records_history, verified
from scrapy_rep.stores._sqlite_sql import PUT

Statement = tuple[str, tuple[Any, ...]]

#: Created in a new file and added to a file of layout 1 (``_sqlite_file``).
TABLES = (
    """CREATE TABLE IF NOT EXISTS rep_history (
    origin TEXT NOT NULL, id TEXT NOT NULL, outcome TEXT NOT NULL, status INTEGER, url TEXT,
    first_seen REAL NOT NULL, last_seen REAL NOT NULL, PRIMARY KEY (origin, id, outcome)
) WITHOUT ROWID""",
    "CREATE TABLE IF NOT EXISTS rep_bodies (id TEXT PRIMARY KEY, body BLOB NOT NULL) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS rep_history_ids ON rep_history (id)",
    """CREATE TRIGGER IF NOT EXISTS rep_bodies_unused AFTER DELETE ON rep_history
WHEN NOT EXISTS (SELECT 1 FROM rep_history WHERE id = old.id)
BEGIN DELETE FROM rep_bodies WHERE id = old.id; END""",
)

_BODY = "INSERT OR IGNORE INTO rep_bodies (id, body) VALUES (?, ?)"  # id, packed body
#: origin, id, outcome, status, url, fetched_at, fetched_at. SET's expressions read the row as it was.
_SEEN = """INSERT INTO rep_history (origin, id, outcome, status, url, first_seen, last_seen)
VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (origin, id, outcome) DO UPDATE SET
    status = CASE WHEN excluded.last_seen >= last_seen THEN excluded.status ELSE status END,
    url = CASE WHEN excluded.last_seen >= last_seen THEN excluded.url ELSE url END,
    first_seen = min(first_seen, excluded.first_seen), last_seen = max(last_seen, excluded.last_seen)"""
#: origin, versions kept: the rows past them in ``_history.newest_first``'s order.
_RETAIN = """DELETE FROM rep_history WHERE origin = ?1 AND (id, outcome) IN (
    SELECT id, outcome FROM rep_history WHERE origin = ?1
    ORDER BY last_seen DESC, first_seen DESC, id, outcome LIMIT -1 OFFSET ?2)"""
#: origin. A row whose body is missing (deleted by hand) is listed to ``verified``, which says so.
LIST = """SELECT h.id, h.outcome, h.status, h.url, h.first_seen, h.last_seen, b.body
FROM rep_history h LEFT JOIN rep_bodies b ON b.id = h.id WHERE h.origin = ?"""


def put_statements(entry: Entry, versions: int) -> list[Statement]:
    """A put of ``entry``: its record, then, when it records history (``records_history``) and ``versions`` (the
    rows kept per origin) is not 0, its body, its row and the retention. Off, nothing is added."""
    put: Statement = (PUT, (entry.origin, encode(entry)))
    version = entry.version
    if not versions or version is None or not records_history(entry):
        return [put]
    seen = (entry.origin, version.id, entry.outcome.value, version.status, version.url, version.fetched_at,
            version.fetched_at)
    return [put, (_BODY, (version.id, entry.packed_body)), (_SEEN, seen), (_RETAIN, (entry.origin, versions))]


def listed(origin: str, rows: list[Any]) -> list[HistoryVersion]:
    """``LIST``'s rows as versions, newest first."""
    return newest_first(verified(origin, *row) for row in rows)
