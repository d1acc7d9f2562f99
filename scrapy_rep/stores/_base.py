"""What a store keeps per origin (SPEC 3.3) and the interface every store implements.

A store holds outcomes, never requests. Times are epoch seconds from the middleware's injected clock, so that
entries written by one crawler can be read by another (SPEC 3.2).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache
from typing import Any, Protocol

# zlib level 3: 924 bytes on average for the corpus's 4.3 KiB bodies in 44 µs each; level 6 (zlib's default) saves 70
# bytes per origin for 83 µs, once per fetch (issue 21: 1.9% of a broad crawl's samples); level 1 is no faster.
_BODY_LEVEL = 3

#: Written into every record; a reader skips records of a version it does not know (they are re-fetched).
FORMAT_VERSION = 1


def iso(seconds: float) -> str:
    """Epoch ``seconds`` as the evidence writes a time: ISO 8601, UTC, milliseconds (``2026-11-28T13:41:33.123Z``)."""
    whole = int(seconds // 1)
    return f"{_iso_second(whole)}.{min(int((seconds - whole) * 1000), 999):03d}Z"


@lru_cache(maxsize=256)  # a crawl writes many times within one second
def _iso_second(whole: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))


class Outcome(str, Enum):
    """What the origin's robots.txt currently means for its requests (SPEC 2.2)."""

    RULES = "rules"  # 2xx: obey the body
    ALLOW_ALL = "allow-all"  # 4xx except 429, too many redirects, or unreachable past the limit with no copy
    DISALLOW_ALL = "disallow-all"  # 5xx, 429 or network error with no usable copy: hold the origin's requests


class CorruptEntry(ValueError):
    """A stored record that cannot be read; callers treat it as missing and re-fetch."""


@dataclass(frozen=True, slots=True)
class Version:
    """Which copy of an origin-level file (robots.txt, tdmrep.json) an entry holds: the evidence of what the file said
    (docs/evidence.md). ``id`` is the SHA-256, in hex, of the body as the crawl kept it (capped at REP_MAX_SIZE; empty
    for a 4xx or a redirect chain that ended without a file); ``fetched_at`` when it was downloaded (epoch seconds);
    ``status`` the final response's status (None: the chain ended without one); ``url`` the final URL, after
    redirects. Made once, by the process that downloaded the copy, and stored with the entry: every process that reads
    the entry knows the same version. The digest is held as its 32 bytes (a broad crawl holds a version per origin;
    its hex would be 48 bytes more) and ``id`` spells it."""

    digest: bytes
    fetched_at: float
    status: int | None
    url: str | None

    @classmethod
    def of(cls, body: bytes, fetched_at: float, status: int | None, url: str | None) -> Version:
        return cls(hashlib.sha256(body).digest(), fetched_at, status, url)

    @property
    def id(self) -> str:
        return self.digest.hex()

    def to_record(self) -> dict[str, Any]:
        return {"id": self.id, "fetched_at": self.fetched_at, "status": self.status, "url": self.url}

    @classmethod
    def from_record(cls, record: Any) -> Version:
        """Raises ``KeyError``, ``TypeError`` or ``ValueError`` for a malformed record (``Entry.from_record``)."""
        ident = str(record["id"])
        if len(ident) != 64 or not all(char in "0123456789abcdef" for char in ident):
            raise ValueError(f"not a SHA-256: {ident!r}")
        return cls(bytes.fromhex(ident), float(record["fetched_at"]),
                   None if record["status"] is None else int(record["status"]),
                   None if record["url"] is None else str(record["url"]))


