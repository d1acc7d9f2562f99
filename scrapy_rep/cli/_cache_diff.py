"""``scrapy-rep cache diff ORIGIN [A B]``: what changed between two versions of an origin's robots.txt in a store's
history, as rules added and removed per group (``matcher.diff_robots``), not as a text diff.

Without A and B: the two newest versions, older to newer. A and B are version ids or their prefixes (at least
``MIN_PREFIX`` hex digits), compared A to B; one not given is the newest version. A version whose outcome is not
``rules`` (allow-all: a 404, say) is compared as an empty file, and the output says so. Bodies are read as ``check``
reads them (the first ``MAX_BYTES``).

Exit codes: ``0`` shown (changed or not); ``1`` the origin has no history, only one version, or no version with that
prefix; ``2`` an origin or prefix that cannot be one, or a prefix that several versions have.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any, TextIO

from scrapy_rep.matcher import DirectiveLine, GroupDiff, Rule, diff_robots
from scrapy_rep.stores import HistoryVersion, Outcome, iso

from ._cache_entries import SHORT_ID
from ._cache_store import Browsable, origin_key
from ._common import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, MAX_BYTES, UsageError, error_line

#: The shortest version prefix accepted (``git``'s own minimum).
MIN_PREFIX = 4
_HEX = re.compile(r"[0-9a-f]+")


class _Refused(Exception):
    """Why the two versions cannot be chosen, and the exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


async def run_diff(store: Browsable, origin: str, a: str | None, b: str | None, as_json: bool, out: TextIO) -> int:
    """Write to ``out`` what changed in ``origin``'s robots.txt from version ``a`` to ``b`` (id prefixes; None: see
    the module docstring), as text or one JSON object; problems go to stderr. Returns the exit code."""
    try:
        key = origin_key(origin)
    except UsageError as exc:
        print(error_line(f"cache diff: {exc}"), file=sys.stderr)
        return EXIT_USAGE
    try:
        old_prefix, new_prefix = (None if value is None else _prefix(value) for value in (a, b))
        old, new = _chosen(key, await store.history(key), old_prefix, new_prefix)
    except _Refused as exc:
        print(error_line(str(exc)) if exc.code == EXIT_USAGE else str(exc), file=sys.stderr)
        return exc.code
    groups = diff_robots(_body(old), _body(new), max_bytes=MAX_BYTES)
    if as_json:
        document = {"origin": key, "from": _version_json(old), "to": _version_json(new), "changed": bool(groups),
                    "groups": [_group_json(group) for group in groups]}
        print(json.dumps(document, indent=2), file=out)
    else:
        print("\n".join(_text(key, old, new, groups)), file=out)
    return EXIT_OK


def _prefix(value: str) -> str:
    prefix = value.lower()
    if len(prefix) < MIN_PREFIX or not _HEX.fullmatch(prefix):
        raise _Refused(f"cache diff: version {value!r}: give at least {MIN_PREFIX} hex digits of its id", EXIT_USAGE)
    return prefix


def _chosen(origin: str, versions: list[HistoryVersion], a: str | None,
            b: str | None) -> tuple[HistoryVersion, HistoryVersion]:
    """(old, new): the versions ``a`` and ``b`` name (newest first in ``versions``); see the module docstring."""
    if not versions:
        raise _Refused(f"{origin}: no robots.txt history in the store", EXIT_FINDINGS)
    if a is None and b is None:
        if len(versions) < 2:
            raise _Refused(f"{origin}: only one version in the store ({versions[0].id[:SHORT_ID]}): nothing to compare",
                           EXIT_FINDINGS)
        return versions[1], versions[0]
    return (versions[0] if a is None else _named(origin, versions, a),
            versions[0] if b is None else _named(origin, versions, b))


def _named(origin: str, versions: list[HistoryVersion], prefix: str) -> HistoryVersion:
    """The newest version whose id starts with ``prefix`` (one id may have two rows: a 200 with an empty body and a
    404 share it); refused when none does, or several ids do."""
    matching = [version for version in versions if version.id.startswith(prefix)]
    ids = list(dict.fromkeys(version.id[:SHORT_ID] for version in matching))
    if not ids:
        raise _Refused(f"{origin}: no version {prefix} in the store", EXIT_FINDINGS)
    if len(ids) > 1:
        raise _Refused(f"cache diff: version {prefix} is ambiguous: {', '.join(ids)}", EXIT_USAGE)
    return matching[0]


def _body(version: HistoryVersion) -> bytes:
    """What the crawl obeyed: the body, or an empty file for a version without rules (allow-all)."""
    return version.body if version.outcome is Outcome.RULES else b""


def _described(version: HistoryVersion) -> str:
    status = "-" if version.status is None else version.status
    return f"{version.id[:SHORT_ID]} (first seen {iso(version.first_seen)}, status {status})"


def _text(origin: str, old: HistoryVersion, new: HistoryVersion, groups: list[GroupDiff]) -> list[str]:
    lines = [f"robots.txt {origin}: {_described(old)} -> {_described(new)}"]
    lines += [f"{version.id[:SHORT_ID]} is {version.outcome.value}: compared as an empty file"
              for version in dict.fromkeys((old, new)) if version.outcome is not Outcome.RULES]
    for group in groups:
        if not group.tokens:
            lines.append("file-wide:")
        else:
            state = "" if group.in_old and group.in_new else " (new)" if group.in_new else " (removed)"
            lines.append(f"group {', '.join(map(repr, group.tokens))}{state}:")
        lines += [f"  + {_line(line)}" for line in group.added]
        lines += [f"  - {_line(line)}" for line in group.removed]
    if not groups:
        lines.append("no change: the same groups, rules and sitemaps")
    return lines


def _line(line: Rule | DirectiveLine) -> str:
    return f"{line.directive}: {line.written} (line {line.line})"


def _version_json(version: HistoryVersion) -> dict[str, Any]:
    return {"id": version.id, "outcome": version.outcome.value, "status": version.status, "url": version.url,
            "first_seen": version.first_seen, "last_seen": version.last_seen,  # epoch seconds, as history --json
            "compared_as_empty": version.outcome is not Outcome.RULES}


def _group_json(group: GroupDiff) -> dict[str, Any]:
    """``tokens`` ([] for the file-wide lines), ``in_old``/``in_new``, ``added``/``removed`` lines."""
    return {"tokens": list(group.tokens), "in_old": group.in_old, "in_new": group.in_new,
            "added": [_line_json(line) for line in group.added],
            "removed": [_line_json(line) for line in group.removed]}


def _line_json(line: Rule | DirectiveLine) -> dict[str, Any]:
    return {"directive": line.directive, "value": line.written, "line": line.line}
