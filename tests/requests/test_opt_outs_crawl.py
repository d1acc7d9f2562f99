"""Every machine-readable opt-out in real crawls (requests/usage.py, requests/response_usage.py, robots/tdmrep.py):
tdmrep.json fetched like robots.txt (only when a TDM use is declared, once per origin per TTL), response headers and
meta tags combined with robots.txt into one answer per response, items of refused responses dropped, hits asserted at
the server."""

from __future__ import annotations

import json
import logging
from collections import Counter
from typing import Any

import pytest
import pytest_twisted
from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.http import Response
from twisted.internet.task import Clock

from tests.crawl import ListSpider, crawl
from tests.servers import Reply, Site, redirect, robots

TDM_PATH = "/.well-known/tdmrep.json"
POLICY = "https://policy.example/tdm.json"


def tdmrep(*entries: dict[str, Any], status: int = 200) -> Reply:
    return Reply(status=status, body=json.dumps(list(entries)).encode(), headers={"Content-Type": "application/json"})


def page(*links: str, head: str = "", headers: dict[str, str] | None = None) -> Reply:
    anchors = "".join(f'<a href="{link}">x</a>' for link in links)
    body = f"<html><head>{head}</head><body>{anchors}</body></html>".encode()
    return Reply(body=body, headers={"Content-Type": "text/html", **(headers or {})})


class OptOutSpider(ListSpider):
    """Records each response's usage answer, yields one item per page and follows its links."""

    name = "opt_outs"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.usage: dict[str, dict[str, str]] = {}
        self.sources: dict[str, dict[str, dict[str, str]]] = {}
        self.items: list[str] = []

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> OptOutSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        assert isinstance(spider, OptOutSpider)
        crawler.signals.connect(spider.scraped, signal=signals.item_scraped)
        return spider

    def scraped(self, item: dict[str, str]) -> None:
        self.items.append(item["url"])

    def parse(self, response: Response) -> Any:  # type: ignore[override]
        super().parse(response)
        self.usage[response.url] = response.meta["rep_usage"]
        self.sources[response.url] = response.meta["rep_usage_sources"]
        yield {"url": response.url}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, errback=self.failure)


def spider_of(result: Any) -> OptOutSpider:
    assert isinstance(result.spider, OptOutSpider)
    return result.spider


def hits(site: Site) -> Counter[str]:
    return Counter(hit.path for hit in site.hits)


@pytest_twisted.ensureDeferred
async def test_tdmrep_json_is_never_fetched_when_no_tdm_use_is_declared(sites: Any) -> None:
    site: Site = sites()
    site.route(TDM_PATH, tdmrep({"location": "/*", "tdm-reservation": 1}))
    result = await crawl([site.url("/a")], spider=OptOutSpider)
    assert hits(site)[TDM_PATH] == 0
    assert spider_of(result).usage == {site.url("/a"): {}}
    result = await crawl([site.url("/a")], spider=OptOutSpider, REP_CONTENT_USES=["search"])
    assert hits(site)[TDM_PATH] == 0
    assert result.stat("rep/tdmrep/downloads") == 0


