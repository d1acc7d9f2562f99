"""SPEC 3.2: the middleware shares outcomes through a store, takes a fetch lease, and survives store errors."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from scrapy import signals
from scrapy.crawler import Crawler
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
async def test_a_second_crawler_reads_the_first_ones_entry_spec_3_2(sites: Any, tmp_path: Path,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    site = sites()
    site.route("/robots.txt", robots(RULES))
    uri = f"sqlite:///{tmp_path / 'rep.db'}"
    caplog.set_level(logging.DEBUG, logger="scrapy_rep.middleware")
    first = await crawl([site.url("/a")], REP_CLOCK=lambda: clock, REP_STORE=uri)
    clock.advance(150)
    second = await crawl([site.url("/private"), site.url("/b")], REP_CLOCK=lambda: clock, REP_STORE=uri)
    assert site.hits_for("/robots.txt") == 1
    assert (first.stat("rep/robots/downloads"), second.stat("rep/robots/downloads")) == (1, 0)
    # Issue 25: the stats and the origin's line say the second crawl's entry came from the store, and how old it is.
    assert (first.stat("rep/cache/misses"), first.stat("rep/cache/store_hits")) == (1, 0)
    assert (second.stat("rep/cache/misses"), second.stat("rep/cache/store_hits")) == (0, 1)
    assert [r.getMessage() for r in caplog.records if " robots.txt 200" in r.getMessage()] == [
        f"{site.origin()} robots.txt 200: obeying its rules",
        f"{site.origin()} robots.txt 200: obeying its rules (from the store, fetched 150 s ago)",
    ]
    assert second.downloaded == [site.url("/b")] and second.stat("rep/requests/forbidden") == 1


def break_the_file_once_open(path: Path) -> Callable[[Crawler], None]:
    """After the start-up check opened ``path``, overwrite it with what is not a database: every store call of the
    crawl then fails, as when a disk fails or another program clobbers the file mid-crawl."""

    def on_crawler(crawler: Crawler) -> None:
        crawler.signals.connect(lambda: path.write_bytes(b"not a database" * 512), signal=signals.spider_opened,
                                weak=False)

    return on_crawler


@pytest_twisted.ensureDeferred
async def test_store_errors_are_counted_and_never_mean_allow_all_spec_3_2(sites: Any, tmp_path: Path,
                                                                          caplog: pytest.LogCaptureFixture) -> None:
    """Issue 4: a file that stops being a database fails every store call; the crawl logs and counts that, fetches
    robots.txt itself and obeys it (never "allow all"). A file unreadable from the start: tests/stores/test_startup."""
    site = sites()
    site.route("/robots.txt", robots(RULES))
    path = tmp_path / "rep.db"
    result = await crawl([site.url("/private"), site.url("/a")], REP_STORE=f"sqlite:///{path}",
                         on_crawler=break_the_file_once_open(path))
    assert result.downloaded == [site.url("/a")] and result.stat("rep/requests/forbidden") == 1
    assert result.stat("rep/store/errors/lookup") == 1 and result.stat("rep/store/errors/put") == 1
    assert site.hits_for("/robots.txt") == 1
    result.assert_accounted()
    failed = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING and "store" in r.getMessage()]
    assert failed[0].startswith(f"robots.txt store lookup failed for {site.origin()}: SQLite store {path}: file is "
                                "not a database (the crawl goes on with what this process holds; further store errors")


@pytest_twisted.ensureDeferred
async def test_a_failing_store_warns_once_then_counts_whatever_the_number_of_origins(
        sites: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 25: a store that fails for every origin logs one WARNING (naming an origin, never an entry's repr) and
    one count at close, not a WARNING per call."""
    origins = [sites() for _ in range(6)]
    for site in origins:
        site.route("/robots.txt", robots(RULES))
    path = tmp_path / "rep.db"
    result = await crawl([site.url("/a") for site in origins], REP_STORE=f"sqlite:///{path}",
                         on_crawler=break_the_file_once_open(path))
    assert sorted(result.downloaded) == sorted(site.url("/a") for site in origins)
    errors = result.stat("rep/store/errors")
    assert errors >= 12  # a lookup and a put per origin at least
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING and "store" in r.getMessage()]
    assert len(warned) == 2 and "Entry(" not in " ".join(warned)
    assert warned[1] == (f"robots.txt store: {errors} calls failed in this crawl (rep/store/errors/<operation> "
                         "says which)")


@pytest_twisted.ensureDeferred
async def test_a_sqlite_file_that_cannot_be_opened_stops_the_crawl_at_start_up(
        sites: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 25: a missing directory is refused before any request, in one CRITICAL line naming the resolved path
    and both spellings of a SQLite URL (the crawl itself is tests/middleware/test_config_exit.py's)."""
    site = sites()
    with pytest.raises(Exception) as raised:
        await crawl([site.url("/a")], REP_STORE=f"sqlite:///{tmp_path / 'nodir' / 'rep.db'}")
    assert "ConfigError" in repr(raised.value) or "ConfigError" in repr(raised.value.__context__)
    critical = [r.getMessage() for r in caplog.records if r.levelno == logging.CRITICAL]
    assert critical == [f"scrapy-rep: REP_STORE='sqlite:///{tmp_path}/nodir/rep.db': the directory {tmp_path}/nodir "
                        "does not exist; a relative path (sqlite:///robots.db) is relative to the working directory, "
                        "an absolute one has four slashes (sqlite:////abs/robots.db); the crawl cannot start"]
    assert site.hits == [] and not (tmp_path / "nodir").exists()


@pytest_twisted.ensureDeferred
async def test_a_leased_origin_waits_for_the_other_crawlers_entry_spec_3_2(sites: Any, tmp_path: Path,
                                                                            caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="scrapy_rep.middleware")
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
    assert (result.stat("rep/cache/store_hits"), result.stat("rep/cache/misses")) == (0, 1)
    assert result.stat("rep/cache/misses/other_crawler") == 1  # the store had nothing fresh when first asked
    assert [r.getMessage() for r in caplog.records if " robots.txt 200" in r.getMessage()] == [
        f"{origin} robots.txt 200: obeying its rules (from another crawler's download, {clock.seconds():.0f} s ago)"]
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
