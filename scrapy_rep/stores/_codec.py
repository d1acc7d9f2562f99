"""How the SQLite and Redis stores write an entry (issue 21): a marker byte, the entry's JSON record without its body
(``Entry.dumps``, format version inside), a newline, then the body as the entry already holds it, zlib-compressed at
level 3 (``Entry.packed_body``). Writing one compresses nothing: ~7 µs per record on the corpus, and ~1.0 KB. The
form written before 2026-11-27, the whole record with its body in base64, zlib-compressed at level 1, took ~100 µs
(decompressing the body, base64, compressing it all again) and ~1.5 KB; it is still read. A release from before then
reads a record of the new form as corrupt (no zlib stream starts with the marker): it fetches the origin's robots.txt
again and overwrites the record in its own form."""

from __future__ import annotations

import logging
import zlib
from typing import Protocol

from scrapy_rep.stores._base import CorruptEntry, Entry, StoredEntry

#: The first byte of a record of the current form. A zlib stream starts with 8 (deflate) in its low four bits.
_MARKER = b"\x01"


def encode(entry: Entry) -> bytes:
    return b"".join((_MARKER, entry.dumps(), b"\n", entry.packed_body))


def decode(data: object) -> Entry:
    """The entry in a stored value, of either form; ``CorruptEntry`` for anything unreadable."""
    if not isinstance(data, bytes):
        raise CorruptEntry(f"stored value is {type(data).__name__}, not bytes")
    if data.startswith(_MARKER):
        record, newline, packed = data[1:].partition(b"\n")
        if not newline:
            raise CorruptEntry("no body after the record")
        return Entry.loads(record, packed)
    try:
        record = zlib.decompress(data)  # the form before 2026-11-27
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
