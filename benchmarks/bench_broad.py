"""A broad crawl: very many distinct origins x 2 pages, all on loopback behind one proxy port. Prints figures;
asserts nothing.

The server is ``tests.broad.origins.OriginsProxy`` in its own process (so it does not share the crawler's CPU): an
HTTP proxy that answers every ``site-NNNNN.test`` itself, robots.txt taken round-robin from the real corpus
(``../shared/corpus/robots/``, else a small built-in set), two pages per origin (one from the file's first Disallow
rule). Every request of the crawl, scrapy-rep's robots.txt requests included, carries ``meta["proxy"]``
(``ProxyEverything``), so no name is resolved. Three crawls, each in a fresh process so that its peak RSS
(``ru_maxrss``) is its own:

- ``rep``: scrapy_rep.Addon, ``REP_STORE`` memory (default), ``REP_MEMORY_MAX_ORIGINS`` = origins (nothing evicted);
- ``rep-sqlite``: the same with ``REP_STORE = sqlite:///<temporary file>``;
- ``off``: ROBOTSTXT_OBEY = False, the anchor (it downloads the disallowed pages too).

Per crawl: pages downloaded and pages/s (responses other than robots.txt, from spider_opened to the end; the
anchor also downloads the disallowed pages, so responses/s, robots.txt included, is the fairer rate), CPU ms per
response, peak RSS, robots.txt downloads (the crawler's ``rep/robots/downloads`` and the proxy's count: both
must equal the number of origins), and store sizes: for memory, ``len`` of the store and of the middleware's origin
map when the crawl last goes idle; for SQLite, its rows and the file's size on disk (with -wal/-shm) at the end.

Run from the repository root: ``.venv/bin/python -m benchmarks.bench_broad`` (``--origins N``, default 100,000;
``--modes rep,off``; ``--concurrency``).
"""

from __future__ import annotations

import argparse
import json
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

MODES = ("rep", "rep-sqlite", "off")
TOKEN = "broadbot"


def serve() -> None:
    """Child process: the proxy on 127.0.0.1:0; prints its URL, then serves until terminated."""
    from twisted.internet import reactor

    from tests.broad.origins import OriginsProxy, robots_bodies

    bodies, source = robots_bodies()
    proxy = OriginsProxy(bodies).start()
    print(json.dumps({"proxy": proxy.proxy_url, "source": source, "paths": [proxy.pages(n) for n in
                                                                             range(len(bodies))]}), flush=True)
    reactor.run()  # type: ignore[attr-defined]


def crawl(mode: str, proxy: str, paths: list[list[str]], origins: int, concurrency: int, sqlite_path: str,
          max_origins: int, priority_queue: str) -> None:
    """Child process: one crawl of ``origins`` origins x 2 pages; prints a JSON line of figures."""
    from scrapy import Request, Spider, signals
    from scrapy.crawler import CrawlerProcess

    from scrapy_rep import RobotsMiddleware
    from tests.broad.origins import host

    class BroadSpider(Spider):
        name = "broad"

        async def start(self) -> Any:
            for n in range(origins):
                for path in paths[n % len(paths)]:
                    yield Request(f"http://{host(n)}{path}", dont_filter=True)

        def parse(self, response: Any) -> None:
            return None

    settings: dict[str, Any] = {
        "LOG_LEVEL": "ERROR",
        "TELNETCONSOLE_ENABLED": False,
        "CONCURRENT_REQUESTS": concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,  # also the pool's persistent connections to the proxy
        "ROBOTSTXT_OBEY": mode != "off",
        "ADDONS": {"scrapy_rep.Addon": 0} if mode != "off" else {},
        "REP_USER_AGENT": TOKEN,
        "USER_AGENT": f"{TOKEN}/1.0",
        "REP_MEMORY_MAX_ORIGINS": max_origins,
        "BROAD_PROXY": proxy,
        "DOWNLOADER_MIDDLEWARES": {"tests.broad.origins.ProxyEverything": 50},
        "COOKIES_ENABLED": False,
        "RETRY_ENABLED": False,
    }
    if priority_queue:
        settings["SCHEDULER_PRIORITY_QUEUE"] = priority_queue
    if mode == "rep-sqlite":
        settings["REP_STORE"] = f"sqlite:///{sqlite_path}"
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(BroadSpider)
    sizes: dict[str, int] = {}
    started: list[float] = []

    def opened() -> None:
        started.extend((time.perf_counter(), time.process_time()))

    def at_idle() -> None:
        middleware = crawler.get_downloader_middleware(RobotsMiddleware) if mode != "off" else None
        if middleware is not None:
            if mode == "rep":
                sizes["store"] = len(middleware.store)  # type: ignore[arg-type]
            sizes["middleware_origins"] = len(middleware.origins)

    crawler.signals.connect(opened, signals.spider_opened, weak=False)
    crawler.signals.connect(at_idle, signals.spider_idle, weak=False)
    process.crawl(crawler)
    process.start()
    elapsed, cpu = time.perf_counter() - started[0], time.process_time() - started[1]
    stats = crawler.stats.get_stats() if crawler.stats else {}
    robots = stats.get("rep/robots/downloads", 0)
    responses = stats.get("response_received_count", 0)
    print(json.dumps({
        "mode": mode, "seconds": elapsed, "responses": responses, "pages": responses - robots, "robots": robots,
        "pages_per_s": (responses - robots) / elapsed,
        "responses_per_s": responses / elapsed, "cpu_ms_per_response": cpu * 1000 / max(responses, 1),
        "forbidden": stats.get("rep/requests/forbidden", 0),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, **sizes,
    }), flush=True)