@pytest_twisted.ensureDeferred
async def test_a_tdmrep_reservation_refuses_training_before_download(
    sites: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """The first matching entry in array order applies: /papers/* is reserved (with its policy), the rest is not.
    Declaring train-ai fetches the file once; a reserved page is never requested, and is said to be refused for its
    use, not forbidden by robots.txt."""
    caplog.set_level(logging.DEBUG, logger="scrapy_rep.middleware")
    site: Site = sites()
    site.route("/robots.txt", robots("User-agent: *\nAllow: /\n"))
    site.route(TDM_PATH, tdmrep({"location": "/papers/*", "tdm-reservation": 1, "tdm-policy": POLICY},
                                {"location": "/*", "tdm-reservation": 0}))
    urls = [site.url("/papers/1"), site.url("/blog/1"), site.url("/papers/2")]
    result = await crawl(urls, spider=OptOutSpider, REP_CONTENT_USES=["train-ai"], LOG_LEVEL="DEBUG")
    spider = spider_of(result)
    assert hits(site) == Counter({"/robots.txt": 1, TDM_PATH: 1, "/blog/1": 1})
    assert spider.usage == {site.url("/blog/1"): {"tdm": "y", "train-ai": "y"}}
    assert spider.sources[site.url("/blog/1")]["train-ai"]["source"] == "tdmrep.json"
    assert sorted(result.failed) == [(site.url("/papers/1"), "IgnoreRequest"), (site.url("/papers/2"),
                                                                              "IgnoreRequest")]
    assert result.stat("rep/requests/forbidden") == 2 and result.stat("rep/requests/forbidden/usage") == 2
    assert result.stat("rep/usage/refused/train-ai") == 2
    assert result.stat("rep/usage/train-ai/y") == 1 and result.stat("rep/usage/train-ai/n") == 0
    assert result.stat("rep/tdmrep/downloads") == 1
    refused = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Refused for its use")]
    assert len(refused) == 2
    assert refused[0].startswith(f"Refused for its use: {site.url('/papers/1')} (train-ai refused by tdmrep.json ")
    assert f"{site.origin()}{TDM_PATH}" in refused[0] and POLICY in refused[0]
    assert not [r for r in caplog.records if r.getMessage().startswith("Forbidden by robots.txt")]
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_tdmrep_json_is_fetched_once_per_origin_per_ttl(sites: Any, tmp_path: Any) -> None:
    """Crawls sharing a SQLite store: within the TTL tdmrep.json is read from the store; past it, fetched again."""
    clock = Clock()
    clock.advance(1_000_000)
    site: Site = sites()
    site.route(TDM_PATH, tdmrep({"location": "/*", "tdm-reservation": 0}))
    settings = {"REP_CONTENT_USES": ["tdm"], "REP_CLOCK": lambda: clock, "REP_CACHE_TTL": 3600,
                "REP_STORE": f"sqlite:///{tmp_path}/store.db"}
    result = await crawl([site.url("/a"), site.url("/b"), site.url("/c")], spider=OptOutSpider, **settings)
    assert hits(site)[TDM_PATH] == 1
    assert spider_of(result).usage[site.url("/c")] == {"tdm": "y", "train-ai": "y"}
    result = await crawl([site.url("/d")], spider=OptOutSpider, **settings)
    assert hits(site)[TDM_PATH] == 1 and result.stat("rep/tdmrep/cache/store_hits") == 1
    assert spider_of(result).usage[site.url("/d")] == {"tdm": "y", "train-ai": "y"}
    clock.advance(3601)
    result = await crawl([site.url("/e")], spider=OptOutSpider, **settings)
    assert hits(site)[TDM_PATH] == 2 and result.stat("rep/tdmrep/downloads") == 1


@pytest_twisted.ensureDeferred
async def test_a_failing_tdmrep_json_is_a_reservation_unknown_never_none(
    sites: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="scrapy_rep.middleware")
    site: Site = sites()
    site.route(TDM_PATH, Reply(status=503))
    result = await crawl([site.url("/a")], spider=OptOutSpider, REP_CONTENT_USES=["train-ai"], LOG_LEVEL="DEBUG")
    assert result.failed == [(site.url("/a"), "IgnoreRequest")]
    assert hits(site)["/a"] == 0
    assert result.stat("rep/tdmrep/unknown") == 1
    assert any("reservation unknown" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    # Not enforcing: the page is fetched, its answer says the reservation is unknown (a refusal), and why.
    result = await crawl([site.url("/b")], spider=OptOutSpider, REP_TDMREP=True)
    spider = spider_of(result)
    assert spider.usage[site.url("/b")] == {"tdm": "n", "train-ai": "n"}
    assert "unreachable (503)" in spider.sources[site.url("/b")]["tdm"]["where"]


@pytest_twisted.ensureDeferred
async def test_an_html_page_at_the_well_known_url_is_no_file(sites: Any) -> None:
    """A soft 404 (the site's HTML page for any path) states no reservation; nothing is refused."""
    site: Site = sites()  # unscripted paths answer a 200 HTML page
    result = await crawl([site.url("/a")], spider=OptOutSpider, REP_CONTENT_USES=["train-ai"])
    assert hits(site)[TDM_PATH] == 1
    assert result.downloaded == [site.url("/a")]
    assert spider_of(result).usage == {site.url("/a"): {}}
    assert result.stat("rep/tdmrep/status/200") == 1  # counted as what it was, a 200
    assert result.stat("rep/tdmrep/malformed") == 0 and result.stat("rep/tdmrep/unknown") == 0


@pytest_twisted.ensureDeferred
async def test_response_headers_and_meta_tags_join_the_answer_and_drop_items(sites: Any) -> None:
    """Known only after download: the page is fetched, its links followed, its items dropped when a declared use is
    refused; each source named."""
    site: Site = sites()
    site.route(TDM_PATH, Reply(status=404))
    site.route("/", page("/usage", "/signal", "/noai", "/meta", "/fine"))
    site.route("/usage", page(headers={"Content-Usage": "train-ai=n, search=y"}))
    site.route("/signal", page(headers={"Content-Signal": "ai-train=no, search=yes"}))
    site.route("/noai", page(headers={"X-Robots-Tag": "noai"}))
    site.route("/meta", page(head='<meta name="tdm-reservation" content="1">'
                                  f'<meta name="tdm-policy" content="{POLICY}">'))
    site.route("/fine", page(headers={"Content-Usage": "train-ai=y"}))
    result = await crawl([site.url("/")], spider=OptOutSpider, REP_CONTENT_USES=["train-ai"])
    spider = spider_of(result)
    assert sorted(spider.downloaded) == sorted(site.url(p) for p in ("/", "/usage", "/signal", "/noai", "/meta",
                                                                      "/fine"))
    assert sorted(spider.items) == [site.url("/"), site.url("/fine")]
    assert spider.usage[site.url("/usage")] == {"train-ai": "n", "search": "y"}
    assert spider.usage[site.url("/signal")] == {"train-ai": "n", "search": "y"}
    assert spider.usage[site.url("/noai")] == {"train-ai": "n"}
    assert spider.usage[site.url("/meta")] == {"tdm": "n", "train-ai": "n"}
    assert spider.sources[site.url("/usage")]["train-ai"]["source"] == "Content-Usage header"
    assert spider.sources[site.url("/signal")]["train-ai"]["source"] == "Content-Signal header"
    assert spider.sources[site.url("/noai")]["train-ai"]["source"] == "X-Robots-Tag header"
    assert spider.sources[site.url("/meta")]["train-ai"]["source"] == "tdm-reservation meta tag"
    assert spider.sources[site.url("/meta")]["train-ai"]["policy"] == POLICY
    assert result.stat("rep/usage/items_dropped") == 4
    assert result.stat("rep/usage/items_dropped/train-ai") == 4
    assert hits(site)[POLICY] == 0  # a policy URL is exposed, never fetched


@pytest_twisted.ensureDeferred
async def test_without_declared_uses_nothing_is_dropped(sites: Any) -> None:
    site: Site = sites()
    site.route("/", page(headers={"Content-Usage": "train-ai=n"}))
    result = await crawl([site.url("/")], spider=OptOutSpider)
    spider = spider_of(result)
    assert spider.items == [site.url("/")]
    assert spider.usage[site.url("/")] == {"train-ai": "n"}
    assert hits(site)[TDM_PATH] == 0


@pytest_twisted.ensureDeferred
async def test_tdmrep_precedence_meta_over_header_over_file(sites: Any) -> None:
    site: Site = sites()
    site.route(TDM_PATH, tdmrep({"location": "/*", "tdm-reservation": 1}))
    site.route("/header", page(headers={"tdm-reservation": "0"}))
    site.route("/meta", page(head='<meta name="tdm-reservation" content="1">', headers={"tdm-reservation": "0"}))
    site.route("/invalid", page(headers={"tdm-reservation": "yes"}))
    site.route("/file", page())
    urls = [site.url(p) for p in ("/header", "/meta", "/invalid", "/file")]
    result = await crawl(urls, spider=OptOutSpider, REP_TDMREP=True)
    spider = spider_of(result)
    assert spider.usage[site.url("/header")] == {"tdm": "y", "train-ai": "y"}
    assert spider.sources[site.url("/header")]["tdm"]["source"] == "tdm-reservation header"
    assert spider.usage[site.url("/meta")] == {"tdm": "n", "train-ai": "n"}
    assert spider.sources[site.url("/meta")]["tdm"]["source"] == "tdm-reservation meta tag"
    for path in ("/invalid", "/file"):  # a protocol error is unset: the file applies
        assert spider.usage[site.url(path)] == {"tdm": "n", "train-ai": "n"}
        assert spider.sources[site.url(path)]["tdm"]["source"] == "tdmrep.json"
    assert hits(site)[TDM_PATH] == 1


@pytest_twisted.ensureDeferred
async def test_discovery_downloads_a_refused_page_for_its_links_only(sites: Any) -> None:
    """Content-Signal ai-train=no site-wide: by default nothing is downloaded; with REP_USAGE_DISCOVERY the pages
    are downloaded, their links followed, their items dropped."""
    site: Site = sites()
    site.route("/robots.txt", robots("User-agent: *\nContent-Signal: ai-train=no\nAllow: /\n"))
    site.route(TDM_PATH, Reply(status=404))
    site.route("/", page("/child"))
    result = await crawl([site.url("/")], spider=OptOutSpider, REP_CONTENT_USES=["train-ai"])
    assert spider_of(result).downloaded == [] and result.stat("rep/requests/forbidden/usage") == 1
    result = await crawl([site.url("/")], spider=OptOutSpider, REP_CONTENT_USES=["train-ai"],
                         REP_USAGE_DISCOVERY=True)
    spider = spider_of(result)
    assert sorted(spider.downloaded) == [site.url("/"), site.url("/child")]
    assert spider.items == []
    assert result.stat("rep/usage/discovery") == 2 and result.stat("rep/usage/items_dropped/train-ai") == 2
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_legacy_labels_are_reported_once_per_origin_and_read_as_train_ai(
    sites: Any, caplog: pytest.LogCaptureFixture
) -> None:
    site: Site = sites()
    site.route("/robots.txt", robots("User-agent: *\nAllow: /\nContent-Usage: train-genai=n\n"))
    urls = [site.url("/a"), site.url("/b")]
    result = await crawl(urls, spider=OptOutSpider)
    spider = spider_of(result)
    assert spider.usage[site.url("/a")] == {"train-ai": "n"}
    assert spider.sources[site.url("/a")]["train-ai"]["legacy"] == "train-genai"
    assert result.stat("rep/usage/legacy_labels/train-genai") == 1
    warnings = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage() and r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "train-genai" in warnings[0]
    result = await crawl(urls, spider=OptOutSpider, REP_USAGE_LEGACY_LABELS=False)
    assert spider_of(result).usage[site.url("/a")] == {}


@pytest_twisted.ensureDeferred
async def test_a_page_without_its_own_request_meta_still_gets_an_answer(sites: Any) -> None:
    """``dont_obey_robotstxt``: not decided, but the response's own signals are read."""
    site: Site = sites()
    site.route("/", page(headers={"Content-Usage": "search=n"}))
    result = await crawl([site.url("/")], spider=OptOutSpider, spider_kwargs={"meta": {"dont_obey_robotstxt": True}})
    assert spider_of(result).usage[site.url("/")] == {"search": "n"}


@pytest_twisted.ensureDeferred
async def test_tdmrep_json_redirects_are_followed_and_bounded_like_robots_txt(sites: Any) -> None:
    """Redirects are followed by the plugin itself (REP_MAX_REDIRECTS); past the limit, no file (as for robots.txt)."""
    site: Site = sites()
    site.route(TDM_PATH, redirect("/tdm/current.json"))
    site.route("/tdm/current.json", tdmrep({"location": "/*", "tdm-reservation": 1}))
    result = await crawl([site.url("/a")], spider=OptOutSpider, REP_TDMREP=True)
    assert spider_of(result).usage[site.url("/a")] == {"tdm": "n", "train-ai": "n"}
    assert hits(site)["/tdm/current.json"] == 1
    looping: Site = sites()
    looping.route(TDM_PATH, redirect("/hop/0"))
    for n in range(10):
        looping.route(f"/hop/{n}", redirect(f"/hop/{n + 1}"))
    result = await crawl([looping.url("/a")], spider=OptOutSpider, REP_TDMREP=True)
    assert spider_of(result).usage[looping.url("/a")] == {}  # too many redirects: no file, no reservation
    assert hits(looping)["/hop/4"] == 1 and hits(looping)["/hop/5"] == 0  # 5 redirects followed, not a 6th