@dataclass(frozen=True, slots=True, init=False)
class Entry:
    """The cached state of one origin's robots.txt.

    ``outcome``/``body``/``fetched_at`` describe the copy in effect. After a failed refresh of a good copy they
    keep describing that copy (stale-on-error, SPEC 2.4) while ``status``/``error`` describe the failed attempt,
    ``first_failure_at`` marks the start of the current run of failures (SPEC 2.2's 30-day rule) and
    ``failures`` counts it (back-off, SPEC 2.5). ``expires_at`` is when robots.txt must be fetched again.
    ``version`` identifies the copy in effect (``Version``); None when there is none (a failure with no copy).

    The body is held zlib-compressed (about 5x smaller on real files: a broad crawl holds an entry per origin);
    ``body`` decompresses it on each read, ``same_body`` compares two entries' bodies without decompressing.
    """

    origin: str
    outcome: Outcome
    fetched_at: float
    expires_at: float
    _packed: bytes = field(repr=False)  # the body, zlib-compressed; b"" for an empty body
    status: int | None = None
    error: str | None = None
    first_failure_at: float | None = None
    failures: int = 0
    version: Version | None = None

    def __init__(self, origin: str, outcome: Outcome, fetched_at: float, expires_at: float, body: bytes = b"",
                 status: int | None = None, error: str | None = None, first_failure_at: float | None = None,
                 failures: int = 0, version: Version | None = None) -> None:
        put = object.__setattr__  # frozen
        put(self, "origin", origin)
        put(self, "outcome", outcome)
        put(self, "fetched_at", fetched_at)
        put(self, "expires_at", expires_at)
        put(self, "_packed", zlib.compress(body, _BODY_LEVEL) if body else b"")
        put(self, "status", status)
        put(self, "error", error)
        put(self, "first_failure_at", first_failure_at)
        put(self, "failures", failures)
        put(self, "version", version)

    @property
    def body(self) -> bytes:
        """The robots.txt body of the copy in effect (b"" for none)."""
        return zlib.decompress(self._packed) if self._packed else b""

    def same_body(self, other: Entry) -> bool:
        """Whether ``other`` has the same body (compression is deterministic: equal bodies, equal packed bytes)."""
        return self._packed == other._packed

    @property
    def label(self) -> str:
        """The status of the last attempt, or its error name, as log lines show it."""
        return str(self.status) if self.status is not None else str(self.error)

    @property
    def failing(self) -> bool:
        """The last robots.txt attempts failed (SPEC 2.2 server or network error); a kept copy may be in use."""
        return self.first_failure_at is not None and self.failures > 0

    def is_fresh(self, now: float) -> bool:
        return now < self.expires_at

    @property
    def packed_body(self) -> bytes:
        """The body as the entry holds it, zlib-compressed (b"" for none): the persistent stores write it as is."""
        return self._packed

    def to_record(self) -> dict[str, Any]:
        """A JSON-ready dict of every field but the body, carrying ``FORMAT_VERSION`` (the stores keep the body
        beside it: ``_codec``)."""
        return {
            "v": FORMAT_VERSION,
            "origin": self.origin,
            "outcome": self.outcome.value,
            "fetched_at": self.fetched_at,
            "expires_at": self.expires_at,
            "status": self.status,
            "error": self.error,
            "first_failure_at": self.first_failure_at,
            "failures": self.failures,
            "version": None if self.version is None else self.version.to_record(),
        }

    @classmethod
    def from_record(cls, record: Any, packed: bytes | None = None) -> Entry:
        """Rebuild an entry from its record and body: ``packed`` (as ``packed_body`` gave it; it must decompress),
        or, if None, the record's own ``"body"`` in base64 (records written before 2026-11-27). Raises
        ``CorruptEntry`` for anything that is not a valid current-version record."""
        try:
            if record["v"] != FORMAT_VERSION:
                raise CorruptEntry(f"unknown format version {record['v']!r}")
            entry = cls(
                origin=str(record["origin"]),
                outcome=Outcome(record["outcome"]),
                fetched_at=float(record["fetched_at"]),
                expires_at=float(record["expires_at"]),
                body=base64.b64decode(record["body"], validate=True) if packed is None else b"",
                status=None if record["status"] is None else int(record["status"]),
                error=None if record["error"] is None else str(record["error"]),
                first_failure_at=(
                    None if record["first_failure_at"] is None else float(record["first_failure_at"])
                ),
                failures=int(record["failures"]),
            )
            if packed and zlib.decompress(packed):  # checked here, not when the body is first read
                object.__setattr__(entry, "_packed", packed)  # as compressed when stored: not compressed again
            version = record.get("version", _UNVERSIONED)
            if version is _UNVERSIONED:  # written before versions were: the copy's, as far as the record tells
                version = _version_of(entry)
            elif version is not None:
                version = Version.from_record(version)
            object.__setattr__(entry, "version", version)
        except CorruptEntry:
            raise
        except (KeyError, TypeError, ValueError, binascii.Error, zlib.error) as exc:
            raise CorruptEntry(f"unreadable record: {exc!r}") from exc
        return entry

    def dumps(self) -> bytes:
        """``to_record`` as compact JSON (ASCII: no newline byte in it)."""
        return json.dumps(self.to_record(), separators=(",", ":")).encode("utf-8")

    @classmethod
    def loads(cls, data: bytes | str, packed: bytes | None = None) -> Entry:
        """``from_record`` of JSON ``data``."""
        try:
            record = json.loads(data)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # RecursionError: absurdly nested JSON
            raise CorruptEntry(f"not JSON: {exc!r}") from exc
        return cls.from_record(record, packed)


