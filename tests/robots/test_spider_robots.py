"""Issue 12: a spider that requests robots.txt itself is answered from the plugin's copy (SPEC 1.4, 2.1, 2.3).

One robots.txt download per origin and TTL, whoever asks: the spider's own request (SitemapSpider's
``sitemap_urls = [".../robots.txt"]``, or any request of ``/robots.txt``) waits for the plugin's fetch like a page of
the origin and gets a response built from it.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest_twisted
from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.http import Response, TextResponse
from scrapy.spiders import SitemapSpider
from twisted.internet import defer
from twisted.internet.task import Clock, LoopingCall

from scrapy_rep.robots.spider_robots import FLAG, KeptResponse, kept_response
from tests.crawl import ListSpider, crawl, middleware
from tests.servers import Reply, redirect, robots


class RecordingSpider(ListSpider):
    """A ListSpider that keeps every response it gets (the answered robots.txt included)."""

    name = "recording"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.responses: dict[str, Response] = {}

    def parse(self, response: Response) -> None:
        super().parse(response)
        self.responses[response.url] = response


class RobotsSitemapSpider(SitemapSpider, ListSpider):
    """Scrapy's SitemapSpider, given ``sitemap_urls=[<robots.txt URL>]`` (Scrapy's documented way to find
    sitemaps); ListSpider's ``parse`` records the pages the sitemap led to."""

    name = "robots_sitemap"


def sitemap(*urls: str) -> Reply:
    entries = "".join(f"<url><loc>{url}</loc></url>" for url in urls)
    body = f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' \
           f"{entries}</urlset>"
    return Reply(body=body.encode(), headers={"Content-Type": "application/xml"})


def when_parked(count: int, gate: defer.Deferred[None]) -> Any:
    """An ``on_crawler`` hook releasing ``gate`` (the robots.txt reply) once ``count`` requests are parked."""

    def hook(crawler: Crawler) -> None:
        def check() -> None:
            if len(middleware(crawler).parking.parked) == count and not gate.called:
                poll.stop()
                gate.callback(None)

        poll = LoopingCall(check)

        def start_polling() -> None:
            poll.start(0.01)  # not returned: the signal would wait for the polling's end

        crawler.signals.connect(start_polling, signal=signals.spider_opened, weak=False)

    return hook


