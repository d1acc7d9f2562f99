"""Yandex's ``Clean-param`` directive: reading its rules and dropping the parameters they list from a URL (SPEC 5.3,
6.5; Yandex's documentation, "Clean-param directive").

``Clean-param: p0[&p1&..&pn] [path-prefix]`` says that URLs whose path starts with the prefix and differ only in
the listed query parameters are one page, so a crawler may drop those parameters. ``clean_param`` reads one line's
value into a ``CleanParam`` (None: a value Yandex would not use); ``clean_url`` rewrites a URL by string surgery:
everything but the dropped ``name[=value]`` pieces is kept byte for byte, in order. Both never raise.

Yandex extension: Google ignores the field; the parser only records it (SPEC 5.3) and nothing here decides whether a
URL may be fetched. Yandex reads the directive wherever it stands, whatever the group: the builder collects it
file-wide (``Robots.clean_params``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from ._pattern import matches
from ._urls import decision_path

#: Yandex: "The rule is limited to 500 characters"; a longer value is ignored whole.
MAX_RULE_CHARS = 500
# Yandex: the prefix may hold only these characters.
_PREFIX = re.compile(r"[A-Za-z0-9.\-/*_]*")


@dataclass(frozen=True, slots=True)
class CleanParam:
    """One usable ``Clean-param`` line: the parameter names it drops from the URLs whose path starts with ``prefix``.

    ``params`` are percent-decoded (``clean_url`` compares decoded names); ``prefix`` is as written, ``""`` for
    every path (``*`` matches any sequence; the prefix is matched as a robots.txt pattern with ``*`` appended);
    ``line`` is its line in robots.txt, ``written`` its value as written (for messages).
    """

    params: frozenset[str]
    prefix: str
    line: int
    written: str


def clean_param(line: int, value: bytes) -> CleanParam | None:
    """The rule of a ``Clean-param`` line's stripped ``value``; None when it is not a usable rule: empty, over
    ``MAX_RULE_CHARS`` characters, more than two fields, no parameter name, or a prefix with a character Yandex does
    not allow."""
    written = value.decode("utf-8", "replace")
    if len(written) > MAX_RULE_CHARS:
        return None
    fields = value.split()
    # Decision: a third field makes the line something else than Yandex's syntax: ignored, not guessed at.
    if not fields or len(fields) > 2:
        return None
    # Decision: a prefix with a character outside Yandex's set ("?", "%", "$", non-ASCII...) makes the rule
    # unusable rather than trimmed: a rule that drops parameters must be one Yandex would apply as written.
    prefix = fields[1].decode("ascii", "replace") if len(fields) == 2 else ""
    if _PREFIX.fullmatch(prefix) is None:
        return None
    # Decision: empty names ("a&&b", "&a") are skipped; names are decoded (surrogateescape keeps invalid UTF-8
    # distinct and matchable against its percent-escapes) and percent-decoded, as URL names are compared.
    names = frozenset(_name(name.decode("utf-8", "surrogateescape")) for name in fields[0].split(b"&") if name)
    if not names:
        return None
    return CleanParam(names, prefix, line, written)


def clean_url(url: str, rules: Sequence[CleanParam]) -> tuple[str, tuple[CleanParam, ...]] | None:
    """``(url without the query parameters listed by the rules whose prefix matches its path, the rules that removed
    something in their order)``; None when nothing is removed (at once when ``url`` has no ``?`` or there is no
    rule). Never raises.

    ``url`` is a full URL or a path. The query runs from the first ``?`` to the ``#fragment`` (kept) or the end; its
    ``&``-separated pieces whose name (before any ``=``; a piece without ``=`` is all name) a rule lists are dropped,
    every occurrence; the other pieces keep their order and exact encoding, empty ones included. A query left empty
    loses its ``?``.
    """
    if not rules:
        return None
    start = url.find("?")
    if start < 0:
        return None
    end = url.find("#")
    if 0 <= end < start:
        return None  # the "?" is in the fragment: no query
    if end < 0:
        end = len(url)
    if start + 1 == end:
        return None  # an empty query
    query = url[start + 1 : end]
    pieces = query.split("&")
    names = [piece.partition("=")[0] for piece in pieces]
    if "%" in query:
        names = [_name(name) for name in names]
    # Names first: a URL holds none of the listed names far more often than its path misses the prefix.
    # Decision: the prefix is matched against the path (with ";params") without the query, so that whether a rule
    # applies does not depend on the parameters it drops (and cleaning is idempotent); "*" cannot reach the query.
    path = None
    applying: list[CleanParam] = []
    for rule in rules:
        if rule.params.isdisjoint(names):
            continue
        if rule.prefix:
            if path is None:
                path = decision_path(url[:start])
            if not matches(rule.prefix, path):
                continue
        applying.append(rule)  # it lists a name the query holds: it drops something
    if not applying:
        return None
    dropped = applying[0].params if len(applying) == 1 else frozenset().union(*(rule.params for rule in applying))
    query = "&".join([piece for piece, name in zip(pieces, names, strict=True) if name not in dropped])
    return url[:start] + ("?" + query if query else "") + url[end:], tuple(applying)


def _name(name: str) -> str:
    """A parameter name percent-decoded (UTF-8; invalid sequences kept distinct as lone surrogates)."""
    # Decision: names are compared percent-decoded ("%72ef" is "ref"; a non-ASCII rule name matches its UTF-8
    # escapes in either hex case), case-sensitively as Yandex says; "+" is not read as a space.
    return unquote(name, errors="surrogateescape") if "%" in name else name
