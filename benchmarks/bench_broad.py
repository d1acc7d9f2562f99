"""A broad crawl: very many distinct origins x 2 pages (``--pages 1``: one), all on loopback behind one proxy port.
Prints figures; asserts nothing.

The server is ``tests.broad.origins.OriginsProxy`` in its own process (so it does not share the crawler's CPU): an
HTTP proxy that answers every ``site-NNNNN.test`` itself, robots.txt taken round-robin from the real corpus
(``../shared/corpus/robots/``, else a small built-in set), two pages per origin (one from the file's first Disallow
rule). It counts its open TCP connections: the most at once during a crawl is the crawl's real concurrency (the
crawler pools up to CONCURRENT_REQUESTS_PER_DOMAIN = CONCURRENT_REQUESTS idle connections to the proxy, so none is
closed and reopened). Every request of the crawl, robots.txt requests included, carries ``meta["proxy"]``
(``ProxyEverything``), so no name is resolved. The crawls, each in a fresh process so that its peak RSS
(``ru_maxrss``) is its own:

- ``rep``: scrapy_rep.Addon, ``REP_STORE`` memory (default), ``REP_MEMORY_MAX_ORIGINS`` = origins (nothing evicted);
- ``rep-sqlite``: the same with ``REP_STORE = sqlite:///<temporary file>``;
- ``rep-redis``: the same with a real ``redis-server`` on loopback (started and stopped by the benchmark);
- ``rep-redis-slow``: the same Redis behind a relay that delays every chunk by ``--redis-latency`` ms each way (a
  remote Redis);
- ``builtin``: Scrapy's own RobotsTxtMiddleware (Protego), ROBOTSTXT_USER_AGENT the same token;
- ``off``: ROBOTSTXT_OBEY = False, the anchor (it downloads the disallowed pages too).

Per crawl: pages downloaded and pages/s (responses other than robots.txt, from spider_opened to the end; the
anchor also downloads the disallowed pages, so responses/s, robots.txt included, is the fairer rate; and the
responses/s past the crawl's first second, which a ``@slow`` mode's robots.txt delay holds up), CPU ms per
response, peak RSS, the most connections the proxy had open at once, robots.txt downloads (the crawler's count and
the proxy's: both must equal the number of origins), and store sizes: for memory, ``len`` of the store and of the
middleware's origin map when the crawl last goes idle; for SQLite, its rows and the file's size on disk (with
-wal/-shm) at the end.

Run from the repository root: ``.venv/bin/python -m benchmarks.bench_broad`` (``--origins N``, default 100,000;
``--modes rep,off``; ``--concurrency``; ``--pages 1``; ``--no-gc``: the garbage collector disabled in every crawl, a
diagnostic; ``--gc-threshold N``: its generation-0 threshold N in every crawl, the broad-crawl tuning to compare;
``--json PATH``: every figure as JSON, with the run's context: date, machine, Python, Scrapy, command, git revision).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import platform
import pstats
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from contextlib import ExitStack
from datetime import datetime, timezone
from pathlib import Path
from types import FrameType
from typing import Any

MODES = ("rep", "rep-notags", "rep-sqlite", "rep-redis", "rep-redis-slow", "builtin", "off")
#: A mode with this suffix (``rep@slow``) crawls origins whose robots.txt answers SLOW_ROBOTS seconds late.
SLOW = "@slow"
SLOW_ROBOTS = 1.0
REP_MODES = tuple(mode for mode in MODES if mode.startswith("rep"))
TOKEN = "broadbot"
#: Responses between two samples of the scheduler's and the downloader's sizes.
SAMPLE_EVERY = 25


def serve() -> None:
    """Child process: the proxy on 127.0.0.1:0; prints its URL, then serves until terminated."""
    from twisted.internet import reactor

    from tests.broad.origins import OriginsProxy, robots_bodies

    bodies, source = robots_bodies()
    proxy = OriginsProxy(bodies).start()
    slow = OriginsProxy(bodies, robots_delay=SLOW_ROBOTS).start()  # the same origins, robots.txt 1 s late
    print(json.dumps({"proxy": proxy.proxy_url, "slow_proxy": slow.proxy_url, "source": source,
                      "paths": [proxy.pages(n) for n in range(len(bodies))]}), flush=True)
    reactor.run()  # type: ignore[attr-defined]


def relay(target_port: int, delay: float) -> None:
    """Child process: a TCP relay on 127.0.0.1:0 to ``target_port`` that holds every chunk ``delay`` seconds in each
    direction (in order); prints its port, then relays until terminated."""
    import asyncio

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while chunk := await reader.read(65536):
                await asyncio.sleep(delay)  # the latency this relay adds
                writer.write(chunk)
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    async def connected(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target_port)
        await asyncio.gather(pipe(client_reader, server_writer), pipe(server_reader, client_writer))

    async def main() -> None:
        server = await asyncio.start_server(connected, "127.0.0.1", 0)
        print(server.sockets[0].getsockname()[1], flush=True)
        await server.serve_forever()

    asyncio.run(main())


def crawl(mode: str, proxy: str, paths: list[list[str]], origins: int, concurrency: int, store: str,
          max_origins: int, priority_queue: str, pages: int, profile: str, gc_types: str,
          no_gc: bool = False, gc_threshold: int = 0) -> None:
    """Child process: one crawl of ``origins`` origins x ``pages`` pages; prints a JSON line of figures. With
    ``no_gc``, the garbage collector is disabled from spider_opened to the end (a diagnostic: the crawl's cost
    without the collector's part; memory grows by the cyclic garbage it leaves); with ``gc_threshold``, its
    generation-0 threshold is that from spider_opened (the other two thresholds kept). With
    ``profile`` (a file name), the crawl from spider_opened to its end runs under cProfile, whose per-function table
    goes to that file. With ``gc_types`` (a file name), the objects the garbage collector tracks when the crawl goes
    idle, counted per type, go to that file, and what its full collections find unreachable (every other one's, kept
    by ``DEBUG_SAVEALL`` to be counted: freed a collection later, which slows the crawl), per type and per frame's
    function, to the same name with ``-garbage`` before its suffix."""
    from scrapy import Request, Spider, signals
    from scrapy.crawler import CrawlerProcess

    from tests.broad.origins import host

    class BroadSpider(Spider):
        name = "broad"

        async def start(self) -> Any:
            for n in range(origins):
                for path in paths[n % len(paths)][-pages:]:  # one page: the second (usually allowed)
                    yield Request(f"http://{host(n)}{path}", dont_filter=True)

        def parse(self, response: Any) -> None:
            return None

    settings: dict[str, Any] = {
        "LOG_LEVEL": "ERROR",
        "TELNETCONSOLE_ENABLED": False,
        "CONCURRENT_REQUESTS": concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,  # also the pool's persistent connections to the proxy
        "ROBOTSTXT_OBEY": mode != "off",
        "ADDONS": {"scrapy_rep.Addon": 0} if mode in REP_MODES else {},
        "REP_USER_AGENT": TOKEN,
        "ROBOTSTXT_USER_AGENT": TOKEN,
        "USER_AGENT": f"{TOKEN}/1.0",
        "REP_MEMORY_MAX_ORIGINS": max_origins,
        "BROAD_PROXY": proxy,
        "DOWNLOADER_MIDDLEWARES": {"tests.broad.origins.ProxyEverything": 50},
        "COOKIES_ENABLED": False,
        "RETRY_ENABLED": False,
    }
    if mode == "rep-notags":
        settings["REP_ROBOTS_TAGS"] = False  # no page-level directives: no spider middleware
    if priority_queue:
        settings["SCHEDULER_PRIORITY_QUEUE"] = priority_queue
    if store:
        settings["REP_STORE"] = store
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(BroadSpider)
    sizes: dict[str, int] = {}
    started: list[float] = []

    profiler = cProfile.Profile() if profile else None
    in_gc = [0.0, 0.0]  # seconds in the garbage collector; when the running collection began
    by_generation = [[0, 0.0] for _ in range(3)]  # per generation: collections, seconds
    peaks = {"responses": 0, "scheduled": 0, "active": 0}
    garbage: Counter[str] = Counter()  # with gc_types: what the counted full collections found, per type / function
    counted = [0, 0]  # full collections: all, counted

    def timed_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            in_gc[1] = time.perf_counter()
            if gc_types and info["generation"] == 2:
                counted[0] += 1
                if counted[0] % 2 == 0:
                    gc.set_debug(gc.DEBUG_SAVEALL)
        else:
            if gc.get_debug():
                gc.set_debug(0)
                counted[1] += 1
                garbage.update(f"{type(thing).__module__}.{type(thing).__qualname__}" for thing in gc.garbage)
                garbage.update(f"frame of {thing.f_code.co_filename.rpartition('site-packages/')[2]}:"
                               f"{thing.f_code.co_name}" for thing in gc.garbage if isinstance(thing, FrameType))
                gc.garbage.clear()
            took = time.perf_counter() - in_gc[1]
            in_gc[0] += took
            by_generation[info["generation"]][0] += 1
            by_generation[info["generation"]][1] += took

    def opened() -> None:
        from twisted.internet import reactor

        started.extend((time.perf_counter(), time.process_time()))
        reactor.callLater(SLOW_ROBOTS, past_first_second)  # type: ignore[attr-defined]
        gc.callbacks.append(timed_gc)
        if no_gc:
            gc.disable()
        if gc_threshold:
            gc.set_threshold(gc_threshold, *gc.get_threshold()[1:])
        if profiler is not None:
            profiler.enable()

    def past_first_second() -> None:  # issue 21, item 4: the rate "once past the first second"
        assert crawler.stats is not None
        started.extend((time.perf_counter(), crawler.stats.get_value("response_received_count", 0)))

    def at_idle() -> None:
        tracked = gc.get_objects()
        sizes["tracked_objects"] = len(tracked)  # what each full collection walks
        if gc_types:  # which: per type, for comparing modes (issue 21)
            kinds = Counter(f"{kind.__module__}.{kind.__qualname__}" for kind in map(type, tracked))
            Path(gc_types).write_text("".join(f"{count:9d} {kind}\n" for kind, count in kinds.most_common()))
        del tracked
        if mode in REP_MODES:  # imported only here: the anchors' peak RSS holds none of scrapy-rep's modules
            from scrapy_rep import RobotsMiddleware

            middleware = crawler.get_downloader_middleware(RobotsMiddleware)
            if middleware is not None:
                if mode == "rep":
                    sizes["store"] = len(middleware.store)  # type: ignore[arg-type]
                sizes["middleware_origins"] = len(middleware.origins)

    def received(**kwargs: Any) -> None:  # every SAMPLE_EVERY responses: the scheduler's and downloader's sizes
        peaks["responses"] += 1
        if peaks["responses"] % SAMPLE_EVERY or crawler.stats is None or crawler.engine is None:
            return
        get = crawler.stats.get_value
        peaks["scheduled"] = max(peaks["scheduled"], get("scheduler/enqueued", 0) - get("scheduler/dequeued", 0))
        peaks["active"] = max(peaks["active"], len(crawler.engine.downloader.active))

    crawler.signals.connect(opened, signals.spider_opened, weak=False)
    crawler.signals.connect(received, signals.response_received, weak=False)
    crawler.signals.connect(at_idle, signals.spider_idle, weak=False)
    process.crawl(crawler)
    process.start()
    elapsed, cpu = time.perf_counter() - started[0], time.process_time() - started[1]
    gc.callbacks.remove(timed_gc)
    if gc_types:
        per = max(counted[1], 1)
        rows = "".join(f"{count / per:11.1f} {kind}\n" for kind, count in garbage.most_common())
        Path(gc_types).with_stem(f"{Path(gc_types).stem}-garbage").write_text(
            f"unreachable objects per counted full collection ({counted[1]} of {counted[0]}), by type and by the "
            f"function of a frame\n{rows}")
    if profiler is not None:
        profiler.disable()
        write_profile(profiler, Path(profile), f"{mode}: {origins:,} origins x {pages} page(s)")
    stats = crawler.stats.get_stats() if crawler.stats else {}
    robots = stats.get("rep/robots/downloads", 0) or stats.get("robotstxt/request_count", 0)
    responses = stats.get("response_received_count", 0)
    print(json.dumps({
        "mode": mode, "seconds": elapsed, "responses": responses, "pages": responses - robots, "robots": robots,
        "pages_per_s": (responses - robots) / elapsed,
        "responses_per_s": responses / elapsed, "cpu_ms_per_response": cpu * 1000 / max(responses, 1),
        "responses_per_s_after_1s": ((responses - started[3]) / (started[0] + elapsed - started[2])
                                     if len(started) == 4 else None),  # None: the crawl took less than a second
        "gc_ms_per_response": in_gc[0] * 1000 / max(responses, 1),
        # per generation 0, 1, 2: collections, and ms of them per response (which objects the collector walks)
        "gc_collections": [count for count, _ in by_generation],
        "gc_ms_per_response_by_generation": [round(took * 1000 / max(responses, 1), 3) for _, took in by_generation],
        "forbidden": stats.get("rep/requests/forbidden", 0),
        "requeued": stats.get("rep/requests/requeued/released", 0),  # released past the downloader's room
        "waited_for_place": stats.get("rep/robots/waited_for_place", 0),
        # outcomes written behind and the batches they went in (the Redis store: one pipeline per batch)
        "written_behind": stats.get("rep/store/written_behind", 0),
        "write_batches": stats.get("rep/store/write_batches", 0),
        # the most requests waiting in the scheduler (enqueued - dequeued) and in the downloader's active set, sampled
        # every SAMPLE_EVERY responses: a full active set makes Scrapy's engine move every start request into the
        # scheduler, whose DownloaderAwarePriorityQueue then pays for every origin's slot at each pop (issue 21)
        "peak_scheduled": peaks["scheduled"], "peak_active": peaks["active"],
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, **sizes,
    }), flush=True)


def write_profile(profiler: cProfile.Profile, path: Path, title: str, rows: int = 40) -> None:
    """The per-function tables of a profiled crawl, by own time and by cumulative time (and the raw profile beside
    them, ``<path>.prof``, for ``pstats``)."""
    profiler.dump_stats(path.with_suffix(".prof"))
    out = io.StringIO()
    out.write(f"{title}\n")
    for key in ("tottime", "cumulative"):
        stats = pstats.Stats(profiler, stream=out)
        stats.strip_dirs().sort_stats(key).print_stats(rows)
    path.write_text(out.getvalue())


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
    parser.add_argument("--pages", type=int, choices=(1, 2), default=2, help="pages per origin")
    parser.add_argument("--redis-latency", type=float, default=2.0,
                        help="ms the rep-redis-slow relay adds to each chunk, each way")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated, run in this order")
    parser.add_argument("--max-origins", type=int, help="REP_MEMORY_MAX_ORIGINS (default: --origins)")
    parser.add_argument("--priority-queue", default="",
                        help="SCHEDULER_PRIORITY_QUEUE (default: Scrapy's, DownloaderAwarePriorityQueue)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run every mode this many times, in reverse order every other round; report each mode's "
                             "best round")
    parser.add_argument("--gc-types", metavar="DIR", default="",
                        help="per crawl, the objects the garbage collector tracks when the crawl goes idle, counted "
                             "per type, to DIR/<mode>-<round>.txt (what each full collection walks; compare modes), "
                             "and what every other full collection finds unreachable, per type and per frame's "
                             "function, to DIR/<mode>-<round>-garbage.txt (kept to be counted: slows the crawl)")
    parser.add_argument("--profile", metavar="DIR", default="",
                        help="run each crawl under cProfile; its per-function tables go to DIR/<mode>.txt "
                             "(the raw profile to DIR/<mode>.prof)")
    parser.add_argument("--no-gc", action="store_true",
                        help="diagnostic: every crawl with the garbage collector disabled from spider_opened to its "
                             "end (what each mode costs without the collector's share; cyclic garbage accumulates)")
    parser.add_argument("--gc-threshold", type=int, default=0, metavar="N",
                        help="every crawl with the collector's generation-0 threshold at N from spider_opened "
                             "(CPython's default: 700): how a broad crawl's usual tuning changes each mode")
    parser.add_argument("--json", metavar="PATH", help="also write every figure as JSON to PATH")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--crawl", choices=MODES, help=argparse.SUPPRESS)  # without @slow: the proxy says
    parser.add_argument("--proxy", help=argparse.SUPPRESS)
    parser.add_argument("--paths", help=argparse.SUPPRESS)
    parser.add_argument("--store", default="", help=argparse.SUPPRESS)
    parser.add_argument("--relay", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    max_origins = args.max_origins or args.origins
    if args.serve:
        return serve()
    if args.relay:
        return relay(args.relay, args.redis_latency / 1000)
    if args.crawl:
        paths = json.loads(Path(args.paths).read_text())
        return crawl(args.crawl, args.proxy, paths, args.origins, args.concurrency, args.store, max_origins,
                     args.priority_queue, args.pages, args.profile, args.gc_types, args.no_gc, args.gc_threshold)

    me = [sys.executable, "-m", "benchmarks.bench_broad"]
    for directory in (args.profile, args.gc_types):
        if directory:
            Path(directory).mkdir(parents=True, exist_ok=True)
    modes = args.modes.split(",")
    began = time.perf_counter()
    context = run_context()  # bench_matcher's too
    server = subprocess.Popen([*me, "--serve"], stdout=subprocess.PIPE, text=True)
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as directory, ExitStack() as running:
        running.callback(server.wait)
        running.callback(server.terminate)
        redis_port = start_redis(Path(directory), running) if {"rep-redis", "rep-redis-slow"} & set(modes) else 0
        relay_port = start_relay(me, redis_port, args.redis_latency, running) if "rep-redis-slow" in modes else 0
        assert server.stdout is not None
        hello = json.loads(server.stdout.readline())
        paths_file = Path(directory) / "paths.json"
        paths_file.write_text(json.dumps(hello["paths"]))
        print(f"{args.origins:,} origins x {args.pages} page(s), robots.txt from the {hello['source']}, "
              f"CONCURRENT_REQUESTS={args.concurrency}, REP_MEMORY_MAX_ORIGINS={max_origins:,}, "
              f"SCHEDULER_PRIORITY_QUEUE={args.priority_queue or 'default'}, "
              f"rep-redis-slow: +{args.redis_latency:g} ms each way"
              + (", the garbage collector disabled during each crawl (--no-gc)" if args.no_gc else "")
              + (f", generation-0 threshold {args.gc_threshold}" if args.gc_threshold else ""), flush=True)
        proxy_hits(hello["proxy"])  # clears the proxy's counts (its connection peak: the relay's start-up)
        runs = [(n, mode) for n in range(args.rounds) for mode in (modes if n % 2 == 0 else modes[::-1])]
        for n, name in runs:
            mode, slow = name.removesuffix(SLOW), name.endswith(SLOW)
            database = Path(directory) / f"{mode}-{n}.db"  # every run starts with an empty store
            store = {"rep-sqlite": f"sqlite:///{database}",
                     "rep-redis": f"redis://127.0.0.1:{redis_port}/0?prefix=rep-redis-{n}:",
                     "rep-redis-slow": f"redis://127.0.0.1:{relay_port}/0?prefix=rep-redis-slow-{n}:&timeout=5"}
            proxy = hello["slow_proxy" if slow else "proxy"]
            wall = time.perf_counter()
            out = subprocess.run([*me, "--crawl", mode, "--proxy", proxy, "--paths", str(paths_file),
                                  "--origins", str(args.origins), "--concurrency", str(args.concurrency),
                                  "--max-origins", str(max_origins), "--store", store.get(mode, ""),
                                  "--priority-queue", args.priority_queue, "--pages", str(args.pages),
                                  "--profile", str(Path(args.profile) / f"{name}-{n}.txt") if args.profile else "",
                                  "--gc-types", str(Path(args.gc_types) / f"{name}-{n}.txt") if args.gc_types else "",
                                  *(["--no-gc"] if args.no_gc else []),
                                  *(["--gc-threshold", str(args.gc_threshold)] if args.gc_threshold else [])],
                                 capture_output=True, text=True)
            if out.returncode:
                sys.exit(f"crawl {name} failed:\n{out.stderr[-3000:]}")
            result = json.loads(out.stdout.strip().splitlines()[-1])
            result["mode"], result["round"] = name, n
            result["wall_s"] = time.perf_counter() - wall
            result["proxy"] = proxy_hits(proxy)
            if mode == "rep-sqlite":
                result.update(sqlite_figures(database))
            results.append(result)
            # the figures at once, kept if a later mode fails or is interrupted
            print(f"  {name} (round {n + 1}): {result['wall_s']:.0f} s {json.dumps(result)}", flush=True)
    best = {}  # per mode, its round with the most responses/s (the others were slowed by the machine)
    for result in results:
        if result["mode"] not in best or result["responses_per_s"] > best[result["mode"]]["responses_per_s"]:
            best[result["mode"]] = result
    if args.rounds > 1:
        print(f"each mode's best of {args.rounds} rounds (modes in reverse order every other round):")
    report(list(best.values()), args.origins, args.concurrency)
    if args.rounds > 1:
        paired_report(results, args.origins)
    if args.json:
        write_json(Path(args.json), args, context, results, list(best.values()), time.perf_counter() - began)


def run_context(command: str = "-m benchmarks.bench_broad", argv: list[str] | None = None) -> dict[str, Any]:
    """Where and when a run was measured: the date (UTC), the machine, Python, Scrapy, the command (``command``,
    then ``argv``, by default this process's arguments), git's revision."""
    import scrapy

    try:
        revision = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                  check=True).stdout.strip()
        if subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                          text=True).stdout.strip():
            revision += "+modified"
    except (OSError, subprocess.CalledProcessError):
        revision = None
    try:
        cpu_model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                          if line.startswith("model name")), platform.processor())
    except OSError:
        cpu_model = platform.processor()
    return {"date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "platform": platform.platform(), "machine": platform.machine(), "processor": cpu_model,
            "cpus": os.cpu_count(), "python": platform.python_version(), "scrapy": scrapy.__version__,
            "command": " ".join(["python", command, *(sys.argv[1:] if argv is None else argv)]), "git": revision}


def write_json(path: Path, args: argparse.Namespace, context: dict[str, Any], results: list[dict[str, Any]],
               best: list[dict[str, Any]], seconds: float) -> None:
    """Every figure the run printed, as JSON: ``modes``, each mode's best round (as in the table) with the figures
    derived from it (robots.txt downloads per origin; peak RSS over ``off``'s per origin, in KiB, when ``off`` ran);
    ``rounds``, every crawl of every round."""
    off = next((r for r in best if r["mode"] == "off"), None)
    modes = []
    for r in best:
        figures = dict(r)
        figures["robots_per_origin"] = r["robots"] / args.origins
        figures["peak_connections"] = r["proxy"]["peak_connections"]
        if off is not None:
            figures["kib_per_origin_over_off"] = ((r["peak_rss_mb"] - off["peak_rss_mb"]) * 1024 / args.origins
                                                  if r is not off else 0.0)
            figures["responses_per_s_vs_off"] = r["responses_per_s"] / off["responses_per_s"]
            figures["cpu_per_response_vs_off"] = r["cpu_ms_per_response"] / off["cpu_ms_per_response"]
        modes.append(figures)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "benchmark": "bench_broad", "context": context, "seconds": seconds,
        "args": {key: value for key, value in vars(args).items() if key in (
            "origins", "pages", "concurrency", "modes", "rounds", "redis_latency", "max_origins", "priority_queue",
            "no_gc", "gc_threshold")},
        "modes": modes, "rounds": results}, indent=1, default=str) + "\n")


def paired_report(results: list[dict[str, Any]], origins: int) -> None:
    """Each mode against ``off`` and ``builtin`` *of the same round*, the median over the rounds: the machine's
    speed drifts by 20-30% over minutes, so a ratio of two modes' best rounds can compare a fast phase with a slow
    one; a round's modes run minutes apart at most, in reverse order every other round. And each mode's peak RSS,
    median of its rounds, over ``off``'s median, per origin: ``off``'s own peak moves by a few MB between rounds (89.3
    to 91.7 MB at 5,000 origins x 1 page), which a single round's difference spreads over few origins."""
    rounds: dict[int, dict[str, dict[str, Any]]] = {}
    for result in results:
        rounds.setdefault(result["round"], {})[result["mode"]] = result
    print(f"median over {len(rounds)} rounds of each round's ratios (responses/s; CPU per response):")
    for mode in dict.fromkeys(result["mode"] for result in results):
        parts = []
        for anchor in ("off", "builtin"):
            pairs = [(modes[mode], modes[anchor]) for modes in rounds.values() if mode in modes and anchor in modes]
            if anchor != mode and pairs:
                rate = statistics.median(r["responses_per_s"] / a["responses_per_s"] for r, a in pairs)
                cpu = statistics.median(r["cpu_ms_per_response"] / a["cpu_ms_per_response"] for r, a in pairs)
                parts.append(f"vs {anchor} {rate:.2f}x; CPU {cpu:.2f}x")
        instant = mode.removesuffix(SLOW)
        pairs = [(modes[mode], modes[instant]) for modes in rounds.values() if mode in modes and instant in modes
                 and modes[mode]["responses_per_s_after_1s"] and modes[instant]["responses_per_s_after_1s"]]
        if mode.endswith(SLOW) and pairs:
            rate = statistics.median(r["responses_per_s_after_1s"] / a["responses_per_s_after_1s"] for r, a in pairs)
            parts.append(f"vs {instant} past the first second {rate:.2f}x")
        peaks = [result["peak_rss_mb"] for result in results if result["mode"] == mode]
        anchor_peaks = [result["peak_rss_mb"] for result in results if result["mode"] == "off"]
        if mode != "off" and anchor_peaks:
            over = (statistics.median(peaks) - statistics.median(anchor_peaks)) * 1024 / origins
            parts.append(f"peak RSS {min(peaks):.1f}-{max(peaks):.1f} MB, median over off's "
                         f"({statistics.median(anchor_peaks):.1f}) {over:.2f} KiB per origin")
        if parts:
            print(f"  {mode}: " + "; ".join(parts))


def start_redis(directory: Path, running: ExitStack) -> int:
    """A private redis-server on a free loopback port, killed when ``running`` closes."""
    from tests.stores.storetools import RedisServer

    server = RedisServer(directory)
    server.start()
    running.callback(server.kill)
    return server.port


def start_relay(me: list[str], target_port: int, latency_ms: float, running: ExitStack) -> int:
    """The latency relay (``relay``) in a child process, terminated when ``running`` closes."""
    child = subprocess.Popen([*me, "--relay", str(target_port), "--redis-latency", str(latency_ms)],
                             stdout=subprocess.PIPE, text=True)
    running.callback(child.wait)
    running.callback(child.terminate)
    assert child.stdout is not None
    return int(child.stdout.readline())


def report(results: list[dict[str, Any]], origins: int, concurrency: int) -> None:
    print(f"{'mode':<14} {'pages':>7} {'pages/s':>8} {'resp/s':>7} {'CPU ms/resp':>11} {'peak RSS MB':>11} "
          f"{'peak conns':>10} {'queued':>7} {'active':>6} {'robots':>7} {'proxy robots':>12} {'max/origin':>10} "
          f"{'store':>7} {'mw map':>7} {'SQLite MiB':>10} {'seconds':>8}")
    for r in results:
        p = r["proxy"]
        sqlite = f"{r['sqlite_mib']:.1f}" if "sqlite_mib" in r else "-"
        print(f"{r['mode']:<14} {r['pages']:>7} {r['pages_per_s']:>8.0f} {r['responses_per_s']:>7.0f} "
              f"{r['cpu_ms_per_response']:>11.3f} {r['peak_rss_mb']:>11.1f} {p['peak_connections']:>10} "
              f"{r.get('peak_scheduled', '-'):>7} {r.get('peak_active', '-'):>6} "
              f"{r['robots']:>7} {p['robots']:>12} "
              f"{p['robots_max_per_origin']:>10} {r.get('store', '-'):>7} {r.get('middleware_origins', '-'):>7} "
              f"{sqlite:>10} {r['seconds']:>8.1f}")
    by_mode = {r["mode"]: r for r in results}
    off = by_mode.get("off")
    for r in results:
        mode = r["mode"]
        if mode == "off":
            continue
        line = (f"{mode}: robots.txt downloads {r['robots']} (proxy {r['proxy']['robots']}, "
                f"{r['proxy']['robots_origins']} origins) for {origins} origins; at most "
                f"{r['proxy']['peak_connections']} connections at once (CONCURRENT_REQUESTS {concurrency}); "
                f"GC {r['gc_ms_per_response']:.3f} ms per response")
        if off is not None:
            line += (f"; pages/s {r['pages_per_s'] / off['pages_per_s']:.2f}x the anchor's (responses/s "
                     f"{r['responses_per_s'] / off['responses_per_s']:.2f}x), CPU per response "
                     f"{r['cpu_ms_per_response'] / off['cpu_ms_per_response']:.2f}x, peak RSS "
                     f"{r['peak_rss_mb'] / off['peak_rss_mb']:.2f}x (+{r['peak_rss_mb'] - off['peak_rss_mb']:.0f} MB, "
                     f"{(r['peak_rss_mb'] - off['peak_rss_mb']) * 1024 / origins:.2f} KiB per origin)")
        builtin = by_mode.get("builtin")
        if mode.startswith("rep") and not mode.endswith(SLOW) and builtin is not None:
            line += f"; responses/s {r['responses_per_s'] / builtin['responses_per_s']:.2f}x builtin's"
        instant = by_mode.get(mode.removesuffix(SLOW))
        if mode.endswith(SLOW) and instant is not None:
            after = r["responses_per_s_after_1s"], instant["responses_per_s_after_1s"]
            late = f"{after[0] / after[1]:.2f}x" if all(after) else "-, a crawl took less than a second"
            line += (f"; robots.txt {SLOW_ROBOTS:g} s late: responses/s "
                     f"{r['responses_per_s'] / instant['responses_per_s']:.2f}x the same crawl's with instant ones "
                     f"(past the first second: {late})")
        print(line)


if __name__ == "__main__":
    main()
