"""``scrapy-rep cache history ORIGIN``: the versions of an origin's robots.txt (or, ``--kind tdmrep.json``, its TDMRep
file) a SQLite or Redis store kept (stores/_history.py), latest last seen first; and ``cache diff``'s arguments (its
work is ``_cache_diff``'s).

Text: one row per version, its short id, outcome, status, first and last seen (UTC) and final URL; ``--body`` adds
each body after the table. ``--json``: one object, ``origin``, ``kind`` and ``versions``, each with its full ``id``,
``outcome``, ``status``, ``url``, ``first_seen`` and ``last_seen`` (epoch seconds, as ``list --json``), ``bytes`` and
``body`` (the text, UTF-8 with replacement, with ``--body``; else null).

Exit codes: ``0`` listed; ``1`` no version kept (the origin is not in the store, or its entry was written before the
history was, or with ``REP_HISTORY_VERSIONS = 0``); ``2`` as the other ``cache`` subcommands.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from scrapy_rep.reporting.outcome_log import plural
from scrapy_rep.robots.tdmrep import tdm_url
from scrapy_rep.stores import HistoryVersion

from ._cache_entries import KINDS, ROBOTS_KIND, SHORT_ID, TDMREP_KIND, stamp
from ._cache_store import Browsable, origin_key, with_store
from ._common import EXIT_FINDINGS, EXIT_OK

_HEADER = ["ID", "OUTCOME", "STATUS", "FIRST SEEN", "LAST SEEN", "URL"]


def add_parsers(actions: argparse._SubParsersAction[Any], store: argparse.ArgumentParser) -> None:
    """``history`` and ``diff``, with ``store`` (``--store``) as their parent."""
    history = actions.add_parser("history", parents=[store], help="the versions of an origin's robots.txt the store "
                                                                  "kept: id, outcome, status, first and last seen, URL")
    history.add_argument("origin", metavar="ORIGIN", help="the origin (or any URL on it)")
    history.add_argument("--kind", choices=KINDS, default=ROBOTS_KIND,
                         help="the versions of its robots.txt (default) or of its TDMRep file")
    history.add_argument("--body", action="store_true", help="each version's body too (as UTF-8 text)")
    history.add_argument("--json", action="store_true", help="one JSON object, each version with its full id")
    history.set_defaults(run=run_history)
    diff = actions.add_parser("diff", parents=[store], help="what changed between two versions of an origin's "
                                                            "robots.txt, as rules added and removed per group")
    diff.add_argument("origin", metavar="ORIGIN", help="the origin (or any URL on it)")
    diff.add_argument("a", metavar="A", nargs="?", help="the version to compare from: its id or a prefix of it (at "
                                                        "least 4 hex digits, as history shows); without A and B, the "
                                                        "newest but one")
    diff.add_argument("b", metavar="B", nargs="?", help="the version to compare with, as A; default: the newest")
    diff.add_argument("--json", action="store_true", help="one JSON object")
    diff.set_defaults(run=run_diff_command)


def run_history(args: argparse.Namespace) -> int:
    origin = origin_key(args.origin)
    key = tdm_url(origin) if args.kind == TDMREP_KIND else origin

    async def work(store: Browsable) -> int:
        versions = await store.history(key)
        if not versions:
            kept = await store.inspect(key) is not None
            why = (f"no {args.kind} versions kept (its entry was written before the history was, or with "
                   "REP_HISTORY_VERSIONS = 0)" if kept else f"no {args.kind} in the store")
            print(f"{origin}: {why}", file=sys.stderr)
            return EXIT_FINDINGS
        if args.json:
            print(json.dumps({"origin": origin, "kind": args.kind,
                              "versions": [_as_json(version, args.body) for version in versions]}, indent=2))
            return EXIT_OK
        _table([_row(version) for version in versions])
        if args.body:
            for version in versions:
                body = version.body.decode("utf-8", "replace")
                print(f"--- {args.kind} {version.id[:SHORT_ID]} {version.outcome.value} "
                      f"({plural(len(version.body), 'byte')}) ---")
                print(body, end="" if body.endswith("\n") or not body else "\n")
                print("---")
        return EXIT_OK

    return with_store(args, work)


def run_diff_command(args: argparse.Namespace) -> int:
    async def work(store: Browsable) -> int:
        from ._cache_diff import run_diff

        return await run_diff(store, args.origin, args.a, args.b, args.json, sys.stdout)

    return with_store(args, work)


def _row(version: HistoryVersion) -> list[str]:
    status = "-" if version.status is None else str(version.status)
    return [version.id[:SHORT_ID], version.outcome.value, status, stamp(version.first_seen),
            stamp(version.last_seen), version.url or "-"]


def _table(rows: list[list[str]]) -> None:
    widths = [max(len(row[i]) for row in (_HEADER, *rows)) for i in range(len(_HEADER))]
    for row in (_HEADER, *rows):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


def _as_json(version: HistoryVersion, with_body: bool) -> dict[str, Any]:
    body = version.body
    return {"id": version.id, "outcome": version.outcome.value, "status": version.status, "url": version.url,
            "first_seen": version.first_seen, "last_seen": version.last_seen, "bytes": len(body),
            "body": body.decode("utf-8", "replace") if with_body else None}
