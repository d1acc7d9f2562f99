"""Per-line parse results, the way Google's RobotsParsingReporter gives them (for ``scrapy-rep lint``).

Besides Google's facts (directive kind, typo, the LineMetadata flags), the report flags what Google
drops silently: content past the size cap (SPEC 4.4), lines with invalid UTF-8 (SPEC 4.3), rules before
any user-agent line (SPEC 6.1), and keys known to other crawlers but unused by Google (``Unused``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from ._escape import Body, encode_text
from ._parser import MAX_BYTES, MAX_LINE_BYTES, LineMetadata, parse_lines, without_bom
from ._robots import Robots, parse

UNUSED_KEYS = frozenset({
    "clean-param", "content-signal", "content-usage", "crawl-delay", "domain", "host", "noarchive", "nofollow",
    "noindex", "request-rate", "revisit-after", "visit-time",
})
"""Keys other crawlers use and Google ignores (compared lower-cased, whole key)."""


class LineKind(enum.Enum):
    """What a line was reported as; the values are Google's RobotsTagName names."""

    UNKNOWN = "Unknown"
    USER_AGENT = "UserAgent"
    ALLOW = "Allow"
    DISALLOW = "Disallow"
    SITEMAP = "Sitemap"
    UNUSED = "Unused"


@dataclass(slots=True)
class ParsedLine:
    """One physical line: its kind, key and value (as written, decoded for display) and its metadata.

    ``kind`` is UNKNOWN both for an unrecognised ``key: value`` and for a line with no directive at all
    (empty, comment, junk): ``metadata.has_directive`` tells them apart, as in Google's reporter.
    """

    line_num: int
    kind: LineKind = LineKind.UNKNOWN
    key: str = ""
    value: str = ""
    metadata: LineMetadata = field(default_factory=LineMetadata)
    before_user_agent: bool = False  # an allow/disallow or usage line that no group owns: ignored (SPEC 6.1)

    @property
    def is_typo(self) -> bool:
        """The key is one of the accepted misspellings (SPEC 5.2)."""
        return self.metadata.is_acceptable_typo


@dataclass(slots=True)
class ParseReport:
    """Every line of a body, in order, with Google's counters and ours."""

    lines: list[ParsedLine] = field(default_factory=list)
    ignored_bytes: int = 0  # bytes past the size cap, never parsed (SPEC 4.4)

    @property
    def valid_directives(self) -> int:
        """User-agent, allow, disallow and sitemap lines (typo variants included)."""
        return sum(1 for line in self.lines if line.kind not in (LineKind.UNKNOWN, LineKind.UNUSED))

    @property
    def ignored_lines(self) -> int:
        """Lines with text that are no directive Google reads (text that is no directive, unknown keys, keys it does
        not use): what ``ignored_lines(body)`` counts without building a report."""
        return sum(1 for line in self.lines
                   if not (line.metadata.is_empty or line.metadata.is_comment)
                   and (not line.metadata.has_directive or line.kind in _OTHER))

    @property
    def unknown_directives(self) -> int:
        """``key: value`` lines with any other key (Unused ones included)."""
        return sum(1 for line in self.lines if line.metadata.has_directive and line.kind in _OTHER)

    @property
    def last_line_seen(self) -> int:
        """The number of the last physical line (the empty text after a final newline counts)."""
        return self.lines[-1].line_num if self.lines else 0

    @property
    def last_directive_line(self) -> int:
        """The number of the last line holding a directive, known or not (0: none)."""
        return max((line.line_num for line in self.lines if line.metadata.has_directive), default=0)

    @property
    def sitemaps(self) -> list[str]:
        """The sitemap values, in file order."""
        return [line.value for line in self.lines if line.kind is LineKind.SITEMAP]


_OTHER = (LineKind.UNKNOWN, LineKind.UNUSED)
_USAGE_KEYS = ("content-usage", "content-signal")  # read by ``Robots.usage`` only inside a group


class _Reporter:
    """The ``ParseHandler`` that records every line for ``ParseReport``."""

    def __init__(self) -> None:
        self.lines: list[ParsedLine] = []
        self._pending: ParsedLine | None = None
        self._seen_user_agent = False

    def _directive(self, line: int, kind: LineKind, key: str, value: bytes) -> ParsedLine:
        self._pending = ParsedLine(line, kind, key, value.decode("utf-8", "replace"))
        return self._pending

    def user_agent(self, line: int, value: bytes) -> None:
        self._seen_user_agent = True
        self._directive(line, LineKind.USER_AGENT, "user-agent", value)

    def allow(self, line: int, value: bytes) -> None:
        self._directive(line, LineKind.ALLOW, "allow", value).before_user_agent = not self._seen_user_agent

    def disallow(self, line: int, value: bytes) -> None:
        self._directive(line, LineKind.DISALLOW, "disallow", value).before_user_agent = not self._seen_user_agent

    def sitemap(self, line: int, value: bytes) -> None:
        self._directive(line, LineKind.SITEMAP, "sitemap", value)

    def unknown(self, line: int, key: bytes, value: bytes) -> None:
        name = key.decode("utf-8", "replace")
        lowered = key.lower().decode("ascii", "replace")
        kind = LineKind.UNUSED if lowered in UNUSED_KEYS else LineKind.UNKNOWN
        parsed = self._directive(line, kind, name, value)
        parsed.before_user_agent = lowered in _USAGE_KEYS and not self._seen_user_agent

    def line_metadata(self, line: int, metadata: LineMetadata) -> None:
        parsed = self._pending if self._pending is not None else ParsedLine(line)
        parsed.metadata = metadata
        self.lines.append(parsed)
        self._pending = None


def report(body: Body, *, max_bytes: int | None = MAX_BYTES) -> ParseReport:
    """The per-line parse results of ``body``, read exactly as ``parse`` reads it. Never raises."""
    data = encode_text(body) if isinstance(body, str) else bytes(body)
    ignored = 0 if max_bytes is None else max(0, len(data) - max_bytes)
    if ignored:
        data = data[:max_bytes]
    reporter = _Reporter()
    parse_lines(data, reporter)
    return ParseReport(reporter.lines, ignored)


def ignored_lines(body: bytes, *, max_bytes: int | None = MAX_BYTES, robots: Robots | None = None) -> int:
    """How many lines with text Google's parser does not read as a directive (text that is no directive, unknown
    keys, keys it does not use): ``report(body).ignored_lines``, counted without building the report (a soft 404's
    HTML page has thousands of lines: the crawl's warning counts them; ``lint``, which has the report, reads it
    there). ``robots``: ``parse(body, max_bytes=max_bytes)`` when the caller has it, whose ``read_lines`` spares a
    second parse. Never raises."""
    data = body if max_bytes is None else body[:max_bytes]
    read = (robots if robots is not None else parse(data, max_bytes=None)).read_lines
    return _text_lines(without_bom(data)) - read


def _text_lines(body: bytes) -> int:
    """The lines holding text once cut as ``parse_lines`` cuts them (length cap, NUL, comment) and stripped."""
    count = 0
    for line in body.splitlines():
        line = line[:MAX_LINE_BYTES]
        nul = line.find(b"\0")
        if nul >= 0:
            line = line[:nul]
        comment = line.find(b"#")
        if comment >= 0:
            line = line[:comment]
        if line.strip():
            count += 1
    return count
