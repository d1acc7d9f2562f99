"""What each REP_STORE costs: memory per cached origin, per-call latency, SQLite shared by several processes, and
the footprint of 100,000 origins. Prints tables; asserts nothing (docs/performance.md holds the figures of one run).

Run from the repository root: ``.venv/bin/python -m benchmarks.bench_stores`` (``--help`` for the sizes).
The Redis rows use a private redis-server on a free loopback port (skipped when the binary is absent); the crawl
table serves its origins with ``benchmarks.bench_crawl --serve``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import redis

from benchmarks._corpus import load_corpus
from scrapy_rep.matcher import MAX_BYTES, _compact, parse
from scrapy_rep.stores import Entry, Outcome, Store, StoreError, Version, open_store
from tests.stores.storetools import RedisServer

AGENT = "examplebot"
NOW = 1_000_000.0


def bodies() -> list[bytes]:
    """The corpus bodies as the middleware would keep them: capped at the default REP_MAX_SIZE."""
    corpus = load_corpus()
    if not corpus:
        raise SystemExit("../shared/corpus/robots not found: the benchmark needs the shared corpus")
    return [body[:MAX_BYTES] for _, body in corpus]


def entry_for(i: int, body: bytes) -> Entry:
    """A fresh entry for origin ``i`` with its own copy of ``body`` and its version, its final URL a string of its own
    (as if downloaded: robots.policy.next_entry)."""
    origin = f"https://site{i}.example"
    return Entry(origin=origin, outcome=Outcome.RULES, fetched_at=NOW, expires_at=NOW + 86400,
                 body=bytes(bytearray(body)), status=200,
                 version=Version.of(body, NOW, 200, "".join((origin, "/robots.txt"))))


def table(title: str, header: list[str], rows: list[list[Any]]) -> None:
    cells = [header] + [[f"{c:,.1f}" if isinstance(c, float) else f"{c:,}" if isinstance(c, int) else str(c)
                         for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    print(f"\n{title}")
    for n, row in enumerate(cells):
        padded = [c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        print("  " + "  ".join(padded))
        if n == 0:
            print("  " + "  ".join("-" * w for w in widths))


def distribution(values: list[float]) -> list[float]:
    ordered = sorted(values)
    return [statistics.mean(ordered), ordered[len(ordered) // 2], ordered[int(len(ordered) * 0.9)], ordered[-1]]


# --- memory per cached origin --------------------------------------------------------------------------------


def memory_per_origin(corpus: list[bytes]) -> None:
    """Python heap per origin (tracemalloc): the entry a store holds (body compressed), and what the middleware
    decides with: the compact form it keeps (``AgentRules``, after one decision: no index built, as for most origins
    of a broad crawl; and with its index built, as for the origins a crawl keeps coming back to), next to a full
    ``Robots`` after its first decision (what it kept before issue 14)."""
    sizes: dict[str, list[float]] = {name: [] for name in (
        "entry (body compressed + fields)", "compact form (AgentRules)", "compact form, index built (hot)",
        "entry + compact form: one origin", "full Robots, decided (before)", "entry + full Robots (before)")}
    hot_set = _compact._HOT
    tracemalloc.start()
    for i, body in enumerate(corpus):
        gc.collect()
        start = tracemalloc.get_traced_memory()[0]
        entry = entry_for(i, body)
        after_entry = tracemalloc.get_traced_memory()[0]
        robots = parse(entry.body)
        robots.allowed(f"{entry.origin}/some/page.html", AGENT)
        after_robots = tracemalloc.get_traced_memory()[0]
        del robots
        gc.collect()
        before_form = tracemalloc.get_traced_memory()[0]
        form = parse(entry.body).compact(AGENT)
        form.allowed(f"{entry.origin}/some/page.html")  # a broad crawl's origin: a decision or two, each a scan
        gc.collect()
        cold = tracemalloc.get_traced_memory()[0]
        for _ in range(_compact.COLD_DECISIONS):  # the next decisions scan, then one builds the index
            form.allowed(f"{entry.origin}/some/page.html")
        gc.collect()
        hot = tracemalloc.get_traced_memory()[0]
        sizes["entry (body compressed + fields)"].append(after_entry - start)
        sizes["compact form (AgentRules)"].append(cold - before_form)
        sizes["compact form, index built (hot)"].append(hot - before_form)
        sizes["entry + compact form: one origin"].append(after_entry - start + cold - before_form)
        sizes["full Robots, decided (before)"].append(after_robots - after_entry)
        sizes["entry + full Robots (before)"].append(after_robots - start)
        del entry, form
        _compact._HOT = _compact._Hot(_compact.HOT_RULES)  # forgets this form now, not inside the next window
    tracemalloc.stop()
    _compact._HOT = hot_set
    table(f"Memory per cached origin, bytes ({len(corpus)} corpus files, bodies capped at {MAX_BYTES:,} B)",
          ["what", "mean", "median", "p90", "max"],
          [[name, *map(int, distribution(values))] for name, values in sizes.items()])


# --- latency of store calls ----------------------------------------------------------------------------------


async def call_latency(store: Store, corpus: list[bytes], calls: int) -> list[float]:
    """Microseconds per call: get of a stored origin, get of a missing one, put, lease acquire+release, and a
    whole miss (get, acquire, put, release: what one crawler does once per origin per expiry)."""
    origins = 1000
    for i in range(origins):
        await store.put(entry_for(i, corpus[i % len(corpus)]))
    entries = [entry_for(i, corpus[i % len(corpus)]) for i in range(origins)]

    async def timed(step: Callable[[int], Awaitable[object]]) -> float:
        started = time.perf_counter()
        for n in range(calls):
            await step(n)
        return (time.perf_counter() - started) / calls * 1e6

    async def miss(n: int) -> None:
        origin = f"https://miss{n}.example"
        await store.get(origin)
        await store.acquire_lease(origin, "bench", 300)
        await store.put(Entry(origin=origin, outcome=Outcome.RULES, fetched_at=NOW, expires_at=NOW + 86400,
                              body=entries[n % origins].body, status=200))
        await store.release_lease(origin, "bench")

    async def lease(n: int) -> None:
        await store.acquire_lease(f"https://lease{n}.example", "bench", 300)
        await store.release_lease(f"https://lease{n}.example", "bench")

    return [
        await timed(lambda n: store.get(f"https://site{n % origins}.example")),
        await timed(lambda n: store.get(f"https://absent{n}.example")),
        await timed(lambda n: store.put(entries[n % origins])),
        await timed(lease),
        await timed(miss),
    ]


def latencies(corpus: list[bytes], calls: int, workdir: Path, redis_url: str | None) -> None:
    rows = []
    uris = [("memory", "memory"), ("sqlite", f"sqlite:///{workdir}/latency.db")]
    if redis_url:
        uris.append(("redis (loopback)", redis_url))

    for name, uri in uris:
        async def measure(uri: str = uri) -> list[float]:
            store = open_store(uri, clock=lambda: NOW)
            try:
                return await call_latency(store, corpus, calls)
            finally:
                await store.close()

        rows.append([name, *asyncio.run(measure())])
    table(f"Store call latency, µs per call ({calls:,} calls each, one process)",
          ["store", "get hit", "get miss", "put", "lease+release", "whole miss"], rows)


# --- many origins at once --------------------------------------------------------------------------------------

#: How many origins each concurrency figure runs through (in waves of the concurrency).
CONCURRENT_TOTAL = 3_000


async def concurrent_refreshes(store: Store, corpus: list[bytes], concurrency: int) -> tuple[float, list[float]]:
    """``CONCURRENT_TOTAL`` origins refreshed as the middleware does it (get, acquire lease, get, put, release),
    ``concurrency`` of them at a time. Returns the wall µs per store call and every call's awaited µs."""
    gate = asyncio.Semaphore(concurrency)
    waits: list[float] = []
    entries = [Entry(origin=f"https://conc{concurrency}-{n}.example", outcome=Outcome.RULES, fetched_at=NOW,
                     expires_at=NOW + 86400, body=corpus[n % len(corpus)], status=200) for n in range(CONCURRENT_TOTAL)]

    async def refresh(n: int) -> None:
        entry = entries[n]
        origin = entry.origin
        async with gate:
            for call in (lambda: store.get(origin), lambda: store.acquire_lease(origin, "bench", 300),
                         lambda: store.get(origin), lambda: store.put(entry),
                         lambda: store.release_lease(origin, "bench")):
                started = time.perf_counter()
                await call()
                waits.append((time.perf_counter() - started) * 1e6)

    started = time.perf_counter()
    await asyncio.gather(*(refresh(n) for n in range(CONCURRENT_TOTAL)))
    return (time.perf_counter() - started) * 1e6 / len(waits), sorted(waits)


