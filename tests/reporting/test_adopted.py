"""The ``robots_version_adopted`` signal (reporting/adopted.py): once per version adopted, downloaded here or read
from the store, with the same version id either way; real crawls against a local server."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest_twisted
from scrapy.crawler import Crawler
from twisted.internet.task import Clock

import scrapy_rep
from tests.crawl import crawl, when_settled
from tests.servers import Reply, redirect, robots

DAY = 86_400.0
RULES = "User-agent: *\nDisallow: /private\n"


class Adoptions:
    """Connects to the signal and records what each call received."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def connect(self, crawler: Crawler) -> None:
        crawler.signals.connect(self.adopted, signal=scrapy_rep.robots_version_adopted)

    def adopted(self, origin: str, url: str, version: Any, outcome: str, body: bytes, source: str, response: Any,
                headers: Any, spider: Any) -> None:
        self.calls.append({"origin": origin, "url": url, "version": version, "outcome": outcome, "body": body,
                           "source": source, "status": None if response is None else response.status,
                           "content_type": None if headers is None else headers.get(b"Content-Type"),
                           "spider": spider.name})


@pytest_twisted.ensureDeferred
async def test_a_download_then_a_store_read_adopt_the_same_version(sites: Any, tmp_path: Any) -> None:
    site = sites()
    site.route("/robots.txt", redirect("/robots-v2.txt"))
    site.route("/robots-v2.txt", robots(RULES))
    store = f"sqlite:///{tmp_path / 'robots.db'}"
    first, second = Adoptions(), Adoptions()
    await crawl([site.url("/a")], on_crawler=first.connect, REP_STORE=store)
    await crawl([site.url("/b")], on_crawler=second.connect, REP_STORE=store)
    assert site.hits_for("/robots.txt") == 1
    [downloaded], [stored] = first.calls, second.calls
    assert downloaded["version"] == stored["version"]  # the id, the fetch time, the status and the final URL
    assert downloaded["version"].id == hashlib.sha256(RULES.encode()).hexdigest()
    assert downloaded["version"].url == site.url("/robots-v2.txt") and downloaded["version"].status == 200
    assert (downloaded["source"], downloaded["status"], downloaded["content_type"]) == ("downloaded", 200,
                                                                                         b"text/plain")
    assert (stored["source"], stored["status"], stored["content_type"]) == ("store", None, None)
    for call in (downloaded, stored):
        assert (call["origin"], call["url"], call["outcome"], call["body"], call["spider"]) == (
            site.origin(), site.origin() + "/robots.txt", "rules", RULES.encode(), "list")


@pytest_twisted.ensureDeferred
async def test_a_refresh_adopts_a_new_version_and_a_copy_kept_on_error_does_not(sites: Any) -> None:
    """Day 0: downloaded. Day 1: the same body again, a new version (a new fetch time). Day 2: a 503, the copy is
    kept (SPEC 2.4): no signal."""
    clock = Clock()
    site = sites()
    site.route("/robots.txt", robots(RULES), robots(RULES), Reply(status=503))
    adoptions = Adoptions()
    crawlers: list[Crawler] = []

    def hook(crawler: Crawler) -> None:
        crawlers.append(crawler)
        adoptions.connect(crawler)

    await crawl(
        [site.url("/a")], on_crawler=hook, REP_CLOCK=lambda: clock,
        spider_kwargs={"phases": [(when_settled(crawlers, lambda: clock.advance(DAY + 1)), [site.url("/b")]),
                                  (when_settled(crawlers, lambda: clock.advance(DAY + 1)), [site.url("/c")])]},
    )
    assert site.hits_for("/robots.txt") == 3
    assert [(call["version"].fetched_at, call["source"]) for call in adoptions.calls] == [
        (0.0, "downloaded"), (DAY + 1, "downloaded")]
    assert len({call["version"].id for call in adoptions.calls}) == 1


@pytest_twisted.ensureDeferred
async def test_a_404_is_adopted_as_an_allow_all_version_of_the_empty_body(sites: Any) -> None:
    site = sites()
    adoptions = Adoptions()
    await crawl([site.url("/a")], on_crawler=adoptions.connect)
    [call] = adoptions.calls
    assert (call["outcome"], call["body"], call["status"]) == ("allow-all", b"", 404)
    assert call["version"].id == hashlib.sha256(b"").hexdigest()
