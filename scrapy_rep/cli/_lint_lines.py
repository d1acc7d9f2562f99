"""``lint``'s per-line findings: what Google's parser ignored or tolerated on each line, and patterns that cannot
match as written (SPEC 4-7)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from scrapy_rep.config.tokens import product_token
from scrapy_rep.matcher import (
    MAX_LINE_BYTES,
    LineKind,
    ParsedLine,
    extract_user_agent,
    is_valid_user_agent,
    usage_problems,
)

#: Why each field Google ignores but other crawlers read is worth a finding (SPEC 5.3, 9.2); others: _UNUSED.
_UNSUPPORTED = {
    "crawl-delay": "Google ignores it (SPEC 5.3); scrapy-rep obeys it only with REP_OBEY_CRAWL_DELAY = True",
    "clean-param": "Yandex's field: Google ignores it (SPEC 5.3)",
    "host": "Yandex's old field: Google ignores it (SPEC 5.3)",
}
_UNUSED = "a field other crawlers read: Google ignores it (SPEC 5.3)"
#: Fields scrapy-rep reads as usage preferences (``Robots.usage``): findings only when (partly) ignored.
_USAGE = ("content-usage", "content-signal")
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")
RULES = (LineKind.ALLOW, LineKind.DISALLOW)


@dataclass(frozen=True, slots=True)
class Finding:
    """Something the parser ignored or tolerated, or a pattern that cannot do what it seems to say. ``line`` 0:
    the whole file (its fetch). ``data``: more facts for ``--json``."""

    line: int
    kind: str
    message: str
    data: dict[str, Any] = field(default_factory=dict)

    def as_text(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        return f"{where}{self.kind}: {self.message}"

    def as_json(self) -> dict[str, Any]:
        return {"line": self.line, "kind": self.kind, "message": self.message, **self.data}


def line_findings(lines: list[ParsedLine], body: bytes) -> list[Finding]:
    """Every per-line finding of ``lines`` (a report of ``body``), in line order."""
    written_keys = [_written_key(raw) for raw in _LINE_BREAK.split(body.removeprefix(b"\xef\xbb\xbf"))]
    return [
        Finding(line.line_num, kind, message)
        for line in lines
        for kind, message in _findings(line, _at(written_keys, line.line_num - 1))
    ]


def _at(keys: list[str], index: int) -> str:
    return keys[index] if index < len(keys) else ""


def _written_key(raw: bytes) -> str:
    """The field name as written on a line (before ``:``), lower-cased; empty when there is no colon."""
    text = raw.split(b"#", 1)[0]
    return text.split(b":", 1)[0].strip().lower().decode("utf-8", "replace") if b":" in text else ""


def _findings(line: ParsedLine, written_key: str) -> Iterator[tuple[str, str]]:
    """(kind, message) for each thing worth saying about one line."""
    meta = line.metadata
    if meta.is_line_too_long:
        yield "line-too-long", f"longer than {MAX_LINE_BYTES} bytes: the rest of the line is ignored"
    if meta.has_invalid_utf8:
        yield "invalid-utf8", "bytes that are not UTF-8 (SPEC 4.3): compared as they are"
    if meta.is_missing_colon_separator:
        yield "missing-colon", "no ':' after the field: accepted as two tokens (Google extension)"
    if line.is_typo:
        yield "typo", f"{written_key or line.key!r} is a misspelling Google accepts as {line.key!r} (SPEC 5.2)"
    elif written_key and line.kind not in (LineKind.UNKNOWN, LineKind.UNUSED) and written_key != line.key:
        yield "field-name", f"{written_key!r} is read as {line.key!r}: Google matches field names by prefix"
    if not (meta.has_directive or meta.is_empty or meta.is_comment):
        yield "not-a-directive", "not a 'field: value' line: ignored (SPEC 4.2)"
    elif line.kind is LineKind.USER_AGENT:
        yield from _agent_findings(line.value)
    elif line.kind in RULES:
        yield from _rule_findings(line)
    elif line.kind is LineKind.SITEMAP and not line.value.startswith(("http://", "https://")):
        yield "sitemap", f"sitemap {line.value!r} is not an absolute URL (SPEC 5.5)"
    elif line.kind is LineKind.UNUSED and line.key.lower() in _USAGE:
        yield from _usage_findings(line)
    elif line.kind is LineKind.UNUSED:
        yield "unsupported-field", f"{line.key}: {_UNSUPPORTED.get(line.key.lower(), _UNUSED)}"
    elif line.kind is LineKind.UNKNOWN and meta.has_directive:
        yield "unknown-field", f"unknown field {line.key!r}: ignored (SPEC 5.3)"


def _agent_findings(value: str) -> Iterator[tuple[str, str]]:
    """SPEC 5.6: only the leading product token of a user-agent value counts; a full User-Agent string names its
    first product (``Mozilla``), not the crawler it is about (``product_token``)."""
    if value == "*" or value.startswith("* ") or is_valid_user_agent(value):
        return
    token = extract_user_agent(value)
    counted = f"only {token!r} counts" if token else "no product token: the group applies to no crawler"
    crawler = product_token(value)
    hint = f"; to name this crawler write {crawler!r}" if crawler and crawler != token else ""
    yield "user-agent", f"{value!r} is not a product token of [A-Za-z_-]: {counted} (SPEC 5.6){hint}"


def _usage_findings(line: ParsedLine) -> Iterator[tuple[str, str]]:
    """A Content-Usage / Content-Signal line: outside any group, or a value (partly) ignored."""
    if line.before_user_agent:
        yield "usage-before-user-agent", f"{line.key} before any user-agent line: ignored (as rules are, SPEC 6.1)"
    else:
        yield from usage_problems(line.key, line.value)


def _rule_findings(line: ParsedLine) -> Iterator[tuple[str, str]]:
    rule = f"{line.key}: {line.value}"
    if line.before_user_agent:
        yield "rule-before-user-agent", f"{line.key} before any user-agent line: ignored (SPEC 6.1)"
        return
    if line.value and not line.value.startswith(("/", "*")):
        yield "never-matches", f"{rule} does not start with / or *: it matches no URL (SPEC 7.1)"
    if "$" in line.value[:-1]:
        yield "dollar-in-middle", f"{rule}: $ anchors only at the end of a pattern; here it is a literal $ (SPEC 7.3)"
