"""The SQLite store alone, as a broad crawl uses it: CPU per new origin (``lookup``, then ``put_and_release``, as
the middleware calls them) in a file already holding N origins (issue 21). Prints one line per file size and key
order; asserts nothing.

Per origin: CPU µs (``process_time``: the worker's WAL checkpoints included), wall µs, the record's encoding alone
(µs), and the file's bytes per origin at the end (with -wal/-shm). Every call finds the inline connection free
(one process), as in a crawl with the file to itself; the loop is yielded to once per origin, so that the worker's
checkpoints are answered as in a crawl. Keys: ``sequential`` origins come in key order (as bench_broad's
``site-NNNNNN.test``: every insert at the B-tree's right edge), ``random`` in a shuffled order (a real crawl's).

Run from the repository root: ``.venv/bin/python -m benchmarks.bench_sqlite_origins`` (``--rows 10000,100000``,
``--origins 5000``, ``--order sequential,random``).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from pathlib import Path

from benchmarks._corpus import load_corpus
from scrapy_rep.matcher import MAX_BYTES
from scrapy_rep.stores import Entry, Outcome, Store, open_store
from scrapy_rep.stores._codec import encode

NOW = 1_000_000.0
HOLDER = "bench"


def entries(numbers: list[int], bodies: list[bytes]) -> list[Entry]:
    return [Entry(origin=f"http://site-{n:06d}.test", outcome=Outcome.RULES, fetched_at=NOW, expires_at=NOW + 86400,
                  body=bodies[n % len(bodies)], status=200) for n in numbers]


async def new_origins(store: Store, batch: list[Entry]) -> None:
    for entry in batch:
        found, leased = await store.lookup(entry.origin, HOLDER, 60)
        assert found is None and leased
        await store.put_and_release(entry, HOLDER)
        await asyncio.sleep(0)  # the loop runs, as in a crawl: the worker's checkpoints are answered


async def measure(directory: Path, rows: int, origins: int, order: str, bodies: list[bytes]) -> str:
    numbers = list(range(rows + origins))
    if order == "random":
        random.Random(7).shuffle(numbers)
    path = directory / f"{order}-{rows}.db"
    store = open_store(f"sqlite:///{path}")
    for start in range(0, rows, 2000):  # the file as N origins' crawl left it
        await new_origins(store, entries(numbers[start:min(rows, start + 2000)], bodies))
    batch = entries(numbers[rows:], bodies)
    started = time.process_time()
    for entry in batch:
        encode(entry)
    encoding = time.process_time() - started
    cpu, wall = time.process_time(), time.perf_counter()
    await new_origins(store, batch)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    await store.close()
    size = sum(file.stat().st_size for file in directory.glob(f"{path.name}*"))
    return (f"{rows:>9,} rows, {order:<10}  CPU {cpu / origins * 1e6:6.0f} µs/origin  wall "
            f"{wall / origins * 1e6:6.0f}  encode {encoding / origins * 1e6:5.1f}  file "
            f"{size / (rows + origins):6.0f} bytes/origin")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", default="10000,100000", help="origins already in the file, comma-separated")
    parser.add_argument("--origins", type=int, default=5000, help="new origins measured per file")
    parser.add_argument("--order", default="sequential,random", help="key orders, comma-separated")
    args = parser.parse_args()
    bodies = [body[:MAX_BYTES] for _, body in load_corpus()]
    if not bodies:
        raise SystemExit("../shared/corpus/robots not found: the benchmark needs the shared corpus")
    print(f"{args.origins:,} new origins per file: lookup + put_and_release, one process")
    for order in args.order.split(","):
        for rows in map(int, args.rows.split(",")):
            with tempfile.TemporaryDirectory() as directory:
                print(asyncio.run(measure(Path(directory), rows, args.origins, order, bodies)), flush=True)


if __name__ == "__main__":
    main()