_UNVERSIONED = object()


def _version_of(entry: Entry) -> Version | None:
    """The version of an entry stored before versions were: its body's, dated when it was fetched; its status when
    the last attempt succeeded (else unknown); its final URL unknown. None when the entry holds no copy."""
    failing = entry.first_failure_at is not None
    if failing and not entry.fetched_at < entry.first_failure_at:  # type: ignore[operator]
        return None  # a failure entry without a copy (policy.has_copy)
    return Version.of(entry.body, entry.fetched_at, None if failing else entry.status, None)


@dataclass(frozen=True, slots=True)
class StoredEntry:
    """One origin's record as a store holds it, for inspection (``scrapy-rep cache``): the entry, or ``None`` with
    ``problem`` saying why the record cannot be read (an unknown format version, say); ``size`` is the stored
    record's length in bytes."""

    origin: str
    entry: Entry | None
    size: int
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class HistoryVersion:
    """One version of an origin's file in a persistent store's history (``stores/_history.py``, docs/stores.md):
    a body (``id``, its SHA-256) served with ``outcome``, first and last downloaded at ``first_seen``/``last_seen``
    (epoch seconds), ``status`` and ``url`` those of its latest download. ``packed_body`` is the body
    zlib-compressed, as ``Entry.packed_body`` (b"" for none); ``body`` decompresses it."""

    origin: str
    id: str
    outcome: Outcome
    status: int | None
    url: str | None
    first_seen: float
    last_seen: float
    packed_body: bytes = field(repr=False)

    @property
    def body(self) -> bytes:
        return zlib.decompress(self.packed_body) if self.packed_body else b""


class StoreError(Exception):
    """The store could not be reached or answered wrongly. The middleware logs and counts it and carries on with
    its in-process cache; a store error never means "allow all"."""


class Store(Protocol):
    """Shared persistence of entries plus a fetch lease, so that crawlers sharing a store fetch each origin's
    robots.txt once per expiry between them. Methods raise ``StoreError`` on store failure; a corrupt record
    reads as ``None``."""

    #: What the store is, as log lines name it: its kind and file or server (never a password).
    where: str
    #: Whether writes cost much less together (``put_and_release_all``: Redis, one pipeline), so that the crawler
    #: writes its outcomes behind, in batches (``robots.refresh``), rather than one at a time on a request's path.
    batches_writes: bool

    async def get(self, origin: str) -> Entry | None: ...

    async def put(self, entry: Entry) -> None: ...

    async def count(self) -> int:
        """How many origins have an entry (corrupt records included)."""
        ...

    async def acquire_lease(self, origin: str, holder: str, ttl: float) -> bool:
        """Try to become the one crawler fetching ``origin``; the lease lapses after ``ttl`` seconds."""
        ...

    async def release_lease(self, origin: str, holder: str) -> None: ...

    async def lookup(self, origin: str, holder: str, ttl: float) -> tuple[Entry | None, bool]:
        """``origin``'s entry, and when it has none, an attempt at its fetch lease in the same step (issue 21: a
        new origin costs one store round trip, not three): ``(entry, False)``, or ``(None, taken)``. ``taken``
        means that no entry existed while the lease was free, so no other crawler stored one before it: the
        holder fetches without reading the store again. A corrupt record counts as none."""
        ...

    async def put_and_release(self, entry: Entry, holder: str) -> None:
        """``put(entry)``, then ``release_lease(entry.origin, holder)``, in one step where the store allows."""
        ...

    async def put_and_release_all(self, entries: Sequence[Entry], holder: str) -> None:
        """``put_and_release`` of each of ``entries``, together where the store allows; every entry is written
        before the first error is raised."""
        ...

    async def history(self, origin: str) -> list[HistoryVersion]:
        """Every version of ``origin``'s file the store keeps (``_history.records_history``: one per body and
        outcome its fresh downloads gave, up to ``REP_HISTORY_VERSIONS``), the latest ``last_seen`` first; ``[]``
        for a store that keeps none."""
        ...

    async def close(self) -> None: ...
