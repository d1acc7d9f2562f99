"""What the middleware says about requests waiting for their origin's robots.txt (SPEC 2.3), so that a crawl held
by an unavailable robots.txt is never silent.

A request is *held* from the moment it waits for its origin's robots.txt (parked or in the downloader) until it is
released or dropped; the middleware reports each start (``held``), each drop (``dropped``) and each adoption of an
origin's entry (``adopted``). From these:

- INFO, at most once per ``LOGSTATS_INTERVAL`` (Scrapy's setting, read once; 0 disables it) while requests are
  held, driven by a ``LoopingCall`` on the injected clock that runs only while something is held;
- INFO, additionally, when an origin starts or stops holding (waiters kept by a failed robots.txt, SPEC 2.2's
  temporary full disallow, whether a retry is in flight or not): the same line, but only if none was logged in the
  last interval (``LOGSTATS_INTERVAL``, or 60 s when that is 0), so a broad crawl whose origins start and stop
  holding by the thousand still says it once per interval; and ``robots.txt: no requests held any more`` once
  nothing waits, if a held line was logged since the last such line;
- WARNING at close, per origin whose held requests were dropped (REP_HOLD_TIMEOUT or spider close).
"""

from __future__ import annotations

import heapq
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeGuard, cast

from twisted.internet.task import LoopingCall

from ..robots.policy import should_hold
from ..robots.state import OriginState, State
from .outcome_log import format_duration, plural

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from twisted.internet.interfaces import IReactorTime
    from twisted.python.failure import Failure

    from ..config import Clock
    from ..stores import Entry

#: The documented logger of every middleware line (docs/stats.md), whichever module writes it.
logger = logging.getLogger("scrapy_rep.middleware")

#: Why held requests are dropped (the waiter's result and the ``dropped_after_hold/<why>`` stat).
TIMEOUT = "timeout"
CLOSING = "closing"
#: A held request's result when the spider closes and the scheduler keeps its queue: handed back, not dropped.
REQUEUE = "requeue"
#: The least time (seconds) between two held lines when LOGSTATS_INTERVAL is 0 (no periodic line).
QUIET_WINDOW = 60.0
#: How many origins (the most held requests first) the periodic line details.
WORST_ORIGINS = 3
#: How many origins the close summary names one line each; the others are summed on one more line.
SUMMARY_ORIGINS = 20


@dataclass(slots=True)
class _Drops:
    """One origin's dropped held requests, and its robots.txt outcome at the last drop."""

    timeout: int = 0
    closing: int = 0
    status: str = ""
    attempts: int = 0

    @property
    def total(self) -> int:
        return self.timeout + self.closing


