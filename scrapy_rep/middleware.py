"""The downloader middleware that obeys robots.txt the way Google does (SPEC 1-3, 8): the coordinator.

``RobotsMiddleware`` (order 100, where Scrapy's built-in stands) walks two paths, each step handed to one room:

- a request's: ``process_request`` passes it through (not checked), decides it at once from its origin's compact
  rules (``matcher``), or makes it wait for the origin's entry (``requests.waiting``) and then decides it; a spider's
  own robots.txt request is answered from the copy (``robots.spider_robots``);
- an origin's: the first waiting request starts one fetch, which ``robots.refresh`` serves from the store, another
  crawler's fetch or one download (``robots.downloads``, in a downloader place); the entry is parsed and adopted,
  what changed is said (``reporting``), and the origin's waiters are released or keep waiting for the retry.

An unexpected exception on an origin's way is an internal error (``reporting.internal_errors``), which SPEC 2.2
treats as a network error: the origin never stays pending. docs/architecture.md draws the rooms.
"""

from __future__ import annotations

import logging
from functools import cached_property
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.exceptions import IgnoreRequest
from scrapy.spidermiddlewares.base import BaseSpiderMiddleware
from scrapy.utils.defer import deferred_from_coro
from scrapy.utils.httpobj import urlparse_cached

from . import _scrapy
from .config import Clock, Config, ConfigError
from .matcher import AgentRules, parse
from .reporting.announce import announce
from .reporting.close_report import CloseReport, origins_at_close
from .reporting.evidence import Evidence
from .reporting.internal_errors import InternalErrors
from .reporting.outcome_log import OutcomeLog
from .reporting.soft404 import Soft404Log
from .reporting.startup import say_at_start, say_cache_size, say_config_error
from .reporting.waiting_log import CLOSING, REQUEUE
from .requests.basis import PASSED_THROUGH, unchecked
from .requests.clean_param import CleanParams
from .requests.decision import Decider
from .requests.discovery import Discovery
from .requests.dry_run import DryRun
from .requests.page_directives import check_spider_middlewares
from .requests.parking import AT_CLOSE, RELEASED, mark_scheduled
from .requests.response_usage import check_usage_middleware
from .requests.waiting import Waiting
from .robots.body import check_middlewares
from .robots.downloads import RobotsDownloads
from .robots.fetch import ROBOTS_META_KEY
from .robots.origin import ROBOTS_PATH, NoOrigin, Origin, origin_of, origin_of_parts
from .robots.places import Places
from .robots.policy import has_copy, should_hold
from .robots.refresh import Refresher
from .robots.spider_robots import KeepingFetcher, answer_from_copy, is_own_robots_url, kept_response
from .robots.state import FETCH_ON_ARRIVAL, Event, OriginMap, OriginState, State
from .robots.tdmrep import TdmFiles
from .stores import Entry, Outcome, Store
from .stores.startup import open_crawler_store

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector
    from typing_extensions import Self

logger = logging.getLogger(__name__)

