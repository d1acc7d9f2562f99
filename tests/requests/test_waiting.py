"""``waiting.Waiting``'s branches, one at a time: how a waiting request stops waiting (released, dropped at
REP_HOLD_TIMEOUT, sent undecided by a dry run, handed back or dropped when the engine closes, dropped at close), on
a stand-in for the engine's active set and with time driven by ``task.Clock``. The crawls of tests/middleware
(test_hold, test_requeue) and tests/reporting/test_waiting_log.py run the same paths end to end."""

from __future__ import annotations

from typing import Any

import pytest
import pytest_twisted
from scrapy import Request
from scrapy.exceptions import DontCloseSpider, IgnoreRequest
from scrapy.settings import Settings
from scrapy.utils.defer import deferred_from_coro
from twisted.internet.defer import Deferred
from twisted.internet.task import Clock

from scrapy_rep.config import Config
from scrapy_rep.reporting.close_report import CloseReport
from scrapy_rep.reporting.waiting_log import CLOSING, REQUEUE
from scrapy_rep.requests.dry_run import DryRun
from scrapy_rep.requests.parking import SCHEDULED_META_KEY
from scrapy_rep.requests.waiting import Waiting
from scrapy_rep.robots.state import OriginMap, OriginState

ORIGIN = "https://a.example"
HOLD = 60.0


class Stats:
    def __init__(self) -> None:
        self.values: dict[str, int] = {}

    def inc_value(self, key: str, count: int = 1) -> None:
        self.values[key] = self.values.get(key, 0) + count

    def get_value(self, key: str, default: int = 0) -> int:
        return self.values.get(key, default)


class Crawler:
    def __init__(self, **settings: Any) -> None:
        self.settings = Settings({"CONCURRENT_REQUESTS": 4, "LOGSTATS_INTERVAL": 0, **settings})
        self.spider = None


class Internals:
    """What Waiting and its Parking use of the engine: the downloader's active set, a nudge, the scheduler."""

    def __init__(self, *, keeps_queue: bool = False, **settings: Any) -> None:
        self.crawler = Crawler(**settings)
        self.stats = Stats()
        self.active: set[Request] = set()
        self.keeps_queue = keeps_queue

    def active_requests(self) -> set[Request]:
        return self.active

    def schedule_engine(self) -> None:
        pass

    def scheduler_is_shared(self) -> bool:
        return False

    def scheduler_keeps_queue(self) -> bool:
        return self.keeps_queue

    def engine_closing(self) -> bool:
        return False


def waiting(*, enforce: bool = True, keeps_queue: bool = False,
            **settings: Any) -> tuple[Waiting, OriginState, Internals, Clock]:
    clock = Clock()
    internals = Internals(keeps_queue=keeps_queue, **settings)
    config = Config.from_settings(Settings({"ROBOTSTXT_OBEY": True, "REP_HOLD_TIMEOUT": HOLD, "REP_ENFORCE": enforce}))
    origins = OriginMap(10)
    state = origins[ORIGIN] = OriginState(ORIGIN)
    stats: Any = internals.stats
    waiting = Waiting(internals.crawler, config, clock, internals, origins,  # type: ignore[arg-type]
                      DryRun(stats, enforce), CloseReport(stats, enforce))
    return waiting, state, internals, clock


def request_in_flight(internals: Internals, path: str = "/a", *, scheduled: bool = False) -> Request:
    """A request inside the downloader's active set, as ``process_request`` sees it."""
    request = Request(ORIGIN + path, meta={SCHEDULED_META_KEY: True} if scheduled else {})
    internals.active.add(request)
    return request


@pytest_twisted.ensureDeferred
async def test_a_released_request_gets_the_snapshot_and_its_place_back() -> None:
    w, state, internals, clock = waiting()
    request = request_in_flight(internals)
    waiter, parked = w.park(state, request)
    assert parked and request in w.parking.parked and request not in internals.active
    assert not w.waits_unparked(ORIGIN)
    outcome = deferred_from_coro(w.outcome(state, request, waiter, parked))
    w.release(state, ("entry", None))
    assert await outcome == ("entry", None)
    assert request in internals.active and not w.parking.parked and state.waiters == {}
    clock.advance(HOLD)  # the hold timer was cancelled with the release
    assert internals.stats.values == {}


