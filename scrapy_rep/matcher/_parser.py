"""Splitting a robots.txt body into lines and directives, the way Google's parser does (SPEC 4, 5).

The parser works on bytes, as Google's does: it never decodes the body, so invalid UTF-8 cannot make it
fail (SPEC 4.3) and every octet of a pattern survives to be percent-encoded (SPEC 7.2). It reports what it
finds to a ``ParseHandler``: the ``Robots`` builder is one, the per-line reporter (``report``) another.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

MAX_BYTES = 512_000
"""SPEC 4.4: only the first 500 KiB of a body are used."""

MAX_LINE_BYTES = 2083 * 8 - 1
"""Google extension: a line keeps at most this many bytes (its buffer of 2083 * 8 holds a final NUL)."""

_BOM = b"\xef\xbb\xbf"
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")
_BLANK = re.compile(rb"[ \t]")


class Key(enum.Enum):
    """What a directive's key was recognised as (Google's ParsedRobotsKey)."""

    USER_AGENT = "user-agent"
    ALLOW = "allow"
    DISALLOW = "disallow"
    SITEMAP = "sitemap"
    UNKNOWN = "unknown"


# Google extension: a key is recognised when it STARTS with one of these (case-insensitive), so
# "user-agent-x" and "disallowed" count too; the second set holds the accepted typos (SPEC 5.2).
# Checked in this order, as Google does.
_KEYS: tuple[tuple[Key, tuple[bytes, ...], tuple[bytes, ...]], ...] = (
    (Key.USER_AGENT, (b"user-agent",), (b"useragent", b"user agent")),
    (Key.ALLOW, (b"allow",), ()),
    (Key.DISALLOW, (b"disallow",), (b"dissallow", b"dissalow", b"disalow", b"diasllow", b"disallaw")),
    (Key.SITEMAP, (b"sitemap",), (b"site-map",)),
)
_LONGEST_NAME = max(len(name) for _, names, typos in _KEYS for name in names + typos)


@dataclass(slots=True)
class LineMetadata:
    """Facts about one physical line, as Google's RobotsParseHandler::LineMetadata, plus one of ours.

    ``has_invalid_utf8`` is not Google's: it flags lines the lint command should point at (SPEC 4.3).
    """

    is_empty: bool = False
    has_comment: bool = False
    is_comment: bool = False
    has_directive: bool = False
    is_acceptable_typo: bool = False
    is_line_too_long: bool = False
    is_missing_colon_separator: bool = False
    has_invalid_utf8: bool = False


class DirectiveHandler(Protocol):
    """Receives the directives the parser finds, in file order; ``line`` numbers are 1-based.

    Values are the stripped bytes after the separator, comment removed, not yet percent-encoded.
    """

    def user_agent(self, line: int, value: bytes) -> None: ...
    def allow(self, line: int, value: bytes) -> None: ...
    def disallow(self, line: int, value: bytes) -> None: ...
    def sitemap(self, line: int, value: bytes) -> None: ...
    def unknown(self, line: int, key: bytes, value: bytes) -> None: ...


class ParseHandler(DirectiveHandler, Protocol):
    """A ``DirectiveHandler`` that also receives the metadata of every line.

    ``line_metadata`` is called once for every physical line, after that line's directive if any.
    """

    def line_metadata(self, line: int, metadata: LineMetadata) -> None: ...


def classify_key(key: bytes) -> tuple[Key, bool]:
    """The kind of ``key`` and whether it was one of the accepted typos."""
    return _classify_start(key[:_LONGEST_NAME])


@functools.lru_cache(maxsize=256)
def _classify_start(start: bytes) -> tuple[Key, bool]:
    """``classify_key`` on the first bytes of a key, all that recognition reads (cached: files repeat keys)."""
    lowered = start.lower()
    for kind, names, typos in _KEYS:
        if lowered.startswith(names):
            return kind, False
        if typos and lowered.startswith(typos):
            return kind, True
    return Key.UNKNOWN, False


def split_lines(body: bytes) -> list[bytes]:
    """The physical lines of ``body``: a (partial) UTF-8 BOM at the start is skipped; CR, LF and CRLF end lines.

    The text after the last line break is a line too, even when empty (Google counts it).
    """
    return _LINE_BREAK.split(without_bom(body))


def without_bom(body: bytes) -> bytes:
    """``body`` without the (partial) UTF-8 BOM it starts with. Google extension: any prefix of the BOM is skipped."""
    if body[:1] == b"\xef":
        return body[3 if body.startswith(_BOM) else 2 if body.startswith(_BOM[:2]) else 1 :]
    return body


def parse_lines(body: bytes, handler: ParseHandler) -> None:
    """Feed every line of ``body`` to ``handler``. Never raises on any input (SPEC 4.5)."""
    report = handler.line_metadata
    for number, line in enumerate(split_lines(body), 1):
        too_long = len(line) > MAX_LINE_BYTES
        if too_long:
            line = line[:MAX_LINE_BYTES]
        invalid_utf8 = not line.isascii() and not _is_utf8(line)
        nul = line.find(b"\0")
        if nul >= 0:
            line = line[:nul]  # Google extension: Google's line is a C string, so a NUL byte ends it
        comment = line.find(b"#")
        if comment >= 0:
            line = line[:comment]
        line = line.strip()  # Google extension: only ASCII whitespace is trimmed (no NBSP etc.; SPEC 5.1)
        meta = LineMetadata(not line and comment < 0, comment >= 0, not line and comment >= 0,
                            is_line_too_long=too_long, has_invalid_utf8=invalid_utf8)
        directive = _split_directive(line) if line else None
        if directive is not None:
            key, value, meta.is_missing_colon_separator = directive
            kind, meta.is_acceptable_typo = classify_key(key)
            meta.has_directive = True
            if kind is Key.DISALLOW:
                handler.disallow(number, value)
            elif kind is Key.ALLOW:
                handler.allow(number, value)
            elif kind is Key.USER_AGENT:
                handler.user_agent(number, value)
            elif kind is Key.SITEMAP:
                handler.sitemap(number, value)
            else:
                handler.unknown(number, key, value)
        report(number, meta)


def parse_directives(body: bytes, handler: DirectiveHandler) -> None:
    """Feed every directive of ``body`` to ``handler``: the calls ``parse_lines`` makes, but ``line_metadata``.

    The parser of ``Robots``, on every parse, so it computes no metadata, reads the common line shape (a key, then
    a colon) with a few C-level calls and recognises keys already seen by a dict lookup; any other line takes
    ``parse_lines``'s steps (``_split_directive``, ``classify_key``). ``bytes.splitlines`` breaks exactly at CR,
    LF and CRLF; the empty text after a final line break, which it drops, holds no directive. Never raises
    (SPEC 4.5).
    """
    kinds = _KIND_OF
    disallow, allow, user_agent = handler.disallow, handler.allow, handler.user_agent
    body = without_bom(body)
    # Checked per line only when the body could hold such a line: most bodies hold neither.
    long_lines, nuls = len(body) > MAX_LINE_BYTES, b"\0" in body
    lines = body.splitlines() if len(body) <= _CHUNK_BYTES else _chunked_lines(body)
    for number, line in enumerate(lines, 1):
        if long_lines and len(line) > MAX_LINE_BYTES:
            line = line[:MAX_LINE_BYTES]
        if nuls and b"\0" in line:
            line = line[: line.index(b"\0")]  # Google extension: a NUL byte ends the line (a C string)
        if b"#" in line:
            line = line[: line.index(b"#")]
        sep = line.find(b":")
        if sep >= 0 and (key := line[:sep].strip()):
            value = line[sep + 1 :].strip()
        else:
            line = line.strip()
            directive = _split_directive(line) if line else None
            if directive is None:
                continue
            key, value, _ = directive
        kind = kinds.get(key)
        if kind is None:
            kind = classify_key(key)[0]
            if len(key) <= _KEY_KEPT_BYTES and len(kinds) < _KEYS_KEPT:
                kinds[key] = kind
        if kind is Key.DISALLOW:
            disallow(number, value)
        elif kind is Key.ALLOW:
            allow(number, value)
        elif kind is Key.USER_AGENT:
            user_agent(number, value)
        elif kind is Key.SITEMAP:
            handler.sitemap(number, value)
        else:
            handler.unknown(number, key, value)


#: ``parse_directives`` splits a longer body a chunk of about this many bytes at a time (each cut after a line
#: break), so the lines of a large file are never all held at once: split whole, docs.oracle.com's 500 KiB held 1.7 MB
#: of line objects at the peak of a broad crawl's memory (issue 21). Most bodies are split whole.
_CHUNK_BYTES = 32_768


def _chunked_lines(body: bytes) -> Iterator[bytes]:
    """``body.splitlines()``, one chunk at a time: every chunk but the last ends with ``\n``, so no CRLF is cut and
    no chunk adds an empty last line."""
    start, end = 0, len(body)
    while start < end:
        cut = body.find(b"\n", start + _CHUNK_BYTES) + 1 or end
        yield from body[start:cut].splitlines()
        start = cut


# The kinds of the keys seen so far, as written (files repeat a handful of spellings): a dict lookup instead of
# classify_key's slice, lower-casing and cache. Short keys only, and a bounded number of them.
_KIND_OF: dict[bytes, Key] = {}
_KEYS_KEPT = 1024
_KEY_KEPT_BYTES = 32


def _split_directive(line: bytes) -> tuple[bytes, bytes, bool] | None:
    """Key, value and whether the colon was missing, for a stripped non-empty line; None if not a directive."""
    sep = line.find(b":")
    missing_colon = sep < 0
    if missing_colon:
        # Google extension: a missing colon is accepted when the line is exactly two tokens (SPEC 5.2).
        blank = _BLANK.search(line)
        if blank is None or _BLANK.search(line[blank.start() :].lstrip(b" \t")):
            return None
        sep = blank.start()
    key = line[:sep].strip()
    return (key, line[sep + 1 :].strip(), missing_colon) if key else None


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
