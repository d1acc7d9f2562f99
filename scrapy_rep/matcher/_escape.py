"""Normalising rule patterns so that they compare with percent-encoded URLs (SPEC 7.2)."""

from __future__ import annotations

import re

_TO_NORMALISE = re.compile(rb"%[0-9A-Fa-f]{2}|[\x80-\xff]")


def _normalise(match: re.Match[bytes]) -> bytes:
    found = match.group()
    return found.upper() if len(found) == 3 else b"%%%02X" % found[0]


def escape_bytes(raw: bytes) -> str:
    """``raw`` with octets >= 0x80 written as ``%XX`` and existing ``%xx`` escapes upper-cased, as ASCII text.

    Other bytes are kept: ``%61`` stays ``%61`` (not ``a``), an invalid escape such as ``%zz`` stays as is.
    Google extension (an RFC 9309 departure): RFC 9309 2.2.2 decodes escaped unreserved ASCII before
    comparing; Google never decodes, so ``/%61`` and ``/a`` are different patterns.
    """
    if raw.isascii() and b"%" not in raw:
        return raw.decode("ascii")
    return _TO_NORMALISE.sub(_normalise, raw).decode("ascii")


def escape_pattern(pattern: str | bytes) -> str:
    """Google's MaybeEscapePattern: ``/SanJoséSellers`` gives ``/SanJos%C3%A9Sellers``, ``%aa`` gives ``%AA``.

    A ``str`` is taken as its UTF-8 bytes (lone surrogates from ``surrogateescape`` decoding give back
    their original byte, so invalid UTF-8 is escaped byte for byte).
    """
    return escape_bytes(pattern if isinstance(pattern, bytes) else encode_text(pattern))


Body = bytes | bytearray | memoryview | str
"""A robots.txt body: bytes (or any bytes-like object) as downloaded, or text (taken as UTF-8)."""


def encode_text(text: str) -> bytes:
    """The UTF-8 bytes of ``text``; never raises, whatever surrogates it holds."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")
