"""How the SQLite and Redis stores write an entry: its JSON record (``Entry.dumps``, format version inside),
zlib-compressed. robots.txt bodies compress about 3.3x at level 1 (docs/stores.md), which matters for a Redis
holding 100,000 origins; compressing costs ~50 µs per write, once per origin per expiry."""

from __future__ import annotations

import logging
import zlib
from typing import Protocol

from scrapy_rep.stores._base import CorruptEntry, Entry, StoredEntry

_LEVEL = 1  # level 6 saves another 10% for 60% more time


def pack(record: bytes) -> bytes:
    """The stored form of a JSON record."""
    return zlib.compress(record, _LEVEL)


def encode(entry: Entry) -> bytes:
    return pack(entry.dumps())


def decode(data: object) -> Entry:
    """The entry in a stored value; ``CorruptEntry`` for anything unreadable."""
    if not isinstance(data, bytes):
        raise CorruptEntry(f"stored value is {type(data).__name__}, not bytes")
    try:
        record = zlib.decompress(data)
    except zlib.error as exc:
        raise CorruptEntry(f"not a compressed record: {exc}") from exc
    return Entry.loads(record)


class _Counting(Protocol):
    corrupt_records: int


def read(store: _Counting, logger: logging.Logger, where: str, origin: str, data: object) -> Entry | None:
    """The entry in ``origin``'s stored value, or None for a corrupt one, which ``store`` counts and ``logger``
    (the store's own) says: once per store at WARNING, then at DEBUG (a damaged file or a foreign key prefix would
    otherwise warn per origin)."""
    try:
        return decode(data)
    except CorruptEntry as exc:
        store.corrupt_records += 1
        first = store.corrupt_records == 1
        logger.log(logging.WARNING if first else logging.DEBUG, "Ignoring corrupt robots.txt cache record for %s in "
                   "%s: %s%s", origin, where, exc, " (further corrupt records are logged at DEBUG)" if first else "")
        return None


def describe(origin: str, data: object) -> StoredEntry:
    """``origin``'s stored value as a ``StoredEntry``: a corrupt one is described, not raised."""
    size = len(data) if isinstance(data, bytes) else 0
    try:
        return StoredEntry(origin, decode(data), size)
    except CorruptEntry as exc:
        return StoredEntry(origin, None, size, str(exc))
