"""A crawl that talks while it waits (SPEC 2.3): the periodic held-requests line, the lines when an origin starts or
stops holding, the close summary of dropped held requests, and delays formatted so that 0.2 s never reads 0 s.

Real crawls against the local servers; time is a ``Clock`` passed as REP_CLOCK, advanced by phases once the origins
are in the state the step needs (phases run at idle moments, which may come before a robots.txt answer is adopted).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
import pytest_twisted
from scrapy.crawler import Crawler
from scrapy.utils.defer import deferred_from_coro
from twisted.internet.task import Clock

from scrapy_rep._scrapy import stop_crawler
from scrapy_rep.reporting.outcome_log import format_duration
from scrapy_rep.robots.state import State
from tests.crawl import crawl, middleware
from tests.servers import Reply, robots

LOGGER = "scrapy_rep.middleware"
HELD = "robots.txt: "  # the held-requests lines (periodic and on an origin's change)


def messages(caplog: pytest.LogCaptureFixture, level: int = logging.INFO) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno == level]


def held_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [m for m in messages(caplog) if m.startswith(HELD)]


def holding(crawlers: list[Crawler], origin: str, waiters: int, attempts: int) -> bool:
    """``origin`` is in state HOLDING with ``waiters`` held requests after ``attempts`` failed fetches."""
    state = middleware(crawlers[0]).origins.get(origin)
    return (state is not None and state.state is State.HOLDING and len(state.waiters) == waiters
            and state.entry is not None and state.entry.failures == attempts)


def when(ready: Callable[[], bool], then: Callable[[], object]) -> Callable[[], bool]:
    """A phase action: ``then`` once ``ready`` holds (tried again at the next idle moment until then)."""

    def action() -> bool:
        if not ready():
            return False
        then()
        return True

    return action


def close(crawlers: list[Crawler]) -> None:
    deferred_from_coro(stop_crawler(crawlers[0]))


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0 s"), (0.2, "0.2 s"), (0.25, "0.25 s"), (1.5, "1.5 s"), (2, "2 s"), (15, "15 s"), (600, "600 s"),
     (900, "15 min"), (3600, "60 min"), (86_400, "24 h"), (30 * 86_400, "30 d"), (-3, "0 s")],
)
def test_durations_are_formatted_for_log_lines(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


@pytest_twisted.ensureDeferred
async def test_held_requests_are_reported_once_per_logstats_interval(sites: Any, caplog: Any) -> None:
    """A 503 origin (4 requests) and a 500 origin (2): the line at t=60 and t=120 only, with counts, status,
    attempts, next retry and drop time; the failed retries at 15, 45, 100 and 105 s add no line (still holding)."""
    caplog.set_level(logging.INFO, logger=LOGGER)
    clock = Clock()
    a, b = sites(), sites()
    a.route("/robots.txt", Reply(status=503))  # retried at 15, 45, 105 (SPEC 2.5's shorter schedule)
    b.route("/robots.txt", Reply(status=500))  # retried at 100 (REP_ERROR_RETRY_DELAY below)
    crawlers: list[Crawler] = []
    after: dict[str, int] = {}  # phase -> how many held lines were logged when it ran

    def mark(name: str, advance: float) -> Callable[[], None]:
        def step() -> None:
            after[name] = len(held_lines(caplog))
            clock.advance(advance)
        return step

    def both(a_attempts: int, b_attempts: int) -> Callable[[], bool]:
        return lambda: (holding(crawlers, a.origin(), 4, a_attempts) and holding(crawlers, b.origin(), 2, b_attempts))

    phases = [
        (when(both(1, 1), mark("t0", 15)), []),  # t=15: a's 2nd attempt
        (when(both(2, 1), mark("t15", 30)), []),  # t=45: a's 3rd attempt
        (when(both(3, 1), mark("t45", 15)), []),  # t=60: the first periodic line
        (when(both(3, 1), mark("t60", 59)), []),  # t=119: b's (due 100) and a's (due 105) retries, no line
        (when(both(4, 2), mark("t119", 1)), []),  # t=120: the second periodic line
        (when(both(4, 2), lambda: close(crawlers)), []),
    ]
    result = await crawl([a.url(f"/a{i}") for i in range(4)] + [b.url("/b0"), b.url("/b1")], REP_CLOCK=lambda: clock,
                         REP_ERROR_RETRY_DELAY=100, on_crawler=crawlers.append, spider_kwargs={"phases": phases})
    lines = held_lines(caplog)
    assert after["t0"] == 1  # a and b started holding: one line (the second start falls within its interval)
    assert after["t0"] == after["t15"] == after["t45"] == after["t60"] - 1 == after["t119"] - 1
    assert lines[after["t0"]:] == [
        f"robots.txt: 6 requests held for 2 origins; {a.origin()} (4 requests, 503, 3 attempts, next retry in 45 s, "
        f"drops from 540 s), {b.origin()} (2 requests, 500, 1 attempt, next retry in 40 s, drops from 540 s)",
        f"robots.txt: 6 requests held for 2 origins; {a.origin()} (4 requests, 503, 4 attempts, next retry in 119 s, "
        f"drops from 480 s), {b.origin()} (2 requests, 500, 2 attempts, next retry in 199 s, drops from 480 s)",
    ]
    assert messages(caplog, logging.WARNING) == [
        f"robots.txt unavailable: dropped 4 held requests of {a.origin()} (503 after 4 attempts; 4 at spider close)",
        f"robots.txt unavailable: dropped 2 held requests of {b.origin()} (500 after 2 attempts; 2 at spider close)",
    ]
    assert result.stat("rep/requests/dropped_after_hold/closing") == 6
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_an_origin_stopping_and_starting_to_hold_is_logged_and_drops_summarised_at_close(
    sites: Any, caplog: Any
) -> None:
    """REP_HOLD_TIMEOUT drops 3 requests (the origin stops holding: "no requests held any more"), a later request
    starts it holding again, 30 s after the first held line (within LOGSTATS_INTERVAL: no line of its own, the next
    periodic line would say it), and is dropped at close: one WARNING line sums both reasons."""
    caplog.set_level(logging.INFO, logger=LOGGER)
    clock = Clock()
    site = sites()
    site.route("/robots.txt", Reply(status=503))
    origin = site.origin()
    crawlers: list[Crawler] = []
    at_timeout: list[int] = []

    def hold_timeout_passes() -> None:
        at_timeout.append(len(held_lines(caplog)))
        clock.advance(30)  # the retry due at 15 starts, then the 3 requests are dropped

    phases = [
        (when(lambda: holding(crawlers, origin, 3, 1), hold_timeout_passes), []),
        (when(lambda: holding(crawlers, origin, 0, 2), lambda: None), [site.url("/late")]),
        (when(lambda: holding(crawlers, origin, 1, 2), lambda: close(crawlers)), []),
    ]
    result = await crawl([site.url(f"/p{i}") for i in range(3)], REP_CLOCK=lambda: clock, REP_HOLD_TIMEOUT=30,
                         on_crawler=crawlers.append, spider_kwargs={"phases": phases})
    assert at_timeout == [1]
    assert held_lines(caplog)[at_timeout[0]:] == ["robots.txt: no requests held any more"]
    assert messages(caplog, logging.WARNING) == [
        f"robots.txt unavailable: dropped 4 held requests of {origin} (503 after 2 attempts; 3 at REP_HOLD_TIMEOUT "
        "30 s, 1 at spider close)"
    ]
    assert (result.stat("rep/requests/dropped_after_hold/timeout"),
            result.stat("rep/requests/dropped_after_hold/closing")) == (3, 1)
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_nothing_is_reported_once_nothing_is_held(sites: Any, caplog: Any) -> None:
    """The origin recovers: its requests are released, the periodic line stops (no call left on the clock), and an
    origin whose first fetch makes requests wait briefly (the normal case) logs no held line of its own."""
    caplog.set_level(logging.INFO, logger=LOGGER)
    clock = Clock()
    failing, healthy = sites(), sites()
    failing.route("/robots.txt", Reply(status=503), robots("User-agent: *\nDisallow:\n"))
    crawlers: list[Crawler] = []
    calls_left: list[int] = []
    released_at: list[int] = []

    def later() -> None:
        released_at.append(len(held_lines(caplog)))
        calls_left.append(len(clock.getDelayedCalls()))
        clock.advance(600)

    def released() -> bool:
        state = middleware(crawlers[0]).origins[failing.origin()]
        return state.state is State.READY and not middleware(crawlers[0]).parking.parked

    phases = [
        (when(lambda: holding(crawlers, failing.origin(), 2, 1), lambda: clock.advance(15)), []),
        (when(released, later), [healthy.url("/later")]),
    ]
    result = await crawl([failing.url("/a"), failing.url("/b"), healthy.url("/x")], REP_CLOCK=lambda: clock,
                         on_crawler=crawlers.append, spider_kwargs={"phases": phases})
    lines = held_lines(caplog)
    assert len(lines) == 2 and f"{failing.origin()} (" in lines[0] and "503, 1 attempt, next retry in 15 s" in lines[0]
    assert lines[1] == "robots.txt: no requests held any more"
    assert released_at == [2] and calls_left == [0]  # no periodic call scheduled once nothing is held
    assert messages(caplog, logging.WARNING) == []  # nothing dropped: no close summary
    assert len(result.downloaded) == 4
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_logstats_interval_0_disables_the_periodic_line_and_sub_second_delays_print_as_such(
    sites: Any, caplog: Any
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    clock = Clock()
    site = sites()
    site.route("/robots.txt", Reply(status=503))
    origin = site.origin()
    crawlers: list[Crawler] = []
    phases = [
        (when(lambda: holding(crawlers, origin, 1, 1), lambda: clock.advance(120)), []),  # 2 intervals of 60 s
        (when(lambda: holding(crawlers, origin, 1, 2), lambda: close(crawlers)), []),
    ]
    await crawl([site.url("/a")], REP_CLOCK=lambda: clock, LOGSTATS_INTERVAL=0, REP_UNAVAILABLE_RETRY_DELAY=0.2,
                on_crawler=crawlers.append, spider_kwargs={"phases": phases})
    assert f"{origin} robots.txt 503: holding requests, retry in 0.2 s" in messages(caplog)
    assert held_lines(caplog) == [  # the origin started holding; no periodic line
        f"robots.txt: 1 request held for 1 origin; {origin} (1 request, 503, 1 attempt, next retry in 0.2 s, "
        "drops from 600 s)"
    ]


@pytest_twisted.ensureDeferred
async def test_origins_starting_and_stopping_to_hold_by_the_dozen_say_it_once_per_interval(
    sites: Any, caplog: Any
) -> None:
    """20 origins answer 503, then recover at their retry: 40 start/stop events, 2 lines (the first start, then
    "no requests held any more"), where each event used to log one (issue 26: 2,387 lines for 2,000 origins)."""
    caplog.set_level(logging.INFO, logger=LOGGER)
    clock = Clock()
    origins = [sites() for _ in range(20)]
    for site in origins:
        site.route("/robots.txt", Reply(status=503), robots("User-agent: *\nDisallow:\n"))
    crawlers: list[Crawler] = []

    def all_holding() -> bool:
        return all(holding(crawlers, site.origin(), 1, 1) for site in origins)

    phases = [(when(all_holding, lambda: clock.advance(15)), [])]  # every retry due: each origin recovers
    result = await crawl([site.url("/a") for site in origins], REP_CLOCK=lambda: clock, on_crawler=crawlers.append,
                         spider_kwargs={"phases": phases})
    lines = held_lines(caplog)
    assert len(lines) == 2, lines
    assert lines[0].startswith("robots.txt: ") and " held for " in lines[0]
    assert lines[1] == "robots.txt: no requests held any more"
    assert sorted(result.downloaded) == sorted(site.url("/a") for site in origins)
    result.assert_accounted()