def concurrency(corpus: list[bytes], workdir: Path, redis_url: str | None) -> None:
    """What one store call costs when 1, 64 or 1,000 origins are refreshed at once (a broad crawl's robots.txt
    fetches: CONCURRENT_REQUESTS of them, issue 26), against the memory store."""
    uris = [("memory", "memory"), ("sqlite", f"sqlite:///{workdir}/concurrency.db")]
    if redis_url:
        uris.append(("redis (loopback)", redis_url))
    rows = []
    for name, uri in uris:
        for at_once in (1, 64, 1000):
            async def measure(uri: str = uri, at_once: int = at_once) -> tuple[float, list[float]]:
                store = open_store(uri, clock=lambda: NOW)
                try:
                    return await concurrent_refreshes(store, corpus, at_once)
                finally:
                    await store.close()

            try:
                wall, waits = asyncio.run(measure())
            except StoreError as exc:  # e.g. redis-py's connection pool (100 connections by default) exhausted
                rows.append([name, at_once, "fails", str(exc)[-60:], "", ""])
                continue
            rows.append([name, at_once, wall, waits[len(waits) // 2], waits[int(len(waits) * 0.99)], waits[-1]])
    table(f"Store calls with many origins at once ({CONCURRENT_TOTAL:,} origins x 5 calls: get, lease, get, put, "
          "release), µs", ["store", "at once", "wall per call", "awaited median", "p99", "max"], rows)


# --- SQLite shared by several processes ------------------------------------------------------------------------


def sqlite_worker(
    uri: str, worker: int, rounds: int, corpus: list[bytes], barrier: Any
) -> tuple[list[float], list[float]]:
    """One crawler process: whole misses on origins that every process races for. Returns µs per store call
    (awaited) and the event loop's lag in µs, sampled by a 1 ms ticker running beside the calls."""

    async def work() -> tuple[list[float], list[float]]:
        store = open_store(uri)
        calls: list[float] = []
        lags: list[float] = []
        done = asyncio.Event()

        async def ticker() -> None:
            while not done.is_set():
                started = time.perf_counter()
                await asyncio.sleep(0.001)
                lags.append((time.perf_counter() - started - 0.001) * 1e6)

        ticking = asyncio.ensure_future(ticker())
        barrier.wait()
        for n in range(rounds):
            origin = f"https://shared{n}.example"
            for step in (store.get(origin), store.acquire_lease(origin, f"w{worker}", 300),
                         store.put(entry_for(n, corpus[n % len(corpus)])), store.release_lease(origin, f"w{worker}")):
                started = time.perf_counter()
                await step
                calls.append((time.perf_counter() - started) * 1e6)
        done.set()
        await ticking
        await store.close()
        return calls, lags

    return asyncio.run(work())


def sqlite_contention(corpus: list[bytes], processes: int, rounds: int, workdir: Path) -> None:
    """Store calls wait for other processes' locks in the worker thread; the event loop should not notice."""
    uri = f"sqlite:///{workdir}/contention.db"
    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as manager:
        barrier = manager.Barrier(processes)
        with ctx.Pool(processes) as pool:
            results = pool.starmap(sqlite_worker, [(uri, w, rounds, corpus[:200], barrier) for w in range(processes)])
    rows = []
    for name, values in (("store call (awaited)", [c for r in results for c in r[0]]),
                         ("event-loop lag", [lag for r in results for lag in r[1]])):
        values.sort()
        rows.append([name, len(values), statistics.mean(values), values[len(values) // 2],
                     values[int(len(values) * 0.99)], values[int(len(values) * 0.999)], values[-1]])
    table(f"SQLite shared by {processes} processes, all writing the same origins (µs)",
          ["", "samples", "mean", "median", "p99", "p99.9", "max"], rows)


# --- footprint of many origins ---------------------------------------------------------------------------------


def rss() -> int:
    """Resident set size of this process, bytes (Linux)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def footprint_worker(kind: str, target: str, origins: int, corpus: list[bytes]) -> dict[str, float]:
    """Runs in a fresh process: stores ``origins`` entries and reports what that cost."""

    async def fill() -> dict[str, float]:
        gc.collect()
        before = rss()
        store = open_store(target, max_origins=origins, clock=lambda: NOW)
        keep: list[object] = []  # what the middleware keeps per origin, for the "memory + ..." rows
        started = time.perf_counter()
        for i in range(origins):
            entry = entry_for(i, corpus[i % len(corpus)])
            await store.put(entry)
            if kind == "memory + compact":  # the middleware now: the compact form after a decision (no index built)
                form = parse(entry.body).compact(AGENT)
                form.allowed(f"{entry.origin}/page.html")
                keep.append(form)
            elif kind == "memory + full Robots":  # before issue 14: the full parse, decided
                robots = parse(entry.body)
                robots.allowed(f"{entry.origin}/page.html", AGENT)
                keep.append(robots)
        elapsed = time.perf_counter() - started
        gc.collect()
        result = {"rss": rss() - before, "seconds": elapsed}
        await store.close()
        return result

    return asyncio.run(fill())


def footprints(corpus: list[bytes], origins: int, workdir: Path, redis_server: RedisServer | None) -> None:
    ctx = multiprocessing.get_context("spawn")
    rows = []
    for kind in ("memory", "memory + compact", "memory + full Robots", "sqlite", "redis"):
        target = f"sqlite:///{workdir}/footprint.db" if kind == "sqlite" else "memory"
        if kind == "redis":
            if redis_server is None:
                continue
            with redis.Redis(port=redis_server.port) as client:
                client.flushall()
                redis_before = client.info("memory")["used_memory"]
            target = redis_server.url
        with ctx.Pool(1) as pool:
            result = pool.apply(footprint_worker, (kind, target, origins, corpus))
        stored = ""
        if kind == "sqlite":
            size = sum(p.stat().st_size for p in workdir.glob("footprint.db*"))
            stored = f"{size / 2**20:,.1f} MiB file ({size / origins:,.0f} B/origin)"
        elif kind == "redis":
            with redis.Redis(port=redis_server.port) as client:  # type: ignore[union-attr]
                used = client.info("memory")["used_memory"] - redis_before
            stored = f"{used / 2**20:,.1f} MiB Redis used_memory ({used / origins:,.0f} B/origin)"
        rows.append([kind, f"{result['rss'] / 2**20:,.1f}", f"{result['rss'] / origins:,.0f}", stored,
                     f"{result['seconds'] / origins * 1e6:,.1f}"])
    table(f"{origins:,} origins (corpus bodies cycled, mean {statistics.mean(map(len, corpus)):,.0f} B)",
          ["store", "crawler RSS MiB", "RSS B/origin", "stored outside the crawler", "µs per put"], rows)


# --- whole crawls, one per store ----------------------------------------------------------------------------


def crawl_child(store: str, ports: list[int], pages: int) -> None:
    """Child process: one crawl of ``pages`` pages on each origin with ``REP_STORE = store``; prints JSON figures."""
    from scrapy import Request, Spider, signals
    from scrapy.crawler import CrawlerProcess

    urls = [f"http://127.0.0.1:{port}/page/{page}" for page in range(pages) for port in ports]

    class StoreBenchSpider(Spider):
        name = "store-bench"

        async def start(self) -> Any:
            for url in urls:
                yield Request(url, dont_filter=True)

        def parse(self, response: Any) -> None:
            return None

    process = CrawlerProcess({"LOG_LEVEL": "WARNING", "TELNETCONSOLE_ENABLED": False, "CONCURRENT_REQUESTS": 32,
                              "CONCURRENT_REQUESTS_PER_DOMAIN": 32, "ROBOTSTXT_OBEY": True,
                              "ADDONS": {"scrapy_rep.Addon": 0}, "USER_AGENT": "BenchBot/1.0", "REP_STORE": store})
    crawler = process.create_crawler(StoreBenchSpider)
    started: list[float] = []
    crawler.signals.connect(lambda: started.append(time.perf_counter()), signals.spider_opened, weak=False)
    process.crawl(crawler)
    process.start()
    elapsed = time.perf_counter() - started[0]
    stats = crawler.stats.get_stats() if crawler.stats else {}
    robots = stats.get("rep/robots/downloads", 0)
    pages_done = stats.get("response_received_count", 0) - robots
    print(json.dumps({"pages": pages_done, "robots": robots, "store_hits": stats.get("rep/cache/store_hits", 0),
                      "store_errors": stats.get("rep/store/errors", 0), "seconds": elapsed}), flush=True)


def crawls(origins: int, pages: int, workdir: Path, redis_url: str | None) -> None:
    """The same crawl with each store; each store twice, so the second (a fresh process) starts from a warm store.
    Decisions for cached origins never touch the store, so pages/s should not depend on it."""
    me = [sys.executable, "-m", "benchmarks.bench_stores"]
    server = subprocess.Popen([sys.executable, "-m", "benchmarks.bench_crawl", "--serve", str(origins)],
                              stdout=subprocess.PIPE, text=True)
    rows = []
    try:
        assert server.stdout is not None
        ports = server.stdout.readline().strip()
        stores = [("memory", "memory"), ("sqlite", f"sqlite:///{workdir}/crawl.db")]
        if redis_url:
            stores.append(("redis", f"{redis_url}?prefix=crawl-bench:"))
        for name, uri in stores:
            for run_name in ("first run", "second run"):
                out = subprocess.run([*me, "--crawl-store", uri, "--ports", ports, "--crawl-pages", str(pages)],
                                     check=True, capture_output=True, text=True).stdout
                result = json.loads(out.strip().splitlines()[-1])
                rows.append([f"{name}, {run_name}", result["pages"], result["robots"], result["store_hits"],
                             result["store_errors"], result["seconds"], result["pages"] / result["seconds"],
                             result["seconds"] / result["pages"] * 1e6])
    finally:
        server.terminate()
        server.wait()
    table(f"Crawls of {origins} origins x {pages} pages through RobotsMiddleware (CONCURRENT_REQUESTS=32)",
          ["store", "pages", "robots.txt", "store hits", "store errors", "seconds", "pages/s", "µs per page"], rows)


@contextmanager
def maybe_redis(workdir: Path) -> Iterator[RedisServer | None]:
    try:
        server = RedisServer(workdir)
    except FileNotFoundError:
        print("redis-server not on PATH: Redis rows skipped")
        yield None
        return
    server.start()
    try:
        yield server
    finally:
        server.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--origins", type=int, default=100_000, help="origins for the footprint table")
    parser.add_argument("--calls", type=int, default=10_000, help="calls per latency figure")
    parser.add_argument("--processes", type=int, default=4, help="processes sharing one SQLite file")
    parser.add_argument("--rounds", type=int, default=2_000, help="whole misses per process in the SQLite table")
    parser.add_argument("--crawl-origins", type=int, default=100, help="origins in the crawl table")
    parser.add_argument("--crawl-pages", type=int, default=50, help="pages per origin in the crawl table")
    parser.add_argument("--tables", default="memory,latency,concurrency,sqlite,crawl,footprint",
                        help="which tables, in order")
    parser.add_argument("--crawl-store", help=argparse.SUPPRESS)
    parser.add_argument("--ports", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.crawl_store:
        return crawl_child(args.crawl_store, json.loads(args.ports), args.crawl_pages)
    corpus = bodies()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        with maybe_redis(workdir) as redis_server:
            redis_url = redis_server.url if redis_server else None
            tables: dict[str, Callable[[], None]] = {
                "memory": lambda: memory_per_origin(corpus),
                "latency": lambda: latencies(corpus, args.calls, workdir, redis_url),
                "concurrency": lambda: concurrency(corpus, workdir, redis_url),
                "sqlite": lambda: sqlite_contention(corpus, args.processes, args.rounds, workdir),
                "crawl": lambda: crawls(args.crawl_origins, args.crawl_pages, workdir, redis_url),
                "footprint": lambda: footprints(corpus, args.origins, workdir, redis_server),
            }
            for name in args.tables.split(","):
                tables[name]()


if __name__ == "__main__":
    main()