@pytest.mark.parametrize(("settings", "straight"), [
    ({"CONCURRENT_REQUESTS_PER_DOMAIN": 3}, 3),
    pytest.param({"CONCURRENT_REQUESTS_PER_DOMAIN": 3, "CONCURRENT_REQUESTS_PER_IP": 2}, 2,
                 marks=pytest.mark.filterwarnings("ignore:The CONCURRENT_REQUESTS_PER_IP")),  # deprecated in 2.19
    ({"CONCURRENT_REQUESTS_PER_DOMAIN": 3, "DOWNLOAD_DELAY": 0.5}, 1),
    ({"CONCURRENT_REQUESTS_PER_DOMAIN": 3, "AUTOTHROTTLE_ENABLED": True}, 1),
])
def test_the_first_parked_requests_of_a_release_go_straight_on(settings: dict[str, Any], straight: int) -> None:
    """As many of an origin's parked requests as its download slot sends at once skip the scheduler round trip, in
    arrival order; a request that waited inside the active set (not parked) is not among them."""
    w, state, internals, _ = waiting(**settings)
    unparked = request_in_flight(internals, "/unparked")
    w.parking.wait(unparked)
    internals.active.discard(unparked)  # as if the REP_MAX_PARKED bound had kept it in the set: never parked
    requests = [request_in_flight(internals, f"/{n}") for n in range(5)]
    for request in requests:
        w.park(state, request)
    state.waiters[Deferred()] = unparked
    w.release(state, ("entry", None))
    assert [w.parking.straight(request) for request in [unparked, *requests]] == [
        False, *[n < straight for n in range(5)]]
    assert not any(w.parking.straight(request) for request in requests)  # each once


@pytest_twisted.ensureDeferred
async def test_hold_timeout_drops_the_request() -> None:
    w, state, internals, clock = waiting()
    request = request_in_flight(internals)
    waiter, parked = w.park(state, request)
    outcome = deferred_from_coro(w.outcome(state, request, waiter, parked))
    clock.advance(HOLD - 1)
    assert not waiter.called
    clock.advance(1)
    with pytest.raises(IgnoreRequest, match="unavailable \\(timeout\\)"):
        await outcome
    assert internals.stats.values == {"rep/requests/dropped_after_hold": 1,
                                      "rep/requests/dropped_after_hold/timeout": 1}
    assert state.waiters == {} and request in internals.active


@pytest_twisted.ensureDeferred
async def test_a_dry_run_sends_it_undecided_at_the_timeout() -> None:
    w, state, internals, clock = waiting(enforce=False)
    request = request_in_flight(internals)
    waiter, parked = w.park(state, request)
    outcome = deferred_from_coro(w.outcome(state, request, waiter, parked))
    clock.advance(HOLD)
    assert await outcome is None
    assert internals.stats.values == {"rep/requests/allowed": 1, "rep/dry_run/would_drop": 1}


@pytest.mark.parametrize(("keeps_queue", "scheduled", "expected"), [
    (True, True, REQUEUE),  # a persistent scheduler takes it back
    (True, False, CLOSING),  # an engine.download request never was in the scheduler
    (False, True, CLOSING),  # nothing keeps it: dropped
])
@pytest_twisted.ensureDeferred
async def test_engine_closing(keeps_queue: bool, scheduled: bool, expected: str) -> None:
    w, state, internals, _ = waiting(keeps_queue=keeps_queue)
    request = request_in_flight(internals, scheduled=scheduled)
    waiter, parked = w.park(state, request)
    outcome = deferred_from_coro(w.outcome(state, request, waiter, parked))
    w.engine_closing()
    if expected == REQUEUE:
        assert await outcome == REQUEUE
        assert internals.stats.values == {}
    else:
        with pytest.raises(IgnoreRequest, match="unavailable \\(closing\\)"):
            await outcome
        assert internals.stats.values["rep/requests/dropped_after_hold/closing"] == 1


@pytest_twisted.ensureDeferred
async def test_close_drops_every_waiting_request_even_in_a_dry_run() -> None:
    w, state, internals, _ = waiting(enforce=False)
    requests = [request_in_flight(internals, f"/{i}") for i in range(3)]
    outcomes = []
    for request in requests:
        waiter, parked = w.park(state, request)
        outcomes.append(deferred_from_coro(w.outcome(state, request, waiter, parked)))
    w.close()
    for outcome in outcomes:
        with pytest.raises(IgnoreRequest):
            await outcome
    assert internals.stats.values["rep/requests/dropped_after_hold/closing"] == 3
    assert state.waiters == {} and not w.parking.parked


@pytest_twisted.ensureDeferred
async def test_spider_idle_and_lending_while_requests_wait() -> None:
    w, state, internals, _ = waiting()
    parked_one = request_in_flight(internals, "/parked")
    outside = Request(ORIGIN + "/outside")  # not in the active set: it cannot park, it waits inside the downloader
    w.spider_idle()  # nothing parked: the spider may close
    first, _ = w.park(state, parked_one)
    with pytest.raises(DontCloseSpider):
        w.spider_idle()
    assert not w.waits_unparked(ORIGIN)
    second, parked = w.park(state, outside)
    assert not parked and w.waits_unparked(ORIGIN) and not w.waits_unparked("https://b.example")
    outcomes = [deferred_from_coro(w.outcome(state, parked_one, first, True)),
                deferred_from_coro(w.outcome(state, outside, second, False))]
    w.release(state, ("entry", None))
    assert [await outcome for outcome in outcomes] == [("entry", None)] * 2
    w.spider_idle()
