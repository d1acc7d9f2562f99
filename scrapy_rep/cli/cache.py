"""``scrapy-rep cache list|show|purge|stats|history|diff [--store URL]``: what a SQLite or Redis store holds, per
origin (``history`` and ``diff``: the versions of its robots.txt the store kept, ``_cache_history``).

It reads the store through the store classes the middleware uses (``entries``, ``inspect``, ``delete``), so it
works while crawlers use the same store. A record this release cannot read (another format version, say) is
listed as ``corrupt``, never a crash. An origin's tdmrep.json record (TDMRep, kept beside its robots.txt:
``_cache_entries``) is listed with its kind, shown after the robots.txt's and purged with it.

Exit codes: ``0`` done; ``1`` ``show``: origin not stored, its record corrupt, or a URL disallowed; ``purge``: an
origin not stored, or the question not answered yes; ``history``, ``diff``: their modules'; ``2`` usage error or a
store it cannot open (one line naming the store, any password as ``***``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import Any

from scrapy_rep.reporting.outcome_log import plural
from scrapy_rep.robots.tdmrep import FILE, NONE, UNKNOWN, tdm_url
from scrapy_rep.stores import Outcome, StoredEntry, redact

from . import _cache_history
from ._cache_entries import (
    KINDS,
    ROBOTS_KIND,
    TDMREP_KIND,
    is_expired,
    kind_of,
    stamp,
    tdm_json,
    tdm_lines,
    version_json,
    version_line,
)
from ._cache_store import Browsable, origin_key, project_store, with_store
from ._common import DEFAULT_TOKEN, EXIT_FINDINGS, EXIT_OK, UsageError
from ._crawlers import crawlers_of
from ._fetch import Robots, size_detail
from .check import check

CORRUPT = "corrupt"
OUTCOMES = [*(outcome.value for outcome in Outcome), CORRUPT]
#: How ``stats`` counts tdmrep.json records: by what they mean to a crawl (``_cache_entries``), or corrupt.
TDM_STANDINGS = (FILE, NONE, UNKNOWN, CORRUPT)
#: The keys of every ``cache list --json`` line (documented in docs/stores.md).
JSON_KEYS = ("origin", "kind", "outcome", "status", "error", "fetched_at", "expires_at", "expired", "failures",
             "first_failure_at", "bytes")


def add_parser(commands: argparse._SubParsersAction[Any]) -> None:
    """The ``cache`` subcommand and its own subcommands."""
    cmd = commands.add_parser("cache", help="list, show, purge or count what a sqlite:// or redis:// store holds")
    actions = cmd.add_subparsers(dest="action", required=True, parser_class=type(cmd))
    store = argparse.ArgumentParser(add_help=False)
    store.add_argument("--store", metavar="URL",
                       help="the store, as REP_STORE (default: REP_STORE of the Scrapy project here)")
    listing = actions.add_parser("list", parents=[store], help="every origin with its outcome and expiry, its "
                                                               "robots.txt and its tdmrep.json (KIND column)")
    listing.add_argument("--origin", metavar="GLOB", help="only origins matching GLOB ('https://*.example.com')")
    listing.add_argument("--outcome", choices=OUTCOMES, help="only origins with this outcome")
    listing.add_argument("--kind", choices=KINDS, help="only the records of one kind: an origin's robots.txt, or "
                                                       "its TDMRep file (kept when a crawl reads TDMRep)")
    listing.add_argument("--expired", action="store_true", help="only entries past their expiry")
    listing.add_argument("--json", action="store_true", help="one JSON object per line per origin")
    listing.set_defaults(run=run_list)
    show = actions.add_parser("show", parents=[store], help="one origin's entry, robots.txt and URL decisions, then "
                                                            "its tdmrep.json entry when stored")
    show.add_argument("origin", metavar="ORIGIN", help="the origin (or any URL on it)")
    show.add_argument("urls", metavar="URL", nargs="*", help="URL or path to decide with the stored robots.txt")
    show.add_argument("--user-agent", "-u", action="append", default=[], metavar="TOKEN",
                      help="crawler token, as for check (repeatable); default: the token the project's crawl "
                           f"obeys, outside a project {DEFAULT_TOKEN}")
    show.add_argument("--json", action="store_true", help="one JSON object: the robots.txt entry, version and body, "
                                                          "the decisions, and the tdmrep.json entry under 'tdmrep'")
    show.set_defaults(run=run_show)
    purge = actions.add_parser("purge", parents=[store], help="delete origins' entries, robots.txt and tdmrep.json "
                                                              "(fetched again when needed)")
    purge.add_argument("origins", metavar="ORIGIN", nargs="*", help="the origins (or URLs on them) to delete")
    purge.add_argument("--all", action="store_true", help="delete every entry")
    purge.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    purge.set_defaults(run=run_purge)
    stats = actions.add_parser("stats", parents=[store], help="counts by outcome, bytes, expired entries, tdmrep.json "
                                                              "entries by standing")
    stats.add_argument("--json", action="store_true", help="one JSON object")
    stats.set_defaults(run=run_stats)
    _cache_history.add_parsers(actions, store)


def as_json(stored: StoredEntry, now: float) -> dict[str, Any]:
    """One ``cache list --json`` line; a corrupt record has outcome ``corrupt`` and its problem as ``error``;
    ``origin`` is the origin of a tdmrep.json record too, ``kind`` says which record it is."""
    entry = stored.entry
    origin, kind = kind_of(stored.origin)
    if entry is None:
        return dict.fromkeys(JSON_KEYS) | {"origin": origin, "kind": kind, "outcome": CORRUPT, "error": stored.problem,
                                           "bytes": stored.size}
    return {
        "origin": origin, "kind": kind, "outcome": entry.outcome.value, "status": entry.status, "error": entry.error,
        "fetched_at": entry.fetched_at, "expires_at": entry.expires_at, "expired": is_expired(stored, now),
        "failures": entry.failures, "first_failure_at": entry.first_failure_at, "bytes": stored.size,
    }


def _row(stored: StoredEntry, now: float) -> list[str]:
    entry = stored.entry
    origin, kind = kind_of(stored.origin)
    if entry is None:
        return [origin, kind, CORRUPT, stored.problem or "", "-", "-", "-"]
    status = "-" if entry.status is None else str(entry.status)
    if entry.error:
        status = f"{status} {entry.error}"
    expiry = stamp(entry.expires_at) + (" (expired)" if is_expired(stored, now) else "")
    return [origin, kind, entry.outcome.value, status, stamp(entry.fetched_at), expiry, str(entry.failures)]


def _table(rows: Sequence[list[str]]) -> None:
    header = ["ORIGIN", "KIND", "OUTCOME", "STATUS", "FETCHED", "EXPIRES", "FAILURES"]
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    for row in (header, *rows):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


def _selected(stored: StoredEntry, args: argparse.Namespace, now: float) -> bool:
    outcome = CORRUPT if stored.entry is None else stored.entry.outcome.value
    origin, kind = kind_of(stored.origin)
    return ((args.origin is None or fnmatchcase(origin, args.origin))
            and (args.kind is None or kind == args.kind)
            and (args.outcome is None or outcome == args.outcome)
            and (not args.expired or is_expired(stored, now) is True))


def run_list(args: argparse.Namespace) -> int:
    now = time.time()

    async def work(store: Browsable) -> int:
        rows = []
        async for stored in store.entries():
            if not _selected(stored, args, now):
                continue
            if args.json:
                print(json.dumps(as_json(stored, now)))
            else:
                rows.append(_row(stored, now))
        if not args.json:
            _table(rows)
        return EXIT_OK

    return with_store(args, work)


def _robots_of(stored: StoredEntry) -> Robots:
    """The stored copy as ``check`` reads a robots.txt (its outcome, status and body)."""
    entry = stored.entry
    assert entry is not None
    if entry.outcome is Outcome.RULES:
        detail = size_detail(entry.body, truncated=False)
    elif entry.outcome is Outcome.ALLOW_ALL:
        detail = "no robots.txt in effect: everything allowed"
    else:
        detail = "robots.txt unavailable: the whole origin is disallowed for now"
    return Robots(f"{stored.origin}/robots.txt (stored)", entry.outcome, detail, entry.body, entry.status,
                  origin=stored.origin)


def _print_entry(stored: StoredEntry, now: float) -> None:
    entry = stored.entry
    assert entry is not None
    print(f"origin: {stored.origin}")
    print(f"outcome: {entry.outcome.value}")
    print(f"status: {'-' if entry.status is None else entry.status}" + (f" ({entry.error})" if entry.error else ""))
    print(f"fetched: {stamp(entry.fetched_at)}")
    print(f"expires: {stamp(entry.expires_at)}" + (" (expired)" if is_expired(stored, now) else ""))
    print(f"failures: {entry.failures}" + (f" since {stamp(entry.first_failure_at)}" if entry.failures else ""))
    print(version_line(entry))
    print(f"stored: {plural(stored.size, 'byte')}")
    body = entry.body.decode("utf-8", "replace")
    print(f"--- robots.txt ({plural(len(entry.body), 'byte')}) ---")
    print(body, end="" if body.endswith("\n") or not body else "\n")
    print("---")


def run_show(args: argparse.Namespace) -> int:
    origin = origin_key(args.origin)
    crawlers = crawlers_of(args.user_agent)

    async def work(store: Browsable) -> int:
        stored = await store.inspect(origin)
        if stored is None:
            print(f"{origin}: not in the store", file=sys.stderr)
            return EXIT_FINDINGS
        tdm = await store.inspect(tdm_url(origin))
        now = time.time()
        if stored.entry is None:
            if args.json:
                print(json.dumps({"origin": origin, "robots_txt": as_json(stored, now) | {"version": None},
                                  "notes": [], "results": [], "tdmrep": _tdm_object(tdm, now),
                                  "exit_code": EXIT_FINDINGS}, indent=2))
                return EXIT_FINDINGS
            print(f"origin: {origin}\noutcome: {CORRUPT} ({stored.problem})\nstored: {plural(stored.size, 'byte')}")
            _print_tdm(tdm, now)
            return EXIT_FINDINGS
        robots = _robots_of(stored)
        results = check(robots, args.urls, crawlers)  # before any output: a URL off the origin is a usage error
        code = EXIT_OK if all(result.allowed for result in results) else EXIT_FINDINGS
        if args.json:
            robots_txt = as_json(stored, now) | {"version": version_json(stored.entry),
                                                 "body": stored.entry.body.decode("utf-8", "replace")}
            print(json.dumps({"origin": origin, "robots_txt": robots_txt, "notes": [c.note for c in crawlers if c.note],
                              "results": [result.as_json() for result in results], "tdmrep": _tdm_object(tdm, now),
                              "exit_code": code}, indent=2))
            return code
        _print_entry(stored, now)
        _print_tdm(tdm, now)
        for crawler in crawlers:
            if crawler.note:
                print(crawler.note)
        for result in results:
            print(result.as_text())
        return code

    return with_store(args, work)


def _print_tdm(tdm: StoredEntry | None, now: float) -> None:
    if tdm is not None:
        print("\n".join(tdm_lines(tdm, now)))


def _tdm_object(tdm: StoredEntry | None, now: float) -> dict[str, Any] | None:
    """``show --json``'s ``tdmrep``: the record's ``list`` fields and what it means (``tdm_json``); None: not stored."""
    return None if tdm is None else as_json(tdm, now) | tdm_json(tdm)


def _confirmed(question: str, yes: bool) -> bool:
    if yes:
        return True
    if not sys.stdin.isatty():
        raise UsageError("purge asks for confirmation and stdin is not a terminal: pass --yes")
    print(f"{question} [y/N] ", end="", file=sys.stderr, flush=True)
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def run_purge(args: argparse.Namespace) -> int:
    if args.all == bool(args.origins):
        raise UsageError("purge needs ORIGIN... or --all (not both)")
    origins = [origin_key(value) for value in args.origins]
    args.store = args.store or project_store()
    where = redact(args.store)
    what = "every entry" if args.all else ", ".join(origins)
    if not _confirmed(f"Delete {what} from {where}?", args.yes):
        print("nothing deleted", file=sys.stderr)
        return EXIT_FINDINGS

    async def work(store: Browsable) -> int:
        if args.all:
            keys = [stored.origin async for stored in store.entries()]
        else:  # each origin's robots.txt, then its tdmrep.json
            keys = [key for origin in origins for key in (origin, tdm_url(origin))]
        deleted = [key for key in keys if await store.delete(key)]
        kinds = Counter(kind_of(key)[1] for key in deleted)
        robots, tdm = kinds[ROBOTS_KIND], kinds[TDMREP_KIND]
        also = f" and {tdm} tdmrep.json {'entry' if tdm == 1 else 'entries'}" if tdm else ""
        print(f"deleted {robots} {'entry' if robots == 1 else 'entries'}{also} from {where}")
        found = {kind_of(key)[0] for key in deleted}
        missing = [origin for origin in origins if origin not in found]
        for origin in missing:
            print(f"{origin}: not in the store", file=sys.stderr)
        return EXIT_FINDINGS if missing else EXIT_OK

    return with_store(args, work)


def run_stats(args: argparse.Namespace) -> int:
    now = time.time()

    async def work(store: Browsable) -> int:
        counts: Counter[str] = Counter({name: 0 for name in OUTCOMES})
        tdm: Counter[str] = Counter({name: 0 for name in TDM_STANDINGS})
        total = expired = size = 0
        async for stored in store.entries():
            size += stored.size
            if kind_of(stored.origin)[1] == TDMREP_KIND:
                tdm[tdm_json(stored)["standing"] or CORRUPT] += 1
                continue
            total += 1
            counts[CORRUPT if stored.entry is None else stored.entry.outcome.value] += 1
            expired += is_expired(stored, now) is True
        document = {"origins": total, "outcomes": dict(counts), "expired": expired, "bytes": size,
                    "tdmrep_json": {"entries": tdm.total(), **tdm}}
        if args.json:
            print(json.dumps(document))
            return EXIT_OK
        print(f"origins: {total}")
        for name in OUTCOMES:
            print(f"  {name}: {counts[name]}")
        print(f"expired: {expired}")
        print(f"bytes: {size}")
        print(f"tdmrep.json: {tdm.total()} ({', '.join(f'{name}: {tdm[name]}' for name in TDM_STANDINGS)})")
        return EXIT_OK

    return with_store(args, work)

