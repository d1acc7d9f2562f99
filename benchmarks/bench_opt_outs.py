"""What reading every machine-readable AI/TDM opt-out costs: CPU per page with UsageMiddleware on, pages stating no
opt-out (the common case), against the same crawl without it; and the cost of one tdmrep.json per origin.

Modes, every one in the same run, interleaved over rounds (each crawl in a fresh process):

- ``off``: ROBOTSTXT_OBEY = False, the anchor (no robots.txt, no opt-out read);
- ``builtin``: Scrapy's RobotsTxtMiddleware (Protego), the other anchor;
- ``rep-nousage``: scrapy_rep.Addon with ``UsageMiddleware`` removed, i.e. the crawl's cost before the feature's
  response side. ``SPIDER_MIDDLEWARES = {"scrapy_rep.UsageMiddleware": None}`` cannot do it: the add-on replaces a
  user's None by its order (and logs that it did). So a second add-on of this file, ``NoUsageAddon``, placed after
  ours (``ADDONS = {"scrapy_rep.Addon": 0, NoUsageAddon: 1}``: Scrapy runs add-ons in ascending order), deletes
  every SPIDER_MIDDLEWARES key that loads to ``UsageMiddleware`` from the setting the add-on wrote (it is in no
  ``*_BASE`` setting, so deleted means not enabled); each crawl reports its enabled spider middlewares, and the bench
  checks that UsageMiddleware is absent in this mode and present in the others. What stays is the request side:
  ``Usage.refusal`` puts every allowed request's answer (robots.txt's Content-Usage lines: none here) in its meta,
  in every ``rep`` mode; its own time is timed apart (below);
- ``rep``: the add-on as shipped, no REP_CONTENT_USES: every response's opt-out signals read, no tdmrep.json;
- ``rep-uses``: REP_CONTENT_USES = ["train-ai"]: each origin's ``/.well-known/tdmrep.json`` fetched once, beside its
  robots.txt (the server answers 404, the common case), and every item checked against its response's answer;
- ``rep-notags`` (only with ``--modes``): ``rep`` with REP_ROBOTS_TAGS = False, where UsageMiddleware reads the robots
  meta tag and X-Robots-Tag itself (``robots_tags``) for noai;
- ``rep-layer`` (only with ``--modes``): ``rep-nousage`` with an empty ``BaseSpiderMiddleware`` subclass at
  UsageMiddleware's place (46): what one more spider middleware costs before any of UsageMiddleware's own code;
- ``rep-log``, ``rep-warc`` (only with ``--modes``): ``rep`` with the evidence's opt-in files on, REP_DECISION_LOG
  (a JSON line per checked request) or REP_WARC (every robots.txt copy archived), in a temporary directory;
- ``rep-sqlite``, ``rep-sqlite-nohistory`` (only with ``--modes``): ``rep`` on a new SQLite store file, with its
  robots.txt history (REP_HISTORY_VERSIONS's default) and without (0).

The default crawl is bench_crawl.py's (its page and robots.txt; 100 local origins x N pages, each origin its own
port, the servers in their own process): ~30 KiB HTML pages whose head holds 15 meta tags and Yoast's robots meta
tag, ``X-Robots-Tag: noarchive``, five links the dupefilter drops; the spider yields one item per page. No page
states an opt-out (no Content-Usage, Content-Signal, tdm-* header or meta tag, noai). The server counts the
requests per origin for robots.txt and tdmrep.json apart from the pages.

Printed per mode: CPU µs per page (the crawler process's user+system time from spider_opened to the end, per page
downloaded: robots.txt and tdmrep.json responses are not pages; median over the rounds), its ratio to
``rep-nousage`` and to ``off`` (of the medians, and the median of each round's ratio: the machine drifts between
rounds), pages/s, and the requests each origin cost (server counts); and, with ``rep`` and ``rep-uses``, what
REP_CONTENT_USES adds per origin (CPU ms, paired per round). One crawl's CPU per page moves by ±10% from run to run
on a shared 2-core machine (bench_crawl.py's finding), which a 2 % target cannot be read from, so the crawls also
time the feature's own code where it runs (``time.perf_counter`` around each call, ~0.1 µs of overhead per call,
in every ``rep`` mode; the first call given apart, the garbage collections run inside the calls subtracted and
given apart): ``UsageMiddleware.process_spider_input`` per response and ``get_processed_item`` per item, and, for
comparison, ``RobotsTagsMiddleware.process_spider_input`` and the request side ``Usage.refusal``; their µs per page
over ``rep-nousage``'s CPU per page is the feature's share. What it adds by being one more spider middleware (three
more async-generator layers, ``_evaluate_iterable`` / ``asyncgen_inner`` / ``process_spider_output_async``, for
every request and item of the callbacks' output, and one over ``start()``) is not inside those calls: ``--profile
DIR`` runs one crawl of each rep mode under cProfile instead of the rounds (``DIR/<mode>.prof``) and prints
UsageMiddleware's functions per page, process_spider_input's callees, and, against ``rep-nousage``, Scrapy's
spider-middleware chain per page, the functions whose calls per page differ most, and the scrapy_rep functions whose
cumulative time per page grew most (with ``--broad``: where a tdmrep.json fetch's CPU goes).

``--callgrind DIR``: every crawl of the rounds under ``valgrind --tool=callgrind`` (~40x slower: small sizes), its
instructions counted from spider_opened to the process's end (``callgrind_control --instr=on`` at spider_opened):
instructions per page, which repeat within ±0.1% from one crawl to the next where CPU time moves by ±10%, so a 2 %
difference can be read from them (user-space instructions only: not the kernel's share, not cache misses; code that
runs hot, like a head scan, executes more instructions per µs than the crawl's average).

``--broad N``: the broad crawl instead: N origins x 2 pages behind one loopback proxy (``tests.broad.origins``,
bench_broad.py's server: robots.txt from the corpus round-robin, each origin's two pages; every other path, its
tdmrep.json included, a 404), CONCURRENT_REQUESTS 64. Printed: pages/s, CPU per allowed page (pages downloaded),
and the requests per origin the proxy received (robots.txt, tdmrep.json, pages): what one tdmrep.json per origin
costs a broad crawl (``rep-uses`` against ``rep``).

Asserts nothing but the modes' middlewares: it prints figures. Run from the repository root:
``.venv/bin/python -m benchmarks.bench_opt_outs`` (``--help`` for sizes and rounds).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from benchmarks.bench_crawl import ROBOTS, page_body

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings
    from twisted.web.http import Request as TwistedRequest

_ADDRESS = re.compile(r" at 0x[0-9a-f]+")
MODES = ("rep-nousage", "rep", "rep-uses", "builtin", "off")
EXTRA_MODES = ("rep-notags", "rep-layer", "rep-log", "rep-warc", "rep-sqlite", "rep-sqlite-nohistory")
REP_MODES = ("rep-nousage", "rep", "rep-uses", "rep-notags", "rep-layer", "rep-log", "rep-warc", "rep-sqlite",
             "rep-sqlite-nohistory")
#: The rep modes without UsageMiddleware.
WITHOUT_USAGE = ("rep-nousage", "rep-layer")
#: Set in a crawl's environment by --callgrind: the crawl turns callgrind's instrumentation on at spider_opened.
CALLGRIND_ENV = "BENCH_OPT_OUTS_CALLGRIND"
#: The mode every ratio is taken to (the crawl before the feature), and the anchor.
BEFORE, ANCHOR = "rep-nousage", "off"
TDMREP = "/.well-known/tdmrep.json"  # matcher.TDMREP_PATH (not imported: the anchors' processes load no scrapy_rep)
TOKEN = "benchbot"
#: The files of Scrapy's spider-middleware chain, whose per-layer cost one more middleware adds (cProfile's names).
LAYER_FILES = ("scrapy/spidermiddlewares/base.py", "scrapy/utils/decorators.py", "scrapy/core/spidermw.py",
               "scrapy/utils/asyncgen.py", "scrapy/utils/python.py")
USES = ["train-ai"]
#: The calls timed in every rep crawl: (module, class, method, what one call is per).
TIMED = (
    ("scrapy_rep.requests.response_usage", "UsageMiddleware", "process_spider_input", "response"),
    ("scrapy_rep.requests.response_usage", "UsageMiddleware", "get_processed_item", "item"),
    ("scrapy_rep.requests.page_directives", "RobotsTagsMiddleware", "process_spider_input", "response"),
    ("scrapy_rep.requests.usage", "Usage", "refusal", "request"),
)


class NoUsageAddon:
    """Placed after scrapy_rep.Addon: removes UsageMiddleware from the SPIDER_MIDDLEWARES it wrote."""

    def update_settings(self, settings: BaseSettings) -> None:
        from scrapy.utils.misc import load_object

        from scrapy_rep import UsageMiddleware

        middlewares = settings.getdict("SPIDER_MIDDLEWARES")
        for key in [key for key in middlewares if (load_object(key) if isinstance(key, str) else key)
                    is UsageMiddleware]:
            del middlewares[key]
        settings.set("SPIDER_MIDDLEWARES", middlewares, settings.getpriority("SPIDER_MIDDLEWARES") or 0)


def empty_middleware() -> type:
    """A spider middleware that changes nothing (BaseSpiderMiddleware's own methods): one more link in Scrapy's
    spider-middleware chain, what UsageMiddleware costs before any of its own code runs."""
    from scrapy.spidermiddlewares.base import BaseSpiderMiddleware

    return type("EmptySpiderMiddleware", (BaseSpiderMiddleware,), {})


def mode_settings(mode: str) -> dict[str, Any]:
    settings: dict[str, Any] = {"ROBOTSTXT_OBEY": mode != "off"}
    if mode in REP_MODES:
        settings["ADDONS"] = {"scrapy_rep.Addon": 0, **({NoUsageAddon: 1} if mode in WITHOUT_USAGE else {})}
    if mode == "rep-layer":
        settings["SPIDER_MIDDLEWARES"] = {empty_middleware(): 46}  # USAGE_ORDER: UsageMiddleware's place
    if mode == "rep-uses":
        settings["REP_CONTENT_USES"] = USES
    if mode == "rep-notags":
        settings["REP_ROBOTS_TAGS"] = False
    if mode == "rep-log":  # the evidence's opt-in files (docs/evidence.md), written to a directory of the crawl's own
        settings["REP_DECISION_LOG"] = os.path.join(tempfile.mkdtemp(prefix="bench-evidence-"), "decisions.jsonl")
    if mode == "rep-warc":
        settings["REP_WARC"] = tempfile.mkdtemp(prefix="bench-evidence-")
    if mode.startswith("rep-sqlite"):  # a new store file per crawl: every origin's robots.txt downloaded and written
        settings["REP_STORE"] = f"sqlite:///{tempfile.mkdtemp(prefix='bench-evidence-')}/robots.db"
    if mode == "rep-sqlite-nohistory":
        settings["REP_HISTORY_VERSIONS"] = 0
    return settings


# -- servers (child processes) ---------------------------------------------------------------------------------------


def serve(origins: int, pages: int) -> None:
    """Child process: ``origins`` ports serving robots.txt, a 404 tdmrep.json and pages, and one control port whose
    ``/_hits`` answers the counts since the last call; prints the ports as JSON."""
    from twisted.internet import reactor

    from tests.servers import Hit, Reply, Site

    counts: Counter[tuple[str, str]] = Counter()  # (kind, origin) -> requests

    def counter(origin: str) -> Callable[[Hit], None]:
        def count(hit: Hit) -> None:
            path = hit.path.split("?")[0]
            counts[("robots" if path == "/robots.txt" else "tdmrep" if path == TDMREP else "pages", origin)] += 1
        return count

    page = Reply(body=page_body(pages), headers={"Content-Type": "text/html; charset=utf-8",
                                                 "X-Robots-Tag": "noarchive"})
    sites = []
    for n in range(origins):
        site = Site(default=page, robots_default=Reply(body=ROBOTS, headers={"Content-Type": "text/plain"}))
        site.route(TDMREP, Reply(status=404, body=b"not found", headers={"Content-Type": "text/html"}))
        site.on_hit.append(counter(str(n)))
        sites.append(site.start())

    def hits(request: TwistedRequest) -> Reply:
        summary = summarise(counts)
        counts.clear()
        for site in sites:
            site.hits.clear()
        control.hits.clear()
        return Reply(body=json.dumps(summary).encode(), headers={"Content-Type": "application/json"})

    control = Site().route("/_hits", hits).start()
    print(json.dumps({"ports": [site.port_number for site in sites], "control": control.port_number}), flush=True)
    cast(Any, reactor).run()


def summarise(counts: Counter[tuple[str, str]]) -> dict[str, Any]:
    """Per kind (robots, tdmrep, pages): requests, origins that made one, the most one origin made."""
    summary: dict[str, Any] = {}
    for kind in ("robots", "tdmrep", "pages"):
        per_origin = [count for (which, _), count in counts.items() if which == kind]
        summary[kind] = sum(per_origin)
        summary[f"{kind}_origins"] = len(per_origin)
        summary[f"{kind}_max_per_origin"] = max(per_origin, default=0)
    return summary


def serve_broad() -> None:
    """Child process: bench_broad.py's proxy, counting tdmrep.json apart; prints its URL and the origins' paths."""
    from twisted.internet import reactor

    from tests.broad.origins import HOST, OriginsProxy, robots_bodies

    class Proxy(OriginsProxy):
        def _summary(self, request: TwistedRequest) -> bytes:
            counts: Counter[tuple[str, str]] = Counter()
            for host, path in self.hits:
                if HOST.fullmatch(host):
                    kind = "robots" if path == "/robots.txt" else "tdmrep" if path == TDMREP else "pages"
                    counts[(kind, host)] += 1
            summary = {**summarise(counts), "peak_connections": self.connections.peak}
            self.hits.clear()
            self.connections.reset()
            return self._answer(request, 200, {b"Content-Type": b"application/json"}, json.dumps(summary).encode())

    bodies, source = robots_bodies()
    proxy = Proxy(bodies).start()
    print(json.dumps({"proxy": proxy.proxy_url, "source": source,
                      "paths": [proxy.pages(n) for n in range(len(bodies))]}), flush=True)
    cast(Any, reactor).run()


def server_hits(url: str) -> dict[str, Any]:
    """The server's counts since the last call (a direct request, never through an environment's proxy)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=30) as answer:
        summary: dict[str, Any] = json.loads(answer.read())
    return summary


