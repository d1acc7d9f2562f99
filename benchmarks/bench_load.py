"""Load and memory: a crawl over many local origins with the memory store, and lookups among 1,000,000 origins cached
in the SQLite store (issue 6). Prints figures; asserts nothing.

Crawl: one loopback server (tests.servers.Site, in its own process) answers for every host name; the crawler
resolves ``o<i>.bench.test`` to 127.0.0.1 (``LoopbackResolver``), so each name is its own origin (SPEC 1.3). Each
origin gets one allowed and one forbidden page. Three crawls, each in a fresh process so that its peak RSS
(``ru_maxrss``) is its own:

- ``off``: ROBOTSTXT_OBEY = False, the baseline;
- ``rep``: the add-on with the default memory store (REP_MEMORY_MAX_ORIGINS 100,000);
- ``rep-lru``: the same with REP_MEMORY_MAX_ORIGINS = origins / 10, to show the store stays at its bound.

"Per origin" is (peak RSS - the baseline's) / origins: what obeying robots.txt costs per origin in a real crawl.
The sizes of the store and of the middleware's own per-origin map are read when the crawl goes idle.

SQLite: a file holding ``--sqlite-origins`` entries (bulk-loaded with the store's own record encoding), then
``SQLiteStore.get`` for random cached origins: latency per lookup as the middleware sees it (worker thread included).

Run from the repository root: ``.venv/bin/python -m benchmarks.bench_load`` (``--origins N``, ``--sqlite-origins N``,
``--skip-crawl``, ``--skip-sqlite``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from twisted.internet import defer
from twisted.internet.error import DNSLookupError
from twisted.internet.interfaces import IResolverSimple
from zope.interface import implementer

ROBOTS = b"User-agent: *\nDisallow: /private\nSitemap: http://example.com/sitemap.xml\n"
SUFFIX = ".bench.test"
CRAWLS = ("off", "rep", "rep-lru")


@implementer(IResolverSimple)
class LoopbackResolver:
    """TWISTED_DNS_RESOLVER for the benchmark: every ``*.bench.test`` name is 127.0.0.1; nothing else resolves."""

    def __init__(self, reactor: Any) -> None:
        self.reactor = reactor

    @classmethod
    def from_crawler(cls, crawler: Any, reactor: Any) -> LoopbackResolver:
        return cls(reactor)

    def install_on_reactor(self) -> None:
        self.reactor.installResolver(self)

    def getHostByName(self, name: str, timeout: Any = ()) -> defer.Deferred[str]:
        if name.endswith(SUFFIX):
            return defer.succeed("127.0.0.1")
        return defer.fail(DNSLookupError(name))


def serve() -> None:
    """Child process: one port answering robots.txt and pages for any host; prints the port."""
    from twisted.internet import reactor

    from tests.servers import Reply, Site

    site = Site(robots_default=Reply(body=ROBOTS, headers={"Content-Type": "text/plain"})).start()
    print(site.port_number, flush=True)
    reactor.run()  # type: ignore[attr-defined]


def crawl(kind: str, port: int, origins: int, concurrency: int) -> None:
    """Child process: one crawl of ``origins`` origins x 2 pages; prints a JSON line of figures."""
    from scrapy import Request, Spider, signals
    from scrapy.crawler import CrawlerProcess

    from scrapy_rep import RobotsMiddleware

    class LoadSpider(Spider):
        name = "load"

        async def start(self) -> Any:
            for i in range(origins):
                for path in ("/page", "/private/page"):
                    yield Request(f"http://o{i}{SUFFIX}:{port}{path}", dont_filter=True)

        def parse(self, response: Any) -> None:
            return None

    settings: dict[str, Any] = {
        "LOG_LEVEL": "WARNING",
        "TELNETCONSOLE_ENABLED": False,
        "CONCURRENT_REQUESTS": concurrency,
        "ROBOTSTXT_OBEY": kind != "off",
        "ADDONS": {"scrapy_rep.Addon": 0} if kind != "off" else {},
        "USER_AGENT": "LoadBot/1.0",
        "TWISTED_DNS_RESOLVER": "benchmarks.bench_load.LoopbackResolver",
        "REP_MEMORY_MAX_ORIGINS": max(origins // 10, 1) if kind == "rep-lru" else 100_000,
        "COOKIES_ENABLED": False,
        "RETRY_ENABLED": False,
    }
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(LoadSpider)
    sizes: dict[str, int] = {}

    def at_idle() -> None:
        middleware = crawler.get_downloader_middleware(RobotsMiddleware) if kind != "off" else None
        if middleware is not None:
            sizes["store"] = len(middleware.store)  # type: ignore[arg-type]
            sizes["middleware_origins"] = len(middleware.origins)

    crawler.signals.connect(at_idle, signals.spider_idle, weak=False)
    started = time.perf_counter()
    process.crawl(crawler)
    process.start()
    elapsed = time.perf_counter() - started
    stats = crawler.stats.get_stats() if crawler.stats else {}
    print(
        json.dumps(
            {
                "kind": kind,
                "seconds": elapsed,
                "responses": stats.get("response_received_count", 0),
                "robots": stats.get("rep/robots/downloads", 0),
                "forbidden": stats.get("rep/requests/forbidden", 0),
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                **sizes,
            }
        ),
        flush=True,
    )


def run_crawls(origins: int, concurrency: int) -> dict[str, dict[str, Any]]:
    me = [sys.executable, "-m", "benchmarks.bench_load"]
    server = subprocess.Popen([*me, "--serve"], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = server.stdout.readline().strip()
        results = {}
        for kind in CRAWLS:
            out = subprocess.run(
                [*me, "--crawl", kind, "--port", port, "--origins", str(origins), "--concurrency", str(concurrency)],
                check=True,
                capture_output=True,
                text=True,
            )
            results[kind] = json.loads(out.stdout.strip().splitlines()[-1])
    finally:
        server.terminate()
        server.wait()
    return results


def report_crawls(results: dict[str, dict[str, Any]], origins: int, concurrency: int) -> None:
    base = results["off"]["peak_rss_mb"]
    print(f"crawl: {origins} origins x 2 pages (one allowed, one forbidden), CONCURRENT_REQUESTS={concurrency}")
    print(
        f"{'crawl':<8} {'seconds':>8} {'resp.':>7} {'robots':>7} {'forbid.':>7} {'peak RSS MB':>11} "
        f"{'KiB/origin':>10} {'store':>7} {'mw map':>7}"
    )
    for kind in CRAWLS:
        r = results[kind]
        per_origin = (r["peak_rss_mb"] - base) * 1024 / origins
        print(
            f"{kind:<8} {r['seconds']:>8.1f} {r['responses']:>7} {r['robots']:>7} {r['forbidden']:>7} "
            f"{r['peak_rss_mb']:>11.1f} {per_origin:>10.2f} {r.get('store', '-'):>7} "
            f"{r.get('middleware_origins', '-'):>7}"
        )


def bench_sqlite(origins: int, lookups: int) -> None:
    """Bulk-load ``origins`` entries into a SQLite store file, then time ``lookups`` random ``get`` calls."""
    from scrapy_rep.stores import Entry, Outcome, SQLiteStore
    from scrapy_rep.stores._codec import encode

    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "rep.db")
        store = SQLiteStore(path, clock=time.time, timeout=5.0)
        now = time.time()

        def entry(i: int) -> Entry:
            return Entry(
                origin=f"https://o{i}.example.com",
                outcome=Outcome.RULES,
                fetched_at=now,
                expires_at=now + 86_400,
                body=ROBOTS,
                status=200,
            )

        async def load_and_look_up() -> tuple[float, list[float]]:
            await store.put(entry(0))  # creates the file and its schema through the store
            started = time.perf_counter()
            with sqlite3.connect(path) as conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO rep_entries (origin, record) VALUES (?, ?)",
                    ((f"https://o{i}.example.com", encode(entry(i))) for i in range(origins)),
                )
            load = time.perf_counter() - started
            picks = random.Random(1).choices(range(origins), k=lookups)
            await store.get(entry(0).origin)  # connect and warm up
            times = []
            for i in picks:
                t0 = time.perf_counter()
                found = await store.get(f"https://o{i}.example.com")
                times.append(time.perf_counter() - t0)
                assert found is not None and found.origin == f"https://o{i}.example.com"
            await store.close()
            return load, times

        load, times = asyncio.run(load_and_look_up())
        size_mb = Path(path).stat().st_size / 1e6
    times.sort()
    micro = [t * 1e6 for t in times]
    print(f"sqlite: {origins} cached origins, file {size_mb:.0f} MB, bulk load {load:.1f} s")
    print(
        f"  SQLiteStore.get, {lookups} random cached origins: mean {statistics.mean(micro):.0f} us, "
        f"p50 {micro[len(micro) // 2]:.0f} us, p99 {micro[int(len(micro) * 0.99)]:.0f} us, max {micro[-1]:.0f} us"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--origins", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--sqlite-origins", type=int, default=1_000_000)
    parser.add_argument("--lookups", type=int, default=20_000)
    parser.add_argument("--skip-crawl", action="store_true")
    parser.add_argument("--skip-sqlite", action="store_true")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--crawl", choices=CRAWLS, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve()
    if args.crawl:
        return crawl(args.crawl, args.port, args.origins, args.concurrency)
    if not args.skip_crawl:
        report_crawls(run_crawls(args.origins, args.concurrency), args.origins, args.concurrency)
    if not args.skip_sqlite:
        bench_sqlite(args.sqlite_origins, args.lookups)


if __name__ == "__main__":
    main()