_Snapshot = tuple[Entry, "AgentRules | None"]
_ARRIVAL_STATS = {Event.EXPIRED: "rep/cache/refreshes"}  # misses and store hits: counted per lookup (refresh.py)


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
        self.origins = OriginMap(config.memory_max_origins)  # least recently used first
        self._dry_run = DryRun(self.stats, config.enforce)  # REP_ENFORCE = False: decided and counted, never stopped
        self._report = CloseReport(self.stats, config.enforce)  # at close: what robots.txt stopped, per origin
        self.evidence = Evidence(crawler, config, self.stats)  # REP_DECISION_LOG, REP_WARC, the adoption signal
        self.waiting = Waiting(crawler, config, clock, self.internals, self.origins, self._dry_run, self._report,
                               self.evidence.log)
        self.parking = self.waiting.parking
        self.places = Places(self.internals, self.waiting.waits_unparked)  # a robots.txt fetch's downloader place
        downloads = RobotsDownloads(crawler, config.robots_request, self.places)
        fetcher = KeepingFetcher(downloads.download, config.max_size, config.max_redirects, self.origins.get)
        self.refresher = Refresher(store, fetcher, config, clock, self.stats, on_lease_wait=self.places.step_aside)
        self._outcome_log = OutcomeLog(clock)
        self._internal_errors = InternalErrors(self.stats, config, clock)
        self._soft404 = Soft404Log(self.stats, config.max_size)  # an HTML page served as robots.txt
        self._tdm = TdmFiles(store, downloads.download, config, clock, self.stats, self.places.step_aside) \
            if config.tdmrep else None  # each origin's tdmrep.json, beside its robots.txt (tdmrep.py)
        self._decider = Decider(crawler, config, self.stats, self.origins, self._dry_run, self._report, clock,
                                self.evidence.log)
        self._clean = CleanParams(crawler, self.stats) if config.clean_param else None  # REP_CLEAN_PARAM
        self.discovery = Discovery(crawler, self.internals, self.stats, self.origins, clock, self._decider,
                                   self._clean) if config.refuse_at_discovery and config.enforce else None
        self._closed = False  # after spider_closed: no more fetches or retries
        crawler.signals.connect(self._spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.waiting.spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        """Validate the settings (a ``ConfigError`` is also logged at CRITICAL as one line, since Scrapy shows it
        only at the end of a long traceback) and open the store, then say what the crawl obeys (reporting.startup)."""
        try:
            config = Config.from_settings(crawler.settings)
            check_middlewares(crawler.settings)
            check_spider_middlewares(crawler.settings, config, RobotsStartMiddleware)
            check_usage_middleware(crawler.settings, config)
            clock = config.time()
            store = open_crawler_store(config, clock)  # Redis: the asyncio reactor, one PING (stores/startup.py)
        except ConfigError as exc:
            say_config_error(exc)
            raise
        say_at_start(config, crawler.settings, store)
        return cls(crawler, config, store, clock)

    # -- a request's path ----------------------------------------------------------------------------------------

    async def process_request(self, request: Request, spider: Spider | None = None) -> Response | Request | None:
        """SPEC 8.1-8.2: pass through, allow, or raise IgnoreRequest; every checked request counts once. A request
        that waited may come back as a Request: handed back to the scheduler (parking.py)."""
        if ROBOTS_META_KEY in request.meta:
            return None  # our own robots.txt download (or one of its redirect hops): not a checked request
        if self.parking.decided_here(request):
            return None  # allowed when released from waiting, and counted then; now paced by the scheduler
        self.stats.inc_value("rep/requests/checked")
        if request.meta.get("dont_obey_robotstxt"):
            return self._pass_through(request, "dont_obey_robotstxt")
        parts = urlparse_cached(request)
        try:
            origin = origin_of_parts(parts.scheme, parts.netloc)
        except NoOrigin:
            return self._pass_through(request, "no_robots_location")  # SPEC 1.4: data:, file:, s3:...
        robots_url = parts.path == ROBOTS_PATH
        if robots_url and not is_own_robots_url(parts):
            return self._pass_through(request, "robots_txt")  # e.g. with a query: not the file the plugin fetches
        state = self.origins.get(origin.key)
        if (state is not None and state.state is State.READY and state.entry is not None
                and state.fresh_until > self.clock.seconds()):
            self.stats.inc_value("rep/cache/hits")
            self.origins.used(origin.key)
            snapshot: _Snapshot = (state.entry, state.rules)
        elif not robots_url and (at_once := self._dry_run.snapshot_now(state)) is not None:
            snapshot = at_once  # dry run: a failing robots.txt holds nothing
        else:
            return await self._waited(request, origin, robots_url=robots_url)
        if robots_url:
            return self._answer(request, origin, snapshot)
        if self._clean is not None and (canonical := self._clean.rewritten(request, snapshot[1])):
            return canonical  # back through the scheduler under its canonical URL (clean_param.py)
        if (refused := self._decider.decide(request, *snapshot)) is not None:
            raise refused
        return None

    async def _waited(self, request: Request, origin: Origin, *, robots_url: bool) -> Response | Request | None:
        """Wait for the origin's entry (SPEC 2.1, 2.3), then answer, decide, or hand the request back to the scheduler:
        an allowed parked one past its origin's first few (places.py), and any at a persistent close."""
        state, fetch = self._arrive(origin)
        waiter, parked = self.waiting.park(state, request)
        if not parked:
            self.places.lent(state.origin)  # a fetch of the origin waiting for room takes this request's place
        if fetch is not None:  # after parking: the fetch takes the downloader place the request left (places.py)
            self._start_fetch(state, origin, fetch, request)
        result = await self.waiting.outcome(state, request, waiter, parked)
        if result is None:
            return None  # dry run: sent undecided at REP_HOLD_TIMEOUT (dry_run.py)
        if result == REQUEUE:
            return self.parking.requeue(request, AT_CLOSE)
        straight = self.parking.straight(request)  # released among the first of its origin (parking.py)
        if robots_url:
            return self._answer(request, origin, result)
        if self._clean is not None and (canonical := self._clean.rewritten(request, result[1])):
            return canonical  # as a forbidden one, it leaves its downloader place (clean_param.py)
        if (refused := self._decider.decide(request, *result)) is not None:
            raise refused
        if not parked:
            return None
        if not straight:
            return self.parking.requeue(request, RELEASED)  # past the origin's first few: paced by the scheduler
        if await self.places.room():
            return None
        self.stats.inc_value("rep/requests/dropped_after_hold")  # the crawl closed while it waited for a place
        self.stats.inc_value(f"rep/requests/dropped_after_hold/{CLOSING}")
        raise IgnoreRequest("the crawl closed while the request waited for a downloader place")

    def _arrive(self, origin: Origin) -> tuple[OriginState, Event | None]:
        """The origin's state (held from now on, in the bounded map) and the fetch a waiting request starts."""
        state = self.origins.get(origin.key)
        if state is None:
            state = self.origins[origin.key] = OriginState(origin.key)
            for key in self.origins.evict():  # REP_MEMORY_MAX_ORIGINS: least recently used idle origins forgotten
                self._outcome_log.forget(key)
                self.stats.inc_value("rep/cache/evictions")
        else:
            self.origins.used(origin.key)
        fetch = FETCH_ON_ARRIVAL.get(state.state)
        if fetch in _ARRIVAL_STATS:
            self.stats.inc_value(_ARRIVAL_STATS[fetch])
        return state, fetch

    def _answer(self, request: Request, origin: Origin, snapshot: _Snapshot) -> Response | None:
        """A spider's own robots.txt request: answered from our copy (spider_robots)."""
        self._pass_through(request, "robots_txt")
        return answer_from_copy(request, snapshot[0], self.origins.get(origin.key), self.stats)

    def _pass_through(self, request: Request, reason: str) -> Response | None:
        self.stats.inc_value("rep/requests/passed_through")
        self.stats.inc_value(f"rep/requests/passed_through/{reason}")
        basis = unchecked(request, PASSED_THROUGH, reason, self.clock.seconds())
        if self.evidence.log is not None:
            self.evidence.log.decided(basis)
        return None  # process_request's "send it on"

    # -- an origin's path ----------------------------------------------------------------------------------------

    def _start_fetch(self, state: OriginState, origin: Origin, event: Event, trigger: Request) -> None:
        state.handle(event)  # trigger: the request that started the fetch (robots_parsed names it; kept for retries)
        deferred_from_coro(self._refresh(state, origin, trigger))

    def _retry_due(self, state: OriginState, origin: Origin, trigger: Request) -> None:
        state.retry_call = None
        if not self._closed:  # else the crawl has closed: no more fetches
            self._start_fetch(state, origin, Event.RETRY_DUE, trigger)

    async def _refresh(self, state: OriginState, origin: Origin, trigger: Request) -> None:
        """Get a current entry and adopt it (SPEC 2.1, 3.2), in a downloader place (places.py). Never raises: an
        unexpected exception at any step is an internal error, a network error to the origin's machine (SPEC 2.2)."""
        try:
            if not await self.places.take(origin.key, origin.robots_url):
                return  # closing
            entry, source, fetched = await self.refresher.current_entry(origin, state.entry)
            if self._tdm is not None and not should_hold(entry):  # never raises
                await self._tdm.refresh(origin, state, self.crawler.spider)
        except Exception as exc:
            entry = self._internal_errors.entry_after(state, "fetch", exc, self.crawler.spider)
            source, fetched = None, None
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
                # A new body, parsed once (signal, crawl-delay): the origin keeps only its crawl's tokens' form.
                body = entry.body
                robots = parse(body, max_bytes=self.config.max_size)
                rules = robots.compact(self.config.user_agents)
                step = "adopt"
                self._soft404.check(entry, body, robots, kept_response(state), self.crawler.spider)
                await announce(self.crawler, self.internals, self.config, self.stats, origin, robots, trigger)
                if self._closed:
                    return  # the crawl closed while the signal's handlers ran
            step = "adopt"
            self._outcome_log.outcome(state.origin, entry, self.crawler.spider, source, fetched)
            await self.evidence.adopted(origin.robots_url, state.entry, entry, state.rules, rules, source, fetched)
            if self._closed:
                return  # the crawl closed while the signal's handlers ran
        except Exception as exc:
            entry = self._internal_errors.entry_after(state, step, exc, self.crawler.spider)
            rules = state.rules if has_copy(entry) else None
        self._adopt(state, origin, entry, rules, trigger)

    def _adopt(self, state: OriginState, origin: Origin, entry: Entry, rules: AgentRules | None,
               trigger: Request) -> None:
        """Make ``entry`` the origin's: move the machine, then release or keep holding its waiters."""
        state.entry, state.rules = entry, rules
        tdm = state.tdm.expires_at if self._tdm is not None and state.tdm is not None else entry.expires_at
        state.fresh_until = min(entry.expires_at, tdm)
        if should_hold(entry):
            state.handle(Event.FETCH_FAILED)
            delay = max(entry.expires_at - self.clock.seconds(), 0.0)
            state.retry_call = self.clock.callLater(delay, self._retry_due, state, origin, trigger)
            if not self._dry_run.releases_failing(state, self.crawler.spider):  # a dry run releases its waiters
                self.waiting.still_held(state)
                return
        else:
            state.handle(Event.FETCH_SUCCEEDED)
            self._dry_run.recovered(state)
        self.waiting.release(state, (entry, rules))

    # -- the public accessor; open and close ---------------------------------------------------------------------

    def sitemaps(self, url: str) -> list[str]:
        """The sitemap URLs of ``url``'s origin's robots.txt, if fetched (SPEC 5.5, 6.5), parsed again from its body."""
        state = self.origins.get(str(origin_of(url)))
        if state is None or state.entry is None or state.entry.outcome is not Outcome.RULES:
            return []
        return list(parse(state.entry.body, max_bytes=self.config.max_size).sitemaps)

    def _spider_opened(self) -> None:
        if self.internals.scheduler_keeps_queue():  # only such a scheduler takes waiting requests back (parking)
            self.crawler.signals.connect(mark_scheduled, signal=signals.request_scheduled)
        deferred_from_coro(say_cache_size(self.store, self.crawler.spider))  # the crawl does not wait for the count

    async def _spider_closed(self, reason: str) -> None:
        self._closed = True
        self.waiting.close()  # waiting requests dropped; one INFO line when some went back to a persistent queue
        for state in self.origins.values():
            if state.retry_call is not None and state.retry_call.active():
                state.retry_call.cancel()
        origins_at_close(self.origins.values(), self.stats, self.crawler.spider)
        self.waiting.log.close()  # WARNING per origin whose held requests were dropped
        self._report.close(self.crawler.spider)  # WARNING when robots.txt stopped everything; INFO forbidden counts
        if self._tdm is not None:
            await self._tdm.close()
        await self.refresher.close()
        self.places.close()  # after the refresher's: a fetch it stops stores no outcome (refresh.py)


class RobotsStartMiddleware(BaseSpiderMiddleware):
    """The spider middleware nearest the engine (add-on: ``START_ORDER``): every request yielded goes through
    ``RobotsMiddleware.discovery`` (requests/discovery.py); while robots.txt fetches hold downloader places, the next
    start request is read only when the scheduler holds fewer than CONCURRENT_REQUESTS (``Places.start_room``)."""

    @cached_property
    def _robots(self) -> RobotsMiddleware | None:
        return self.crawler.get_downloader_middleware(RobotsMiddleware)  # asked once the engine exists

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        robots = self._robots
        while True:
            if robots is not None:
                await robots.places.start_room()
            try:
                item = await anext(start)
            except StopAsyncIteration:
                return
            if not isinstance(item, Request) or (item := self.get_processed_request(item, None)) is not None:
                yield item

    def get_processed_request(self, request: Request, response: Response | None) -> Request | None:
        discovery = None if (robots := self._robots) is None else robots.discovery
        return request if discovery is None else discovery.scheduled(request)

