"""Where a waiting request goes (scrapy_rep/requests/parking.py; ../shared/DESIGN.md "Where a waiting request lives").

A request parked while its origin's robots.txt is pending goes back through the scheduler once decided, so the crawl's
own limits pace the released requests: measured at the servers (peak simultaneous page requests), beside the same
crawl with ``ROBOTSTXT_OBEY = False``. When the spider closes while requests wait and the scheduler keeps its queue
(JOBDIR), they go back into it and the resumed job crawls them.
"""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.utils.defer import deferred_from_coro
from twisted.internet import defer, reactor
from twisted.internet.task import deferLater
from twisted.web.http import Request as HTTPRequest

from scrapy_rep._scrapy import download, stop_crawler
from tests.crawl import crawl, middleware
from tests.robots.test_spider_robots import when_parked
from tests.servers import PAGE, Reply, Site, robots

RULES = "User-agent: *\nDisallow: /private\n"
LATENCY = 0.05  # the servers answer each page after this long, so that simultaneous requests overlap


class InFlight:
    """Page routes that answer after LATENCY and record the peak number of page requests in flight, in total and
    per Host (the servers' view of the crawl's concurrency)."""

    def __init__(self) -> None:
        self.now: Counter[str] = Counter()
        self.peak = 0
        self.peak_per_host: Counter[str] = Counter()
        self.served: Counter[str] = Counter()

    def reply(self, request: HTTPRequest) -> Reply:
        host = (request.getHeader("host") or "").lower()
        self.now[host] += 1
        self.served[f"{host}{request.uri.decode()}"] += 1
        self.peak = max(self.peak, sum(self.now.values()))
        self.peak_per_host[host] = max(self.peak_per_host[host], self.now[host])
        answered: defer.Deferred[None] = deferLater(reactor, LATENCY, lambda: None)  # type: ignore[arg-type]

        def done(_: Any) -> None:
            self.now[host] -= 1

        answered.addCallback(done)
        return Reply(body=PAGE, headers={"Content-Type": "text/html"}, gate=answered)


def origins(sites: Any, count: int, pages: int, flight: InFlight, gate: defer.Deferred[None] | None) -> list[str]:
    """``count`` origins of ``pages`` pages each (every page through ``flight``); robots.txt waits for ``gate``."""
    urls: list[str] = []
    for _ in range(count):
        site: Site = sites()
        site.route("/robots.txt", robots(RULES, gate=gate))
        for page in range(pages):
            site.route(f"/page/{page}", flight.reply)
            urls.append(site.url(f"/page/{page}"))
    return urls


@pytest_twisted.ensureDeferred
async def test_released_requests_keep_the_global_concurrency_limit(sites: Any) -> None:
    """30 requests parked while three robots.txt files are pending, then released at once: the server never sees
    more than CONCURRENT_REQUESTS page requests at a time (Scrapy's per-domain limit, 8, would allow 24). The first
    8 of each origin (what its download slot sends at once) wait for room in the downloader, in turn; the others go
    back through the scheduler."""
    limit = 4
    gate: defer.Deferred[None] = defer.Deferred()
    flight, plain = InFlight(), InFlight()
    urls = origins(sites, 3, 10, flight, gate)
    result = await crawl(urls, CONCURRENT_REQUESTS=limit, on_crawler=when_parked(len(urls), gate))
    unchecked = await crawl(origins(sites, 3, 10, plain, None), CONCURRENT_REQUESTS=limit, ROBOTSTXT_OBEY=False)

    assert sorted(result.downloaded) == sorted(urls)
    assert set(flight.served.values()) == {1}, "every page exactly once"
    # CONCURRENT_REQUESTS_PER_DOMAIN (8) of each origin go on in turn, the rest through the scheduler.
    assert result.stat("rep/requests/requeued/released") == len(urls) - 3 * 8
    result.assert_accounted()
    assert len(unchecked.downloaded) == len(urls)
    assert 1 <= plain.peak <= limit, plain.peak  # Scrapy's own pace, measured in the same test
    print(f"\npeak simultaneous page requests: {flight.peak} (ROBOTSTXT_OBEY = False: {plain.peak}; limit {limit})")
    assert 1 <= flight.peak <= limit, (flight.peak, plain.peak)


