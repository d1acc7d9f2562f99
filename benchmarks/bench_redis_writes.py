"""The Redis store alone, as a broad crawl uses it: CPU per new origin (``lookup``, then the outcome written and
the lease released) with the writes one at a time (``put_and_release``, the anchor) or in batches of B
(``put_and_release_all``, one pipeline: what ``robots/write_behind.py`` sends), against a private ``redis-server`` on
loopback (issue 21). Prints one line per batch size, with its ratio to the anchor of the same run; asserts nothing.

Run from the repository root: ``.venv/bin/python -m benchmarks.bench_redis_writes`` (``--origins 3000``,
``--batches 1,10,64``, ``--rounds 2``).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from benchmarks._corpus import load_corpus
from benchmarks.bench_broad import start_redis
from benchmarks.bench_sqlite_origins import HOLDER, entries
from scrapy_rep.matcher import MAX_BYTES
from scrapy_rep.stores import Entry, open_store


async def measure(url: str, batch: list[Entry], size: int) -> float:
    """CPU µs per origin: each origin's ``lookup``, then its write alone (``size`` 0) or queued until ``size``."""
    store = open_store(url)
    await store.get("warm-up")  # connected
    queued: list[Entry] = []
    started = time.process_time()
    for entry in batch:
        found, leased = await store.lookup(entry.origin, HOLDER, 60)
        assert found is None and leased
        if size == 0:
            await store.put_and_release(entry, HOLDER)
            continue
        queued.append(entry)
        if len(queued) == size:
            await store.put_and_release_all(queued, HOLDER)
            queued = []
    if queued:
        await store.put_and_release_all(queued, HOLDER)
    cpu = time.process_time() - started
    await store.close()
    return cpu / len(batch) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--origins", type=int, default=3000, help="new origins per measure")
    parser.add_argument("--batches", default="1,10,64", help="batch sizes, comma-separated (the anchor, 0, is added)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, alternating the sizes")
    args = parser.parse_args()
    bodies = [body[:MAX_BYTES] for _, body in load_corpus()]
    if not bodies:
        raise SystemExit("../shared/corpus/robots not found: the benchmark needs the shared corpus")
    sizes = [0, *map(int, args.batches.split(","))]
    results: dict[int, list[float]] = {size: [] for size in sizes}
    with tempfile.TemporaryDirectory() as directory, ExitStack() as running:
        url = f"redis://127.0.0.1:{start_redis(Path(directory), running)}/0"
        for round_ in range(args.rounds):
            for size in sizes:  # fresh keys each time: every origin is new, as in a broad crawl
                first = (round_ * len(sizes) + sizes.index(size)) * args.origins
                batch = entries(list(range(first, first + args.origins)), bodies)
                results[size].append(asyncio.run(measure(url, batch, size)))
    print(f"{args.origins:,} new origins per measure, {args.rounds} round(s): lookup + write, CPU µs per origin")
    anchor = statistics.median(results[0])
    for size in sizes:
        name = "one at a time (anchor)" if size == 0 else f"batches of {size}"
        values = ", ".join(f"{value:.0f}" for value in results[size])
        print(f"  {name:<24} {values:>12}   {statistics.median(results[size]) / anchor:.2f}x")


if __name__ == "__main__":
    main()
