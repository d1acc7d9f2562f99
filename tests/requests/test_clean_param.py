"""Yandex's Clean-param obeyed in real crawls (REP_CLEAN_PARAM, opt-in; requests/clean_param.py): URLs that differ
only in the listed parameters are downloaded once, under the canonical URL, counted at the server."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import pytest_twisted

from tests.crawl import ListSpider, crawl
from tests.servers import Site, robots

ROBOTS = "Clean-param: sid&ref /shop/\nUser-agent: *\nDisallow: /private\n"


class DedupedSpider(ListSpider):
    """As ListSpider, but its start requests go through the dupefilter (as a spider's links do)."""

    async def start(self) -> Any:
        from scrapy import Request

        for url in self.urls:
            yield Request(url, errback=self.failure, meta=dict(self.meta))


def _site(sites: Any) -> Site:
    site: Site = sites()
    site.route("/robots.txt", robots(ROBOTS))
    return site


URLS = ["/shop/item?id=1&sid=a", "/shop/item?sid=b&id=1", "/shop/item?id=1&ref=mail&sid=c", "/shop/item?id=2",
        "/blog/post?sid=a", "/blog/post?sid=b"]


@pytest_twisted.ensureDeferred
async def test_urls_differing_only_in_listed_parameters_are_downloaded_once(
        sites: Any, caplog: pytest.LogCaptureFixture) -> None:
    site = _site(sites)
    with caplog.at_level(logging.DEBUG, logger="scrapy_rep"):
        result = await crawl([site.url(u) for u in URLS], spider=DedupedSpider, REP_CLEAN_PARAM=True,
                             LOG_LEVEL="DEBUG")
    assert sorted(site.paths()) == ["/blog/post?sid=a", "/blog/post?sid=b", "/robots.txt",  # outside the prefix
                                    "/shop/item?id=1", "/shop/item?id=2"]  # ?id=1 once
    assert sorted(result.downloaded) == sorted(site.url(u) for u in ["/shop/item?id=1", "/shop/item?id=2",
                                                                     "/blog/post?sid=a", "/blog/post?sid=b"])
    assert result.stat("rep/requests/rewritten") == 3
    assert result.stat("rep/requests/rewritten/clean_param") == 3
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Clean-param:")]
    assert len(said) == 3 and any("/shop/item?sid=b&id=1" in line for line in said), said
    assert all("Clean-param: sid&ref /shop/" in line for line in said), said


@pytest_twisted.ensureDeferred
async def test_off_by_default(sites: Any) -> None:
    site = _site(sites)
    result = await crawl([site.url(u) for u in URLS], spider=DedupedSpider)
    assert len([path for path in site.paths() if path.startswith("/shop/item")]) == 4
    assert result.stat("rep/requests/rewritten") == 0


@pytest_twisted.ensureDeferred
async def test_the_canonical_url_is_checked_too(sites: Any) -> None:
    """A rewritten request comes back through the middleware: its canonical URL is decided by the rules."""
    site: Site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /p$\nClean-param: s\n"))
    result = await crawl([site.url("/p?s=1"), site.url("/q?s=1")], spider=DedupedSpider, REP_CLEAN_PARAM=True)
    assert sorted(site.paths()) == ["/q", "/robots.txt"]
    assert result.failed == [(site.url("/p"), "IgnoreRequest")]
    assert result.stat("rep/requests/forbidden") == 1
