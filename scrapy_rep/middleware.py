"""The downloader middleware that obeys robots.txt the way Google does (SPEC 1-3, 8): a coordinator.

``RobotsMiddleware`` (order 100, where Scrapy's built-in stands) coordinates the other modules: ``origin`` names
the cache key, ``state`` says what a request of the origin does now, ``refresh`` gets a current entry (the store,
another crawler's fetch, or ``fetch`` through the engine), ``policy`` turns a download into a cached ``Entry``, the
matcher decides. A request whose origin has no usable entry yet waits, *parked* outside the downloader's slots
(``parking``); once decided, an allowed parked request goes back through the scheduler, which paces it; while
requests are parked the spider is kept open (``spider_idle`` -> ``DontCloseSpider``); when the spider closes they
go back to a scheduler that keeps its queue (JOBDIR, scrapy-redis), else they are dropped. Scrapy internals are
reached only through ``_scrapy``.

Whatever goes wrong while an origin's robots.txt is fetched, parsed or adopted, the origin never stays pending: an
unexpected exception is logged at ERROR with its traceback, counted (``rep/internal_errors/<step>``) and treated as
SPEC 2.2 treats a network error (requests held, robots.txt retried with back-off, a kept copy used)
(``internal_errors``). ``dry_run`` (REP_ENFORCE = False) sends what would be stopped; ``close_report`` says at close
what robots.txt stopped; ``soft404`` warns of an HTML page served as robots.txt.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, cast

from scrapy import signals
from scrapy.exceptions import DontCloseSpider, IgnoreRequest
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred

from . import _scrapy
from .announce import announce
from .body import check_middlewares
from .close_report import CloseReport
from .config import Clock, Config, ConfigError, unknown_settings
from .dry_run import DryRun
from .fetch import ROBOTS_META_KEY, stop_at_cap
from .internal_errors import INTERNAL_ERROR as INTERNAL_ERROR  # the error name of an internal error's outcome
from .internal_errors import InternalErrors
from .matcher import AgentRules, parse
from .origin import ROBOTS_PATH, NoOrigin, Origin, origin_of, origin_of_parts
from .outcome_log import OutcomeLog
from .parking import AT_CLOSE, RELEASED, Parking, came_from_scheduler, mark_scheduled
from .places import Places
from .policy import has_copy, should_hold
from .refresh import Refresher
from .robots_request import RobotsRequests
from .soft404 import Soft404Log
from .spider_robots import KeepingFetcher, answer_from_copy, is_own_robots_url
from .state import Event, OriginMap, OriginState, State
from .stores import Entry, Outcome, Store
from .stores.startup import open_crawler_store
from .tokens import Tokens
from .usage import Usage
from .waiting_log import CLOSING, REQUEUE, TIMEOUT, WaitingLog

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector
    from typing_extensions import Self

logger = logging.getLogger(__name__)

_Snapshot = tuple[Entry, "AgentRules | None"]


class RobotsMiddleware:
    """Checks every request against its origin's robots.txt; see the module docstring and docs/settings.md."""

    def __init__(self, crawler: Crawler, config: Config, store: Store, clock: Clock) -> None:
        self.crawler = crawler
        self.config = config
        self.store = store
        self.clock = clock
        assert crawler.stats is not None
        self.stats: StatsCollector = crawler.stats
        self.internals = _scrapy.Internals(crawler, self.stats)
        self.parking = Parking(self.internals, self.stats, config.max_parked, on_closing=self._engine_closing)
        self.places = Places(self.internals, self._waits_unparked)  # a robots.txt fetch holds a downloader place
        fetcher = KeepingFetcher(self._download, config.max_size, config.max_redirects, lambda k: self.origins.get(k))
        self._robots_requests = RobotsRequests(config.robots_request)  # REP_ROBOTS_REQUEST; never a browser page
        self.refresher = Refresher(store, fetcher, config, clock, self.stats, on_lease_wait=self.places.step_aside)
        self.origins = OriginMap(config.memory_max_origins)  # least recently used first
        self._outcome_log = OutcomeLog(clock)
        self._waiting_log = WaitingLog(crawler, clock, config.hold_timeout)  # held requests: INFO lines, close
        self._internal_errors = InternalErrors(self.stats, config, clock)
        self._dry_run = DryRun(self.stats, config.enforce)  # REP_ENFORCE = False: decided and counted, never stopped
        self._report = CloseReport(self.stats, config.enforce)  # at close: what robots.txt stopped, per origin
        self._soft404 = Soft404Log(self.stats, config.max_size)  # an HTML page served as robots.txt
        self._usage = Usage(config.content_uses, self.stats)  # meta["rep_usage"]; REP_CONTENT_USES enforced
        self._closed = False  # after spider_closed: no more fetches or retries
        self._robots_in_flight = 0  # the bytes_received handler is connected only while this is positive
        crawler.signals.connect(self._spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(mark_scheduled, signal=signals.request_scheduled)
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        """Validate the settings (a ``ConfigError`` is also logged at CRITICAL as one line, since Scrapy shows it
        only at the end of a long traceback), then say once which tokens robots.txt is obeyed as (WARNING when
        none: only the ``*`` groups) and which ``REP_*`` names are unknown (SPEC 6.4, 8.4)."""
        try:
            config = Config.from_settings(crawler.settings)
            check_middlewares(crawler.settings)
            clock = config.clock or _reactor()
            store = open_crawler_store(config, clock)  # a Redis store: the asyncio reactor and one PING (startup.py)
        except ConfigError as exc:
            logger.critical("scrapy-rep: %s; the crawl cannot start", exc)
            raise
        tokens = Tokens(config.user_agents, config.user_agent_source)
        logger.log(logging.INFO if tokens.tokens else logging.WARNING, "scrapy-rep: %s", tokens.summary())
        if config.store == "memory" and _scrapy.is_shared_scheduler(crawler.settings.get("SCHEDULER")):
            logger.warning("scrapy-rep: SCHEDULER is scrapy-redis's (a fleet's shared queue) but REP_STORE is "
                           "'memory': every worker downloads each robots.txt itself; REP_STORE = 'redis' shares one "
                           "copy and one fetch per origin across the fleet (README, Running a fleet)")
        for name, known in unknown_settings(crawler.settings):
            hint = f" (did you mean {known}?)" if known else ""
            logger.warning("scrapy-rep: unknown setting %s%s: ignored", name, hint)
        return cls(crawler, config, store, clock)

    # -- deciding requests ---------------------------------------------------------------------------------------

    async def process_request(self, request: Request, spider: Spider | None = None) -> Response | Request | None:
        """SPEC 8.1-8.2: pass through, allow, or raise IgnoreRequest; every checked request counts once. A request
        that waited may come back as a Request: handed back to the scheduler (parking.py)."""
        if ROBOTS_META_KEY in request.meta:
            return None  # our own robots.txt download (or one of its redirect hops): not a checked request
        if self.parking.decided_here(request):
            return None  # allowed when released from waiting, and counted then; now paced by the scheduler
        self.stats.inc_value("rep/requests/checked")
        if request.meta.get("dont_obey_robotstxt"):
            return self._pass_through("dont_obey_robotstxt")
        parts = urlparse_cached(request)
        try:
            origin = origin_of_parts(parts.scheme, parts.netloc)
        except NoOrigin:
            return self._pass_through("no_robots_location")  # SPEC 1.4: data:, file:, s3:...
        if parts.path == ROBOTS_PATH and not is_own_robots_url(parts):
            return self._pass_through("robots_txt")  # e.g. with a query: not the file the plugin fetches
        state = self.origins.get(origin.key)
        if (
            state is not None
            and state.state is State.READY
            and state.entry is not None
            and state.entry.expires_at > self.clock.seconds()
        ):
            self.stats.inc_value("rep/cache/hits")
            self.origins.used(origin.key)
            snapshot: _Snapshot = (state.entry, state.rules)
        elif parts.path != ROBOTS_PATH and (at_once := self._dry_run.snapshot_now(state)) is not None:
            snapshot = at_once  # dry run: a failing robots.txt holds nothing
        else:
            return await self._waited(request, origin, robots_url=parts.path == ROBOTS_PATH)
        if parts.path == ROBOTS_PATH:
            return self._answer(request, origin, snapshot)
        self._decide(request, *snapshot)
        return None

    async def _waited(self, request: Request, origin: Origin, *, robots_url: bool) -> Response | Request | None:
        """Wait for the origin's entry (a robots.txt request waits as pages do), then answer, decide, or hand the
        request back to the scheduler: an allowed parked one past the downloader's room, and any at a persistent
        close."""
        result, parked = await self._wait_for_entry(origin, request)
        if result is None:
            return None  # dry run: sent undecided at REP_HOLD_TIMEOUT (dry_run.py)
        if result == REQUEUE:
            return self.parking.requeue(request, AT_CLOSE)
        if robots_url:
            return self._answer(request, origin, result)
        self._decide(request, *result)
        return self.parking.requeue(request, RELEASED) if parked and not self.parking.has_room() else None

    def _answer(self, request: Request, origin: Origin, snapshot: _Snapshot) -> Response | None:
        """A spider's own robots.txt request: answered from our copy (spider_robots)."""
        self._pass_through("robots_txt")
        return answer_from_copy(request, snapshot[0], self.origins.get(origin.key), self.stats)

    def _pass_through(self, reason: str) -> Response | None:
        self.stats.inc_value("rep/requests/passed_through")
        self.stats.inc_value(f"rep/requests/passed_through/{reason}")
        return None  # process_request's "send it on"

    def _decide(self, request: Request, entry: Entry, rules: AgentRules | None) -> None:
        """Allow (with its usage preferences in ``meta["rep_usage"]``), or forbid: a rule disallows it, or its
        preferences refuse a use of REP_CONTENT_USES (usage.py)."""
        allowed, preferences = (True, {}) if rules is None else rules.decide(request.url)
        if allowed:
            where = self._usage.refusal(request, preferences)
            if where is None:
                self._dry_run.allowed(entry)
                self._report.allowed(entry.origin, request)
                return
        else:
            assert rules is not None
            rule = rules.explain(request.url).rule
            where = f"line {rule.line} ({'Allow' if rule.allow else 'Disallow'}: {rule.written})" if rule else "?"
        self._report.forbidden(entry, request, where)
        self._dry_run.forbid(request, entry, where, self.crawler.spider)  # IgnoreRequest unless a dry run

    # -- waiting -------------------------------------------------------------------------------------------------

    async def _wait_for_entry(self, origin: Origin, request: Request) -> tuple[Any, bool]:
        """Park ``request`` until its origin has a usable entry (SPEC 2.1, 2.3); drop it after REP_HOLD_TIMEOUT.
        Returns the snapshot (None: sent undecided by a dry run; REQUEUE) and whether it was parked."""
        key = origin.key
        state = self.origins.get(key)
        if state is None:
            state = self.origins[key] = OriginState(key)
            self._evict_beyond_bound()
        else:
            self.origins.used(key)
        event = None
        if state.state is State.UNKNOWN:
            self.stats.inc_value("rep/cache/misses")
            event = Event.FETCH_STARTED
        elif state.state is State.READY:  # expired
            self.stats.inc_value("rep/cache/refreshes")
            event = Event.EXPIRED
        waiter, parked = self._park(state, request)
        if event is not None:  # after parking: the fetch takes the downloader place the request left (places.py)
            self._start_fetch(state, origin, event)
        result = await self._held(request, waiter, parked)
        if result in (TIMEOUT, CLOSING):
            self._report.dropped(state, request)
            if result == TIMEOUT and self._dry_run.sends_after_timeout(request, state, self.crawler.spider):
                return None, parked
            self.stats.inc_value("rep/requests/dropped_after_hold")
            self.stats.inc_value(f"rep/requests/dropped_after_hold/{result}")
            logger.info("Dropped after waiting for %s robots.txt (%s, state %s): %s", key, result,
                        state.state.value, request.url, extra={"spider": self.crawler.spider})
            raise IgnoreRequest(f"{key} robots.txt unavailable ({result})")
        return result, parked

    def _park(self, state: OriginState, request: Request) -> tuple[Deferred[Any], bool]:
        """``request`` starts waiting for ``state``'s entry (dropped at REP_HOLD_TIMEOUT): its waiter, and whether
        it left the downloader's active set."""
        waiter: Deferred[Any] = Deferred()
        state.waiters[waiter] = request
        self._waiting_log.held(state, waiter)
        timer = self.clock.callLater(self.config.hold_timeout, self._give_up, state, waiter, TIMEOUT)
        waiter.addBoth(_cancel, timer)
        parked = self.parking.wait(request)
        if not parked:
            self.places.lent(state.origin)  # a fetch of the origin waiting for room takes this request's place
        return waiter, parked

    async def _held(self, request: Request, waiter: Deferred[Any], parked: bool) -> Any:
        try:
            return await maybe_deferred_to_future(waiter)
        finally:
            self.parking.done(request, parked)

    def _evict_beyond_bound(self) -> None:
        """REP_MEMORY_MAX_ORIGINS: forget the least recently used idle origins (state.OriginMap)."""
        for key in self.origins.evict():
            self._outcome_log.forget(key)
            self.stats.inc_value("rep/cache/evictions")

    def _give_up(self, state: OriginState, waiter: Deferred[Any], why: str) -> None:
        state.waiters.pop(waiter, None)
        if not waiter.called:
            if why == REQUEUE:
                self._waiting_log.requeued(state, waiter)
            elif self.config.enforce or why == CLOSING:  # a dry run sends it at REP_HOLD_TIMEOUT instead
                self._waiting_log.dropped(state, waiter, why)
            waiter.callback(why)

    def _drop_all(self, why: str) -> None:
        for state in self.origins.values():
            for waiter in list(state.waiters):
                self._give_up(state, waiter, why)

    def _engine_closing(self) -> None:
        """The engine began closing: hand the waiting requests back to a scheduler that keeps its queue, else drop
        them. Only requests that came from the scheduler go back: one from ``engine.download`` would come straight
        back through the middleware while the engine closes."""
        keeps = self.internals.scheduler_keeps_queue()
        for state in self.origins.values():
            for waiter, request in list(state.waiters.items()):
                self._give_up(state, waiter, REQUEUE if keeps and came_from_scheduler(request) else CLOSING)

    def _spider_idle(self) -> None:
        if self.parking.parked:
            raise DontCloseSpider  # parked requests are not in the downloader, but the crawl is not over

    # -- fetching ------------------------------------------------------------------------------------------------

    def _start_fetch(self, state: OriginState, origin: Origin, event: Event) -> None:
        state.handle(event)
        deferred_from_coro(self._refresh(state, origin))

    def _waits_unparked(self, key: str) -> bool:
        """A request of origin ``key`` waits inside the downloader's active set (places.py lends its place)."""
        state = self.origins.get(key)
        return state is not None and any(request not in self.parking.parked for request in state.waiters.values())

    async def _download(self, request: Request, origin: str) -> Response:
        """One robots.txt hop of ``origin``'s fetch through the engine, in the fetch's downloader place. The size
        cap's ``bytes_received`` handler is connected only while robots.txt downloads are in flight: every
        response's chunks would otherwise go through it."""
        assert self.crawler.engine is not None
        request = self._robots_requests.prepare(request)  # each hop: REP_ROBOTS_REQUEST, markers, playwright=False
        if not await self.places.enter(origin):
            raise IgnoreRequest("the crawl is closing")  # a network error to RobotsFetcher; nothing is adopted
        if self._robots_in_flight == 0:
            self.crawler.signals.connect(self._bytes_received, signal=signals.bytes_received)
        self._robots_in_flight += 1
        try:
            return await _scrapy.download(self.crawler.engine, request)  # in the active set from this same step
        finally:
            self.places.sent()
            self._robots_in_flight -= 1
            if self._robots_in_flight == 0:
                self.crawler.signals.disconnect(self._bytes_received, signal=signals.bytes_received)

    def _retry_due(self, state: OriginState, origin: Origin) -> None:
        state.retry_call = None
        if self._closed:
            return
        self._start_fetch(state, origin, Event.RETRY_DUE)

    async def _refresh(self, state: OriginState, origin: Origin) -> None:
        """Get a current entry and adopt it (SPEC 2.1, 3.2), in a downloader place from the store read to the
        download (places.py). Never raises: an unexpected exception at any step is an internal error, which the
        origin's machine goes through like a network error (SPEC 2.2)."""
        try:
            if not await self.places.take(origin.key, origin.robots_url):
                return  # closing
            entry, fetched = await self.refresher.current_entry(origin, state.entry)
        except Exception as exc:
            entry, fetched = self._internal_errors.entry_after(state, "fetch", exc, self.crawler.spider), None
        finally:
            self.places.release(origin.key)
        if self._closed:
            return
        step = "parse"
        try:
            rules = state.rules
            if entry.outcome is not Outcome.RULES:
                rules = None
            elif rules is None or state.entry is None or not state.entry.same_body(entry):
                # A new body: parsed in full once, for the signal and the crawl-delay; the origin keeps only the
                # decision form for the crawl's tokens (matcher.AgentRules, a few KiB at most on average).
                robots = parse(entry.body, max_bytes=self.config.max_size)
                rules = robots.compact(self.config.user_agents)
                step = "adopt"
                announce(self.crawler, self.internals, self.config, self.stats, origin, robots)
                self._soft404.check(entry, state.robots_response, self.crawler.spider)
            step = "adopt"
            self._outcome_log.outcome(state.origin, entry, self.crawler.spider, fetched)
        except Exception as exc:
            entry = self._internal_errors.entry_after(state, step, exc, self.crawler.spider)
            rules = state.rules if has_copy(entry) else None
        self._adopt(state, origin, entry, rules)

    def _adopt(self, state: OriginState, origin: Origin, entry: Entry, rules: AgentRules | None) -> None:
        """Make ``entry`` the origin's: move the machine, then release or keep holding its waiters."""
        state.entry, state.rules = entry, rules
        if should_hold(entry):
            state.handle(Event.FETCH_FAILED)
            delay = max(entry.expires_at - self.clock.seconds(), 0.0)
            state.retry_call = self.clock.callLater(delay, self._retry_due, state, origin)
            if not self._dry_run.releases_failing(state, self.crawler.spider):  # a dry run releases its waiters
                self._waiting_log.adopted(state)
                return
        else:
            state.handle(Event.FETCH_SUCCEEDED)
            self._dry_run.recovered(state)
        waiters, state.waiters = state.waiters, {}
        snapshot: _Snapshot = (entry, rules)
        for waiter in waiters:
            if not waiter.called:
                waiter.callback(snapshot)
        self._waiting_log.adopted(state)

    # -- public accessors ----------------------------------------------------------------------------------------

    def sitemaps(self, url: str) -> list[str]:
        """The sitemap URLs of ``url``'s origin's robots.txt, if it has been fetched (SPEC 5.5, 6.5): parsed again
        from the entry's body (the origin keeps only its decision form)."""
        state = self.origins.get(str(origin_of(url)))
        if state is None or state.entry is None or state.entry.outcome is not Outcome.RULES:
            return []
        return list(parse(state.entry.body, max_bytes=self.config.max_size).sitemaps)

    # -- signals -------------------------------------------------------------------------------------------------

    def _bytes_received(self, data: bytes, request: Request, **kwargs: Any) -> None:
        stop_at_cap(data, request)

    async def _spider_closed(self, reason: str) -> None:
        self._closed = True
        self._drop_all(CLOSING)
        self.parking.close()  # one INFO line when requests went back to a persistent queue
        counts: dict[str, int] = {}
        for state in self.origins.values():
            if state.retry_call is not None and state.retry_call.active():
                state.retry_call.cancel()
            counts[state.state.value] = counts.get(state.state.value, 0) + 1
        for name, count in counts.items():
            self.stats.set_value(f"rep/origins/{name}", count)
        summary = ", ".join(f"{count} {name}" for name, count in sorted(counts.items())) or "none"
        logger.info("robots.txt origins at close: %s", summary, extra={"spider": self.crawler.spider})
        self._waiting_log.close()  # WARNING per origin whose held requests were dropped
        self._report.close(self.crawler.spider)  # WARNING when robots.txt stopped everything; INFO forbidden counts
        await self.refresher.close()
        self.places.close()  # after the refresher's: a fetch it stops stores no outcome (refresh.py)


def _cancel(result: Any, timer: Any) -> Any:
    if timer.active():
        timer.cancel()
    return result


def _reactor() -> Clock:
    from twisted.internet import reactor

    return cast(Clock, reactor)
