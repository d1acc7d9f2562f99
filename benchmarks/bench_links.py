"""A link-following broad crawl: N origins on loopback behind one proxy port, each a home page whose links (a share
of them forbidden by the origin's robots.txt) the spider follows. Prints figures; asserts nothing.

What it is for: where a forbidden link is refused. Scrapy's RobotsTxtMiddleware (and scrapy-rep before it refuses a
link when the callback yields it) lets every forbidden link into the scheduler, pops it and refuses it in the
downloader middleware (IgnoreRequest); refused at discovery, it never reaches the scheduler. The anchors (``off``,
``builtin``) run in the same run as the ``rep`` modes.

The site (``benchmarks._links_site``, a ``tests.broad.origins.OriginsProxy`` in its own process, every request
carrying ``meta["proxy"]`` so no name is resolved): ``--origins`` origins, robots.txt from the real corpus
(``../shared/corpus/robots/``, else a small built-in set), only files that allow ``/`` to the token. Each origin's
``/`` links to ``--links`` same-origin URLs, about ``--forbidden-share`` of all links forbidden for the token by its
file (scrapy-rep's matcher); each linked page links to the same URLs again (Scrapy's dupefilter drops them). So a
crawl of an origin is 1 home page + its allowed links (``off`` also downloads the forbidden ones).

Crawls, each in a fresh process (peak RSS its own), ``--rounds`` times, in reverse order every other round:
``off`` (ROBOTSTXT_OBEY False), ``builtin`` (Scrapy's RobotsTxtMiddleware, Protego), ``rep`` (scrapy_rep.Addon,
memory store), ``rep-sqlite`` (``REP_STORE = sqlite:///<temporary file>``), ``rep-redis`` (a real redis-server
started by the benchmark). Per crawl:

- allowed: pages downloaded other than robots.txt and other than links the origin's file forbids (by the matcher's
  reading; the proxy tells them apart); fbd dl: forbidden pages downloaded (``off``; ``builtin`` where Protego reads
  a file otherwise); expected: the allowed pages the plan says the mode downloads;
- pages/s: allowed pages per second from spider_opened to the end; CPU ms/page: ``process_time`` per allowed page;
- RSS: peak RSS (``ru_maxrss``) in MB;
- enqueued: Scrapy's ``scheduler/enqueued`` (every forbidden link refused later is in it); filtered:
  ``dupefilter/filtered``;
- gc2: full (generation-2) garbage collections from spider_opened; gc ms/page: all collections' time per page;
- forbidden: ``rep/requests/forbidden`` or the built-in's ``robotstxt/forbidden``; at disc.:
  ``rep/requests/forbidden/at_discovery`` (the refusals made when the callback yields a link; None when absent);
- robots: robots.txt downloads the proxy served, and the most of one origin (1: fetched once per origin).

Then, per mode, the ratio of its pages/s and of its CPU per page to ``builtin``'s and to ``off``'s (the median over
rounds of each round's ratio), and ``scheduler/enqueued`` per allowed page.

Fleet (``--no-fleet`` to skip): per mode in ``builtin`` and ``rep`` (``REP_STORE`` the same Redis), two worker
processes sharing one fresh redis-server through scrapy-redis (its Scheduler and RFPDupeFilter), worker k starting
the origins n with n % 2 == k, both popping one shared queue; stopped with SIGINT once the proxy has served every
page expected and the queue has been empty for 0.5 s (or nothing more was served for 10 s); seconds: from the
workers' start to the last expected page. Per fleet: allowed pages (rep.: downloads of a page already downloaded),
Redis commands per allowed page (``INFO stats`` ``total_commands_processed`` after minus before, minus the
benchmark's own), the peak size of the queue (``ZCARD links:requests`` every 0.1 s), the requests pushed to it
(``scheduler/enqueued/redis`` over workers), each worker's forbidden count (and at-discovery count), robots.txt
downloads per origin. An idle worker looks at the
shared queue at Scrapy's engine heartbeat (5 s), as a scrapy-redis worker does. The ``builtin`` fleet downloads some
forbidden pages (fbd dl): Scrapy's RobotsTxtMiddleware (2.13+, asyncio reactor) hands the parser only to the first of
the requests waiting for an origin's robots.txt, the others pass unchecked, and in a fleet a worker often holds
several links of an origin whose robots.txt it has not fetched yet (in one process only the home page waits).

Run from the repository root: ``.venv/bin/python -m benchmarks.bench_links`` (``--origins N``, default 2,000;
``--links``, ``--forbidden-share``, ``--concurrency``, ``--modes off,rep``, ``--rounds``, ``--no-fleet``,
``--json PATH``: every figure as JSON; ``--profile DIR``: each crawl under cProfile, its tables in
``DIR/<mode>-<round>.txt``; ``--callgrind DIR``: each crawl under valgrind's callgrind, instructions per allowed
page counted from spider_opened, robust to the machine's noise, ~40x slower: ``--origins 40``). Needs
redis-server on PATH and scrapy-redis for ``rep-redis`` and the fleet.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from scrapy import Request, Spider
from scrapy.http import Response

from benchmarks.bench_broad import TOKEN, proxy_hits, start_redis, write_profile
from tests.broad.origins import host

ROOT = Path(__file__).resolve().parents[1]
MODES = ("off", "builtin", "rep", "rep-sqlite", "rep-redis")
FLEET_MODES = ("builtin", "rep")
#: Set in a crawl's environment by --callgrind: the crawl turns callgrind's instrumentation on at spider_opened.
CALLGRIND_ENV = "BENCH_LINKS_CALLGRIND"
QUEUE_KEY = "links:requests"  # scrapy-redis's SCHEDULER_QUEUE_KEY for the spider "links" (a sorted set)
STALL = 10.0  # seconds without a page served: the fleet is stopped (some expected page will not come)
KEPT = ("scheduler/enqueued", "scheduler/dequeued", "scheduler/enqueued/redis", "scheduler/dequeued/redis",
        "dupefilter/filtered", "robotstxt/forbidden", "robotstxt/request_count", "response_received_count",
        "downloader/request_count", "log_count/ERROR", "finish_reason")


class LinksSpider(Spider):
    """Starts at every ``/`` (of its part of the origins: n % parts == part), follows every link."""

    name = "links"
    origins = 0
    part = 0
    parts = 1

    async def start(self) -> Any:
        for n in range(int(self.part), int(self.origins), int(self.parts)):
            yield Request(f"http://{host(n)}/", dont_filter=True)

    def parse(self, response: Response, **kwargs: Any) -> Any:
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)


def settings_for(mode: str, proxy: str, origins: int, concurrency: int, store: str) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "LOG_LEVEL": "ERROR", "TELNETCONSOLE_ENABLED": False,
        "CONCURRENT_REQUESTS": concurrency, "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,
        "COOKIES_ENABLED": False, "RETRY_ENABLED": False,
        "ROBOTSTXT_OBEY": mode != "off",
        "ADDONS": {"scrapy_rep.Addon": 0} if mode.startswith("rep") else {},
        "REP_USER_AGENT": TOKEN, "ROBOTSTXT_USER_AGENT": TOKEN, "USER_AGENT": f"{TOKEN}/1.0",
        "REP_MEMORY_MAX_ORIGINS": origins,
        "BROAD_PROXY": proxy, "DOWNLOADER_MIDDLEWARES": {"tests.broad.origins.ProxyEverything": 50},
    }
    if store:
        settings["REP_STORE"] = store
    return settings


def crawl(mode: str, proxy: str, origins: int, concurrency: int, store: str, worker: int, redis_url: str,
          profile: str = "") -> None:
    """Child process: one crawl (``worker`` >= 0: one fleet worker, until SIGINT); prints a JSON line of figures.
    With ``profile`` (a file name), the crawl from spider_opened to its end runs under cProfile, whose tables go to
    that file (``bench_broad.write_profile``)."""
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess
    from scrapy.exceptions import DontCloseSpider

    settings = settings_for(mode, proxy, origins, concurrency, store)
    if worker >= 0:
        # SCHEDULER_PERSIST: the first worker to stop would otherwise empty the shared dupefilter while the other
        # still parses its last pages, whose links it would then download again (the database is fresh anyway)
        settings.update({"SCHEDULER": "scrapy_redis.scheduler.Scheduler", "SCHEDULER_PERSIST": True,
                         "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter", "REDIS_URL": redis_url})
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(LinksSpider)
    started: list[float] = []
    counts = {"robots": 0, "gc_full": 0}
    in_gc = [0.0, 0.0]  # seconds in the collector; when the running collection began

    def timed_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            in_gc[1] = time.perf_counter()
        else:
            in_gc[0] += time.perf_counter() - in_gc[1]
            counts["gc_full"] += info["generation"] == 2

    profiler = cProfile.Profile() if profile else None

    def opened() -> None:
        started.extend((time.perf_counter(), time.process_time()))
        gc.callbacks.append(timed_gc)
        if profiler is not None:
            profiler.enable()
        if os.environ.get(CALLGRIND_ENV):  # counted from here (the command is read by the process itself)
            subprocess.Popen(["callgrind_control", "--instr=on", str(os.getpid())], stdout=subprocess.DEVNULL)

    def received(response: Response, request: Request, **kwargs: Any) -> None:
        counts["robots"] += request.url.endswith("/robots.txt")

    def idle() -> None:
        raise DontCloseSpider  # a fleet worker waits for the other's links; the benchmark stops it

    crawler.signals.connect(opened, signals.spider_opened, weak=False)
    crawler.signals.connect(received, signals.response_received, weak=False)
    if worker >= 0:
        crawler.signals.connect(idle, signals.spider_idle, weak=False)
    process.crawl(crawler, origins=origins, part=max(worker, 0), parts=2 if worker >= 0 else 1)
    process.start()
    seconds, cpu = time.perf_counter() - started[0], time.process_time() - started[1]
    gc.callbacks.remove(timed_gc)
    if profiler is not None:
        profiler.disable()
        write_profile(profiler, Path(profile), f"{mode}: {origins:,} origins, following links")
    stats = crawler.stats.get_stats() if crawler.stats else {}
    rep = sys.modules.get("scrapy_rep")
    print(json.dumps({
        "mode": mode, "seconds": seconds, "cpu_s": cpu, "gc_s": in_gc[0], **counts,
        "responses": stats.get("response_received_count", 0),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "stats": {key: value for key, value in stats.items()
                  if key in KEPT or key.startswith(("rep/requests/", "rep/robots/"))},
        "scrapy_rep": getattr(rep, "__file__", None),  # which tree's scrapy_rep the crawl ran
    }, default=str), flush=True)


def forbidden_stat(stats: dict[str, Any]) -> int:
    return int(stats.get("rep/requests/forbidden", 0) or stats.get("robotstxt/forbidden", 0))


def served(proxy: str) -> dict[str, int]:
    """The proxy's running counts per kind of page (never cleared)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"{proxy}/_served", timeout=30) as answer:
        counts: dict[str, int] = json.loads(answer.read())
    return counts


