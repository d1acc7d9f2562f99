"""Crawl 100 local origins x 50 pages four ways and print pages/s and peak memory for each.

Modes: ``rep`` (scrapy_rep.Addon), ``rep-notags`` (the add-on with REP_ROBOTS_TAGS = False: no page-level
directives read), ``builtin`` (Scrapy's RobotsTxtMiddleware with its default Protego parser) and ``off``
(ROBOTSTXT_OBEY = False). Each page is a realistic ~30 KiB HTML page (a WordPress-like ``<head>`` with a
``<meta name="robots" content="index, follow, max-image-preview:large, ...">`` tag, an ``X-Robots-Tag: noarchive``
header, five links to pages of its origin); the spider yields an item and follows the links, which the dupefilter
drops (they are start URLs), so every mode does the same work but for the directives.

The servers run in their own process (so they do not share the crawler's CPU), and each crawl runs in a fresh
process so its peak RSS (``ru_maxrss``) is its own. Every page is allowed by the origins' robots.txt, so every mode
downloads the same 5000 pages; the obeying modes also download one robots.txt per origin (counted apart). Asserts
nothing: it prints figures. Wall-clock pages/s is sensitive to whatever else the machine runs; CPU time per page (the
crawler process's user+system time from spider_opened to the end) is the steadier
measure of what each mode costs.

Run from the repository root: ``.venv/bin/python -m benchmarks.bench_crawl`` (``--help`` for sizes and rounds).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

ROBOTS = b"User-agent: *\nDisallow: /private\nDisallow: /*.php$\nAllow: /private/ok\nSitemap: http://x/s.xml\n"
MODES = ("rep", "rep-notags", "builtin", "off")
_HEAD = (
    '<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">'
    '<title>A page</title><meta name="description" content="{filler}">'
    '<meta name="robots" content="index, follow, max-image-preview:large, max-snippet:-1, max-video-preview:-1">'
    '<link rel="canonical" href="/page/0"><link rel="stylesheet" href="/style.css">'
    '<script type="application/ld+json">{{"@context": "https://schema.org"}}</script></head>'
)


def page_body(pages: int) -> bytes:
    """A ~30 KiB page linking to five pages of its origin."""
    links = "".join(f'<a href="/page/{n % pages}">page {n}</a> ' for n in range(1, 6))
    paragraph = "<p>" + "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 8 + "</p>\n"
    body = f"<!DOCTYPE html><html>{_HEAD.format(filler='x' * 150)}<body>{links}{paragraph * 60}</body></html>"
    return body.encode()


def serve(origins: int, pages: int) -> None:
    """Child process: ``origins`` listening ports serving robots.txt and pages; prints the ports as JSON."""
    from twisted.internet import reactor

    from tests.servers import Reply, Site

    page = Reply(body=page_body(pages), headers={"Content-Type": "text/html; charset=utf-8",
                                                 "X-Robots-Tag": "noarchive"})
    sites = [Site(default=page, robots_default=Reply(body=ROBOTS, headers={"Content-Type": "text/plain"})).start()
             for _ in range(origins)]
    print(json.dumps([site.port_number for site in sites]), flush=True)
    reactor.run()  # type: ignore[attr-defined]


def crawl(mode: str, ports: list[int], pages: int, concurrency: int) -> None:
    """Child process: one crawl; prints a JSON line of figures."""
    from scrapy import Request, Spider, signals
    from scrapy.crawler import CrawlerProcess

    urls = [f"http://127.0.0.1:{port}/page/{page}" for page in range(pages) for port in ports]

    class BenchSpider(Spider):
        name = "bench"

        async def start(self) -> Any:
            for url in urls:
                yield Request(url)  # seen by the dupefilter: the pages' links to them are dropped there

        def parse(self, response: Any) -> Any:
            yield {"url": response.url}
            yield from response.follow_all(response.css("a::attr(href)").getall())

    settings: dict[str, Any] = {
        "LOG_LEVEL": "WARNING",
        "TELNETCONSOLE_ENABLED": False,
        "CONCURRENT_REQUESTS": concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,
        "ROBOTSTXT_OBEY": mode != "off",
        "ADDONS": {"scrapy_rep.Addon": 0} if mode.startswith("rep") else {},
        "REP_ROBOTS_TAGS": mode != "rep-notags",
        "USER_AGENT": "BenchBot/1.0",
    }
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(BenchSpider)
    started: list[float] = []
    cpu_started: list[float] = []

    def opened() -> None:
        started.append(time.perf_counter())
        cpu_started.append(time.process_time())

    crawler.signals.connect(opened, signals.spider_opened, weak=False)
    process.crawl(crawler)
    process.start()
    elapsed = time.perf_counter() - started[0]
    cpu = time.process_time() - cpu_started[0]
    stats = crawler.stats.get_stats() if crawler.stats else {}
    robots = stats.get("rep/robots/downloads", 0) or stats.get("robotstxt/request_count", 0)
    responses = stats.get("response_received_count", 0) - robots
    print(json.dumps({
        "mode": mode, "pages": responses, "robots": robots, "seconds": elapsed, "pages_per_s": responses / elapsed,
        "cpu_ms_per_page": cpu * 1000 / responses,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "forbidden": stats.get("rep/requests/forbidden", 0) + stats.get("robotstxt/forbidden", 0),
    }), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--origins", type=int, default=100)
    parser.add_argument("--pages", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5, help="crawls per mode (interleaved); the median is shown")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--crawl", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--ports", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve(args.serve, args.pages)
    if args.crawl:
        return crawl(args.crawl, json.loads(args.ports), args.pages, args.concurrency)

    me = [sys.executable, "-m", "benchmarks.bench_crawl"]
    server = subprocess.Popen([*me, "--serve", str(args.origins), "--pages", str(args.pages)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        ports = server.stdout.readline().strip()
        runs: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
        # A warm-up crawl, not counted: the first crawl after the servers start runs ~10% slower, whatever its mode.
        subprocess.run([*me, "--crawl", "off", "--ports", ports, "--pages", str(args.pages), "--concurrency",
                        str(args.concurrency)], check=True, capture_output=True)
        for round_ in range(args.rounds):
            turn = round_ % len(MODES)
            for mode in MODES[turn:] + MODES[:turn]:  # rotate: no mode always runs first
                out = subprocess.run([*me, "--crawl", mode, "--ports", ports, "--pages", str(args.pages),
                                      "--concurrency", str(args.concurrency)],
                                     check=True, capture_output=True, text=True).stdout
                runs[mode].append(json.loads(out.strip().splitlines()[-1]))
    finally:
        server.terminate()
        server.wait()
    report(runs, args)


def report(runs: dict[str, list[dict[str, Any]]], args: argparse.Namespace) -> None:
    print(f"{args.origins} origins x {args.pages} pages, CONCURRENT_REQUESTS={args.concurrency}, "
          f"{args.rounds} round(s) per mode (median)")
    print(f"{'mode':<10} {'pages':>6} {'robots':>6} {'seconds':>8} {'pages/s':>8} {'vs off':>7} "
          f"{'CPU ms/page':>11} {'vs off':>7} {'peak RSS MB':>11}")
    off = statistics.median(run["pages_per_s"] for run in runs["off"])
    off_cpu = statistics.median(run["cpu_ms_per_page"] for run in runs["off"])
    for mode in MODES:
        rate = statistics.median(run["pages_per_s"] for run in runs[mode])
        cpu = statistics.median(run["cpu_ms_per_page"] for run in runs[mode])
        last = runs[mode][-1]
        seconds = statistics.median(run["seconds"] for run in runs[mode])
        rss = max(run["peak_rss_mb"] for run in runs[mode])
        print(f"{mode:<10} {last['pages']:>6} {last['robots']:>6} {seconds:>8.2f} {rate:>8.0f} "
              f"{(rate / off - 1) * 100:>+6.1f}% {cpu:>11.3f} {(cpu / off_cpu - 1) * 100:>+6.1f}% {rss:>11.1f}")
    paired = [tags["cpu_ms_per_page"] / notags["cpu_ms_per_page"]
              for tags, notags in zip(runs["rep"], runs["rep-notags"], strict=True)]
    print(f"page-level directives: rep / rep-notags CPU per page, per round {' '.join(f'{r:.3f}' for r in paired)}; "
          f"median {(statistics.median(paired) - 1) * 100:+.1f}%")


if __name__ == "__main__":
    main()
