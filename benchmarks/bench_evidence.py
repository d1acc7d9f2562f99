"""What the decision log (REP_DECISION_LOG, scrapy_rep/reporting/decision_log.py) costs per checked request: CPU of
``DecisionLog.decided`` with its batched writes to a real file, against the log off, for realistic bases (the shape
requests/basis.py builds: half allowed by no rule, half forbidden by a rule).

Rows, each best of ``--rounds`` runs of ``--requests`` calls, CPU time (``time.process_time``: the writes' system
time included), the garbage collector on as in a crawl:

- ``off``: what the middleware does when REP_DECISION_LOG is unset (a ``None`` check);
- ``on``: ``decided`` as shipped: the line serialised at once (``json`` encoder, compact), batched, written every
  ``BATCH_LINES`` lines; the close line and the file's close included;
- ``on, rotating``: the same with REP_DECISION_LOG_MAX_BYTES at its minimum (64 KiB): a rotation every ~100 lines;
- the alternative the module did not take, to show why: keep a shallow copy per call and serialise the batch at
  flush (``copy`` is its per-call part, ``copy + dumps at flush`` its whole cost), and what a deep copy (the only
  copy that protects the nested dicts a pipeline may change) would cost per call.

Prints µs per request and lines per second; asserts nothing. Run from the repository root:
``.venv/bin/python -m benchmarks.bench_evidence`` (``--requests 50000 --rounds 3``; a few seconds).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scrapy.utils.test import get_crawler
from twisted.internet.task import Clock

from scrapy_rep.config.evidence import DECISION_LOG_MAX_BYTES, MIN_FILE_BYTES
from scrapy_rep.reporting.decision_log import BATCH_LINES, DecisionLog

VERSION = "9f2c4e8a1b7d3f6e0a5c9b2d8e4f1a7c3b6d0e9f2a5c8b1d4e7f0a3c6b9d2e5f"


def bases(count: int) -> list[dict[str, Any]]:
    """``count`` bases, each its own dicts (as each request's meta holds its own), alternately allowed and
    forbidden."""
    made = []
    for n in range(count):
        forbidden = n % 2 == 1
        made.append({
            "url": f"https://example.com/a/b{n}?c=1",
            "decision": "forbidden" if forbidden else "allowed",
            "checked_at": "2026-11-28T13:41:33.123Z",
            "reason": "line 7 (Disallow: /a/) of the 'examplebot' group (line 5)" if forbidden
            else "no rule of the 'examplebot' group (line 5) matches",
            "refused_uses": [],
            "enforced": True,
            "tokens": ["examplebot"],
            "group": "the 'examplebot' group (line 5)",
            "rule": {"line": 7, "directive": "disallow", "value": "/a/"} if forbidden else None,
            "robots_txt": {"url": "https://example.com/robots.txt", "version": VERSION,
                           "fetched_at": "2026-11-28T13:40:02.517Z", "status": 200,
                           "final_url": "https://example.com/robots.txt", "outcome": "rules", "failing": None},
            "usage": {},
            "tdmrep": None,
        })
    return made


def cpu_us(run: Callable[[list[dict[str, Any]]], None], basis: list[dict[str, Any]], rounds: int,
           after: Callable[[], None] = lambda: None) -> float:
    """µs of CPU per request, best of ``rounds``; ``after`` each round, not timed."""
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        run(basis)
        best = min(best, time.process_time() - started)
        after()
    return best / len(basis) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    basis = bases(args.requests)
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True})
    assert crawler.stats is not None
    stats = crawler.stats
    clock = Clock()  # never advanced: batches are written by size only, as in a busy crawl

    with tempfile.TemporaryDirectory() as directory:
        written: dict[int, tuple[int, int]] = {}  # max bytes -> files, bytes of the last round

        def logged(max_bytes: int) -> Callable[[list[dict[str, Any]]], None]:
            def run(items: list[dict[str, Any]]) -> None:
                log = DecisionLog(str(Path(directory) / "decisions.jsonl"), max_bytes, stats, clock)
                for item in items:
                    log.decided(item)
                log.close()
            return run

        def clean(max_bytes: int) -> Callable[[], None]:
            def after() -> None:
                files = list(Path(directory).iterdir())
                written[max_bytes] = len(files), sum(file.stat().st_size for file in files)
                for file in files:
                    file.unlink()
            return after

        def off(items: list[dict[str, Any]]) -> None:
            log: DecisionLog | None = None
            for item in items:
                if log is not None:
                    log.decided(item)

        def copied(items: list[dict[str, Any]]) -> None:
            batch = []
            for item in items:
                batch.append(dict(item))
                if len(batch) >= BATCH_LINES:
                    batch = []

        def copied_then_dumped(items: list[dict[str, Any]]) -> None:
            encode = json.JSONEncoder(separators=(",", ":"), default=repr).encode
            with open(os.devnull, "wb") as sink:
                batch = []
                for item in items:
                    batch.append(dict(item))
                    if len(batch) >= BATCH_LINES:
                        sink.write("\n".join([encode({"type": "decision", **line}) for line in batch]).encode())
                        batch = []

        def deep_copied(items: list[dict[str, Any]]) -> None:
            for item in items:
                copy.deepcopy(item)

        rows = [
            ("off (REP_DECISION_LOG unset)", cpu_us(off, basis, args.rounds)),
            ("on (as shipped)", cpu_us(logged(DECISION_LOG_MAX_BYTES), basis, args.rounds,
                                       clean(DECISION_LOG_MAX_BYTES))),
            (f"on, rotating every {MIN_FILE_BYTES // 1024} KiB",
             cpu_us(logged(MIN_FILE_BYTES), basis, args.rounds, clean(MIN_FILE_BYTES))),
            ("not taken: shallow copy per call", cpu_us(copied, basis, args.rounds)),
            ("not taken: copy + dumps at flush", cpu_us(copied_then_dumped, basis, args.rounds)),
            ("not taken: deep copy per call", cpu_us(deep_copied, basis, args.rounds)),
        ]
    line_bytes = written[DECISION_LOG_MAX_BYTES][1] / args.requests
    print(f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs; "
          f"{args.requests:,} requests, best of {args.rounds}; {line_bytes:.0f} bytes per line, "
          f"a batch every {BATCH_LINES:,} lines; rotating: {written[MIN_FILE_BYTES][0]:,} files")
    print(f"{'':<40} {'µs/request':>10} {'lines/s':>12}")
    for name, micros in rows:
        rate = f"{1e6 / micros:>12,.0f}" if micros > 0 and not name.startswith("off") else f"{'-':>12}"
        print(f"{name:<40} {micros:>10.2f} {rate}")
    print(f"the log's cost per checked request (on - off): {rows[1][1] - rows[0][1]:.2f} µs")


if __name__ == "__main__":
    main()
