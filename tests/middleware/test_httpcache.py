"""Beside Scrapy's HTTP cache (issue 12; SPEC 2.2-2.4, 3): robots.txt is never stored in nor replayed from
``HttpCacheMiddleware`` (robots requests carry ``meta["dont_cache"]``), so a robots.txt that failed in one run is asked
again in the next, while pages are replayed as the cache policy says. Two real crawls per test, one cache directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from scrapy.crawler import Crawler
from twisted.internet.task import Clock

from scrapy_rep.robots.state import State
from tests.crawl import Result, crawl, middleware
from tests.servers import PAGE, Reply, robots

RULES = "User-agent: *\nDisallow: /private\n"
#: Cacheable for a day under either policy (RFC2616Policy stores a response with max-age, whatever its status).
CACHEABLE = {"Cache-Control": "max-age=86400"}
HOLD_TIMEOUT = 30.0


async def run(urls: list[str], cache_dir: Path, policy: str) -> Result:
    """One crawl with the HTTP cache on. Held requests are dropped once the crawl is idle (the clock jumps past
    REP_HOLD_TIMEOUT; robots.txt retries come later than that, so each run asks robots.txt once per origin)."""
    clock = Clock()
    crawlers: list[Crawler] = []

    def past_the_hold_timeout() -> bool:
        origins = middleware(crawlers[0]).origins.values()
        if any(state.state in (State.FETCHING, State.REFRESHING) for state in origins):
            return False  # robots.txt answered but not adopted yet: not the idle moment this is for
        clock.advance(HOLD_TIMEOUT + 1)
        return True

    result = await crawl(
        urls, on_crawler=crawlers.append, spider_kwargs={"phases": [(past_the_hold_timeout, [])]},
        HTTPCACHE_ENABLED=True, HTTPCACHE_DIR=str(cache_dir), HTTPCACHE_POLICY=policy,
        REP_CLOCK=lambda: clock, REP_HOLD_TIMEOUT=HOLD_TIMEOUT,
        REP_UNAVAILABLE_RETRY_DELAY=3600, REP_UNAVAILABLE_RETRY_MAX_DELAY=3600,
    )
    result.assert_accounted()
    return result


@pytest.mark.parametrize(
    "policy", ["scrapy.extensions.httpcache.DummyPolicy", "scrapy.extensions.httpcache.RFC2616Policy"]
)
@pytest_twisted.ensureDeferred
async def test_a_failed_robots_txt_is_not_replayed_from_the_http_cache_spec_2_2_3(
    sites: Any, tmp_path: Path, policy: str
) -> None:
    failing, healthy = sites(), sites()
    failing.route("/robots.txt", Reply(status=503, headers=CACHEABLE))
    healthy.route("/robots.txt", robots(RULES, headers=CACHEABLE))
    healthy.route("/b", Reply(body=PAGE, headers={"Content-Type": "text/html", **CACHEABLE}))
    urls = [failing.url("/a"), failing.url("/private/x"), healthy.url("/b")]
    cache_dir = tmp_path / "httpcache"

    first = await run(urls, cache_dir, policy)
    assert first.downloaded == [healthy.url("/b")]
    assert first.stat("rep/requests/dropped_after_hold/timeout") == 2  # SPEC 2.3: held, then dropped
    assert failing.paths() == ["/robots.txt"]

    # The next run, the site is healthy again.
    failing.route("/robots.txt", robots(RULES, headers=CACHEABLE))
    second = await run(urls, cache_dir, policy)
    # robots.txt is asked again (the 503 is not replayed), and so is the healthy origin's (a success neither).
    assert failing.hits_for("/robots.txt") == 2 and healthy.hits_for("/robots.txt") == 2
    assert failing.paths()[1:] == ["/robots.txt", "/a"]  # the allowed page crawled, the disallowed one not
    assert sorted(second.downloaded) == sorted([failing.url("/a"), healthy.url("/b")])
    assert (second.stat("rep/requests/allowed"), second.stat("rep/requests/forbidden")) == (2, 1)
    assert second.stat("rep/requests/dropped_after_hold") == 0
    # The HTTP cache works for pages: /b comes from the cache, unasked; it was the run's only cache hit.
    assert healthy.hits_for("/b") == 1
    assert second.stat("httpcache/hit") == 1
    assert first.stat("httpcache/hit") == 0


@pytest_twisted.ensureDeferred
async def test_robots_requests_are_never_stored_in_the_http_cache_spec_3(sites: Any, tmp_path: Path) -> None:
    """Only pages reach the cache's storage: the robots.txt responses (503, then 200) are not counted as stored."""
    site = sites()
    site.route("/robots.txt", Reply(status=503, headers=CACHEABLE), robots(RULES, headers=CACHEABLE))
    result = await run([site.url("/a")], tmp_path / "httpcache", "scrapy.extensions.httpcache.DummyPolicy")
    assert result.downloaded == []  # held then dropped: the retry is scheduled after the hold timeout
    assert result.stat("httpcache/store") == 0 and result.stat("httpcache/miss") == 0
    assert site.paths() == ["/robots.txt"]
