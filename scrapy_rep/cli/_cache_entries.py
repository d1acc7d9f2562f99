"""How ``scrapy-rep cache`` words a stored record: its kind, its times, its version, and a TDMRep entry's meaning.

The store keeps an origin's tdmrep.json beside its robots.txt, under the key ``<origin>/.well-known/tdmrep.json``
(robots/tdmrep.py's ``tdm_url``), an ``Entry`` like robots.txt's. ``kind_of`` splits a key into the origin and the
kind (``robots.txt`` or ``tdmrep.json``), so that ``list`` never shows a tdmrep.json key as an origin. A TDMRep entry
is worded as the crawl reads it (``robots.tdmrep.standing``): a file with N rules (kept through failures, if so), no
file, or unknown (unreachable with no copy kept, or a body that is not valid JSON: ``tdm`` and ``train-ai`` refused).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from scrapy_rep.matcher import TDMREP_PATH, parse_tdmrep
from scrapy_rep.reporting.outcome_log import plural
from scrapy_rep.robots.tdmrep import FILE, NONE, NOT_JSON, NOT_TDMREP, standing
from scrapy_rep.stores import Entry, StoredEntry

ROBOTS_KIND = "robots.txt"
TDMREP_KIND = "tdmrep.json"
KINDS = (ROBOTS_KIND, TDMREP_KIND)
#: Hex digits of a version id the text output shows (as ``cache history`` and ``cache diff`` do).
SHORT_ID = 12
_UNKNOWN = "TDM reservation unknown: tdm and train-ai refused until it is read"


def kind_of(key: str) -> tuple[str, str]:
    """(origin, kind) of a store key: ``https://a.example/.well-known/tdmrep.json`` -> (``https://a.example``,
    ``tdmrep.json``); any other key is an origin's robots.txt."""
    if key.endswith(TDMREP_PATH):
        return key[: -len(TDMREP_PATH)], TDMREP_KIND
    return key, ROBOTS_KIND


def stamp(epoch: float | None) -> str:
    if epoch is None:
        return "-"
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")


def version_line(entry: Entry) -> str:
    """``version: 3f5a0c1b2d4e (200, https://example.com/robots.txt)``: the copy in effect's short id, status and
    final URL (``cache history`` lists them all); ``version: - (no copy kept)`` for a failure without one."""
    version = entry.version
    if version is None:
        return "version: - (no copy kept)"
    status = "-" if version.status is None else str(version.status)
    return f"version: {version.id[:SHORT_ID]} ({status}, {version.url or 'final URL unknown'})"


def version_json(entry: Entry) -> dict[str, Any] | None:
    """``cache show --json``'s ``version``: ``id`` (SHA-256), ``fetched_at``, ``status``, ``url``; None: no copy."""
    return None if entry.version is None else entry.version.to_record()


def is_expired(stored: StoredEntry, now: float) -> bool | None:
    return None if stored.entry is None else not stored.entry.is_fresh(now)


def tdm_words(entry: Entry) -> str:
    """``file with 2 rules``, ``file with 2 rules (kept: the last fetch failed, 503)``, ``no file (404): ...``,
    ``unknown (unreachable, 503, no copy kept): ...`` or ``unknown (200, a body that is not valid JSON): ...``."""
    kind = standing(entry)
    if kind == FILE:
        kept = f" (kept: the last fetch failed, {entry.label})" if entry.failing else ""
        return f"file with {plural(len(parse_tdmrep(entry.body).rules), 'rule')}{kept}"
    if kind == NONE:
        label = entry.label
        if entry.error == NOT_TDMREP:
            label += ", not JSON: a page served for a missing file"
        return f"no file ({label}): no TDM reservation stated"
    why = "a body that is not valid JSON" if entry.error == NOT_JSON else "unreachable, no copy kept"
    return f"unknown ({entry.label}, {why}): {_UNKNOWN}"


def tdm_lines(stored: StoredEntry, now: float) -> list[str]:
    """The ``cache show`` lines of an origin's tdmrep.json record (after its robots.txt's)."""
    entry = stored.entry
    head = f"tdmrep.json: {stored.origin}"
    if entry is None:
        return [head, f"standing: corrupt ({stored.problem})", f"stored: {plural(stored.size, 'byte')}"]
    lines = [head, f"standing: {tdm_words(entry)}",
             f"status: {'-' if entry.status is None else entry.status}" + (f" ({entry.error})" if entry.error else ""),
             f"fetched: {stamp(entry.fetched_at)}",
             f"expires: {stamp(entry.expires_at)}" + (" (expired)" if is_expired(stored, now) else ""),
             f"failures: {entry.failures}" + (f" since {stamp(entry.first_failure_at)}" if entry.failures else ""),
             version_line(entry), f"stored: {plural(stored.size, 'byte')}"]
    if standing(entry) == FILE:
        body = entry.body.decode("utf-8", "replace")
        lines += [f"--- tdmrep.json ({plural(len(entry.body), 'byte')}) ---", body.rstrip("\n"), "---"]
    return lines


def tdm_json(stored: StoredEntry) -> dict[str, Any]:
    """What ``cache show --json`` adds to a tdmrep.json record's ``list`` fields: its URL, standing (``file``,
    ``none``, ``unknown``; None for a corrupt record), the standing in words, its version (``version_json``), its rule
    count and body (a file's)."""
    entry = stored.entry
    if entry is None:
        return {"url": stored.origin, "standing": None, "detail": f"corrupt ({stored.problem})", "version": None,
                "rules": None, "body": None}
    kind = standing(entry)
    is_file = kind == FILE
    return {"url": stored.origin, "standing": kind, "detail": tdm_words(entry), "version": version_json(entry),
            "rules": len(parse_tdmrep(entry.body).rules) if is_file else None,
            "body": entry.body.decode("utf-8", "replace") if is_file else None}
