"""A request waits for its origin's robots.txt entry (SPEC 2.1, 2.3): every request of an origin that has no usable
entry yet waits for the one fetch, and gets its decision when the entry is adopted.

A waiting request is parked out of the downloader's active set where it can be (``parking``). It stops waiting in
one of four ways: the entry is adopted and it goes on to be decided (``release``), REP_HOLD_TIMEOUT passes and it is
dropped (a dry run sends it undecided instead), the engine begins closing and it goes back to a scheduler that keeps
its queue, or the spider closes and it is dropped. Each way is counted under ``rep/requests/`` and said by
``waiting_log``; a drop also goes into the close report. While requests are parked the spider is kept open.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from scrapy.exceptions import DontCloseSpider, IgnoreRequest
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred

from .._scrapy import logger  # the documented logger of every middleware line
from ..reporting.waiting_log import CLOSING, REQUEUE, TIMEOUT, WaitingLog
from .basis import ALLOWED, DROPPED, unchecked
from .parking import Parking, came_from_scheduler

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

    from .._scrapy import Internals
    from ..config import Clock, Config
    from ..reporting.close_report import CloseReport
    from ..reporting.decision_log import DecisionLog
    from ..robots.state import OriginMap, OriginState
    from .dry_run import DryRun


class Waiting:
    """The requests waiting for their origins' entries (each origin's ``waiters``), and how each stops waiting."""

    def __init__(self, crawler: Crawler, config: Config, clock: Clock, internals: Internals, origins: OriginMap,
                 dry_run: DryRun, report: CloseReport, decisions: DecisionLog | None = None) -> None:
        self.crawler = crawler
        self.decisions = decisions  # REP_DECISION_LOG: a dropped request's basis
        self.clock = clock
        self.hold_timeout = config.hold_timeout
        self.enforce = config.enforce
        self.internals = internals
        self.origins = origins
        self.parking = Parking(internals, internals.stats, config.max_parked, on_closing=self.engine_closing)
        self.log = WaitingLog(crawler, clock, config.hold_timeout)  # held requests: INFO lines, close summary
        self._dry_run = dry_run
        self._report = report

    def park(self, state: OriginState, request: Request) -> tuple[Deferred[Any], bool]:
        """``request`` starts waiting for ``state``'s entry (dropped at REP_HOLD_TIMEOUT): its waiter, and whether
        it left the downloader's active set."""
        waiter: Deferred[Any] = Deferred()
        state.waiters[waiter] = request
        self.log.held(state, waiter)
        timer = self.clock.callLater(self.hold_timeout, self._give_up, state, waiter, TIMEOUT)
        waiter.addBoth(_cancel, timer)
        return waiter, self.parking.wait(request)

    async def outcome(self, state: OriginState, request: Request, waiter: Deferred[Any], parked: bool) -> Any:
        """What ``request`` waited for: the entry's snapshot, ``REQUEUE`` (back to a persistent queue at close), or
        None (a dry run sends it undecided at REP_HOLD_TIMEOUT); IgnoreRequest when it is dropped."""
        try:
            result = await maybe_deferred_to_future(waiter)
        finally:
            self.parking.done(request, parked)
        if result not in (TIMEOUT, CLOSING):
            return result
        self._report.dropped(state, request)
        if result == TIMEOUT and self._dry_run.sends_after_timeout(request, state, self.crawler.spider):
            self._record(unchecked(request, ALLOWED, "robots.txt did not answer within REP_HOLD_TIMEOUT: sent "
                                   "undecided (dry run)", self.clock.seconds(), state.entry, enforced=False))
            return None
        self._record(unchecked(request, DROPPED, f"robots.txt unavailable ({result})", self.clock.seconds(),
                               state.entry))
        stats = self.internals.stats
        stats.inc_value("rep/requests/dropped_after_hold")
        stats.inc_value(f"rep/requests/dropped_after_hold/{result}")
        logger.info("Dropped after waiting for %s robots.txt (%s, state %s): %s", state.origin, result,
                    state.state.value, request.url, extra={"spider": self.crawler.spider})
        raise IgnoreRequest(f"{state.origin} robots.txt unavailable ({result})")

    def _record(self, basis: dict[str, Any]) -> None:
        if self.decisions is not None:
            self.decisions.decided(basis)

    def release(self, state: OriginState, snapshot: Any) -> None:
        """``state``'s entry was adopted and decides its waiters: each gets ``snapshot`` in a later turn of the
        reactor's loop (a parked one re-enters the downloader's active set then, in ``outcome``). Not a delay: what
        the engine already had due runs first; released is final (``_give_up`` leaves it alone). Given in the turn
        of the adoption (itself often the turn the robots.txt response came in, with a store that answers at once),
        a broad crawl's garbage collector ran a third more often (measured with benchmarks/bench_broad.py)."""
        from twisted.internet import reactor  # here: importing it at module level would install the default reactor

        waiters, state.waiters = state.waiters, {}
        self.parking.releasing(waiters.values())
        cast("Clock", reactor).callLater(0, _decided, list(waiters), snapshot)
        self.log.adopted(state)

    def still_held(self, state: OriginState) -> None:
        """``state``'s new entry holds its waiters (SPEC 2.3): they keep waiting for the retry."""
        self.log.adopted(state)

    def waits_unparked(self, key: str) -> bool:
        """A request of origin ``key`` waits inside the downloader's active set (it can lend its place)."""
        state = self.origins.get(key)
        return state is not None and any(request not in self.parking.parked for request in state.waiters.values())

    def engine_closing(self) -> None:
        """The engine began closing: hand the waiting requests back to a scheduler that keeps its queue, else drop
        them. Only requests that came from the scheduler go back: one from ``engine.download`` would come straight
        back through the middleware while the engine closes."""
        keeps = self.internals.scheduler_keeps_queue()
        for state in self.origins.values():
            for waiter, request in list(state.waiters.items()):
                self._give_up(state, waiter, REQUEUE if keeps and came_from_scheduler(request) else CLOSING)

    def spider_idle(self) -> None:
        if self.parking.parked:
            raise DontCloseSpider  # parked requests are not in the downloader, but the crawl is not over

    def close(self) -> None:
        """At spider close: every request still waiting is dropped; one INFO line when requests went back to a
        persistent queue."""
        for state in self.origins.values():
            for waiter in list(state.waiters):
                self._give_up(state, waiter, CLOSING)
        self.parking.close()

    def _give_up(self, state: OriginState, waiter: Deferred[Any], why: str) -> None:
        if state.waiters.pop(waiter, None) is None:
            return  # released: its snapshot comes in the next turn (``release``)
        if not waiter.called:
            if why == REQUEUE:
                self.log.requeued(state, waiter)
            elif self.enforce or why == CLOSING:  # a dry run sends it at REP_HOLD_TIMEOUT instead
                self.log.dropped(state, waiter, why)
            waiter.callback(why)


def _decided(waiters: list[Deferred[Any]], snapshot: Any) -> None:
    for waiter in waiters:
        if not waiter.called:  # else cancelled meanwhile (its request's coroutine was)
            waiter.callback(snapshot)


def _cancel(result: Any, timer: Any) -> Any:
    if timer.active():
        timer.cancel()
    return result
