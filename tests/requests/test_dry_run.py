"""REP_ENFORCE = False, the dry run: every request is decided, counted and logged as when enforcing, but none is
forbidden, held or dropped; ``rep/dry_run/would_*`` say which would have been (scrapy_rep/requests/dry_run.py).

Real crawls against the local servers; time is a ``Clock`` passed as REP_CLOCK, advanced by phases.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

import pytest
import pytest_twisted
from scrapy.crawler import Crawler
from twisted.internet.defer import Deferred
from twisted.internet.task import Clock

from scrapy_rep.robots.state import State
from tests.crawl import crawl, middleware
from tests.reporting.test_waiting_log import held_lines, messages, when
from tests.servers import PAGE, Reply, robots

#: The WARNING every dry run starts with (reporting/startup.py).
DRY_RUN_WARNING = ("scrapy-rep: REP_ENFORCE = False: a dry run: requests robots.txt forbids, holds or drops are sent "
                   "anyway and counted under rep/dry_run/ (the close report says what enforcing would have stopped); "
                   "remove the setting to obey robots.txt")

LOGGER = "scrapy_rep.middleware"


@pytest.mark.parametrize("enforce", [None, False])  # None: REP_ENFORCE unset, the default (enforcing)
@pytest_twisted.ensureDeferred
async def test_a_forbidden_page_is_downloaded_in_a_dry_run_and_counted_would_forbid(
    sites: Any, caplog: pytest.LogCaptureFixture, enforce: bool | None
) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /\n"))
    origin = site.origin()
    settings = {} if enforce is None else {"REP_ENFORCE": enforce}
    result = await crawl([site.url("/a"), site.url("/b")], LOG_LEVEL="DEBUG", **settings)
    dry = enforce is False
    forbidden = [m for m in messages(caplog, logging.DEBUG) if m.startswith("Forbidden by robots.txt")]
    marker = " (dry run, sent anyway)" if dry else ""
    rule = "line 2 (Disallow: /) of the '*' group (line 1)"
    version = hashlib.sha256(b"User-agent: *\nDisallow: /\n").hexdigest()[:12]  # the copy's (basis.py)
    assert sorted(forbidden) == [
        f"Forbidden by robots.txt{marker}: {site.url(p)} ({origin}/robots.txt {rule}; as ['TestBot']; "
        f"version {version})"
        for p in ("/a", "/b")]
    assert sorted(result.downloaded) == ([site.url("/a"), site.url("/b")] if dry else [])
    assert (result.stat("rep/requests/forbidden"), result.stat("rep/requests/allowed"),
            result.stat("rep/dry_run/would_forbid")) == ((0, 2, 2) if dry else (2, 0, 0))
    verb, tail = ("would have been", " (dry run, REP_ENFORCE = False: all were sent)") if dry else ("was", "")
    start = [DRY_RUN_WARNING] if dry else []  # said once at start (reporting/startup.py)
    assert messages(caplog, logging.WARNING) == [
        *start,
        f"scrapy-rep: every request of {origin} (2) {verb} forbidden by its robots.txt (200): {rule}{tail}",
        f"scrapy-rep: every start request (2) {verb} forbidden or dropped by robots.txt: {origin} 2 forbidden (200: "
        f"{rule}){tail}",
    ]
    summary = ("robots.txt would have forbidden 2 requests of 1 origin at close (dry run)" if dry
               else "robots.txt forbade 2 requests of 1 origin at close")
    assert f"{summary}: {origin} 2 ({rule})" in messages(caplog)
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_a_503_origins_pages_go_on_at_once_in_a_dry_run_and_count_would_hold(
    sites: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """The first requests wait for the first robots.txt answer (needed to decide them), then go on; a later one goes
    on at once while robots.txt is still failing (HOLDING, its retry scheduled on the clock, never advanced)."""
    caplog.set_level(logging.INFO, logger=LOGGER)
    clock = Clock()
    site = sites()
    site.route("/robots.txt", Reply(status=503))
    origin = site.origin()
    crawlers: list[Crawler] = []

    def failing() -> bool:
        state = middleware(crawlers[0]).origins.get(origin)
        return state is not None and state.state is State.HOLDING and not state.waiters

    result = await crawl([site.url("/a"), site.url("/b")], REP_CLOCK=lambda: clock, REP_ENFORCE=False,
                         on_crawler=crawlers.append,
                         spider_kwargs={"phases": [(when(failing, lambda: None), [site.url("/later")])]})
    assert sorted(result.downloaded) == [site.url(p) for p in ("/a", "/b", "/later")]
    assert site.paths().index("/a") > site.paths().index("/robots.txt")  # waited for the first answer
    assert site.hits_for("/robots.txt") == 1  # the retry is due on the clock, never advanced
    assert (result.stat("rep/dry_run/would_hold"), result.stat("rep/requests/allowed")) == (3, 3)
    assert result.stat("rep/requests/dropped_after_hold") == 0
    assert (f"{origin} robots.txt 503: dry run (REP_ENFORCE = False): its requests would be held; they go on"
            in messages(caplog))
    assert [line for line in held_lines(caplog) if "held for" in line] == []  # nothing held
    assert messages(caplog, logging.WARNING) == [DRY_RUN_WARNING]  # at start only: nothing dropped, nothing forbidden
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_the_same_503_origin_holds_when_enforcing(sites: Any) -> None:
    clock = Clock()
    site = sites()
    site.route("/robots.txt", Reply(status=503))
    result = await crawl([site.url("/a")], REP_CLOCK=lambda: clock, REP_HOLD_TIMEOUT=0.5,
                         spider_kwargs={"phases": [(lambda: clock.advance(1), [])]})
    assert result.downloaded == []
    assert (result.stat("rep/requests/dropped_after_hold/timeout"), result.stat("rep/dry_run/would_hold")) == (1, 0)
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_a_request_still_waiting_at_rep_hold_timeout_goes_on_in_a_dry_run(
    sites: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """robots.txt does not answer (gated) within REP_HOLD_TIMEOUT: the waiting request goes on undecided
    (would_drop); the answer, released when that request reaches the site, decides the next request."""
    caplog.set_level(logging.INFO, logger=LOGGER)
    clock = Clock()
    gate: Deferred[Any] = Deferred()
    site = sites()
    origin = site.origin()
    crawlers: list[Crawler] = []

    def robots_hit(request: Any) -> Reply:
        state = middleware(crawlers[0]).origins[origin]
        assert state.state is State.FETCHING and len(state.waiters) == 1  # /a waits for this answer
        clock.advance(600)  # REP_HOLD_TIMEOUT passes while robots.txt is in flight
        return robots("User-agent: *\nDisallow: /private\n", gate=gate)

    def page_hit(request: Any) -> Reply:
        gate.callback(None)  # robots.txt answers once the undecided request went on
        return Reply(body=PAGE)

    site.route("/robots.txt", robots_hit)
    site.route("/a", page_hit)
    ready = (lambda: middleware(crawlers[0]).origins[origin].state is State.READY, lambda: None)
    result = await crawl([site.url("/a")], REP_CLOCK=lambda: clock, REP_ENFORCE=False, on_crawler=crawlers.append,
                         spider_kwargs={"phases": [(when(*ready), [site.url("/private/late")])]})
    assert sorted(result.downloaded) == [site.url("/a"), site.url("/private/late")]
    assert (result.stat("rep/dry_run/would_drop"), result.stat("rep/dry_run/would_forbid"),
            result.stat("rep/requests/dropped_after_hold")) == (1, 1, 0)
    assert [m for m in messages(caplog) if m.startswith("Dropped after waiting")] == [
        f"Dropped after waiting for {origin} robots.txt (timeout, state fetching) (dry run, sent anyway): "
        f"{site.url('/a')}"
    ]
    assert not [m for m in messages(caplog, logging.WARNING) if m.startswith("robots.txt unavailable")]
    result.assert_accounted()
