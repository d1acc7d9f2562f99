"""Every checked request carries the basis of its decision in ``meta["rep_basis"]`` (requests/basis.py), and a
forbidden one's ``IgnoreRequest`` carries it as ``basis`` too: real crawls against a local server."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
import pytest_twisted
from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response
from twisted.internet.task import Clock
from twisted.python.failure import Failure

from scrapy_rep.stores import iso
from tests.crawl import ListSpider, crawl, when_settled
from tests.servers import Reply, redirect, robots

DAY = 86_400.0
RULES = "User-agent: *\nAllow: /private/open\nDisallow: /private\n"
CHANGED = "User-agent: *\nDisallow: /private\nDisallow: /b\n"


def sha(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


class BasisSpider(ListSpider):
    """Records each response's basis and each failure's exception, by URL."""

    name = "basis"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.bases: dict[str, dict[str, Any]] = {}
        self.errors: dict[str, BaseException] = {}
        self.failed_meta: dict[str, dict[str, Any]] = {}

    def parse(self, response: Response) -> None:
        super().parse(response)
        self.bases[response.url] = response.meta["rep_basis"]

    def failure(self, failure: Failure) -> None:
        super().failure(failure)
        self.errors[failure.request.url] = failure.value  # type: ignore[attr-defined]
        self.failed_meta[failure.request.url] = failure.request.meta["rep_basis"]  # type: ignore[attr-defined]


def spider_of(result: Any) -> BasisSpider:
    spider = result.spider
    assert isinstance(spider, BasisSpider)
    return spider


@pytest_twisted.ensureDeferred
async def test_allowed_and_forbidden_requests_carry_the_rule_the_version_and_the_group(sites: Any) -> None:
    site = sites()
    site.route("/robots.txt", robots(RULES))
    clock = Clock()
    clock.advance(1_764_337_291.5)
    urls = [site.url("/a"), site.url("/private/open/1"), site.url("/private/x")]
    result = await crawl(urls, spider=BasisSpider, REP_CLOCK=lambda: clock)
    spider = spider_of(result)
    robots_txt = {"url": site.origin() + "/robots.txt", "version": sha(RULES), "fetched_at": "2025-11-28T13:41:31.500Z",
                  "status": 200, "final_url": site.origin() + "/robots.txt", "outcome": "rules", "failing": None}
    common = {"checked_at": "2025-11-28T13:41:31.500Z", "refused_uses": [], "enforced": True, "tokens": ["TestBot"],
              "group": "the '*' group (line 1)", "robots_txt": robots_txt, "usage": {}, "tdmrep": None}
    assert spider.bases[site.url("/a")] == {
        **common, "url": site.url("/a"), "decision": "allowed", "rule": None,
        "reason": "no rule of the '*' group (line 1) matches"}
    assert spider.bases[site.url("/private/open/1")] == {
        **common, "url": site.url("/private/open/1"), "decision": "allowed",
        "rule": {"line": 2, "directive": "Allow", "value": "/private/open"},
        "reason": "line 2 (Allow: /private/open) of the '*' group (line 1)"}
    error = spider.errors[site.url("/private/x")]
    assert type(error) is IgnoreRequest  # Scrapy's own class, as its built-in raises
    assert error.basis == spider.failed_meta[site.url("/private/x")] == {  # type: ignore[attr-defined]
        **common, "url": site.url("/private/x"), "decision": "forbidden",
        "rule": {"line": 3, "directive": "Disallow", "value": "/private"},
        "reason": "line 3 (Disallow: /private) of the '*' group (line 1)"}
    # Plain data: a pipeline copies it into an item and exports it as JSON.
    assert json.loads(json.dumps(spider.bases[site.url("/a")])) == spider.bases[site.url("/a")]


@pytest.mark.parametrize(("reply", "status"), [(Reply(status=404, body=b"nope"), 404), (Reply(status=410), 410)])
@pytest_twisted.ensureDeferred
async def test_a_4xx_basis_says_everything_is_allowed_and_versions_the_empty_body(
    sites: Any, reply: Reply, status: int
) -> None:
    site = sites()
    site.route("/robots.txt", reply)
    result = await crawl([site.url("/a")], spider=BasisSpider)
    basis = spider_of(result).bases[site.url("/a")]
    assert basis["decision"] == "allowed" and basis["rule"] is None and basis["group"] is None
    assert basis["reason"] == f"robots.txt {status}: everything allowed"
    assert basis["robots_txt"]["outcome"] == "allow-all"
    assert basis["robots_txt"]["version"] == sha(b"") and basis["robots_txt"]["status"] == status


@pytest_twisted.ensureDeferred
async def test_the_final_url_after_redirects_is_named(sites: Any) -> None:
    site = sites()
    site.route("/robots.txt", redirect("/moved/robots.txt"))
    site.route("/moved/robots.txt", robots(RULES))
    result = await crawl([site.url("/a")], spider=BasisSpider)
    robots_txt = spider_of(result).bases[site.url("/a")]["robots_txt"]
    assert robots_txt["url"] == site.origin() + "/robots.txt"
    assert robots_txt["final_url"] == site.url("/moved/robots.txt")
    assert robots_txt["version"] == sha(RULES)


@pytest_twisted.ensureDeferred
async def test_a_copy_kept_on_error_keeps_its_version_and_says_since_when_it_fails(sites: Any) -> None:
    """SPEC 2.4: the refresh gets a 503, the copy is kept: the basis names the copy's version and fetch time, and
    the failure (since when, how many attempts, the last status)."""
    clock = Clock()
    site = sites()
    site.route("/robots.txt", robots(RULES), Reply(status=503))
    crawlers: list[Crawler] = []
    result = await crawl(
        [site.url("/a")], spider=BasisSpider, on_crawler=crawlers.append, REP_CLOCK=lambda: clock,
        spider_kwargs={"phases": [(when_settled(crawlers, lambda: clock.advance(DAY + 1)), [site.url("/b")])]},
    )
    first, later = (spider_of(result).bases[site.url(path)]["robots_txt"] for path in ("/a", "/b"))
    assert first["failing"] is None and first["version"] == sha(RULES)
    assert later["version"] == sha(RULES) and later["fetched_at"] == iso(0) and later["status"] == 200
    assert later["failing"] == {"since": iso(DAY + 1), "attempts": 1, "last": "503"}


@pytest_twisted.ensureDeferred
async def test_a_refresh_with_a_new_body_decides_by_the_new_version(sites: Any) -> None:
    clock = Clock()
    site = sites()
    site.route("/robots.txt", robots(RULES), robots(CHANGED))
    crawlers: list[Crawler] = []
    result = await crawl(
        [site.url("/a")], spider=BasisSpider, on_crawler=crawlers.append, REP_CLOCK=lambda: clock,
        spider_kwargs={"phases": [(when_settled(crawlers, lambda: clock.advance(DAY + 1)), [site.url("/c")])]},
    )
    bases = spider_of(result).bases
    assert bases[site.url("/a")]["robots_txt"]["version"] == sha(RULES)
    assert bases[site.url("/c")]["robots_txt"]["version"] == sha(CHANGED)
    assert bases[site.url("/c")]["robots_txt"]["fetched_at"] == iso(DAY + 1)


class UncheckedSpider(BasisSpider):
    name = "unchecked"

    async def start(self) -> Any:
        for url in self.urls:
            yield Request(url, meta={"dont_obey_robotstxt": True}, callback=self.parse, errback=self.failure)
        yield Request("data:,hello", callback=self.parse, errback=self.failure)


@pytest_twisted.ensureDeferred
async def test_requests_passed_through_say_why_they_were_not_checked(sites: Any) -> None:
    site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /\n"))
    result = await crawl([site.url("/a")], spider=UncheckedSpider)
    bases = spider_of(result).bases
    assert {url: (basis["decision"], basis["reason"], basis["robots_txt"]) for url, basis in bases.items()} == {
        site.url("/a"): ("passed_through", "dont_obey_robotstxt", None),
        "data:,hello": ("passed_through", "no_robots_location", None),
    }
    assert site.hits_for("/robots.txt") == 0


@pytest_twisted.ensureDeferred
async def test_the_tdmrep_json_copy_read_is_named_with_its_version_and_the_usage_sources(sites: Any) -> None:
    """REP_TDMREP: the basis names the origin's tdmrep.json copy (its version: the file's SHA-256) and, in
    ``usage``, the statement that decided each use (here the file's reservation of the page)."""
    tdmrep = json.dumps([{"location": "/*", "tdm-reservation": 1}]).encode()
    site = sites()
    site.route("/robots.txt", robots(RULES))
    site.route("/.well-known/tdmrep.json", Reply(body=tdmrep, headers={"Content-Type": "application/json"}))
    clock = Clock()
    clock.advance(1_764_337_291.5)
    result = await crawl([site.url("/a")], spider=BasisSpider, REP_TDMREP=True, REP_CLOCK=lambda: clock)
    basis = spider_of(result).bases[site.url("/a")]
    assert basis["tdmrep"] == {"url": site.url("/.well-known/tdmrep.json"), "version": sha(tdmrep),
                               "fetched_at": "2025-11-28T13:41:31.500Z", "status": 200}
    assert basis["usage"]["tdm"]["source"] == "tdmrep.json" and basis["usage"]["tdm"]["value"] == "n"


@pytest_twisted.ensureDeferred
async def test_a_request_dropped_after_waiting_carries_why_and_the_failing_entry(sites: Any) -> None:
    """SPEC 2.3: robots.txt answers 503, the request waits, REP_HOLD_TIMEOUT passes: dropped. Its errback sees the
    basis: ``dropped``, robots.txt unavailable, and the entry it waited on (no copy, failing since the first try)."""
    clock = Clock()
    site = sites()
    site.route("/robots.txt", Reply(status=503))
    crawlers: list[Crawler] = []
    result = await crawl(
        [site.url("/a")], spider=BasisSpider, on_crawler=crawlers.append, REP_CLOCK=lambda: clock,
        REP_HOLD_TIMEOUT=60, REP_UNAVAILABLE_RETRY_DELAY=3600, REP_UNAVAILABLE_RETRY_MAX_DELAY=3600,
        spider_kwargs={"phases": [(when_settled(crawlers, lambda: clock.advance(61)), [])]},
    )
    basis = spider_of(result).failed_meta[site.url("/a")]
    assert (basis["decision"], basis["reason"]) == ("dropped", "robots.txt unavailable (timeout)")
    assert basis["robots_txt"] == {"url": site.origin() + "/robots.txt", "version": None, "fetched_at": None,
                                   "status": None, "final_url": None, "outcome": "disallow-all",
                                   "failing": {"since": iso(0), "attempts": 1, "last": "503"}}
    assert result.stat("rep/requests/dropped_after_hold") == 1
