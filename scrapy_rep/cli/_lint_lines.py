"""``lint``'s per-line findings: what Google's parser ignored or tolerated on each line, patterns that cannot
match as written (SPEC 4-7), and the line the size cap cuts, read as what is left of it (SPEC 4.4)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from scrapy_rep.config.tokens import product_token
from scrapy_rep.matcher import (
    MAX_LINE_BYTES,
    Key,
    LineKind,
    LineMetadata,
    ParsedLine,
    ParseReport,
    escape_pattern,
    extract_user_agent,
    is_valid_user_agent,
    parse_lines,
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
_BOM = b"\xef\xbb\xbf"
#: The fields other than rules that ``parse`` keeps from a group (SPEC 5.3, 6.5); it drops any other field.
_READ_FIELDS = (b"crawl-delay", b"clean-param", b"content-usage", b"content-signal")
#: How much of a line a finding quotes.
_QUOTED = 100
#: A directive as ``parse_lines`` reports it: its kind, its key (canonical for a known kind), its raw value.
_Directive = tuple[Key, bytes, bytes]


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


def bom_length(body: bytes) -> int:
    """Google extension: any prefix of the UTF-8 BOM at the start is skipped (the matcher's ``split_lines``)."""
    return next((size for size in (3, 2, 1) if body.startswith(_BOM[:size])), 0)


def cut_line_finding(body: bytes, max_bytes: int, capped: ParseReport, truncated: bool) -> Finding | None:
    """SPEC 4.4: ``parse`` reads ``body[:max_bytes]`` even when that ends inside a line, so the line the cap cuts is
    read as what is left of it. A ``cut-at-cap`` finding on that line (``capped``: the report of ``body`` capped at
    ``max_bytes``) saying what is read, what is written and what the cut changes; None when nothing is read
    differently (the cap falls at a line's start, in its comment or in its trailing blanks). ``truncated``: ``body``
    is only the start of a longer source (the cut line may go on past it)."""
    start = max(body.rfind(b"\n", 0, max_bytes), body.rfind(b"\r", 0, max_bytes), bom_length(body) - 1) + 1
    if start >= max_bytes:
        return None
    after = _LINE_BREAK.search(body, max_bytes)
    end = after.start() if after else len(body)
    read, written = _directive(body[start:max_bytes]), _directive(body[start:end])
    if read == written:
        return None
    grouped = any(line.kind is LineKind.USER_AGENT for line in capped.lines[:-1])
    change, words = _change(read, written, grouped)
    complete = not (truncated and end == len(body))
    read_text, written_text = _quote(body[start:max_bytes]), _quote(body[start:end], complete)
    message = (f"the {max_bytes}-byte cap cuts this line (SPEC 4.4): it is read as {read_text!r}, written "
               f"{written_text!r}; {words}")
    now = _effect(read, grouped)
    data = {"read": read_text, "written": written_text, "written_complete": complete,
            "in_effect": _show(now) if now else None, "change": change}
    return Finding(capped.last_line_seen, "cut-at-cap", message, data)


class _LineDirective:
    """The ``ParseHandler`` of a one-line parse: keeps the directive ``parse_lines`` finds (None: not a directive)."""

    def __init__(self) -> None:
        self.found: _Directive | None = None

    def user_agent(self, line: int, value: bytes) -> None:
        self.found = (Key.USER_AGENT, b"user-agent", value)

    def allow(self, line: int, value: bytes) -> None:
        self.found = (Key.ALLOW, b"allow", value)

    def disallow(self, line: int, value: bytes) -> None:
        self.found = (Key.DISALLOW, b"disallow", value)

    def sitemap(self, line: int, value: bytes) -> None:
        self.found = (Key.SITEMAP, b"sitemap", value)

    def unknown(self, line: int, key: bytes, value: bytes) -> None:
        self.found = (Key.UNKNOWN, key, value)

    def line_metadata(self, line: int, metadata: LineMetadata) -> None:
        """Nothing to keep: the directive is all a cut changes."""


def _directive(raw: bytes) -> _Directive | None:
    """The directive of one physical line (no line break in ``raw``), read as ``parse`` reads it anywhere in a file:
    a line break first, so that a line starting with 0xEF is not taken for a file's BOM."""
    handler = _LineDirective()
    parse_lines(b"\n" + raw, handler)
    return handler.found


def _effect(directive: _Directive | None, grouped: bool) -> _Directive | None:
    """``directive`` if ``parse`` keeps it, None if it drops it (SPEC 4.2, 5.3, 5.4, 6.1). ``grouped``: a
    user-agent line comes before."""
    if directive is None:
        return None
    kind, key, value = directive
    if kind in (Key.ALLOW, Key.DISALLOW):
        return directive if grouped and value else None
    if kind is Key.UNKNOWN:
        return directive if grouped and key.lower() in _READ_FIELDS else None
    return directive if kind is Key.USER_AGENT or value else None


def _dropped_why(directive: _Directive | None, grouped: bool) -> str:
    """Why ``parse`` drops ``directive`` (its ``_effect`` is None)."""
    if directive is None:
        return "not a directive (SPEC 4.2)"
    kind, _, value = directive
    if kind is Key.UNKNOWN:
        return "a field Google ignores (SPEC 5.3)" if grouped else "a field before any user-agent line (SPEC 6.1)"
    if kind is Key.SITEMAP:
        return "an empty sitemap"
    return f"an empty {kind.value}, ignored (SPEC 5.4)" if not value else "a rule before any user-agent line (SPEC 6.1)"


def _change(read: _Directive | None, written: _Directive | None, grouped: bool) -> tuple[str, str]:
    """(change, words): what reading ``read`` instead of ``written`` changes for crawlers. ``change`` is one of
    ``broader``, ``widens-access``, ``same-urls``, ``lost``, ``different``, ``none``."""
    now, was = _effect(read, grouped), _effect(written, grouped)
    if now is None:
        if was is None:
            why_read, why_written = _dropped_why(read, grouped), _dropped_why(written, grouped)
            either = why_read if why_read == why_written else f"as read, {why_read}; as written, {why_written}"
            return "none", f"no change in effect: the line is ignored either way: {either}"
        lost = {Key.USER_AGENT: "user-agent line", Key.SITEMAP: "sitemap", Key.ALLOW: "rule", Key.DISALLOW: "rule"}
        return "lost", f"what is left is {_dropped_why(read, grouped)}: the written {lost.get(was[0], 'line')} is lost"
    if was is None:
        return "different", (f"the written line is {_dropped_why(written, grouped)}, but what is left is read as "
                             f"{_show(now)!r}")
    if now[0] is was[0] and now[0] in (Key.ALLOW, Key.DISALLOW):
        return _rule_change(now[0], escape_pattern(now[2]), escape_pattern(was[2]))
    if now[0] is was[0] is Key.USER_AGENT:
        who_now, who_was = _agent(now[2]), _agent(was[2])
        if who_now.lower() == who_was.lower():
            return "none", f"no change in effect: it still names {who_now} (SPEC 5.6)"
        return "different", f"it names {who_now}, not {who_was} as written (SPEC 5.6)"
    return "different", f"its value is cut: {_show(now)!r} is read, not {_show(was)!r}"


def _rule_change(kind: Key, now: str, was: str) -> tuple[str, str]:
    """A rule read as the pattern ``now`` instead of ``was`` (both escaped, SPEC 7.2; same kind)."""
    rule = f"the rule in effect, '{kind.value}: {now}',"
    if now == was:
        return "none", f"{rule} is the written one"
    if not was.startswith(now):
        return "different", f"{rule} matches other URLs than the written one"
    if _anchored(now):
        return "different", (f"{rule} ends in a '$' that now anchors it: it matches other URLs than the written "
                             f"one (SPEC 7.3)")
    if kind is Key.ALLOW and _index_dir(was) not in ("", _index_dir(now)):
        return "different", (f"{rule} no longer allows {_index_dir(was)!r}, which Google allows with "
                             f"'allow: {was}' (Google extension)")
    if _canonical(now) == _canonical(was):
        change, scope = "same-urls", f"{rule} matches the same URLs as the written one (SPEC 7.3)"
    elif kind is Key.DISALLOW:
        change, scope = "broader", (f"{rule} is broader than written: it matches every URL the written one does, "
                                    f"and more")
    else:
        change, scope = "widens-access", (f"{rule} widens access: it matches every URL the written one does, "
                                          f"and more")
    rival = "any matching allow at least as long" if kind is Key.DISALLOW else "any longer matching disallow"
    return change, f"{scope}; being shorter, it yields to {rival} (SPEC 7.4)"


def _canonical(pattern: str) -> str:
    """``pattern`` without what changes nothing: trailing ``*``, and ``*$`` at the end (SPEC 7.3)."""
    if pattern.endswith("*$"):
        pattern = pattern[:-1]
    return pattern.rstrip("*")


def _anchored(pattern: str) -> bool:
    """A final ``$`` anchors ``pattern`` at the end of the path (SPEC 7.3)."""
    return _canonical(pattern).endswith("$")


def _index_dir(pattern: str) -> str:
    """Google extension (the matcher's ``allow``): ``allow: /dir/index.htm...`` also allows ``/dir/``; that
    directory, or "" when the last segment does not start with ``index.htm``."""
    slash = pattern.rfind("/")
    return pattern[: slash + 1] if slash >= 0 and pattern.startswith("/index.htm", slash) else ""


def _agent(value: bytes) -> str:
    """Who a user-agent value names (SPEC 5.6; the matcher's ``_Builder.user_agent``)."""
    if value[:1] == b"*" and (len(value) == 1 or value[1:2].isspace()):
        return "every crawler ('*')"
    token = extract_user_agent(value.decode("utf-8", "replace"))
    return f"the crawler {token!r}" if token else "no crawler (no product token)"


def _show(directive: _Directive) -> str:
    """``directive`` as in effect: a rule's pattern escaped as the matcher compares it (SPEC 7.2)."""
    kind, key, value = directive
    shown = escape_pattern(value) if kind in (Key.ALLOW, Key.DISALLOW) else value.decode("utf-8", "replace")
    return _clip(f"{key.decode('utf-8', 'replace')}: {shown}".rstrip())


def _quote(raw: bytes, complete: bool = True) -> str:
    """A line as written, blanks trimmed; ``...`` when clipped or (``complete`` False) known only in part."""
    return _clip(raw.decode("utf-8", "replace").strip(), complete)


def _clip(text: str, complete: bool = True) -> str:
    return text if len(text) <= _QUOTED and complete else text[:_QUOTED] + "..."