@pytest_twisted.ensureDeferred
async def test_released_requests_keep_the_per_host_limit_with_a_delay(sites: Any) -> None:
    """With a small DOWNLOAD_DELAY Scrapy keeps CONCURRENT_REQUESTS_PER_DOMAIN; 20 released requests of one origin
    do too."""
    settings: dict[str, Any] = {"CONCURRENT_REQUESTS": 16, "CONCURRENT_REQUESTS_PER_DOMAIN": 2,
                                "DOWNLOAD_DELAY": 0.01}
    gate: defer.Deferred[None] = defer.Deferred()
    flight, plain = InFlight(), InFlight()
    urls = origins(sites, 1, 20, flight, gate)
    result = await crawl(urls, on_crawler=when_parked(len(urls), gate), **settings)
    await crawl(origins(sites, 1, 20, plain, None), ROBOTSTXT_OBEY=False, **settings)

    assert sorted(result.downloaded) == sorted(urls)
    assert set(flight.served.values()) == {1}
    assert len(urls) - settings["CONCURRENT_REQUESTS"] <= result.stat("rep/requests/requeued/released") < len(urls)
    assert max(plain.peak_per_host.values()) <= 2, plain.peak_per_host
    print(f"\npeak per host: {max(flight.peak_per_host.values())} (ROBOTSTXT_OBEY = False: "
          f"{max(plain.peak_per_host.values())}; limit 2)")
    assert max(flight.peak_per_host.values()) <= 2, (flight.peak_per_host, plain.peak_per_host)


def stop_when_parked(count: int) -> Any:
    """An ``on_crawler`` hook stopping the crawl (as one Ctrl-C does) once ``count`` requests are parked."""
    stopped: defer.Deferred[None] = defer.Deferred()

    def hook(crawler: Crawler) -> None:
        stopped.addCallback(lambda _: deferred_from_coro(stop_crawler(crawler)))
        when_parked(count, stopped)(crawler)

    return hook


@pytest_twisted.ensureDeferred
async def test_waiting_requests_go_back_into_a_jobdir_queue_and_the_resumed_job_crawls_them(
    sites: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """First run: robots.txt answers 503 (SPEC 2.3: temporary full disallow, requests held); the job is stopped
    while its 6 requests wait: they go back into the JOBDIR queue (not dropped). Second run, same JOBDIR, robots.txt
    now 200: every allowed page is crawled exactly once, the disallowed ones never."""
    caplog.set_level(logging.INFO, logger="scrapy_rep.middleware")
    site: Site = sites()
    site.route("/robots.txt", Reply(status=503))
    allowed = [site.url(f"/page/{i}") for i in range(4)]
    disallowed = [site.url(f"/private/{i}") for i in range(2)]
    settings: dict[str, Any] = {"JOBDIR": str(tmp_path / "job"), "REP_UNAVAILABLE_RETRY_DELAY": 600}

    first = await crawl(allowed + disallowed, on_crawler=stop_when_parked(6), **settings)
    assert first.downloaded == []
    assert first.stat("rep/requests/requeued/closing") == 6
    assert first.stat("rep/requests/dropped_after_hold") == 0
    assert any(r.getMessage().startswith("scrapy-rep: 6 requests waiting for robots.txt went back to the scheduler")
               for r in caplog.records)
    first.assert_accounted()

    site.route("/robots.txt", robots(RULES))
    second = await crawl([], **settings)
    assert sorted(second.downloaded) == sorted(allowed)
    assert sorted(url for url, _ in second.failed) == sorted(disallowed)
    pages = Counter(hit.path for hit in site.hits if hit.path != "/robots.txt")
    assert pages == Counter(f"/page/{i}" for i in range(4)), pages  # each allowed page once, no /private/
    second.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_without_a_persistent_queue_waiting_requests_are_dropped_at_close(sites: Any) -> None:
    """The queue dies with the process: the waiting requests are dropped at close, as before."""
    site: Site = sites()
    site.route("/robots.txt", Reply(status=503))
    urls = [site.url(f"/page/{i}") for i in range(3)]
    result = await crawl(urls, on_crawler=stop_when_parked(3), REP_UNAVAILABLE_RETRY_DELAY=600)
    assert result.stat("rep/requests/dropped_after_hold/closing") == 3
    assert result.stat("rep/requests/requeued/closing") == 0
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_an_engine_download_waiting_at_a_persistent_close_is_dropped(
    sites: Any, tmp_path: Path
) -> None:
    """``engine.download`` (media pipelines use it) bypasses the scheduler: handed back at close, it would come
    straight back through the middleware while the engine closes. It is dropped as before; the page goes back."""
    site: Site = sites()
    site.route("/robots.txt", Reply(status=503))
    outcome: list[str] = []

    def hook(crawler: Crawler) -> None:
        def opened() -> None:
            done = deferred_from_coro(download(crawler.engine, Request(site.url("/media"))))  # type: ignore[arg-type]
            done.addCallbacks(lambda _: outcome.append("downloaded"),
                              lambda failure: outcome.append(type(failure.value).__name__))

        crawler.signals.connect(opened, signal=signals.spider_opened, weak=False)
        stop_when_parked(2)(crawler)

    result = await crawl([site.url("/page")], on_crawler=hook, JOBDIR=str(tmp_path / "job"),
                         REP_UNAVAILABLE_RETRY_DELAY=600)
    assert outcome == ["IgnoreRequest"]
    assert result.stat("rep/requests/requeued/closing") == 1  # the page
    assert result.stat("rep/requests/dropped_after_hold/closing") == 1  # the download
    assert middleware(result.crawler).parking.waiting == 0
    result.assert_accounted()
