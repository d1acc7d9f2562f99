"""What the persistent stores keep of an origin's past (docs/stores.md, "History"): every distinct version of its
robots.txt (and tdmrep.json, under that file's key) its fresh downloads gave, so that an operator can say a year later
which files an origin served, when, and show their bytes (``scrapy-rep cache history``).

A version is a row keyed by (origin, ``Version.id``, outcome): a 200 with an empty body and a 404 have the empty
body's id but are different evidence. ``first_seen``/``last_seen`` are the earliest and latest ``fetched_at`` of the
downloads that gave it, ``status``/``url`` those of the latest. Bodies are kept once per id, whatever the origins
serving them. At most ``REP_HISTORY_VERSIONS`` rows per origin: past that, the ones last seen longest ago go. The
SQLite and Redis stores each write them in their own form (``_sqlite_history``, ``_redis_history``), in the same
transaction or round trip as the entry; this module holds what they share.
"""

from __future__ import annotations

import hashlib
import logging
import zlib
from collections.abc import Iterable

from scrapy_rep.stores._base import Entry, HistoryVersion, Outcome

__all__ = ["HistoryVersion", "newest_first", "records_history", "verified"]

logger = logging.getLogger(__name__)


def records_history(entry: Entry) -> bool:
    """``entry`` is a fresh download's (a version, no failure): a copy kept on error (stale-on-error) is not a new
    sighting of its version, and a failure with no copy has none."""
    return entry.version is not None and entry.first_failure_at is None


def verified(origin: str, ident: str, outcome: str, status: int | None, url: str | None, first_seen: float,
             last_seen: float, packed: bytes | None) -> HistoryVersion | None:
    """The stored row as a ``HistoryVersion``, or None (logged) when it is not one: an unknown outcome, or a body
    missing (None), not decompressing, or whose SHA-256 is not ``ident`` (a row damaged or edited by hand). The
    check is the evidence's: the bytes shown are the bytes the id names."""
    try:
        if packed is None:
            raise ValueError("its body is missing")
        body = zlib.decompress(packed) if packed else b""
        if hashlib.sha256(body).hexdigest() != ident:
            raise ValueError("the body's SHA-256 is not the id")
        return HistoryVersion(origin, ident, Outcome(outcome), status, url, first_seen, last_seen, packed)
    except (TypeError, ValueError, zlib.error) as exc:
        logger.warning("Skipping a damaged history row of %s (version %s): %s", origin, ident, exc)
        return None


def newest_first(versions: Iterable[HistoryVersion | None]) -> list[HistoryVersion]:
    """The versions (Nones dropped), latest ``last_seen`` first; ties by ``first_seen``, latest first, then id and
    outcome: the order the retention drops them in, from the end."""
    kept = [version for version in versions if version is not None]
    return sorted(kept, key=lambda v: (-v.last_seen, -v.first_seen, v.id, v.outcome.value))
