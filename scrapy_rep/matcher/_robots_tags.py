"""Page-level robots directives: the robots ``<meta>`` tags of an HTML page and its ``X-Robots-Tag`` headers.

Source: Google's "Robots meta tag, data-nosnippet, and X-Robots-Tag specifications"
(developers.google.com/search/docs/crawling-indexing/robots-meta-tag).

Contract: ``robots_tags(headers, body, tokens)`` reads every X-Robots-Tag header value and, when ``body`` is given, the
meta tags of its head (``_meta_tags``), keeps what addresses the crawler (``robots``, or one of its product ``tokens``,
case-insensitively) and combines it into one ``RobotsTags``: the most restrictive reading wins, whatever the order of
the tags and headers ("If there are conflicting robots rules, the more restrictive rule applies"). It never raises,
does no I/O and reads no clock (``is_unavailable`` is given the time); when nothing applies it returns ``NO_TAGS``.

* A meta tag applies when its ``name`` is ``robots`` or one of the tokens; its ``content`` and an X-Robots-Tag value
  are comma-separated directives, each ``name`` or ``name: value`` (``max-snippet:50``,
  ``unavailable_after: 25 Jun 2010 15:00:00 PST``), names case-insensitive.
* ``none`` is ``noindex, nofollow``; ``nocache`` is ``noarchive``; ``all`` restricts nothing (it does not undo a
  ``noindex`` from elsewhere); ``max-snippet:0`` does not set ``nosnippet`` (both are kept, the reader decides).
* ``max-snippet`` and ``max-video-preview``: the smallest non-negative number wins over ``-1`` (no limit);
  ``max-image-preview``: ``none`` over ``standard`` over ``large``; ``unavailable_after``: the earliest date
  (``_tag_dates``). An invalid value is ignored; the directive's name is still recorded.
* An X-Robots-Tag value may address one crawler: ``googlebot: noindex, nofollow``; directives before any such prefix
  apply to every crawler. The names of the valued directives (``max-snippet:``...) are never taken for a crawler.
* Unknown directives (``noai``, ``noimageai``) are kept by name in ``directives``.

# Decision: a crawler prefix in the middle of a value switches the addressee for the directives that follow it, up to
# the next prefix (``noindex, googlebot: nofollow``: noindex for all, nofollow for googlebot only), as MDN words it.
# Decision: ``robots:`` as a prefix addresses every crawler, as ``name="robots"`` does.
# Decision: ``name:`` is a crawler prefix only when the text after the colon is empty or starts with a letter (a
# directive): ``max-foo: 5`` is an unknown directive with a value, not a crawler named max-foo.
# Decision: within a comma-separated piece, whitespace also separates directives (``noindex nofollow`` is both): the
# more restrictive reading of a common mistake; a value after ``:`` belongs to the last word before it.
# Decision: a piece ``unavailable_after: <weekday>`` is joined with the next piece: RFC 822/850 dates hold a comma.
# Decision: a directive that takes no value ignores one written after ``:`` (``noindex: yes`` is noindex).
# Decision: a meta tag's content is never read for crawler prefixes (``googlebot: noindex`` in a robots meta tag is an
# unknown directive ``googlebot``); the documented way to address a crawler there is the tag's name.
# Bounds (hostile input): at most ``MAX_HEADER_VALUES`` header values are read, each up to ``MAX_HEADER_CHARS`` and
# all together up to ``MAX_HEADERS_CHARS`` (a value cut at a bound loses its last, partial directive; within the bounds
# the result does not depend on the order of the values); names over ``MAX_NAME_CHARS`` are dropped; at most
# ``MAX_UNKNOWN`` unknown names are kept (the alphabetically first, so that the result does not depend on order).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from itertools import islice

from ._meta_tags import meta_contents
from ._tag_dates import WEEKDAYS, parse_date

MAX_HEADER_VALUES = 32
MAX_HEADER_CHARS = 8 * 1024
MAX_HEADERS_CHARS = 16 * 1024  # all values together: bounds the work on a hostile response (~1 µs per directive)
MAX_NAME_CHARS = 64
MAX_UNKNOWN = 32
_MAX_UNKNOWN_SEEN = 1024  # distinct unknown names collected before the alphabetical cut (bounds the memory)

META_TAG = "meta tag"
HEADER = "X-Robots-Tag header"
VALUED = frozenset({"max-snippet", "max-image-preview", "max-video-preview", "unavailable_after"})
"""The documented directives that take a value after ``:``."""
KNOWN = frozenset({"noindex", "nofollow", "none", "all", "noarchive", "nocache", "nosnippet", "notranslate",
                   "noimageindex", "indexifembedded"}) | VALUED
"""The directives Google documents; others are kept by name only."""
_AGENT_PREFIX = re.compile(r"\s*([^\s:]+)\s*:\s*(?=[^\W\d_]|$)")
"""``agent:`` before a directive (a letter) or at the end of a piece; the caller rules out directive names."""
_EXPANSIONS = {"none": ("none", "noindex", "nofollow"), "nocache": ("nocache", "noarchive")}
_IMAGE_PREVIEWS = {"none": 0, "standard": 1, "large": 2}  # most restrictive first


@dataclass(frozen=True, slots=True)
class RobotsTags:
    """The robots directives that apply to one response, combined (see the module's contract).

    ``directives``: every directive name that applied, lower-cased, with the expansions of ``none`` and ``nocache``;
    ``from_meta`` / ``from_header``: those that came from meta tags / from X-Robots-Tag headers.
    ``max_snippet`` (characters) and ``max_video_preview`` (seconds): -1 is no limit. ``unavailable_after``: aware.
    """

    noindex: bool = False
    nofollow: bool = False
    noarchive: bool = False
    nosnippet: bool = False
    noimageindex: bool = False
    notranslate: bool = False
    indexifembedded: bool = False
    max_snippet: int | None = None
    max_image_preview: str | None = None
    max_video_preview: int | None = None
    unavailable_after: datetime | None = None
    directives: frozenset[str] = frozenset()
    from_meta: frozenset[str] = frozenset()
    from_header: frozenset[str] = frozenset()

    def source(self, name: str) -> str:
        """Where directive ``name`` came from: ``meta tag``, ``X-Robots-Tag header``, both joined by "and", or ""."""
        name = name.lower()
        where = [source for source, names in ((META_TAG, self.from_meta), (HEADER, self.from_header))
                 if name in names]
        return " and ".join(where)


NO_TAGS = RobotsTags()
"""The result when no directive applies (returned as this very object)."""


def robots_tags(headers: Iterable[bytes | str], body: bytes | None, tokens: Sequence[str]) -> RobotsTags:
    """The directives of the X-Robots-Tag ``headers`` values and of ``body``'s meta tags (``body``: the HTML, or None)
    that address ``robots`` or one of ``tokens``; ``NO_TAGS`` when none does. Never raises."""
    reading: _Reading | None = None
    names: frozenset[str] | None = None
    budget = MAX_HEADERS_CHARS
    for header in islice(headers, MAX_HEADER_VALUES):
        if budget <= 0:
            break
        text = _header_text(header, min(budget, MAX_HEADER_CHARS))
        budget -= len(text) + 1
        if not text:
            continue
        if names is None:
            names = _names(tuple(tokens) if not isinstance(tokens, str) else (tokens,))
        reading = reading or _Reading()
        for name, value in _header_directives(text, names):
            reading.apply(reading.header, name, value)
    if isinstance(body, bytes) and body:
        if names is None:
            names = _names(tuple(tokens) if not isinstance(tokens, str) else (tokens,))
        for content in meta_contents(body, names):
            reading = reading or _Reading()
            for piece in _pieces(content):
                for name, value in _directives(piece):
                    reading.apply(reading.meta, name, value)
    return NO_TAGS if reading is None else reading.result()


def is_unavailable(tags: RobotsTags, now: datetime) -> bool:
    """Whether ``now`` is at or past ``tags.unavailable_after`` (False when it is not set).

    # Decision: a naive ``now`` is read as UTC (rather than raising on the comparison).
    """
    when = tags.unavailable_after
    if when is None:
        return False
    if now.tzinfo is None or now.utcoffset() is None:
        now = now.replace(tzinfo=timezone.utc)
    return now >= when


@lru_cache(maxsize=64)
def _names(tokens: tuple[str, ...]) -> frozenset[str]:
    """``robots`` and the crawler's tokens, stripped and lower-cased: the names that address it."""
    return frozenset({"robots"} | {token.strip().lower() for token in tokens if isinstance(token, str)} - {""})


def _header_text(header: bytes | str, bound: int) -> str:
    """A header value as text, cut at ``bound`` (then without its last, partial directive)."""
    if isinstance(header, bytes):
        text = header[:bound].decode("utf-8", "replace")
    elif isinstance(header, str):
        text = header[:bound]
    else:
        return ""
    if len(header) > bound:
        text = text[:max(text.rfind(","), 0)]
    return text


def _pieces(text: str) -> Iterator[str]:
    """The comma-separated pieces of ``text``; ``unavailable_after: Friday`` is joined with the piece after it."""
    pieces = text.split(",")
    count = len(pieces)
    index = 0
    while index < count:
        piece = pieces[index]
        index += 1
        if index < count and ":" in piece:
            before, _, after = piece.rpartition(":")
            if after.strip().lower() in WEEKDAYS and before.rstrip().lower().endswith("unavailable_after"):
                piece = f"{piece},{pieces[index]}"
                index += 1
        yield piece


def _directives(piece: str) -> Iterator[tuple[str, str | None]]:
    """(name lower-cased, value stripped or None) of each directive of one piece (whitespace-separated names, the
    value after the first ``:`` belonging to the last of them)."""
    colon = piece.find(":")
    if colon < 0:
        words, value = piece.split(), None
    else:
        words, value = piece[:colon].split(), piece[colon + 1:].strip()
    if not words:
        return
    for word in words[:-1]:
        yield word.lower(), None
    yield words[-1].lower(), value


def _header_directives(text: str, names: frozenset[str]) -> Iterator[tuple[str, str | None]]:
    """The directives of one X-Robots-Tag value that address one of ``names`` (crawler prefixes switch)."""
    addressed = True  # directives before any prefix apply to every crawler
    for piece in _pieces(text):
        start = 0
        while (prefix := _AGENT_PREFIX.match(piece, start)) is not None:  # matched in place: linear in the piece
            agent = prefix.group(1).lower()
            if agent in KNOWN:
                break
            addressed = agent in names
            start = prefix.end()
        if addressed:
            yield from _directives(piece[start:] if start else piece)


def _tighter_limit(current: int | None, new: int | None) -> int | None:
    """The more restrictive of two limits (None: unset; -1: no limit)."""
    if current is None or current == -1:
        return current if new is None else new
    if new is None or new == -1:
        return current
    return min(current, new)


def _limit(value: str) -> int | None:
    """A ``max-snippet`` / ``max-video-preview`` value: a non-negative integer or -1; else None (ignored)."""
    if value == "-1":
        return -1
    return int(value) if value.isascii() and value.isdigit() and len(value) <= 18 else None


class _Reading:
    """The directives read so far: names by source, and the most restrictive values."""

    __slots__ = ("header", "max_image_preview", "max_snippet", "max_video_preview", "meta", "unavailable_after",
                 "unknown")

    def __init__(self) -> None:
        self.meta: set[str] = set()
        self.header: set[str] = set()
        self.unknown: set[str] = set()
        self.max_snippet: int | None = None
        self.max_image_preview: str | None = None
        self.max_video_preview: int | None = None
        self.unavailable_after: datetime | None = None

    def apply(self, into: set[str], name: str, value: str | None) -> None:
        if not name or len(name) > MAX_NAME_CHARS:
            return
        if name in _EXPANSIONS:
            into.update(_EXPANSIONS[name])
        elif name in KNOWN:
            into.add(name)
        elif name in self.unknown or len(self.unknown) < _MAX_UNKNOWN_SEEN:
            self.unknown.add(name)
            into.add(name)
        if value is None or name not in VALUED:
            return
        if name == "max-snippet":
            self.max_snippet = _tighter_limit(self.max_snippet, _limit(value))
        elif name == "max-video-preview":
            self.max_video_preview = _tighter_limit(self.max_video_preview, _limit(value))
        elif name == "max-image-preview":
            setting = value.lower()
            current = self.max_image_preview
            if setting in _IMAGE_PREVIEWS and (current is None or _IMAGE_PREVIEWS[setting] < _IMAGE_PREVIEWS[current]):
                self.max_image_preview = setting
        else:
            when = parse_date(value)
            current_date = self.unavailable_after
            if when is not None and (current_date is None or when < current_date):
                self.unavailable_after = when

    def result(self) -> RobotsTags:
        meta, header = self.meta, self.header
        if len(self.unknown) > MAX_UNKNOWN:
            dropped = set(sorted(self.unknown)[MAX_UNKNOWN:])
            meta, header = meta - dropped, header - dropped
        if not meta and not header:
            return NO_TAGS
        return _build(frozenset(meta), frozenset(header), self.max_snippet, self.max_image_preview,
                      self.max_video_preview, self.unavailable_after)


@lru_cache(maxsize=256)
def _build(meta: frozenset[str], header: frozenset[str], max_snippet: int | None, max_image_preview: str | None,
           max_video_preview: int | None, unavailable_after: datetime | None) -> RobotsTags:
    """The ``RobotsTags`` of what was read; cached, as most responses repeat a few combinations (``RobotsTags`` is
    immutable, so sharing one is safe, and building one costs more than parsing a header)."""
    directives = meta | header
    return RobotsTags(
        noindex="noindex" in directives,
        nofollow="nofollow" in directives,
        noarchive="noarchive" in directives,
        nosnippet="nosnippet" in directives,
        noimageindex="noimageindex" in directives,
        notranslate="notranslate" in directives,
        indexifembedded="indexifembedded" in directives,
        max_snippet=max_snippet,
        max_image_preview=max_image_preview,
        max_video_preview=max_video_preview,
        unavailable_after=unavailable_after,
        directives=directives,
        from_meta=meta,
        from_header=header,
    )
