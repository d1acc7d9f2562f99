"""A fleet of 1, 2 and 3 workers (the example project's scrapy-redis ``fleet`` spider) on one local multi-origin site,
each fleet twice: through scrapy-rep with the shared Redis store (``rep``) and with ``ROBOTSTXT_OBEY = False``
(``off``, the anchor measured in the same run).

Prints, per fleet: pages/s (first page request to last, at the servers, so process start-up and the idle close are
not in it), robots.txt downloads per origin for the whole fleet, Redis commands per crawled page (``INFO stats``
``total_commands_processed`` before and after: scrapy-redis's queue, dupefilter and start-URL reads, plus scrapy-rep's
store; the difference between the two modes is scrapy-rep's), and each worker's share of the pages. Asserts
nothing. The servers run in their own process; each worker is a ``scrapy crawl fleet`` process, stopped with one
SIGINT once the servers have seen every page (``SCHEDULER_PERSIST``: nothing is lost by that).

Run from the repository root: ``.venv/bin/python -m benchmarks.bench_fleet`` (``--quick`` for a run under a minute,
``--help`` for sizes). Needs ``redis-server`` on PATH and scrapy-redis (``pip install -e ".[fleet]"``).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import redis

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ROOT / "example_project"
ROBOTS = b"User-agent: *\nDisallow: /private\n"
MODES = ("rep", "off")


def serve(origins: int) -> None:
    """Child process: ``origins`` origins serving robots.txt and small pages, and a control origin: ``/stats``
    (robots.txt downloads per origin, pages per worker, first and last page time), ``/reset``. Prints the ports."""
    from twisted.internet import reactor
    from twisted.web.http import Request

    from tests.servers import Reply, Site

    sites = [Site(robots_default=Reply(body=ROBOTS, headers={"Content-Type": "text/plain"})).start()
             for _ in range(origins)]

    def stats(request: Request) -> Reply:
        pages = [hit for site in sites for hit in site.hits if hit.path != "/robots.txt"]
        body = {
            "robots": [site.hits_for("/robots.txt") for site in sites],
            "pages": len(pages),
            "distinct": len({(hit.host, hit.path) for hit in pages}),
            "workers": Counter(hit.headers.get("user-agent", "?").rsplit("+", 1)[-1].rstrip(")") for hit in pages),
            "first": min((hit.at for hit in pages), default=None),
            "last": max((hit.at for hit in pages), default=None),
        }
        return Reply(body=json.dumps(body).encode(), headers={"Content-Type": "application/json"})

    def reset(request: Request) -> Reply:
        for site in sites:
            site.hits.clear()
        return Reply(body=b"ok")

    control = Site().start()
    control.route("/stats", stats)
    control.route("/reset", reset)
    print(json.dumps({"ports": [site.port_number for site in sites], "control": control.port_number}), flush=True)
    running: Any = reactor
    running.run()


def control(port: int, path: str) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as answer:
        return json.loads(answer.read()) if path == "/stats" else None


def fleet(mode: str, workers: int, ports: list[int], control_port: int, redis_url: str, args: argparse.Namespace,
          ) -> dict[str, Any]:
    """One fleet: fresh Redis database, the URLs pushed, ``workers`` processes; returns its figures."""
    client = redis.Redis.from_url(redis_url)
    client.flushall()
    control(control_port, "/reset")
    urls = [f"http://127.0.0.1:{port}/page/{page}" for page in range(args.pages) for port in ports]
    urls += [f"http://127.0.0.1:{port}/private/{page}" for page in range(args.private) for port in ports]
    client.rpush("fleet:start_urls", *[json.dumps({"url": url}) for url in urls])
    expected = len(ports) * args.pages + (len(ports) * args.private if mode == "off" else 0)
    before = int(client.info("stats")["total_commands_processed"])
    settings = {
        "LOG_LEVEL": "WARNING",
        "ROBOTSTXT_OBEY": mode == "rep",
        "REP_STORE": redis_url if args.store == "url" else "redis",
        "CONCURRENT_REQUESTS": args.concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": args.concurrency,  # every origin is 127.0.0.1: one Scrapy slot
        "MAX_IDLE_TIME_BEFORE_CLOSE": 600,  # stopped by SIGINT once every page was served
        "REP_STORE_POLL_INTERVAL": 0.1,
        "TELNETCONSOLE_ENABLED": False,
    }
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "example_project.fleet_settings", "REDIS_URL": redis_url,
           "PYTHONPATH": os.pathsep.join([str(PROJECT), str(ROOT)])}
    procs = []
    for n in range(workers):
        argv = [sys.executable, "-m", "scrapy", "crawl", "fleet", "-s", f"USER_AGENT=BenchBot/1.0 (+worker-{n})"]
        for key, value in settings.items():
            argv += ["-s", f"{key}={value}"]
        procs.append(subprocess.Popen(argv, cwd=PROJECT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                      text=True))
    deadline = time.monotonic() + args.timeout
    figures = control(control_port, "/stats")
    while figures["pages"] < expected and time.monotonic() < deadline:
        if all(proc.poll() is not None for proc in procs):
            break
        time.sleep(0.2)  # a benchmark's progress poll, not a test's synchronisation
        figures = control(control_port, "/stats")
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
    errors = []
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        if proc.returncode != 0:
            errors.append(err[-2000:])
    figures = control(control_port, "/stats")
    after = int(client.info("stats")["total_commands_processed"])
    client.close()
    seconds = (figures["last"] - figures["first"]) if figures["pages"] > 1 else float("nan")
    return {
        "mode": mode, "workers": workers, "pages": figures["pages"], "distinct": figures["distinct"],
        "expected": expected, "seconds": seconds, "pages_per_s": figures["pages"] / seconds if seconds else 0.0,
        "robots_per_origin": sum(figures["robots"]) / len(ports), "max_robots": max(figures["robots"]),
        "commands_per_page": (after - before - 1) / max(figures["pages"], 1),  # minus our own INFO
        "shares": {f"w{n}": figures["workers"].get(f"worker-{n}", 0) for n in range(workers)},
        "errors": errors,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--origins", type=int, default=40)
    parser.add_argument("--pages", type=int, default=50, help="allowed pages per origin")
    parser.add_argument("--private", type=int, default=2, help="disallowed pages per origin (crawled when off)")
    parser.add_argument("--workers", type=int, default=3, help="fleets of 1..N workers")
    parser.add_argument("--concurrency", type=int, default=16, help="CONCURRENT_REQUESTS of each worker")
    parser.add_argument("--timeout", type=float, default=300, help="per fleet")
    parser.add_argument("--store", choices=("redis", "url"), default="redis",
                        help="REP_STORE: the bare 'redis' (scrapy-redis's REDIS_URL) or the redis:// URL itself")
    parser.add_argument("--quick", action="store_true", help="10 origins x 20 pages: under a minute")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve(args.serve)
    if args.quick:
        args.origins, args.pages = 10, 20

    from tests.stores.storetools import RedisServer

    with tempfile.TemporaryDirectory() as directory:
        redis_server = RedisServer(Path(directory))
        redis_server.start()
        server = subprocess.Popen([sys.executable, "-m", "benchmarks.bench_fleet", "--serve", str(args.origins)],
                                  stdout=subprocess.PIPE, text=True, cwd=ROOT)
        try:
            assert server.stdout is not None
            started = json.loads(server.stdout.readline())
            runs = [fleet(mode, workers, started["ports"], started["control"], redis_server.url, args)
                    for workers in range(1, args.workers + 1) for mode in MODES]
        finally:
            server.terminate()
            server.wait()
            redis_server.kill()
    report(runs, args)


def report(runs: list[dict[str, Any]], args: argparse.Namespace) -> None:
    print(f"{args.origins} origins x ({args.pages} allowed + {args.private} disallowed) pages, "
          f"CONCURRENT_REQUESTS={args.concurrency} per worker, REP_STORE={args.store!r}; {os.cpu_count()} CPUs, "
          f"Python {sys.version.split()[0]}")
    print(f"{'workers':>7} {'mode':<4} {'pages':>6} {'distinct':>8} {'seconds':>8} {'pages/s':>8} {'vs off':>7} "
          f"{'robots/origin':>13} {'max':>4} {'redis cmds/page':>15} {'vs off':>7}  shares")
    anchor = {(run["workers"], run["mode"]): run for run in runs}
    for run in runs:
        off = anchor[(run["workers"], "off")]
        rate = f"{(run['pages_per_s'] / off['pages_per_s'] - 1) * 100:+6.1f}%" if off["pages_per_s"] else "n/a"
        cmds = f"{run['commands_per_page'] - off['commands_per_page']:+7.2f}"
        shares = " ".join(f"{name}={count}" for name, count in run["shares"].items())
        print(f"{run['workers']:>7} {run['mode']:<4} {run['pages']:>6} {run['distinct']:>8} {run['seconds']:>8.2f} "
              f"{run['pages_per_s']:>8.0f} {rate:>7} {run['robots_per_origin']:>13.2f} {run['max_robots']:>4} "
              f"{run['commands_per_page']:>15.2f} {cmds:>7}  {shares}")
    one = {mode: anchor.get((1, mode)) for mode in MODES}
    print("scaling (pages/s against the 1-worker fleet of the same mode):")
    for mode in MODES:
        base = one[mode]
        if base and base["pages_per_s"]:
            print(f"  {mode:<4} " + "  ".join(
                f"{n} workers {anchor[(n, mode)]['pages_per_s'] / base['pages_per_s']:.2f}x"
                for n in range(2, args.workers + 1)))
    for run in runs:
        if run["errors"] or run["pages"] != run["expected"]:
            print(f"! {run['workers']} workers {run['mode']}: {run['pages']} of {run['expected']} pages; "
                  f"{len(run['errors'])} worker(s) failed: {run['errors'][:1]}")


if __name__ == "__main__":
    main()
