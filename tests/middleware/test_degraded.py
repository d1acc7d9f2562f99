"""A Scrapy whose internals are not what ``scrapy_rep._scrapy`` expects: the feature degrades to the safe
behaviour, says so once at WARNING with a ``rep/degraded/<feature>`` stat, and the crawl still obeys robots.txt.

Each test renames one internal the way a future Scrapy could (the name ``_scrapy`` looks up), in a real crawl.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
import pytest_twisted
from scrapy.crawler import Crawler

from scrapy_rep import _scrapy
from tests.crawl import crawl, middleware
from tests.servers import robots

RULES = "User-agent: *\nDisallow: /private\nCrawl-delay: 2\n"


def degraded_warnings(caplog: pytest.LogCaptureFixture, feature: str) -> list[str]:
    return [record.getMessage() for record in caplog.records
            if record.levelno == logging.WARNING and f"({feature})" in record.getMessage()]


async def crawl_recording_waits(sites: Any) -> tuple[Any, Any, list[tuple[int, int]]]:
    """Crawl three pages of one origin; when its robots.txt request reaches the site, record (parked requests,
    requests in the downloader's active set)."""
    site = sites()
    site.route("/robots.txt", robots(RULES))
    crawlers: list[Crawler] = []
    seen: list[tuple[int, int]] = []

    def on_hit(hit: Any) -> None:
        if hit.path == "/robots.txt":
            engine = crawlers[0].engine
            assert engine is not None
            seen.append((len(middleware(crawlers[0]).parking.parked), len(engine.downloader.active)))

    site.on_hit.append(on_hit)
    result = await crawl([site.url("/a"), site.url("/b"), site.url("/private")], on_crawler=crawlers.append)
    return result, site, seen


@pytest_twisted.ensureDeferred
async def test_parking_parks_waiting_requests_outside_the_downloader(sites: Any,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    """The reference for the degraded test below: with the internals as expected, the three waiting requests
    leave the active set (only the robots.txt request is in it)."""
    result, _, seen = await crawl_recording_waits(sites)
    assert seen == [(3, 1)]
    assert result.stat("rep/degraded/parking") == 0 and not degraded_warnings(caplog, "parking")


@pytest.mark.parametrize("internal", ["ENGINE_SLOT", "DOWNLOADER_ACTIVE"])
@pytest_twisted.ensureDeferred
async def test_without_the_engine_internals_waiting_requests_keep_their_downloader_place(
    sites: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, internal: str
) -> None:
    monkeypatch.setattr(_scrapy, internal, "renamed_by_a_future_scrapy")
    result, site, seen = await crawl_recording_waits(sites)
    assert seen == [(0, 4)]  # nothing parked: the three pages wait inside the downloader, as with the built-in
    assert sorted(result.downloaded) == [site.url("/a"), site.url("/b")]
    assert result.stat("rep/requests/forbidden") == 1
    assert site.paths().index("/robots.txt") == 0  # still nothing before robots.txt
    assert result.stat("rep/degraded/parking") == 1
    assert len(degraded_warnings(caplog, "parking")) == 1  # said once, though three requests could not be parked
    result.assert_accounted()


@pytest.mark.parametrize("internal", ["DOWNLOADER_SLOTS", "DOWNLOADER_PER_SLOT"])
@pytest_twisted.ensureDeferred
async def test_without_the_downloader_slots_crawl_delay_is_not_applied(
    sites: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, internal: str
) -> None:
    monkeypatch.setattr(_scrapy, internal, "renamed_by_a_future_scrapy")
    site = sites()
    site.route("/robots.txt", robots(RULES))
    result = await crawl([site.url("/a"), site.url("/private")], REP_OBEY_CRAWL_DELAY=True)
    assert result.downloaded == [site.url("/a")]  # the rules are obeyed all the same
    assert not [key for key in result.stats if key.startswith("rep/crawl_delay/")]
    assert result.stat("rep/degraded/crawl_delay") == 1 and len(degraded_warnings(caplog, "crawl_delay")) == 1
    result.assert_accounted()