def expected_of(mode: str, plan: dict[str, int]) -> tuple[int, int]:
    """The allowed pages and the forbidden pages that ``mode`` should download, by the site's plan."""
    if mode == "off":
        return plan["rep"], plan["forbidden_links"]
    if mode == "builtin":
        return plan["builtin"] - plan.get("builtin_forbidden", 0), plan.get("builtin_forbidden", 0)
    return plan["rep"], 0


def child(me: list[str], *argv: str, callgrind: bool = False, **kwargs: Any) -> subprocess.Popen[str]:
    """A child process of this module, importing the benchmarks, tests and scrapy_rep of this tree (``callgrind``:
    under valgrind, counting from spider_opened)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    if callgrind:
        env[CALLGRIND_ENV] = "1"
    return subprocess.Popen([*me, *argv], cwd=ROOT, env=env, text=True, **kwargs)


def one_crawl(me: list[str], mode: str, n: int, proxy: str, args: argparse.Namespace, store: str,
              plan: dict[str, int]) -> dict[str, Any]:
    wall = time.perf_counter()
    profile = str(Path(args.profile) / f"{mode}-{n + 1}.txt") if args.profile else ""
    valgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                f"--callgrind-out-file={Path(args.callgrind) / f'{mode}-{n + 1}.out'}"] if args.callgrind else []
    proc = child([*valgrind, *me], "--crawl", mode, "--proxy", proxy, "--origins", str(args.origins),
                 "--concurrency", str(args.concurrency), "--store", store, "--profile-file", profile,
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, callgrind=bool(args.callgrind))
    out, err = proc.communicate()
    if proc.returncode:
        sys.exit(f"crawl {mode} failed:\n{err[-3000:]}")
    r: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    counted = re.search(r"Collected : (\d+)", err) if args.callgrind else None
    r["instructions"] = int(counted.group(1)) if counted else None
    site = proxy_hits(proxy)
    pages = r["responses"] - r["robots"]
    allowed = pages - site["forbidden"]
    stats = r["stats"]
    r.update({
        "round": n, "wall_s": time.perf_counter() - wall, "proxy": site, "pages": pages, "allowed": allowed,
        "forbidden_downloaded": site["forbidden"], "expected": expected_of(mode, plan),
        "pages_per_s": allowed / r["seconds"], "cpu_ms_per_page": r["cpu_s"] * 1000 / max(allowed, 1),
        "gc_ms_per_page": r["gc_s"] * 1000 / max(allowed, 1),
        "enqueued": stats.get("scheduler/enqueued", 0), "filtered": stats.get("dupefilter/filtered", 0),
        "forbidden": forbidden_stat(stats), "at_discovery": stats.get("rep/requests/forbidden/at_discovery"),
        "enqueued_per_page": stats.get("scheduler/enqueued", 0) / max(allowed, 1),
        "instructions_per_page": r["instructions"] / max(allowed, 1) if r["instructions"] else None,
    })
    print(f"  {mode} (round {n + 1}): {r['wall_s']:.0f} s, {allowed} allowed pages, {r['pages_per_s']:.0f}/s",
          flush=True)
    return r


def fleet(me: list[str], mode: str, proxy: str, args: argparse.Namespace, directory: Path,
          plan: dict[str, int]) -> dict[str, Any]:
    """Two workers on one fresh redis-server; stopped with SIGINT once every expected page was served."""
    import redis

    wanted = expected_of(mode, plan)
    (directory / f"fleet-{mode}").mkdir()
    with ExitStack() as running:
        url = f"redis://127.0.0.1:{start_redis(directory / f'fleet-{mode}', running)}/0"
        client = redis.Redis.from_url(url)
        running.callback(client.close)
        proxy_hits(proxy)  # clears the proxy's counts
        base = served(proxy)
        before, own, peak = int(client.info("stats")["total_commands_processed"]), 1, 0
        logs = [(directory / f"fleet-{mode}" / f"worker-{k}.log").open("w+") for k in (0, 1)]
        workers = [child(me, "--crawl", mode, "--worker", str(k), "--proxy", proxy, "--origins", str(args.origins),
                         "--concurrency", str(args.concurrency), "--store", url if mode == "rep" else "",
                         "--redis-url", url, stdout=subprocess.PIPE, stderr=logs[k]) for k in (0, 1)]
        start = last_change = time.perf_counter()
        pages, samples, empty, complete = 0, 0, 0, 0.0
        while True:  # until every expected page was served and the queue stayed empty for 0.5 s
            time.sleep(0.1)  # the queue's sampling period
            size = int(client.zcard(QUEUE_KEY))
            own, samples, peak, empty = own + 1, samples + 1, max(peak, size), empty + 1 if size == 0 else 0
            now = time.perf_counter()
            if samples % 5 == 0 and not complete:
                counts = served(proxy)
                seen = {k: counts.get(k, 0) - base.get(k, 0) for k in ("home", "allowed", "forbidden")}
                if sum(seen.values()) != pages:
                    pages, last_change = sum(seen.values()), now
                if seen["home"] + seen["allowed"] >= wanted[0] and seen["forbidden"] >= wanted[1]:
                    complete = now
            if ((complete and empty >= 5) or now - last_change > STALL or now - start > args.timeout
                    or any(w.poll() is not None for w in workers)):
                break
        seconds = (complete or time.perf_counter()) - start
        for w in workers:
            if w.poll() is None:
                w.send_signal(signal.SIGINT)
        outs: list[dict[str, Any]] = []
        errors: list[str] = []
        for k, w in enumerate(workers):
            out, _ = w.communicate(timeout=300)
            lines = out.strip().splitlines()
            if w.returncode or not lines:
                logs[k].seek(0)
                errors.append(f"worker {k} exit {w.returncode}: {logs[k].read()[-2000:]}")
            outs.append(json.loads(lines[-1]) if lines else {"responses": 0, "robots": 0, "stats": {}})
            logs[k].close()
        commands = int(client.info("stats")["total_commands_processed"]) - before - own
    site = proxy_hits(proxy)
    allowed = sum(o["responses"] - o["robots"] for o in outs) - site["forbidden"]
    return {
        "mode": mode, "allowed": allowed, "expected": wanted, "seconds": seconds,
        "forbidden_downloaded": site["forbidden"], "proxy": site, "redis_commands": commands,
        "commands_per_page": commands / max(allowed, 1), "peak_queue": peak,
        "pushed": sum(o["stats"].get("scheduler/enqueued/redis", 0) for o in outs),
        "forbidden_per_worker": [forbidden_stat(o["stats"]) for o in outs],
        "at_discovery_per_worker": [o["stats"].get("rep/requests/forbidden/at_discovery") for o in outs],
        "robots_per_origin": site["robots"] / args.origins, "robots_max_per_origin": site["robots_max_per_origin"],
        "workers": outs, "errors": errors,
    }


def ratios(results: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per mode: median over rounds of its pages/s and CPU per page over builtin's and off's of the same round."""
    rounds: dict[int, dict[str, dict[str, Any]]] = {}
    for r in results:
        rounds.setdefault(r["round"], {})[r["mode"]] = r
    out: dict[str, dict[str, float]] = {}
    for mode in dict.fromkeys(r["mode"] for r in results):
        figures: dict[str, float] = {
            "enqueued_per_page": statistics.median(r["enqueued_per_page"] for r in results if r["mode"] == mode)}
        for anchor in ("builtin", "off"):
            pairs = [(m[mode], m[anchor]) for m in rounds.values() if mode in m and anchor in m]
            if pairs:
                figures[f"rate_vs_{anchor}"] = statistics.median(a["pages_per_s"] / b["pages_per_s"] for a, b in pairs)
                figures[f"cpu_vs_{anchor}"] = statistics.median(
                    a["cpu_ms_per_page"] / b["cpu_ms_per_page"] for a, b in pairs)
        out[mode] = figures
    return out