class WaitingLog:
    """Counts held requests per origin (their waiters live in ``OriginState.waiters``; this keeps their drop
    deadlines) and logs the lines of the module docstring."""

    def __init__(self, crawler: Crawler, clock: Clock, hold_timeout: float) -> None:
        self.crawler = crawler
        self.clock = clock
        self.hold_timeout = hold_timeout
        self.interval = crawler.settings.getfloat("LOGSTATS_INTERVAL", 60.0)
        self._window = self.interval if self.interval > 0 else QUIET_WINDOW  # least time between two held lines
        self._last_line: float | None = None  # when a held line was last logged
        self._said_held = False  # a held line was logged since the last "no requests held any more"
        self._waiting: dict[str, OriginState] = {}  # origins that have waiters
        self._deadlines: dict[str, dict[Any, float]] = {}  # origin -> {waiter: when REP_HOLD_TIMEOUT drops it}
        self._holding: set[str] = set()  # origins holding waiters (see ``_check``), as last announced
        self._drops: dict[str, _Drops] = {}
        self._loop: LoopingCall | None = None

    # -- what the middleware reports -----------------------------------------------------------------------------

    def held(self, state: OriginState, waiter: Any) -> None:
        """``waiter`` (already in ``state.waiters``) starts waiting; REP_HOLD_TIMEOUT drops it from now."""
        self._waiting[state.origin] = state
        self._deadlines.setdefault(state.origin, {})[waiter] = self.clock.seconds() + self.hold_timeout
        if self._loop is None and self.interval > 0:
            self._loop = LoopingCall(self._tick)
            self._loop.clock = cast("IReactorTime", self.clock)
            self._loop.start(self.interval, now=False).addErrback(self._tick_failed)
        self._check(state, announce=True)

    def adopted(self, state: OriginState) -> None:
        """The origin's entry was adopted: its waiters were released (READY) or keep holding (HOLDING)."""
        self._check(state, announce=True)

    def dropped(self, state: OriginState, waiter: Any, why: str) -> None:
        """``waiter`` (already out of ``state.waiters``) is dropped for ``why`` (TIMEOUT or CLOSING). Drops at
        close are not announced one by one: the close summary reports them."""
        drops = self._drops.setdefault(state.origin, _Drops())
        if why == TIMEOUT:
            drops.timeout += 1
        else:
            drops.closing += 1
        entry = state.entry
        drops.status, drops.attempts = (entry.label, entry.failures) if _failing(entry) else ("no answer yet", 0)
        self._deadlines.get(state.origin, {}).pop(waiter, None)
        self._check(state, announce=why == TIMEOUT)

    def requeued(self, state: OriginState, waiter: Any) -> None:
        """``waiter`` (already out of ``state.waiters``) went back to the scheduler at close: not a drop."""
        self._deadlines.get(state.origin, {}).pop(waiter, None)
        self._check(state, announce=False)

    def close(self) -> None:
        """At spider close (after every held request was dropped): stop the periodic line; WARNING per origin
        whose held requests were dropped, the most dropped first."""
        self._stop()
        ranked = sorted(self._drops.items(), key=lambda item: (-item[1].total, item[0]))
        for origin, drops in ranked[:SUMMARY_ORIGINS]:
            self._log(logging.WARNING, "robots.txt unavailable: dropped %s of %s (%s)",
                      plural(drops.total, "held request"), origin, self._why(drops))
        rest = ranked[SUMMARY_ORIGINS:]
        if rest:
            self._log(logging.WARNING, "robots.txt unavailable: dropped %s of %s more",
                      plural(sum(drops.total for _, drops in rest), "held request"), plural(len(rest), "origin"))

    # -- the lines -----------------------------------------------------------------------------------------------

    def held_line(self) -> str | None:
        """``robots.txt: N requests held for M origins; <the worst origins>``, or None when nothing is held."""
        counts = [(len(state.waiters), state) for state in self._waiting.values() if state.waiters]
        if not counts:
            return None
        now = self.clock.seconds()
        worst = heapq.nsmallest(WORST_ORIGINS, counts, key=lambda item: (-item[0], item[1].origin))
        origins = ", ".join(f"{state.origin} ({self._describe(state, count, now)})" for count, state in worst)
        more = f" and {len(counts) - len(worst)} more" if len(counts) > len(worst) else ""
        total = sum(count for count, _ in counts)
        return f"robots.txt: {plural(total, 'request')} held for {plural(len(counts), 'origin')}; {origins}{more}"

    def _describe(self, state: OriginState, count: int, now: float) -> str:
        """``12 requests, 503, 3 attempts, next retry in 60 s, drops from 480 s``; ``2 requests, fetching
        robots.txt, drops from 590 s`` while a first fetch is in flight."""
        words = [plural(count, "request")]
        entry = state.entry
        if _failing(entry):
            words += [entry.label, plural(entry.failures, "attempt")]
            due = entry.expires_at - now  # a held origin's retry is scheduled at its entry's expiry
            words.append(f"next retry in {format_duration(due)}" if state.state is State.HOLDING else "retrying now")
        else:
            words.append(f"{state.state.value} robots.txt")
        deadlines = self._deadlines.get(state.origin)
        if deadlines:
            words.append(f"drops from {format_duration(min(deadlines.values()) - now)}")
        return ", ".join(words)

    def _why(self, drops: _Drops) -> str:
        """``503 after 6 attempts; 38 at REP_HOLD_TIMEOUT 600 s, 2 at spider close``."""
        reasons = []
        if drops.timeout:
            reasons.append(f"{drops.timeout} at REP_HOLD_TIMEOUT {format_duration(self.hold_timeout)}")
        if drops.closing:
            reasons.append(f"{drops.closing} at spider close")
        status = f"{drops.status} after {plural(drops.attempts, 'attempt')}" if drops.attempts else drops.status
        return f"{status}; {', '.join(reasons)}"

    # -- bookkeeping ---------------------------------------------------------------------------------------------

    def _check(self, state: OriginState, *, announce: bool) -> None:
        """Forget an origin without waiters; when it starts or stops holding, log the held line (if ``announce``);
        stop the periodic line once nothing is held."""
        origin = state.origin
        if not state.waiters:
            self._waiting.pop(origin, None)
            self._deadlines.pop(origin, None)
        # Holding: waiters kept by a failed robots.txt (SPEC 2.2 temporary full disallow), a retry in flight or not.
        holding = bool(state.waiters) and state.entry is not None and should_hold(state.entry)
        if holding != (origin in self._holding):
            if holding:
                self._holding.add(origin)
            else:
                self._holding.discard(origin)
            if announce:
                self._announce()
        if not self._waiting:
            self._stop()

    def _announce(self) -> None:
        """An origin started or stopped holding: the held line unless one was logged within the window (the next
        periodic line says it), or that nothing is held any more."""
        line = self.held_line()
        if line is None:
            if self._said_held:
                self._said_held = False
                self._log(logging.INFO, "robots.txt: no requests held any more")
        elif self._last_line is None or self.clock.seconds() - self._last_line >= self._window:
            self._say(line)

    def _tick(self) -> None:
        line = self.held_line()
        if line is not None:  # the loop stops once nothing is held; a tick racing that stop says nothing
            self._say(line)

    def _say(self, line: str) -> None:
        self._last_line, self._said_held = self.clock.seconds(), True
        self._log(logging.INFO, "%s", line)

    def _tick_failed(self, failure: Failure) -> None:
        self._loop = None
        logger.error("scrapy-rep internal error in the periodic held-requests line: %s", failure.getErrorMessage(),
                     exc_info=failure.value,
                     extra={"spider": self.crawler.spider})

    def _stop(self) -> None:
        if self._loop is not None:
            loop, self._loop = self._loop, None
            if loop.running:
                loop.stop()

    def _log(self, level: int, message: str, *args: Any) -> None:
        logger.log(level, message, *args, extra={"spider": self.crawler.spider})


def _failing(entry: Entry | None) -> TypeGuard[Entry]:
    """The origin's last robots.txt attempts failed (SPEC 2.2 server or network error)."""
    return entry is not None and entry.failing