@pytest_twisted.ensureDeferred
async def test_sitemap_spider_reads_sitemaps_from_the_plugins_copy(sites: Any) -> None:
    site = sites()
    allowed, disallowed = [site.url("/a"), site.url("/b")], [site.url("/private/x"), site.url("/private/y")]
    site.route("/robots.txt", robots(f"Sitemap: {site.url('/sitemap.xml')}\nUser-agent: *\nDisallow: /private\n"))
    site.route("/sitemap.xml", sitemap(*allowed, *disallowed))
    answers: list[Response] = []

    def hook(crawler: Crawler) -> None:
        crawler.signals.connect(lambda response, **_: answers.append(response) if FLAG in response.flags else None,
                                signal=signals.response_received, weak=False)

    result = await crawl([], spider=RobotsSitemapSpider, on_crawler=hook,
                         spider_kwargs={"sitemap_urls": [site.url("/robots.txt")]})
    assert site.hits_for("/robots.txt") == 1  # the plugin's download; the spider's request was answered
    assert site.hits_for("/sitemap.xml") == 1
    assert sorted(result.downloaded) == allowed
    assert not [path for path in site.paths() if path.startswith("/private")]
    assert result.stat("rep/robots/answered_from_copy") == 1
    assert result.stat("rep/robots/answered_from_copy/fetched") == 1
    assert result.stat("rep/requests/forbidden") == 2
    assert result.stat("rep/requests/passed_through/robots_txt") == 1
    [answer] = answers
    assert isinstance(answer, TextResponse) and answer.url == site.url("/robots.txt") and answer.status == 200
    assert answer.headers[b"Content-Type"] == b"text/plain" and "Disallow: /private" in answer.text
    assert answer.request is not None and answer.request.url == site.url("/robots.txt")
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_a_robots_txt_request_waits_for_the_fetch_in_flight_spec_2_1(sites: Any) -> None:
    site = sites()
    gate: defer.Deferred[None] = defer.Deferred()
    rules = "User-agent: *\nDisallow: /private\n"
    site.route("/robots.txt", robots(rules, gate=gate, headers={"Content-Type": "text/plain; charset=utf-8",
                                                                 "Set-Cookie": "a=b", "ETag": '"v1"'}))
    urls = [site.url("/robots.txt"), site.url("/a"), site.url("/private/x")]
    result = await crawl(urls, spider=RecordingSpider, on_crawler=when_parked(3, gate))
    assert site.hits_for("/robots.txt") == 1
    assert sorted(result.downloaded) == sorted(urls[:2])
    answer = result.spider.responses[site.url("/robots.txt")]  # type: ignore[attr-defined]
    assert (answer.status, answer.text, answer.flags) == (200, rules, [FLAG])
    assert answer.headers[b"Content-Type"] == b"text/plain; charset=utf-8" and answer.headers[b"ETag"] == b'"v1"'
    assert b"Set-Cookie" not in answer.headers  # only the headers that describe the file are kept
    assert result.stat("rep/robots/answered_from_copy/fetched") == 1
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_a_404_robots_txt_is_answered_404_with_an_empty_body_spec_2_2(sites: Any) -> None:
    site = sites()  # robots.txt: 404 "nope"
    result = await crawl([site.url("/robots.txt"), site.url("/a")], spider=RecordingSpider,
                         spider_kwargs={"meta": {"handle_httpstatus_list": [404]}})
    assert site.hits_for("/robots.txt") == 1
    answer = result.spider.responses[site.url("/robots.txt")]  # type: ignore[attr-defined]
    assert (answer.status, answer.body) == (404, b"")
    assert site.url("/a") in result.downloaded
    assert result.stat("rep/robots/answered_from_copy/allow_all") == 1
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_a_robots_txt_request_is_held_like_pages_then_answered_spec_2_3(sites: Any) -> None:
    clock = Clock()
    site = sites()
    site.route("/robots.txt", Reply(status=503), robots("User-agent: *\nDisallow: /private\n"))
    result = await crawl([site.url("/robots.txt"), site.url("/a")], spider=RecordingSpider, REP_CLOCK=lambda: clock,
                         spider_kwargs={"phases": [(lambda: clock.advance(15), [])]})  # the 503 retry is due
    assert site.hits_for("/robots.txt") == 2  # the plugin's attempt and its retry; none from the spider
    answer = result.spider.responses[site.url("/robots.txt")]  # type: ignore[attr-defined]
    assert answer.status == 200 and "Disallow: /private" in answer.text
    assert sorted(result.downloaded) == [site.url("/a"), site.url("/robots.txt")]
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_a_held_robots_txt_request_is_dropped_at_the_hold_timeout_spec_2_3(sites: Any) -> None:
    clock = Clock()
    site = sites()
    site.route("/robots.txt", Reply(status=500))
    result = await crawl([site.url("/robots.txt"), site.url("/a")], REP_CLOCK=lambda: clock, REP_HOLD_TIMEOUT=30,
                         spider_kwargs={"phases": [(lambda: clock.advance(30), [])]})
    assert sorted(result.failed) == [(site.url("/a"), "IgnoreRequest"), (site.url("/robots.txt"), "IgnoreRequest")]
    assert result.stat("rep/requests/dropped_after_hold/timeout") == 2
    assert site.hits_for("/robots.txt") == 1 and result.stat("rep/robots/answered_from_copy") == 0
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_a_copy_read_from_the_store_is_answered_as_text_plain_spec_3_2(sites: Any, tmp_path: Path) -> None:
    site = sites()
    rules = "User-agent: *\nDisallow: /private\n"
    site.route("/robots.txt", robots(rules, headers={"Content-Type": "text/plain; charset=us-ascii"}))
    store = f"sqlite:///{tmp_path / 'rep.db'}"
    first = await crawl([site.url("/a")], REP_STORE=store)  # another crawler fetches and stores robots.txt
    second = await crawl([site.url("/robots.txt")], spider=RecordingSpider, REP_STORE=store)
    assert (first.downloaded, site.hits_for("/robots.txt")) == ([site.url("/a")], 1)
    answer = second.spider.responses[site.url("/robots.txt")]  # type: ignore[attr-defined]
    assert (answer.status, answer.headers[b"Content-Type"], answer.text) == (200, b"text/plain", rules)
    assert second.stat("rep/robots/answered_from_copy/stored") == 1
    second.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_dont_obey_robotstxt_and_queries_still_download_spec_1_4(sites: Any) -> None:
    site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /\n"))
    result = await crawl([site.url("/robots.txt")], spider_kwargs={"meta": {"dont_obey_robotstxt": True}})
    assert site.hits_for("/robots.txt") == 1 and result.stat("rep/robots/downloads") == 0  # the spider's own
    assert result.stat("rep/requests/passed_through/dont_obey_robotstxt") == 1
    query = await crawl([site.url("/robots.txt?x=1")])
    assert site.hits_for("/robots.txt?x=1") == 1 and query.stat("rep/robots/downloads") == 0
    assert query.stat("rep/requests/passed_through/robots_txt") == 1
    assert query.stat("rep/robots/answered_from_copy") == 0
    result.assert_accounted()
    query.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_only_the_origins_own_robots_txt_is_answered_spec_2_2(sites: Any) -> None:
    """A's robots.txt redirects to B's: A's request is answered with the body obeyed for A (at A's URL), B's from
    B's own fetch."""
    one, two = sites(), sites()
    one.route("/robots.txt", redirect(two.url("/robots.txt")))
    two.route("/robots.txt", robots("User-agent: *\nDisallow: /b-only\n"))
    urls = [one.url("/robots.txt"), two.url("/robots.txt")]
    result = await crawl(urls, spider=RecordingSpider)
    assert (one.hits_for("/robots.txt"), two.hits_for("/robots.txt")) == (1, 2)  # A's chain, then B's own fetch
    assert result.stat("rep/robots/downloads") == 2 and result.stat("rep/robots/answered_from_copy/fetched") == 2
    responses = result.spider.responses  # type: ignore[attr-defined]
    assert [responses[url].text for url in urls] == ["User-agent: *\nDisallow: /b-only\n"] * 2
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_what_an_origin_keeps_of_its_response_is_not_walked_by_the_garbage_collector(sites: Any) -> None:
    """Issue 21: a broad crawl keeps the kept response (status, headers, body digest) of every origin; packed into
    one bytes object, it is no object a collection walks, and still answers with the same status and headers."""
    site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /private\n"))
    result = await crawl([site.url("/a")])
    state = middleware(result.crawler).origins[site.origin()]
    assert type(state.robots_response) is bytes and len(state.robots_response) < 80
    kept = kept_response(state)
    assert kept is not None and kept.status == 200 and kept.gave(b"User-agent: *\nDisallow: /private\n")
    assert kept.header_dict() == {b"Content-Type": [b"text/plain"]}
    assert state.rules is not None and not gc.is_tracked(state.rules._lines)


def test_a_kept_response_packs_and_unpacks_to_itself() -> None:
    """Issue 21: the packed form an origin keeps gives back the status, digest and every kept header in order,
    repeated and empty values and values past 64 KiB included."""
    headers = ((b"Content-Type", b"text/plain; charset=utf-8"), (b"ETag", b""), (b"Cache-Control", b"max-age=60"),
               (b"Cache-Control", b"public"), (b"Expires", b"x" * 70_000))
    for kept in (KeptResponse(200, headers, b"d" * 16), KeptResponse(404, (), bytes(range(16)))):
        assert KeptResponse.unpack(kept.packed()) == kept
