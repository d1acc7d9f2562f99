"""Page-level directives obeyed in real crawls (requests/page_directives.py): the robots meta tag and X-Robots-Tag
read into ``meta["rep_robots_tags"]``, ``nofollow`` links not scheduled (REP_OBEY_NOFOLLOW), ``noindex`` items
dropped (REP_OBEY_NOINDEX, opt-in), with plain callbacks, CrawlSpider rules and non-HTML responses; counted at the
servers as well as in the stats."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import pytest
import pytest_twisted
from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.http import Response
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule
from twisted.internet.task import Clock

from scrapy_rep.matcher import RobotsTags
from tests.crawl import ListSpider, crawl
from tests.middleware.test_playwright import SETTINGS as PLAYWRIGHT
from tests.middleware.test_playwright import needs_browser
from tests.servers import Reply, Site, robots

HTML = {"Content-Type": "text/html"}


def page(links: list[str], head: str = "", headers: dict[str, str] | None = None) -> Reply:
    anchors = "".join(f'<a href="{link}">{link}</a>' for link in links)
    body = f"<html><head><title>t</title>{head}</head><body>{anchors}</body></html>"
    return Reply(body=body.encode(), headers={**HTML, **(headers or {})})


class FollowSpider(ListSpider):
    """Follows every link of every page (``response.follow``) and yields one item per page."""

    name = "follow"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tags: dict[str, RobotsTags] = {}
        self.items: list[str] = []

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> FollowSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.scraped, signal=signals.item_scraped)
        return spider  # type: ignore[return-value]

    def scraped(self, item: dict[str, str]) -> None:
        self.items.append(item["url"])

    def parse(self, response: Response) -> Iterator[Any]:  # type: ignore[override]
        self.downloaded.append(response.url)
        self.tags[response.url] = response.meta["rep_robots_tags"]
        yield {"url": response.url}
        for href in response.xpath("//a/@href").getall():
            yield response.follow(href, meta=dict(self.meta))


class RulesSpider(CrawlSpider, ListSpider):  # type: ignore[misc]
    """CrawlSpider + LinkExtractor: follows every link (ListSpider's start requests have no callback, so
    CrawlSpider's rules handle them); records the pages it parsed."""

    name = "rules"
    rules = (Rule(LinkExtractor(), callback="parse_page", follow=True),)

    def parse_start_url(self, response: Response, **kwargs: Any) -> list[Any]:
        self.downloaded.append(response.url)
        return []

    def parse_page(self, response: Response) -> None:
        self.downloaded.append(response.url)


def _site(sites: Any, *, head: str = "", headers: dict[str, str] | None = None) -> Site:
    """/ links to /a and /b; /a (with ``head`` / ``headers``) links to /c and /d; /b links to /e."""
    site: Site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /private\n"))
    site.route("/", page(["/a", "/b"]))
    site.route("/a", page(["/c", "/d"], head, headers))
    site.route("/b", page(["/e"]))
    for path in ("/c", "/d", "/e"):
        site.route(path, page([]))
    return site


@pytest_twisted.ensureDeferred
async def test_a_nofollow_meta_tag_stops_its_links_plain_callbacks(sites: Any,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    site = _site(sites, head='<meta name="robots" content="noindex, nofollow">')
    with caplog.at_level(logging.DEBUG, logger="scrapy_rep"):
        result = await crawl([site.url("/")], spider=FollowSpider, LOG_LEVEL="DEBUG")
    assert sorted(site.paths()) == ["/", "/a", "/b", "/e", "/robots.txt"]  # /c and /d never asked for
    assert result.stat("rep/robots_tags/requests/not_followed") == 2
    assert result.stat("rep/robots_tags/responses") == 1
    assert result.stat("rep/robots_tags/directives/nofollow") == 1
    spider: FollowSpider = result.spider  # type: ignore[assignment]
    tags = spider.tags[site.url("/a")]
    assert tags.nofollow and tags.noindex and tags.source("nofollow") == "meta tag"
    assert not spider.tags[site.url("/b")].directives  # every response carries its (empty) directives
    assert sorted(spider.items) == sorted(site.url(p) for p in ("/", "/a", "/b", "/e"))  # noindex: not obeyed
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Not following")]
    assert len(said) == 2 and all("/a>" in line and "nofollow (meta tag)" in line for line in said), said


@pytest_twisted.ensureDeferred
async def test_crawlspider_rules_do_not_follow_a_nofollow_page(sites: Any) -> None:
    site = _site(sites, head='<META NAME="TestBot" CONTENT="NoFollow">')
    result = await crawl([site.url("/")], spider=RulesSpider)
    assert sorted(site.paths()) == ["/", "/a", "/b", "/e", "/robots.txt"]
    assert sorted(result.downloaded) == sorted(site.url(p) for p in ("/", "/a", "/b", "/e"))
    assert result.stat("rep/robots_tags/requests/not_followed") == 2


@pytest_twisted.ensureDeferred
async def test_another_crawlers_name_is_ignored(sites: Any) -> None:
    site = _site(sites, head='<meta name="googlebot" content="nofollow">',
                 headers={"X-Robots-Tag": "otherbot: nofollow"})
    result = await crawl([site.url("/")], spider=FollowSpider)
    assert sorted(site.paths()) == ["/", "/a", "/b", "/c", "/d", "/e", "/robots.txt"]
    assert result.stat("rep/robots_tags/requests/not_followed") == 0


@pytest_twisted.ensureDeferred
async def test_the_header_applies_to_a_non_html_response(sites: Any) -> None:
    """A JSON response's X-Robots-Tag addressed to this crawler: its links (followed by hand) are not scheduled."""
    site: Site = sites()
    site.route("/robots.txt", robots("User-agent: *\nAllow: /\n"))
    site.route("/data.json", Reply(body=b'{"next": "/next"}', headers={"Content-Type": "application/json",
                                                                        "X-Robots-Tag": "testbot: nofollow"}))

    class JsonSpider(FollowSpider):
        def parse(self, response: Response) -> Iterator[Any]:  # type: ignore[override]
            self.tags[response.url] = response.meta["rep_robots_tags"]
            yield response.follow(response.json()["next"])

    result = await crawl([site.url("/data.json")], spider=JsonSpider)
    assert site.hits_for("/next") == 0
    tags = result.spider.tags[site.url("/data.json")]  # type: ignore[attr-defined]
    assert tags.nofollow and tags.source("nofollow") == "X-Robots-Tag header"
    assert result.stat("rep/robots_tags/requests/not_followed") == 1


@pytest_twisted.ensureDeferred
async def test_dont_obey_robotstxt_requests_pass(sites: Any) -> None:
    site = _site(sites, head='<meta name="robots" content="none">')
    result = await crawl([site.url("/")], spider=FollowSpider, spider_kwargs={"meta": {"dont_obey_robotstxt": True}})
    assert site.hits_for("/c") == site.hits_for("/d") == 1
    assert result.stat("rep/robots_tags/requests/passed_through/dont_obey_robotstxt") == 2


@pytest.mark.parametrize(("settings", "followed", "tagged"), [
    ({"REP_OBEY_NOFOLLOW": False}, True, True),
    ({"REP_ROBOTS_TAGS": False}, True, False),
    ({"ROBOTSTXT_OBEY": False}, True, False),
    ({}, False, True),
])
@pytest_twisted.ensureDeferred
async def test_switches(sites: Any, settings: dict[str, Any], followed: bool, tagged: bool) -> None:
    site = _site(sites, head='<meta name="robots" content="nofollow">')

    class Spider(FollowSpider):
        def parse(self, response: Response) -> Iterator[Any]:  # type: ignore[override]
            self.tags[response.url] = response.meta.get("rep_robots_tags")  # type: ignore[assignment]
            for href in response.xpath("//a/@href").getall():
                yield response.follow(href)

    result = await crawl([site.url("/")], spider=Spider, **settings)
    assert (site.hits_for("/c") == 1) is followed
    assert (result.spider.tags[site.url("/a")] is not None) is tagged  # type: ignore[attr-defined]


@pytest_twisted.ensureDeferred
async def test_noindex_items_are_dropped_only_when_asked(sites: Any) -> None:
    site = _site(sites, headers={"X-Robots-Tag": "noindex"})
    kept = await crawl([site.url("/")], spider=FollowSpider)
    assert site.url("/a") in kept.spider.items  # type: ignore[attr-defined]
    site = _site(sites, headers={"X-Robots-Tag": "noindex"})
    dropped = await crawl([site.url("/")], spider=FollowSpider, REP_OBEY_NOINDEX=True)
    items = dropped.spider.items  # type: ignore[attr-defined]
    assert site.url("/a") not in items and site.url("/b") in items
    assert dropped.stat("rep/robots_tags/items/dropped/noindex") == 1
    assert site.hits_for("/c") == 1  # noindex alone: links still followed


@pytest.mark.parametrize(("now", "dropped"), [(datetime(2030, 1, 1, 0, 0, 1, tzinfo=timezone.utc), True),
                                              (datetime(2029, 12, 31, 23, 59, tzinfo=timezone.utc), False)])
@pytest_twisted.ensureDeferred
async def test_unavailable_after_is_read_against_the_crawls_clock(sites: Any, now: datetime, dropped: bool) -> None:
    site = _site(sites, head='<meta name="robots" content="unavailable_after: 2030-01-01T00:00:00Z">')
    clock = Clock()
    clock.advance(now.timestamp())
    result = await crawl([site.url("/")], spider=FollowSpider, REP_OBEY_NOINDEX=True, REP_CLOCK=lambda: clock)
    assert (site.url("/a") not in result.spider.items) is dropped  # type: ignore[attr-defined]
    assert result.stat("rep/robots_tags/items/dropped/unavailable_after") == int(dropped)


@pytest_twisted.ensureDeferred
async def test_start_requests_are_never_affected(sites: Any) -> None:
    """A start request has no response; the spider middleware lets it through whatever came before."""
    site = _site(sites, head='<meta name="robots" content="nofollow">')
    result = await crawl([site.url("/a"), site.url("/c")], spider=FollowSpider)
    assert site.hits_for("/a") == site.hits_for("/c") == 1 and site.hits_for("/d") == 0
    # /a's links /c and /d were not followed; /c was downloaded all the same, as a start request
    assert result.stat("rep/robots_tags/requests/not_followed") == 2


def test_start_requests_pass_the_spider_middleware_unchanged() -> None:
    from scrapy.utils.test import get_crawler

    from scrapy_rep.requests.page_directives import RobotsTagsMiddleware

    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True})
    middleware = RobotsTagsMiddleware.from_crawler(crawler)
    request = Request("http://example.com/")
    assert middleware.get_processed_request(request, None) is request
    assert middleware.get_processed_item({"a": 1}, None) == {"a": 1}