def report(hello: dict[str, Any], results: list[dict[str, Any]], fleets: list[dict[str, Any]],
           args: argparse.Namespace) -> dict[str, dict[str, float]]:
    plan = hello["expected"]
    print(f"{args.origins:,} origins, robots.txt from the {hello['source']}: {hello['files']} allow / to {TOKEN} "
          f"({hello['dropped']} dropped); {plan['links']:,} links, {plan['forbidden_links']:,} forbidden "
          f"({plan['forbidden_links'] / max(plan['links'], 1):.1%}); CONCURRENT_REQUESTS={args.concurrency}; "
          f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    print("scrapy_rep imported from: " + ", ".join(sorted({str(r["scrapy_rep"]) for r in results + [
        w for f in fleets for w in f["workers"]] if r.get("scrapy_rep")})))
    print(f"Protego (builtin) against the matcher: forbids {plan.get('protego_forbids_home', 0)} origins' /, "
          f"forbids {plan.get('protego_forbids_allowed', 0)} allowed links, allows "
          f"{plan.get('protego_allows_forbidden', 0)} forbidden links")
    print(f"{'mode':<11} {'rnd':>3} {'allowed':>7} {'fbd dl':>6} {'expected':>8} {'pages/s':>7} {'CPU ms/page':>11} "
          f"{'RSS MB':>6} {'enqueued':>8} {'filtered':>8} {'gc2':>4} {'gc ms/page':>10} {'forbidden':>9} "
          f"{'at disc.':>8} {'robots':>6} {'max':>3} {'seconds':>7}")
    for r in results:
        print(f"{r['mode']:<11} {r['round'] + 1:>3} {r['allowed']:>7} {r['forbidden_downloaded']:>6} "
              f"{r['expected'][0]:>8} {r['pages_per_s']:>7.0f} {r['cpu_ms_per_page']:>11.3f} "
              f"{r['peak_rss_mb']:>6.1f} {r['enqueued']:>8} {r['filtered']:>8} {r['gc_full']:>4} "
              f"{r['gc_ms_per_page']:>10.3f} {r['forbidden']:>9} {r['at_discovery']!s:>8} "
              f"{r['proxy']['robots']:>6} {r['proxy']['robots_max_per_origin']:>3} {r['seconds']:>7.1f}")
    for r in results:
        if r.get("instructions_per_page"):
            print(f"  {r['mode']} round {r['round'] + 1}: {r['instructions_per_page'] / 1e6:.3f} M instructions per "
                  "allowed page (callgrind, from spider_opened)")
    figures = ratios(results)
    print("ratios (median over rounds of each round's): allowed pages/s and CPU per allowed page against builtin's "
          "and off's; scheduler/enqueued per allowed page")
    for mode, f in figures.items():
        parts = [f"vs {a}: pages/s {f[f'rate_vs_{a}']:.2f}x, CPU/page {f[f'cpu_vs_{a}']:.2f}x"
                 for a in ("builtin", "off") if a != mode and f"rate_vs_{a}" in f]
        print(f"  {mode:<11} " + "; ".join([*parts, f"enqueued/page {f['enqueued_per_page']:.2f}"]))
    for r in results:
        p = r["proxy"]
        if (r["allowed"], r["forbidden_downloaded"]) != tuple(r["expected"]) or p["unknown"] or p["repeated"]:
            print(f"! {r['mode']} round {r['round'] + 1}: {r['allowed']} allowed and {r['forbidden_downloaded']} "
                  f"forbidden pages, expected {r['expected'][0]} and {r['expected'][1]}; {p['unknown']} unknown URLs; "
                  f"{p['repeated']} downloads of a page already downloaded {p['repeated_examples']}")
    if fleets:
        print("fleet: 2 workers, one fresh redis-server each fleet (scrapy-redis queue and dupefilter)")
        print(f"{'mode':<8} {'allowed':>7} {'expected':>8} {'fbd dl':>6} {'rep.':>4} {'seconds':>7} {'cmds':>8} "
              f"{'cmds/page':>9} {'peak queue':>10} {'pushed':>7} {'robots/origin':>13} {'max':>3}  "
              "forbidden per worker (at disc.)")
        for fl in fleets:
            print(f"{fl['mode']:<8} {fl['allowed']:>7} {fl['expected'][0]:>8} {fl['forbidden_downloaded']:>6} "
                  f"{fl['proxy']['repeated']:>4} {fl['seconds']:>7.1f} {fl['redis_commands']:>8} "
                  f"{fl['commands_per_page']:>9.2f} {fl['peak_queue']:>10} {fl['pushed']:>7} "
                  f"{fl['robots_per_origin']:>13.2f} {fl['robots_max_per_origin']:>3}  "
                  f"{fl['forbidden_per_worker']} ({fl['at_discovery_per_worker']})")
            for error in fl["errors"]:
                print(f"! fleet {fl['mode']}: {error}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--origins", type=int, default=2000)
    parser.add_argument("--links", type=int, default=10, help="links on every page of an origin")
    parser.add_argument("--forbidden-share", type=float, default=0.3, help="of all links, forbidden (target)")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated, run in this order")
    parser.add_argument("--rounds", type=int, default=1, help="every mode this many times, reversed every other round")
    parser.add_argument("--fleet", action=argparse.BooleanOptionalAction, default=True,
                        help="the two-worker scrapy-redis fleets (builtin, rep)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds, per fleet")
    parser.add_argument("--json", metavar="PATH", help="also write every figure as JSON to PATH")
    parser.add_argument("--profile", metavar="DIR", help="each crawl under cProfile: DIR/<mode>-<round>.txt")
    parser.add_argument("--profile-file", default="", help=argparse.SUPPRESS)
    parser.add_argument("--callgrind", metavar="DIR", help="each crawl under valgrind's callgrind (~40x slower: small "
                        "sizes): instructions per allowed page from spider_opened, DIR/<mode>-<round>.out")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--crawl", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--worker", type=int, default=-1, help=argparse.SUPPRESS)
    parser.add_argument("--proxy", help=argparse.SUPPRESS)
    parser.add_argument("--store", default="", help=argparse.SUPPRESS)
    parser.add_argument("--redis-url", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        from benchmarks._links_site import serve

        return serve(TOKEN, args.links, args.forbidden_share, args.origins)
    if args.crawl:
        return crawl(args.crawl, args.proxy, args.origins, args.concurrency, args.store, args.worker, args.redis_url,
                     args.profile_file)

    me = [sys.executable, "-m", "benchmarks.bench_links"]
    for directory_arg in (args.profile, args.callgrind):
        if directory_arg:
            Path(directory_arg).mkdir(parents=True, exist_ok=True)
    modes = [mode for mode in args.modes.split(",") if mode]  # none: the fleets alone
    began = time.perf_counter()
    server = child(me, "--serve", "--origins", str(args.origins), "--links", str(args.links),
                   "--forbidden-share", str(args.forbidden_share), stdout=subprocess.PIPE)
    results: list[dict[str, Any]] = []
    fleets: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as name, ExitStack() as running:
        directory = Path(name)
        running.callback(server.wait)
        running.callback(server.terminate)
        redis_port = start_redis(directory, running) if "rep-redis" in modes else 0
        assert server.stdout is not None
        hello = json.loads(server.stdout.readline())
        proxy, plan = hello["proxy"], hello["expected"]
        proxy_hits(proxy)
        print(f"site ready ({hello['files']} robots.txt files, {plan['links']:,} links): "
              f"{time.perf_counter() - began:.0f} s", flush=True)
        for n in range(args.rounds):
            for mode in modes if n % 2 == 0 else modes[::-1]:
                store = {"rep-sqlite": f"sqlite:///{directory / f'rep-sqlite-{n}.db'}",
                         "rep-redis": f"redis://127.0.0.1:{redis_port}/0?prefix=rep-redis-{n}:"}.get(mode, "")
                results.append(one_crawl(me, mode, n, proxy, args, store, plan))
        for mode in FLEET_MODES if args.fleet else ():
            fleets.append(fleet(me, mode, proxy, args, directory, plan))
            print(f"  fleet {mode}: {fleets[-1]['seconds']:.0f} s, {fleets[-1]['allowed']} allowed pages", flush=True)
    figures = report(hello, results, fleets, args)
    total = time.perf_counter() - began
    print(f"whole run: {total:.0f} s")
    if args.json:
        site = {key: value for key, value in hello.items() if key != "proxy"}
        Path(args.json).write_text(json.dumps({
            "args": {key: value for key, value in vars(args).items() if key in (
                "origins", "links", "forbidden_share", "concurrency", "modes", "rounds", "fleet")},
            "cpus": os.cpu_count(), "python": sys.version.split()[0], "seconds": total, "site": site,
            "crawls": results, "ratios": figures, "fleets": fleets}, indent=1, default=str))


if __name__ == "__main__":
    main()
