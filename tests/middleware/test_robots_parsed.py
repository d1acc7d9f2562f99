"""``robots_parsed`` sent as Scrapy 2.18+'s built-in sends it (docs "Signals"): through the asynchronous signal API
(a coroutine handler runs, and the origin's waiting requests wait for it), with ``request`` the request that
triggered the download: the first waiting request, the one that found the entry stale, and for the retries of a
failing robots.txt the request that started the first fetch. Real crawls against local servers."""

from __future__ import annotations

from typing import Any

import pytest_twisted
from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import reactor
from twisted.internet.task import Clock, deferLater

from scrapy_rep import RobotParser, robots_parsed
from scrapy_rep.config import DAY
from tests.crawl import crawl, when_settled
from tests.servers import Hit, Reply, robots

FIRST = "Sitemap: https://example.com/one.xml\nUser-agent: *\nDisallow: /x\n"
SECOND = "Sitemap: https://example.com/two.xml\nUser-agent: *\nDisallow: /y\n"


class Handlers:
    """A plain and a coroutine handler of ``robots_parsed``, each recording (its name, the request's URL, the
    parser's sitemaps); the coroutine one gives the reactor a turn first, and records whether the site had been asked
    for a page by then."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, list[str]]] = []
        self.pages_before_coroutine_ended: list[int] = []
        self.page_hits = 0

    def connect(self, crawler: Crawler) -> None:
        crawler.signals.connect(self.plain, signal=robots_parsed)
        crawler.signals.connect(self.coroutine, signal=robots_parsed)

    def plain(self, robotparser: Any, request: Request) -> None:
        assert isinstance(robotparser, RobotParser)
        self.calls.append(("plain", request.url, robotparser.sitemaps))

    async def coroutine(self, robotparser: Any, request: Request) -> None:
        await maybe_deferred_to_future(deferLater(reactor, 0, lambda: None))  # type: ignore[arg-type]  # it awaits
        self.calls.append(("coroutine", request.url, robotparser.sitemaps))
        self.pages_before_coroutine_ended.append(self.page_hits)

    def count_pages(self, hit: Hit) -> None:
        if hit.path != "/robots.txt":
            self.page_hits += 1


@pytest_twisted.ensureDeferred
async def test_both_handlers_once_per_file_with_the_triggering_request(sites: Any) -> None:
    """The first waiting request triggers the download; the requests waiting with it are sent only once the
    coroutine handler has finished (none of the site's pages was requested before)."""
    handlers = Handlers()
    site = sites()
    site.route("/robots.txt", robots(FIRST))
    site.on_hit.append(handlers.count_pages)
    result = await crawl([site.url("/a"), site.url("/b"), site.url("/x")], on_crawler=handlers.connect)
    sitemaps = ["https://example.com/one.xml"]
    assert sorted(handlers.calls) == [("coroutine", site.url("/a"), sitemaps), ("plain", site.url("/a"), sitemaps)]
    assert handlers.pages_before_coroutine_ended == [0]
    assert sorted(result.downloaded) == [site.url("/a"), site.url("/b")]
    assert site.hits_for("/robots.txt") == 1


@pytest_twisted.ensureDeferred
async def test_a_refresh_names_the_request_that_found_the_entry_stale(sites: Any) -> None:
    clock = Clock()
    handlers = Handlers()
    site = sites()
    site.route("/robots.txt", robots(FIRST), robots(SECOND))
    crawlers: list[Crawler] = []

    def hook(crawler: Crawler) -> None:
        crawlers.append(crawler)
        handlers.connect(crawler)

    # The clock moves only once the first file's handlers have finished (the crawl looks idle while they run).
    result = await crawl(
        [site.url("/a")], on_crawler=hook, REP_CLOCK=lambda: clock,
        spider_kwargs={"phases": [(when_settled(crawlers, lambda: clock.advance(DAY)),
                                   [site.url("/y")])]},
    )
    assert [(name, url) for name, url, _ in handlers.calls if name == "plain"] == [
        ("plain", site.url("/a")), ("plain", site.url("/y"))]
    assert handlers.calls[-1] == ("coroutine", site.url("/y"), ["https://example.com/two.xml"])
    assert site.hits_for("/robots.txt") == 2 and site.url("/y") not in result.downloaded


@pytest_twisted.ensureDeferred
async def test_a_retried_robots_txt_names_the_request_that_started_the_first_fetch(sites: Any) -> None:
    """503 first (the origin's requests are held, SPEC 2.3), then 200 at the retry: the file parsed at the retry is
    announced with the request that started the first fetch, once."""
    clock = Clock()
    handlers = Handlers()
    site = sites()
    site.route("/robots.txt", Reply(status=503), robots(FIRST))
    crawlers: list[Crawler] = []

    def hook(crawler: Crawler) -> None:
        crawlers.append(crawler)
        handlers.connect(crawler)

    result = await crawl(
        [site.url("/first"), site.url("/second")], on_crawler=hook, REP_CLOCK=lambda: clock,
        REP_UNAVAILABLE_RETRY_DELAY=60, REP_HOLD_TIMEOUT=DAY,
        spider_kwargs={"phases": [(when_settled(crawlers, lambda: clock.advance(61)), [])]},
    )
    assert sorted(handlers.calls) == [("coroutine", site.url("/first"), ["https://example.com/one.xml"]),
                                      ("plain", site.url("/first"), ["https://example.com/one.xml"])]
    assert sorted(result.downloaded) == [site.url("/first"), site.url("/second")]
    assert site.hits_for("/robots.txt") == 2