SCRIPTED = (b'<html><head><script>const m = document.createElement("meta"); m.name = "robots"; '
            b'm.content = "nofollow"; document.head.appendChild(m);</script></head>'
            b'<body><a href="/c">c</a></body></html>')


@needs_browser
@pytest_twisted.ensureDeferred
async def test_a_meta_tag_added_by_script_is_obeyed_through_scrapy_playwright(sites: Any) -> None:
    """The browser's rendered page is the body the spider middleware reads: the script's tag applies."""
    site: Site = sites()
    site.route("/robots.txt", robots("User-agent: *\nAllow: /\n"))
    site.route("/a", Reply(body=SCRIPTED, headers=HTML))
    result = await crawl([site.url("/a")], spider=FollowSpider, spider_kwargs={"meta": {"playwright": True}},
                         **PLAYWRIGHT)
    assert site.hits_for("/a") == 1 and site.hits_for("/c") == 0
    assert result.stat("playwright/page_count") >= 1  # the page went through the browser
    assert result.spider.tags[site.url("/a")].source("nofollow") == "meta tag"  # type: ignore[attr-defined]
    assert result.stat("rep/robots_tags/requests/not_followed") == 1


@pytest_twisted.ensureDeferred
async def test_enabled_by_hand_without_the_addon(sites: Any) -> None:
    """getting-started.md's by-hand block: the spider middleware by its front-door path, beside the downloader
    middlewares."""
    site = _site(sites, head='<meta name="robots" content="nofollow">')
    by_hand = {"ADDONS": {}, "DOWNLOADER_MIDDLEWARES": {
        "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None, "scrapy_rep.RobotsMiddleware": 100,
        "scrapy_rep.RobotsBodyMiddleware": 595}, "SPIDER_MIDDLEWARES": {"scrapy_rep.RobotsTagsMiddleware": 45}}
    result = await crawl([site.url("/")], spider=FollowSpider, **by_hand)
    assert site.hits_for("/c") == 0 and site.hits_for("/e") == 1
    assert result.stat("rep/robots_tags/requests/not_followed") == 2


def test_the_addon_enables_the_spider_middlewares_at_45_46_and_10() -> None:
    from scrapy.settings import Settings

    from scrapy_rep import Addon, RobotsStartMiddleware, RobotsTagsMiddleware, UsageMiddleware

    settings = Settings({"SPIDER_MIDDLEWARES": {"scrapy.spidermiddlewares.depth.DepthMiddleware": 10}})
    Addon().update_settings(settings)
    assert settings.getdict("SPIDER_MIDDLEWARES") == {"scrapy.spidermiddlewares.depth.DepthMiddleware": 10,
                                                      RobotsTagsMiddleware: 45, UsageMiddleware: 46,
                                                      RobotsStartMiddleware: 10}