# -- one crawl (a child process) -------------------------------------------------------------------------------------


def instrument() -> dict[str, list[float]]:
    """Wrap the ``TIMED`` methods in a perf_counter accumulator: name -> [calls, seconds of every call but the first
    (the garbage collections run inside it subtracted), the first call's seconds, seconds of the collections run
    inside the calls]. A collection runs where an allocation crosses the threshold, wherever the garbage came from:
    its time is said apart, not charged to the call."""
    import gc
    import importlib

    in_gc = [0.0, 0.0]  # seconds in the collector so far; when the running collection began

    def collecting(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            in_gc[1] = time.perf_counter()
        else:
            in_gc[0] += time.perf_counter() - in_gc[1]

    gc.callbacks.append(collecting)
    timers: dict[str, list[float]] = {}
    for module, cls_name, method, _ in TIMED:
        cls = getattr(importlib.import_module(module), cls_name)
        timer = timers[f"{cls_name}.{method}"] = [0, 0.0, 0.0, 0.0]
        original = getattr(cls, method)

        def timed(*args: Any, _original: Any = original, _timer: list[float] = timer, **kwargs: Any) -> Any:
            collected = in_gc[0]
            started = time.perf_counter()
            try:
                return _original(*args, **kwargs)
            finally:
                took = time.perf_counter() - started
                collecting_took = in_gc[0] - collected
                if _timer[0]:
                    _timer[1] += took - collecting_took
                    _timer[3] += collecting_took
                else:
                    _timer[2] = took  # the first call apart: it compiles patterns, fills caches
                _timer[0] += 1

        setattr(cls, method, timed)
    return timers


def crawl(mode: str, target: dict[str, Any], concurrency: int, profile: str) -> None:
    """Child process: one crawl of ``target`` (local ports and pages, or the broad proxy); prints a JSON line."""
    from scrapy import Request, Spider, signals
    from scrapy.crawler import CrawlerProcess

    broad = "proxy" in target
    if broad:
        from tests.broad.origins import host

        paths: list[list[str]] = target["paths"]
        urls = [f"http://{host(n)}{path}" for n in range(target["origins"]) for path in paths[n % len(paths)]]
    else:
        urls = [f"http://127.0.0.1:{port}/page/{page}" for page in range(target["pages"]) for port in target["ports"]]

    class BenchSpider(Spider):
        name = "opt-outs"

        async def start(self) -> Any:
            for url in urls:
                yield Request(url, dont_filter=broad)  # local: the dupefilter drops the pages' links to them

        def parse(self, response: Any) -> Any:
            yield {"url": response.url}
            if not broad:
                yield from response.follow_all(response.css("a::attr(href)").getall())

    settings: dict[str, Any] = {
        "LOG_LEVEL": "ERROR" if broad else "WARNING",
        "TELNETCONSOLE_ENABLED": False,
        "CONCURRENT_REQUESTS": concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,
        "REP_USER_AGENT": TOKEN,
        "ROBOTSTXT_USER_AGENT": TOKEN,
        "USER_AGENT": f"{TOKEN}/1.0",
        **mode_settings(mode),
    }
    if broad:
        settings.update({"REP_MEMORY_MAX_ORIGINS": max(target["origins"], 1), "BROAD_PROXY": target["proxy"],
                         "DOWNLOADER_MIDDLEWARES": {"tests.broad.origins.ProxyEverything": 50},
                         "COOKIES_ENABLED": False, "RETRY_ENABLED": False})
    callgrind = bool(os.environ.get(CALLGRIND_ENV))
    timers = instrument() if mode in REP_MODES and not profile and not callgrind else {}
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(BenchSpider)
    started: list[float] = []
    profiler = cProfile.Profile() if profile else None

    def opened() -> None:
        started.extend((time.perf_counter(), time.process_time()))
        if profiler is not None:
            profiler.enable()
        if callgrind:  # counted from here (not waited for: the command is read by the process itself)
            subprocess.Popen(["callgrind_control", "--instr=on", str(os.getpid())], stdout=subprocess.DEVNULL)

    crawler.signals.connect(opened, signals.spider_opened, weak=False)
    process.crawl(crawler)
    process.start()
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(profile)
    elapsed, cpu = time.perf_counter() - started[0], time.process_time() - started[1]
    stats = crawler.stats.get_stats() if crawler.stats else {}
    robots = stats.get("rep/robots/downloads", 0) or stats.get("robotstxt/request_count", 0)
    tdmrep = stats.get("rep/tdmrep/downloads", 0)
    pages = stats.get("response_received_count", 0) - robots - tdmrep
    assert crawler.engine is not None
    spider_middlewares = [type(mw).__name__ for mw in crawler.engine.scraper.spidermw.middlewares]
    print(json.dumps({
        "mode": mode, "seconds": elapsed, "pages": pages, "robots": robots, "tdmrep": tdmrep,
        "items": stats.get("item_scraped_count", 0), "items_dropped": stats.get("rep/usage/items_dropped", 0),
        "forbidden": stats.get("rep/requests/forbidden", 0) + stats.get("robotstxt/forbidden", 0),
        "pages_per_s": pages / elapsed, "cpu_s": cpu, "cpu_us_per_page": cpu * 1e6 / max(pages, 1),
        "timers": timers, "spider_middlewares": spider_middlewares,
    }), flush=True)


# -- the runs --------------------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--origins", type=int, default=100)
    parser.add_argument("--pages", type=int, default=20, help="pages per origin (the local crawl)")
    parser.add_argument("--rounds", type=int, default=10, help="crawls per mode (interleaved); the median is shown")
    parser.add_argument("--concurrency", type=int, default=32, help="CONCURRENT_REQUESTS (--broad: 64 by default)")
    parser.add_argument("--modes", default=",".join(MODES),
                        help=f"comma-separated, of {', '.join(MODES + EXTRA_MODES)} (rotated each round)")
    parser.add_argument("--broad", type=int, metavar="N", default=0,
                        help="the broad crawl instead: N origins x 2 pages behind one proxy (bench_broad.py's)")
    parser.add_argument("--profile", metavar="DIR", default="",
                        help="instead of the rounds: one crawl of each rep mode under cProfile (DIR/<mode>.prof) "
                             "and UsageMiddleware's costs per page")
    parser.add_argument("--callgrind", metavar="DIR", default="",
                        help="instead of timing: each crawl under valgrind --tool=callgrind (~40x slower: use small "
                             "sizes, e.g. --origins 20 --pages 16 --rounds 2), instructions counted from "
                             "spider_opened; instructions per page, the measure a 2 %% target can be read from")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--crawl", choices=MODES + EXTRA_MODES, help=argparse.SUPPRESS)
    parser.add_argument("--target", help=argparse.SUPPRESS)
    parser.add_argument("--profile-to", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.broad and "--concurrency" not in sys.argv:
        args.concurrency = 64
    if args.serve:
        return serve_broad() if args.broad else serve(args.origins, args.pages)
    if args.crawl:
        return crawl(args.crawl, json.loads(Path(args.target).read_text()), args.concurrency, args.profile_to)

    modes = args.modes.split(",")
    unknown = set(modes) - set(MODES + EXTRA_MODES)
    if unknown:
        parser.error(f"unknown modes: {', '.join(sorted(unknown))}")
    me = [sys.executable, "-m", "benchmarks.bench_opt_outs"]
    server = subprocess.Popen([*me, "--serve", "--origins", str(args.origins), "--pages", str(args.pages),
                               *(["--broad", str(args.broad)] if args.broad else [])],
                              stdout=subprocess.PIPE, text=True)
    with tempfile.TemporaryDirectory() as directory:
        try:
            assert server.stdout is not None
            hello = json.loads(server.stdout.readline())
            if args.broad:
                target = {"proxy": hello["proxy"], "paths": hello["paths"], "origins": args.broad}
                hits_url, origins = f"{hello['proxy']}/_hits", args.broad
                print(f"{args.broad:,} origins x 2 pages behind one proxy, robots.txt from the {hello['source']}, "
                      f"tdmrep.json 404, CONCURRENT_REQUESTS={args.concurrency}", flush=True)
            else:
                target = {"ports": hello["ports"], "pages": args.pages}
                hits_url, origins = f"http://127.0.0.1:{hello['control']}/_hits", args.origins
                print(f"{args.origins} origins x {args.pages} pages (bench_crawl.py's page, no opt-out stated), "
                      f"tdmrep.json 404, CONCURRENT_REQUESTS={args.concurrency}", flush=True)
            target_file = Path(directory) / "target.json"
            target_file.write_text(json.dumps(target))

            def run(mode: str, profile_to: str = "", callgrind_to: str = "") -> dict[str, Any]:
                valgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                            f"--callgrind-out-file={callgrind_to}"] if callgrind_to else []
                out = subprocess.run([*valgrind, *me, "--crawl", mode, "--target", str(target_file), "--concurrency",
                                      str(args.concurrency), "--profile-to", profile_to],
                                     capture_output=True, text=True,
                                     env={**os.environ, CALLGRIND_ENV: "1"} if callgrind_to else None)
                if out.returncode:
                    sys.exit(f"crawl {mode} failed:\n{out.stderr[-3000:]}")
                result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
                if callgrind_to:
                    counted = re.search(r"Collected : (\d+)", out.stderr)
                    assert counted is not None, out.stderr[-3000:]
                    result["instructions_per_page"] = int(counted.group(1)) / max(result["pages"], 1)
                result["server"] = server_hits(hits_url)
                check_middlewares(result)
                return result

            run("off")  # a warm-up crawl, not counted: the first after the servers start runs slower
            server_hits(hits_url)
            if args.profile:
                Path(args.profile).mkdir(parents=True, exist_ok=True)
                profiled = {mode: run(mode, str(Path(args.profile) / f"{mode}.prof"))
                            for mode in modes if mode in REP_MODES}
                return profile_report(profiled, Path(args.profile))
            if args.callgrind:
                Path(args.callgrind).mkdir(parents=True, exist_ok=True)
            runs: dict[str, list[dict[str, Any]]] = {mode: [] for mode in modes}
            for round_ in range(args.rounds):
                turn = round_ % len(modes)
                for mode in modes[turn:] + modes[:turn]:  # rotated: no mode always runs first
                    result = run(mode, callgrind_to=str(Path(args.callgrind) / f"{mode}-{round_}.out")
                                 if args.callgrind else "")
                    runs[mode].append(result)
                    print(f"  round {round_ + 1} {mode}: {result['seconds']:.1f} s, "
                          + (f"{result['instructions_per_page'] / 1e6:.3f} M instructions/page" if args.callgrind
                             else f"{result['cpu_us_per_page']:.0f} µs CPU/page"), flush=True)
        finally:
            server.terminate()
            server.wait()
    if args.callgrind:
        return callgrind_report(runs)
    report(runs, origins, args)


def check_middlewares(result: dict[str, Any]) -> None:
    """UsageMiddleware enabled in the rep modes but rep-nousage and rep-layer, in no other; the empty one in
    rep-layer only."""
    enabled = "UsageMiddleware" in result["spider_middlewares"]
    empty = "EmptySpiderMiddleware" in result["spider_middlewares"]
    if enabled != (result["mode"] in REP_MODES and result["mode"] not in WITHOUT_USAGE) or empty != (
            result["mode"] == "rep-layer"):
        sys.exit(f"{result['mode']}: UsageMiddleware {'enabled' if enabled else 'not enabled'}: "
                 f"{result['spider_middlewares']}")


def report(runs: dict[str, list[dict[str, Any]]], origins: int, args: argparse.Namespace) -> None:
    print(f"\n{args.rounds} round(s) per mode, the median; 'paired': the median of each round's ratio; requests per "
          f"origin as the server counted them")
    median = {mode: statistics.median(run["cpu_us_per_page"] for run in results) for mode, results in runs.items()}
    print(f"{'mode':<12} {'pages':>6} {'robots.txt':>10} {'tdmrep.json':>11} {'pages':>6} {'seconds':>7} "
          f"{'pages/s':>7} {'CPU µs/page':>11} {'vs ' + BEFORE:>14} {'paired':>7} {'vs off':>7} {'paired':>7}")
    print(f"{'':<12} {'crawled':>6} {'per origin':>10} {'per origin':>11} {'/origin':>6}")
    for mode, results in runs.items():
        last = results[-1]
        server = last["server"]
        cells = []
        for anchor in (BEFORE, ANCHOR):
            if anchor in runs:
                paired = statistics.median(run["cpu_us_per_page"] / other["cpu_us_per_page"]
                                           for run, other in zip(results, runs[anchor], strict=True))
                cells += [f"{(median[mode] / median[anchor] - 1) * 100:+.1f}%", f"{(paired - 1) * 100:+.1f}%"]
            else:
                cells += ["-", "-"]
        print(f"{mode:<12} {last['pages']:>6} {server['robots'] / origins:>10.2f} {server['tdmrep'] / origins:>11.2f} "
              f"{server['pages'] / origins:>6.2f} {statistics.median(run['seconds'] for run in results):>7.2f} "
              f"{statistics.median(run['pages_per_s'] for run in results):>7.0f} {median[mode]:>11.1f} "
              f"{cells[0]:>14} {cells[1]:>7} {cells[2]:>7} {cells[3]:>7}")
    if "rep-uses" in runs and "rep" in runs:  # what REP_CONTENT_USES adds, per origin: its tdmrep.json, items checked
        pairs = list(zip(runs["rep-uses"], runs["rep"], strict=True))
        extra = statistics.median((uses["cpu_s"] - rep["cpu_s"]) * 1e3 / origins for uses, rep in pairs)
        rate = statistics.median(uses["pages_per_s"] / rep["pages_per_s"] for uses, rep in pairs)
        requests = (runs["rep-uses"][-1]["server"]["tdmrep"] - runs["rep"][-1]["server"]["tdmrep"]) / origins
        print(f"REP_CONTENT_USES = {USES} against none (rep-uses - rep, paired per round): +{requests:.2f} request per "
              f"origin (tdmrep.json), CPU {extra:+.2f} ms per origin, pages/s {rate:.2f}x")
    for mode, results in runs.items():
        server = results[-1]["server"]
        if server["robots"] or server["tdmrep"]:
            print(f"  {mode}: server: robots.txt {server['robots']} ({server['robots_origins']} origins, at most "
                  f"{server['robots_max_per_origin']} per origin), tdmrep.json {server['tdmrep']} "
                  f"({server['tdmrep_origins']} origins, at most {server['tdmrep_max_per_origin']}), pages of "
                  f"{server['pages_origins']} origins; crawler: "
                  f"robots.txt {results[-1]['robots']}, tdmrep.json {results[-1]['tdmrep']}; "
                  f"items dropped {results[-1]['items_dropped']}, forbidden {results[-1]['forbidden']}")
    print("the feature's own code, timed in the crawl (median over the rounds; every call but the first, whose time "
          "is given apart: it compiles patterns and fills caches):")
    before = median.get(BEFORE)
    for mode, results in runs.items():
        if not results[0]["timers"]:
            continue
        print(f"  {mode}:")
        for name, per in [(f"{cls}.{method}", per) for _, cls, method, per in TIMED]:
            timed = [(run["timers"][name], run["pages"]) for run in results if run["timers"][name][0] > 1]
            if not timed:
                continue
            per_call = statistics.median(seconds * 1e6 / (calls - 1) for (calls, seconds, _, _), _ in timed)
            per_page = statistics.median(seconds * 1e6 / (calls - 1) * calls / pages
                                         for (calls, seconds, _, _), pages in timed)
            first = statistics.median(first * 1e3 for (_, _, first, _), _ in timed)
            collections = statistics.median(gc * 1e6 / pages for (_, _, _, gc), pages in timed)
            share = f" = {per_page / before * 100:.2f}% of {BEFORE}'s CPU/page" if before else ""
            print(f"    {name:<42} {per_page:>6.1f} µs/page{share} ({per_call:.1f} µs per {per}, "
                  f"{statistics.median(calls / pages for (calls, _, _, _), pages in timed):.2f} per page; "
                  f"collections inside: {collections:.1f} µs/page; first call {first:.1f} ms)")


def callgrind_report(runs: dict[str, list[dict[str, Any]]]) -> None:
    """Instructions per page (counted from spider_opened to the process's end), each mode's median and its ratio to
    rep-nousage's (of the medians, and the median of each round's)."""
    print(f"\n{len(next(iter(runs.values())))} round(s) per mode under callgrind, the median")
    median = {mode: statistics.median(run["instructions_per_page"] for run in results)
              for mode, results in runs.items()}
    print(f"{'mode':<12} {'pages':>6} {'M instr./page':>13} {'per round':>24} {'vs ' + BEFORE:>14} {'paired':>7}")
    for mode, results in runs.items():
        each = " ".join(f"{run['instructions_per_page'] / 1e6:.3f}" for run in results)
        cells = ["-", "-"]
        if BEFORE in runs:
            paired = statistics.median(run["instructions_per_page"] / other["instructions_per_page"]
                                       for run, other in zip(results, runs[BEFORE], strict=True))
            cells = [f"{(median[mode] / median[BEFORE] - 1) * 100:+.2f}%", f"{(paired - 1) * 100:+.2f}%"]
        print(f"{mode:<12} {results[-1]['pages']:>6} {median[mode] / 1e6:>13.3f} {each:>24} {cells[0]:>14} "
              f"{cells[1]:>7}")


def profile_report(runs: dict[str, dict[str, Any]], directory: Path, rows: int = 16) -> None:
    """Per rep mode: UsageMiddleware's functions per page, process_spider_input's callees; the functions whose own
    time or calls per page differ most from rep-nousage's."""
    loaded = {mode: pstats.Stats(str(directory / f"{mode}.prof")) for mode in runs}
    per_page: dict[str, dict[str, tuple[float, float, float]]] = {}  # mode -> function -> calls, own µs, cumulative µs
    for mode, stats in loaded.items():
        pages = runs[mode]["pages"]
        table: dict[str, tuple[float, float, float]] = {}
        for (file, line, name), (_, calls, own, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
            key = function_key(file, line, name)
            previous = table.get(key, (0.0, 0.0, 0.0))
            table[key] = (previous[0] + calls / pages, previous[1] + own * 1e6 / pages,
                          max(previous[2], cumulative * 1e6 / pages))
        per_page[mode] = table
        total = sum(own for _, own, _ in table.values())
        print(f"\n{mode}: {pages} pages, {runs[mode]['cpu_us_per_page']:.0f} µs CPU/page under cProfile "
              f"(profiled functions' own time {total:.0f} µs/page)")
        usage = sorted(((key, value) for key, value in table.items() if "response_usage.py" in key),
                       key=lambda item: -item[1][2])
        for key, (calls, own, cumulative) in usage:
            print(f"  {key:<70} {calls:>6.2f} calls/page {own:>7.1f} µs own {cumulative:>7.1f} µs cumulative")
        edges: dict[tuple[str, int, str], list[tuple[tuple[str, int, str], float, float]]] = {}
        for function, (_, _, _, _, callers) in stats.stats.items():  # type: ignore[attr-defined]
            for caller, edge in callers.items():
                edges.setdefault(caller, []).append((function, edge[1] / pages, edge[3] * 1e6 / pages))
        roots = [function for function in edges
                 if function[2] == "process_spider_input" and function[0].endswith("response_usage.py")]
        if roots:
            print("  UsageMiddleware.process_spider_input's callees, and theirs in scrapy_rep (per page: calls, "
                  "cumulative µs):")
            print_callees(edges, roots[0], 1, 3)
    if BEFORE not in per_page:
        return
    for mode, table in per_page.items():
        if mode == BEFORE:
            continue
        before = per_page[BEFORE]
        keys = set(table) | set(before)
        diffs = [(key, table.get(key, (0.0, 0.0, 0.0)), before.get(key, (0.0, 0.0, 0.0))) for key in keys]
        layer = [(key, table.get(key, (0.0, 0.0, 0.0)), before.get(key, (0.0, 0.0, 0.0))) for key in sorted(keys)
                 if key.startswith(LAYER_FILES)]
        print(f"\n{mode} against {BEFORE}: Scrapy's spider-middleware chain (every middleware's generator layer over "
              f"the callbacks' output and start(); calls, own µs per page):")
        for key, now, was in layer:
            if now[0] != was[0]:
                print(f"  {key:<70} {was[0]:>7.2f} -> {now[0]:>7.2f} calls  {was[1]:>7.1f} -> {now[1]:>7.1f} µs own")
        print(f"  the chain's own time: {sum(was[1] for _, _, was in layer):.1f} -> "
              f"{sum(now[1] for _, now, _ in layer):.1f} µs per page")
        print(f"{mode} against {BEFORE}: the functions whose calls per page differ most (calls, own µs per page)")
        for key, now, was in sorted(diffs, key=lambda item: -abs(item[1][0] - item[2][0]))[:rows]:
            print(f"  {key:<70} {was[0]:>7.2f} -> {now[0]:>7.2f} calls  {was[1]:>7.1f} -> {now[1]:>7.1f} µs own")
        print(f"{mode} against {BEFORE}: the scrapy_rep functions whose cumulative time per page grew most (calls, "
              f"cumulative µs per page; a coroutine's calls are its resumptions)")
        ours = [item for item in diffs if item[0].startswith("scrapy_rep/")]
        for key, now, was in sorted(ours, key=lambda item: -(item[1][2] - item[2][2]))[:rows]:
            print(f"  {key:<70} {was[0]:>7.2f} -> {now[0]:>7.2f} calls  {was[2]:>7.1f} -> {now[2]:>7.1f} µs")


def print_callees(edges: dict[tuple[str, int, str], list[tuple[tuple[str, int, str], float, float]]],
                  caller: tuple[str, int, str], depth: int, most: int) -> None:
    """``caller``'s callees by cumulative time, and theirs within scrapy_rep down to ``most`` levels."""
    for function, calls, cumulative in sorted(edges.get(caller, ()), key=lambda item: -item[2]):
        key = function_key(*function)
        print(f"  {'  ' * depth}{key:<{70 - 2 * depth}} {calls:>6.2f} {cumulative:>7.1f}")
        if depth < most and key.startswith("scrapy_rep/") and function != caller:
            print_callees(edges, function, depth + 1, most)


def short(file: str) -> str:
    return file.rpartition("site-packages/")[2].replace(str(Path.cwd()) + "/", "")


def function_key(file: str, line: int, name: str) -> str:
    """A function's name the same in every process (a built-in's address dropped)."""
    return f"{short(file)}:{line}({_ADDRESS.sub('', name)})"


if __name__ == "__main__":
    main()
