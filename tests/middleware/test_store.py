"""SPEC 3.2: the middleware shares outcomes through a store, takes a fetch lease, and survives store errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest_twisted
from twisted.internet.task import Clock

from scrapy_rep.stores import Entry, Outcome, SQLiteStore
from tests.crawl import crawl
from tests.servers import robots
from tests.stores.storetools import run

RULES = "User-agent: *\nDisallow: /private\n"


def polling(clock: Clock, interval: float) -> bool:
    """The middleware is waiting ``interval`` for its next look at the store (its poll is on the clock)."""
    return any(call.getTime() == clock.seconds() + interval for call in clock.getDelayedCalls())


@pytest_twisted.ensureDeferred
async def test_a_second_crawler_reads_the_first_ones_entry_spec_3_2(sites: Any, tmp_path: Path) -> None:
    clock = Clock()
    site = sites()
    site.route("/robots.txt", robots(RULES))
    uri = f"sqlite:///{tmp_path / 'rep.db'}"
    first = await crawl([site.url("/a")], REP_CLOCK=lambda: clock, REP_STORE=uri)
    second = await crawl([site.url("/private"), site.url("/b")], REP_CLOCK=lambda: clock, REP_STORE=uri)
    assert site.hits_for("/robots.txt") == 1
    assert (first.stat("rep/robots/downloads"), second.stat("rep/robots/downloads")) == (1, 0)
    assert second.stat("rep/cache/store_hits") == 1
    assert second.downloaded == [site.url("/b")] and second.stat("rep/requests/forbidden") == 1


@pytest_twisted.ensureDeferred
async def test_store_errors_are_counted_and_never_mean_allow_all_spec_3_2(sites: Any, tmp_path: Path) -> None:
    site = sites()
    site.route("/robots.txt", robots(RULES))
    result = await crawl([site.url("/private"), site.url("/a")],
                         REP_STORE=f"sqlite:///{tmp_path / 'missing-dir' / 'rep.db'}")
    assert result.downloaded == [site.url("/a")] and result.stat("rep/requests/forbidden") == 1
    assert result.stat("rep/store/errors/get") == 1 and result.stat("rep/store/errors/put") == 1
    assert site.hits_for("/robots.txt") == 1
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_a_leased_origin_waits_for_the_other_crawlers_entry_spec_3_2(sites: Any, tmp_path: Path) -> None:
    clock = Clock()
    site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /\n"))  # never fetched in this test
    path = str(tmp_path / "rep.db")
    other = SQLiteStore(path, clock=lambda: 0.0, timeout=1.0)
    origin = site.origin()
    assert run(other.acquire_lease(origin, "another-crawler", 300.0))

    def the_other_crawler_finishes() -> bool:
        if not polling(clock, 1):
            return False
        run(other.put(Entry(origin=origin, outcome=Outcome.RULES, fetched_at=0.0, expires_at=86400.0,
                            body=RULES.encode(), status=200)))
        clock.advance(1)  # REP_STORE_POLL_INTERVAL
        return True

    result = await crawl([site.url("/private"), site.url("/a")], REP_CLOCK=lambda: clock,
                         REP_STORE=f"sqlite:///{path}", REP_STORE_POLL_INTERVAL=1,
                         spider_kwargs={"phases": [(the_other_crawler_finishes, [])]})
    assert site.hits_for("/robots.txt") == 0
    assert result.downloaded == [site.url("/a")]
    assert result.stat("rep/cache/store_hits") == 1
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_a_lease_that_is_never_fulfilled_ends_in_our_own_fetch_spec_3_2(sites: Any, tmp_path: Path) -> None:
    clock = Clock()
    site = sites()
    site.route("/robots.txt", robots(RULES))
    path = str(tmp_path / "rep.db")
    assert run(SQLiteStore(path, clock=lambda: 0.0, timeout=1.0).acquire_lease(site.origin(), "gone", 300.0))

    def poll_due() -> bool:
        if not polling(clock, 100):
            return False
        clock.advance(100)
        return True

    result = await crawl([site.url("/private"), site.url("/a")], REP_CLOCK=lambda: clock,
                         REP_STORE=f"sqlite:///{path}", REP_STORE_POLL_INTERVAL=100, REP_STORE_LEASE_TTL=300,
                         REP_HOLD_TIMEOUT=1000,
                         spider_kwargs={"phases": [(poll_due, []) for _ in range(3)]})
    assert site.hits_for("/robots.txt") == 1
    assert result.downloaded == [site.url("/a")]