def proxy_hits(proxy: str) -> dict[str, Any]:
    """The proxy's summary of the hits since the last call (a direct request, never through an env proxy)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"{proxy}/_hits", timeout=30) as answer:
        summary: dict[str, Any] = json.loads(answer.read())
    return summary


def sqlite_figures(path: Path) -> dict[str, Any]:
    files = [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]
    size = sum(file.stat().st_size for file in files if file.exists())
    with sqlite3.connect(path) as connection:
        rows = connection.execute("SELECT count(*) FROM rep_entries").fetchone()[0]
    connection.close()
    return {"store": rows, "sqlite_mib": size / 2**20}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--origins", type=int, default=100_000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated, run in this order")
    parser.add_argument("--max-origins", type=int, help="REP_MEMORY_MAX_ORIGINS (default: --origins)")
    parser.add_argument("--priority-queue", default="",
                        help="SCHEDULER_PRIORITY_QUEUE (default: Scrapy's, DownloaderAwarePriorityQueue)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--crawl", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--proxy", help=argparse.SUPPRESS)
    parser.add_argument("--paths", help=argparse.SUPPRESS)
    parser.add_argument("--sqlite", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    max_origins = args.max_origins or args.origins
    if args.serve:
        return serve()
    if args.crawl:
        paths = json.loads(Path(args.paths).read_text())
        return crawl(args.crawl, args.proxy, paths, args.origins, args.concurrency, args.sqlite, max_origins,
                     args.priority_queue)

    me = [sys.executable, "-m", "benchmarks.bench_broad"]
    server = subprocess.Popen([*me, "--serve"], stdout=subprocess.PIPE, text=True)
    results: list[dict[str, Any]] = []
    try:
        assert server.stdout is not None
        hello = json.loads(server.stdout.readline())
        with tempfile.TemporaryDirectory() as directory:
            paths_file = Path(directory) / "paths.json"
            paths_file.write_text(json.dumps(hello["paths"]))
            print(f"{args.origins:,} origins x 2 pages, robots.txt from the {hello['source']}, "
                  f"CONCURRENT_REQUESTS={args.concurrency}, REP_MEMORY_MAX_ORIGINS={max_origins:,}, "
                  f"SCHEDULER_PRIORITY_QUEUE={args.priority_queue or 'default'}", flush=True)
            for mode in args.modes.split(","):
                database = Path(directory) / f"{mode}.db"
                wall = time.perf_counter()
                out = subprocess.run([*me, "--crawl", mode, "--proxy", hello["proxy"], "--paths", str(paths_file),
                                      "--origins", str(args.origins), "--concurrency", str(args.concurrency),
                                      "--max-origins", str(max_origins), "--sqlite", str(database),
                                      "--priority-queue", args.priority_queue],
                                     capture_output=True, text=True)
                if out.returncode:
                    sys.exit(f"crawl {mode} failed:\n{out.stderr[-3000:]}")
                result = json.loads(out.stdout.strip().splitlines()[-1])
                result["wall_s"] = time.perf_counter() - wall
                result["proxy"] = proxy_hits(hello["proxy"])
                if mode == "rep-sqlite":
                    result.update(sqlite_figures(database))
                results.append(result)
                # the figures at once, kept if a later mode fails or is interrupted
                print(f"  {mode}: {result['wall_s']:.0f} s {json.dumps(result)}", flush=True)
    finally:
        server.terminate()
        server.wait()
    report(results, args.origins)


def report(results: list[dict[str, Any]], origins: int) -> None:
    print(f"{'mode':<11} {'pages':>7} {'pages/s':>8} {'resp/s':>7} {'CPU ms/resp':>11} {'peak RSS MB':>11} "
          f"{'robots':>7} {'proxy robots':>12} {'max/origin':>10} "
          f"{'store':>7} {'mw map':>7} {'SQLite MiB':>10} {'seconds':>8}")
    for r in results:
        p = r["proxy"]
        sqlite = f"{r['sqlite_mib']:.1f}" if "sqlite_mib" in r else "-"
        print(f"{r['mode']:<11} {r['pages']:>7} {r['pages_per_s']:>8.0f} {r['responses_per_s']:>7.0f} "
              f"{r['cpu_ms_per_response']:>11.3f} {r['peak_rss_mb']:>11.1f} {r['robots']:>7} {p['robots']:>12} "
              f"{p['robots_max_per_origin']:>10} {r.get('store', '-'):>7} {r.get('middleware_origins', '-'):>7} "
              f"{sqlite:>10} {r['seconds']:>8.1f}")
    by_mode = {r["mode"]: r for r in results}
    off = by_mode.get("off")
    for mode in ("rep", "rep-sqlite"):
        r = by_mode.get(mode)
        if r is None:
            continue
        line = (f"{mode}: robots.txt downloads {r['robots']} (proxy {r['proxy']['robots']}, "
                f"{r['proxy']['robots_origins']} origins) for {origins} origins")
        if off is not None:
            line += (f"; pages/s {r['pages_per_s'] / off['pages_per_s']:.2f}x the anchor's (responses/s "
                     f"{r['responses_per_s'] / off['responses_per_s']:.2f}x), CPU per response "
                     f"{r['cpu_ms_per_response'] / off['cpu_ms_per_response']:.2f}x, peak RSS "
                     f"{r['peak_rss_mb'] / off['peak_rss_mb']:.2f}x (+{r['peak_rss_mb'] - off['peak_rss_mb']:.0f} MB, "
                     f"{(r['peak_rss_mb'] - off['peak_rss_mb']) * 1024 / origins:.2f} KiB per origin)")
        print(line)


if __name__ == "__main__":
    main()
