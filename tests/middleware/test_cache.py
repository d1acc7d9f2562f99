"""SPEC 2.4, 2.6 and 3.1 in real crawls: TTL expiry and refresh, max-age, stale-on-error, the 30-day rule."""

from __future__ import annotations

from typing import Any

import pytest
import pytest_twisted
from twisted.internet.task import Clock

from scrapy_rep.config import DAY
from tests.crawl import crawl, middleware
from tests.servers import Reply, robots

FIRST = "User-agent: *\nDisallow: /old\n"
SECOND = "User-agent: *\nDisallow: /new\n"


@pytest.mark.parametrize(
    ("headers", "still_cached_at", "expired_at"),
    [
        ({}, DAY - 1, DAY),  # REP_CACHE_TTL
        ({"Cache-Control": "max-age=3600"}, 3599, 3600),  # SPEC 3.1: shortening
        ({"Cache-Control": "public, max-age=172800"}, 2 * DAY - 1, 2 * DAY),  # lengthening
    ],
)
@pytest_twisted.ensureDeferred
async def test_ttl_expiry_and_refresh_spec_3_1(
    sites: Any, headers: dict[str, str], still_cached_at: float, expired_at: float
) -> None:
    clock = Clock()
    site = sites()
    site.route("/robots.txt", robots(FIRST, headers=headers), robots(SECOND))
    result = await crawl(
        [site.url("/old/1"), site.url("/new/1")],
        REP_CLOCK=lambda: clock,
        spider_kwargs={"phases": [
            (lambda: clock.advance(still_cached_at), [site.url("/old/2"), site.url("/new/2")]),
            (lambda: clock.advance(expired_at - still_cached_at), [site.url("/old/3"), site.url("/new/3")]),
        ]},
    )
    assert sorted(result.downloaded) == sorted([site.url("/new/1"), site.url("/new/2"), site.url("/old/3")])
    assert site.hits_for("/robots.txt") == 2
    # Two lookups the store could not answer fresh (the first, and the refresh of the expired entry): two misses.
    assert result.stat("rep/cache/refreshes") == 1 and result.stat("rep/cache/misses") == 2
    result.assert_accounted()


@pytest.mark.parametrize("failure", [Reply(status=500), Reply(status=503), Reply(hang=True)])
@pytest_twisted.ensureDeferred
async def test_stale_copy_is_used_when_the_refresh_fails_spec_2_4(sites: Any, failure: Reply) -> None:
    clock = Clock()
    site = sites()
    site.route("/robots.txt", robots(FIRST), failure)
    result = await crawl(
        [site.url("/old/1"), site.url("/x/1")],
        REP_CLOCK=lambda: clock, DOWNLOAD_TIMEOUT=1,
        spider_kwargs={"phases": [(lambda: clock.advance(DAY), [site.url("/old/2"), site.url("/x/2")])]},
    )
    assert sorted(result.downloaded) == sorted([site.url("/x/1"), site.url("/x/2")])  # no hold: the copy decides
    assert result.stat("rep/requests/forbidden") == 2 and result.stat("rep/requests/dropped_after_hold") == 0
    assert site.hits_for("/robots.txt") == 2
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_unreachable_for_30_days_without_a_copy_allows_spec_2_2_2_6(sites: Any) -> None:
    clock = Clock()
    site = sites()
    site.route("/robots.txt", Reply(status=500, body=b"User-agent: *\nDisallow: /"))
    downloaded_during_hold: list[int] = []

    def after(seconds: float) -> Any:
        def step() -> None:
            downloaded_during_hold.append(site.hits_for("/a"))
            clock.advance(seconds)
        return step

    # Retries back off 1 day, then 2, 4, 8, 10, 10 (REP_ERROR_RETRY_MAX_DELAY): attempts at 0, 1, 3, 7, 15, 25, 35
    # days; the attempt at day 35 is the first past 30 days of failures.
    result = await crawl(
        [site.url("/a")],
        REP_CLOCK=lambda: clock, REP_HOLD_TIMEOUT=40 * DAY, REP_ERROR_RETRY_DELAY=DAY,
        REP_ERROR_RETRY_MAX_DELAY=10 * DAY,
        spider_kwargs={"phases": [(after(d * DAY), []) for d in (1, 2, 4, 8, 10, 10)]},
    )
    assert downloaded_during_hold == [0] * 6
    assert result.downloaded == [site.url("/a")]
    assert site.hits_for("/robots.txt") == 7
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_twelve_hours_reproduces_googles_newer_rule_spec_2_6(sites: Any) -> None:
    clock = Clock()
    site = sites()
    site.route("/robots.txt", Reply(status=503))
    result = await crawl(
        [site.url("/a")],
        REP_CLOCK=lambda: clock, REP_HOLD_TIMEOUT=DAY, REP_UNREACHABLE_ALLOW_AFTER=12 * 3600,
        REP_UNAVAILABLE_RETRY_DELAY=6 * 3600, REP_UNAVAILABLE_RETRY_MAX_DELAY=6 * 3600,
        spider_kwargs={"phases": [(lambda: clock.advance(6 * 3600), []), (lambda: clock.advance(6 * 3600), [])]},
    )
    assert result.downloaded == [site.url("/a")]
    assert site.hits_for("/robots.txt") == 3


@pytest_twisted.ensureDeferred
async def test_the_in_process_map_is_bounded_by_rep_memory_max_origins(sites: Any) -> None:
    one, two = sites(), sites()
    one.route("/robots.txt", robots(FIRST))
    two.route("/robots.txt", robots(SECOND))
    result = await crawl([one.url("/old/1")], REP_MEMORY_MAX_ORIGINS=1, CONCURRENT_REQUESTS=1,
                         spider_kwargs={"phases": [(None, [two.url("/a")]), (None, [one.url("/old/2"),
                                                                                  one.url("/x")])]})
    assert result.stat("rep/cache/evictions") >= 1
    assert sorted(result.downloaded) == sorted([two.url("/a"), one.url("/x")])
    assert one.hits_for("/robots.txt") == 2  # the memory store (also bounded to 1) had dropped it too
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_the_in_process_map_forgets_the_least_recently_used_origin_not_the_oldest(sites: Any) -> None:
    """Bound 2: A and B, then A again (hot), then C: B goes, A stays, so A's robots.txt is never fetched again."""
    a, b, c = sites(), sites(), sites()
    for site in (a, b, c):
        site.route("/robots.txt", robots(FIRST))
    crawlers: list[Any] = []
    result = await crawl([a.url("/1"), b.url("/1")], REP_MEMORY_MAX_ORIGINS=2, CONCURRENT_REQUESTS=1,
                         on_crawler=crawlers.append,
                         spider_kwargs={"phases": [(None, [a.url("/2")]), (None, [c.url("/1")]),
                                                   (None, [a.url("/3")])]})
    assert result.stat("rep/cache/evictions") == 1
    assert list(middleware(crawlers[0]).origins) == [c.origin(), a.origin()]
    assert a.hits_for("/robots.txt") == 1
    result.assert_accounted()
