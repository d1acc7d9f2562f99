"""The downloader middleware that obeys robots.txt the way Google does (SPEC 1-3, 8), and its body companion.

``RobotsMiddleware`` (order 100, where Scrapy's built-in stands) coordinates the other modules: ``origin`` names
the cache key, ``state`` says what a request of the origin does now, ``fetch`` downloads robots.txt through the
engine, ``policy`` turns the result into a cached ``Entry``, the store shares it, the matcher decides.

A request whose origin has no usable entry yet is *parked*: it leaves ``Downloader.active`` while it waits, so it
does not hold one of the CONCURRENT_REQUESTS places and the engine keeps pulling other origins' requests from the
scheduler (SPEC 2.3); it is put back just before ``process_request`` returns. While requests are parked the spider
is kept open (``spider_idle`` -> ``DontCloseSpider``); when the spider closes they are dropped.

``RobotsBodyMiddleware`` (order 595, after HttpCompressionMiddleware's 590 so its ``process_response`` runs first)
decompresses robots.txt bodies with the size cap, so a gzip bomb is never inflated past it (SPEC 4.4).
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, cast
from uuid import uuid4

from scrapy import Request, signals
from scrapy.downloadermiddlewares.httpcompression import HttpCompressionMiddleware
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.exceptions import DontCloseSpider, IgnoreRequest, NotConfigured
from scrapy.http import Response
from scrapy.utils.conf import build_component_list
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import load_object
from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IReactorTime
from twisted.internet.task import LoopingCall, deferLater

from .config import Clock, Config, ConfigError
from .fetch import ROBOTS_META_KEY, RobotsFetcher, bounded_decode, stop_at_cap
from .matcher import Robots, parse
from .origin import ROBOTS_PATH, NoOrigin, Origin, origin_of, origin_of_parts
from .policy import FetchResult, has_copy, next_entry, should_hold
from .robotparser import RobotParser
from .state import Event, OriginState, State
from .stores import Entry, Outcome, Store, StoreError, open_store

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from scrapy.statscollectors import StatsCollector
    from typing_extensions import Self

logger = logging.getLogger(__name__)

#: The order the add-on gives the companion: its process_response must run before HttpCompressionMiddleware's.
BODY_MIDDLEWARE_ORDER = 595
#: How often (real seconds) the middleware checks, while requests are parked, whether the engine began closing.
CLOSING_CHECK_INTERVAL = 0.5

_TIMEOUT = "timeout"
_CLOSING = "closing"
_Snapshot = tuple[Entry, "Robots | None"]


class RobotsMiddleware:
    """Checks every request against its origin's robots.txt; see the module docstring and docs/settings.md."""

    def __init__(self, crawler: Crawler, config: Config, store: Store, clock: Clock) -> None:
        self.crawler = crawler
        self.config = config
        self.store = store
        self.clock = clock
        assert crawler.stats is not None
        self.stats: StatsCollector = crawler.stats
        self.fetcher = RobotsFetcher(self._download, config.max_size, config.max_redirects)
        self.origins: dict[str, OriginState] = {}
        self._holder = f"{uuid4().hex}"  # this crawler's identity for store leases
        self._parked: set[Request] = set()
        self._closing_check: LoopingCall | None = None
        self._logged: dict[str, str] = {}  # origin -> last outcome line logged at INFO
        self._closed = False  # after spider_closed: no more fetches or retries
        self._robots_in_flight = 0  # the bytes_received handler is connected only while this is positive
        crawler.signals.connect(self._spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = Config.from_settings(crawler.settings)
        check_middlewares(crawler.settings)
        clock = config.clock or _reactor()
        store = open_store(config.store, max_origins=config.memory_max_origins, clock=clock.seconds)
        return cls(crawler, config, store, clock)

    # -- deciding requests ---------------------------------------------------------------------------------------

    async def process_request(self, request: Request) -> None:
        """SPEC 8.1-8.2: pass through, allow, or raise IgnoreRequest; every checked request counts once."""
        if ROBOTS_META_KEY in request.meta:
            return  # our own robots.txt download (or one of its redirect hops): not a checked request
        self.stats.inc_value("rep/requests/checked")
        if request.meta.get("dont_obey_robotstxt"):
            return self._pass_through("dont_obey_robotstxt")
        parts = urlparse_cached(request)
        try:
            origin = origin_of_parts(parts.scheme, parts.netloc)
        except NoOrigin:
            return self._pass_through("no_robots_location")  # SPEC 1.4: data:, file:, s3:...
        if parts.path == ROBOTS_PATH:
            return self._pass_through("robots_txt")
        key = origin.key
        state = self.origins.get(key)
        if (
            state is not None
            and state.state is State.READY
            and state.entry is not None
            and state.entry.expires_at > self.clock.seconds()
        ):
            self.stats.inc_value("rep/cache/hits")
            return self._decide(request, state.entry, state.robots)
        snapshot = await self._wait_for_entry(origin, request)
        self._decide(request, *snapshot)

    def _pass_through(self, reason: str) -> None:
        self.stats.inc_value("rep/requests/passed_through")
        self.stats.inc_value(f"rep/requests/passed_through/{reason}")

    def _decide(self, request: Request, entry: Entry, robots: Robots | None) -> None:
        if robots is None or robots.allowed(request.url, self.config.user_agents):
            self.stats.inc_value("rep/requests/allowed")
            return
        self.stats.inc_value("rep/requests/forbidden")
        rule = robots.explain(request.url, self.config.user_agents).rule
        where = f"line {rule.line} ({'Allow' if rule.allow else 'Disallow'}: {rule.written})" if rule else "?"
        logger.debug("Forbidden by robots.txt: %s (%s of %s)", request.url, where, entry.origin,
                     extra={"spider": self.crawler.spider})
        raise IgnoreRequest(f"Forbidden by robots.txt: {where}")

    # -- parking -------------------------------------------------------------------------------------------------

    async def _wait_for_entry(self, origin: Origin, request: Request) -> _Snapshot:
        """Park ``request`` until its origin has a usable entry (SPEC 2.1, 2.3); drop it after REP_HOLD_TIMEOUT."""
        key = origin.key
        state = self.origins.get(key)
        if state is None:
            state = self.origins[key] = OriginState(key)
            self._evict_beyond_bound()
        if state.state is State.UNKNOWN:
            self.stats.inc_value("rep/cache/misses")
            self._start_fetch(state, origin, Event.FETCH_STARTED)
        elif state.state is State.READY:  # expired
            self.stats.inc_value("rep/cache/refreshes")
            self._start_fetch(state, origin, Event.EXPIRED)
        waiter: Deferred[Any] = Deferred()
        state.waiters[waiter] = None
        timer = self.clock.callLater(self.config.hold_timeout, self._give_up, state, waiter, _TIMEOUT)
        parked = self._park(request)
        try:
            result = await maybe_deferred_to_future(waiter)
        finally:
            if timer.active():
                timer.cancel()
            if parked:
                self._unpark(request)
        if result in (_TIMEOUT, _CLOSING):
            self.stats.inc_value("rep/requests/dropped_after_hold")
            self.stats.inc_value(f"rep/requests/dropped_after_hold/{result}")
            logger.info("Dropped after waiting for %s robots.txt (%s, state %s): %s", key, result,
                        state.state.value, request.url, extra={"spider": self.crawler.spider})
            raise IgnoreRequest(f"{key} robots.txt unavailable ({result})")
        snapshot: _Snapshot = result
        return snapshot

    def _evict_beyond_bound(self) -> None:
        """Keep at most REP_MEMORY_MAX_ORIGINS origins in process: forget the oldest idle READY one (its entry stays
        in the store, so its next request reads it back instead of fetching)."""
        if len(self.origins) <= self.config.memory_max_origins:
            return
        for key, state in self.origins.items():
            if state.state is State.READY and not state.waiters:
                state.handle(Event.EVICTED)
                del self.origins[key]
                self._logged.pop(key, None)
                self.stats.inc_value("rep/cache/evictions")
                return

    def _give_up(self, state: OriginState, waiter: Deferred[Any], why: str) -> None:
        state.waiters.pop(waiter, None)
        if not waiter.called:
            waiter.callback(why)

    def _park(self, request: Request) -> bool:
        """Take ``request`` out of the downloader's active set so it does not count against CONCURRENT_REQUESTS.

        At most REP_MAX_PARKED requests are parked: beyond that they wait inside the active set, so the engine stops
        draining the scheduler into memory (back-pressure) while robots.txt files are pending.
        """
        engine = self.crawler.engine
        if engine is None or len(self._parked) >= self.config.max_parked or request not in engine.downloader.active:
            return False
        engine.downloader.active.discard(request)
        self._parked.add(request)
        if self._closing_check is None:
            self._closing_check = LoopingCall(self._drop_if_closing)
            self._closing_check.start(CLOSING_CHECK_INTERVAL, now=False)
        _schedule_engine(engine)
        return True

    def _unpark(self, request: Request) -> None:
        """Give the request its place back: Downloader.fetch removes it from the active set when we return."""
        self._parked.discard(request)
        engine = self.crawler.engine
        if engine is not None:
            engine.downloader.active.add(request)
        if not self._parked and self._closing_check is not None:
            self._closing_check.stop()
            self._closing_check = None

    def _drop_if_closing(self) -> None:
        """Parked requests would keep the engine's close waiting for them: drop them once it starts closing."""
        slot = getattr(self.crawler.engine, "_slot", None)
        if slot is None or slot.closing is not None:
            self._drop_all(_CLOSING)

    def _drop_all(self, why: str) -> None:
        for state in self.origins.values():
            waiters, state.waiters = state.waiters, {}
            for waiter in waiters:
                if not waiter.called:
                    waiter.callback(why)

    def _spider_idle(self) -> None:
        if self._parked:
            raise DontCloseSpider  # parked requests are not in the downloader, but the crawl is not over

    # -- fetching ------------------------------------------------------------------------------------------------

    def _start_fetch(self, state: OriginState, origin: Origin, event: Event) -> None:
        state.handle(event)
        deferred_from_coro(self._refresh(state, origin))

    async def _download(self, request: Request) -> Response:
        """One robots.txt hop through the engine. The size cap's ``bytes_received`` handler is connected only while
        robots.txt downloads are in flight: every response's chunks would otherwise go through it."""
        assert self.crawler.engine is not None
        if self._robots_in_flight == 0:
            self.crawler.signals.connect(self._bytes_received, signal=signals.bytes_received)
        self._robots_in_flight += 1
        try:
            return await self.crawler.engine.download_async(request)
        finally:
            self._robots_in_flight -= 1
            if self._robots_in_flight == 0:
                self.crawler.signals.disconnect(self._bytes_received, signal=signals.bytes_received)

    def _retry_due(self, state: OriginState, origin: Origin) -> None:
        state.retry_call = None
        if self._closed:
            return
        self._start_fetch(state, origin, Event.RETRY_DUE)

    async def _refresh(self, state: OriginState, origin: Origin) -> None:
        """Get a current entry: from the store if another crawler fetched it, else by fetching (SPEC 2.1, 3.2).

        Whatever goes wrong, the machine moves on: an unexpected error counts as a failed fetch (never allow-all).
        """
        try:
            stored = await self._store_get(state.origin)
            if stored is not None and stored.is_fresh(self.clock.seconds()):
                self.stats.inc_value("rep/cache/store_hits")
                entry = stored
            else:
                # The stored copy may be the only one (e.g. after a restart): it counts for stale-on-error (SPEC 2.4).
                entry = await self._fetch_under_lease(state, origin, _latest(state.entry, stored))
        except Exception as exc:
            logger.exception("robots.txt handling failed for %s", state.origin)
            failure = FetchResult(error=type(exc).__name__)
            entry = next_entry(state.origin, state.entry, failure, self.clock.seconds(), self.config)
        if not self._closed:
            self._adopt(state, origin, entry)

    async def _fetch_under_lease(self, state: OriginState, origin: Origin, previous: Entry | None) -> Entry:
        leased = await self._store_call("acquire_lease", state.origin, self._holder, self.config.store_lease_ttl)
        if leased is False:
            entry = await self._wait_for_other_crawler(state.origin)
            if entry is not None:
                return entry
        try:
            if leased is True:
                # Another crawler may have fetched, stored and released between our read and our lease.
                stored = await self._store_get(state.origin)
                if stored is not None and stored.is_fresh(self.clock.seconds()):
                    self.stats.inc_value("rep/cache/store_hits")
                    return stored
            result = await self.fetcher.fetch(origin)
            self._count_download(result)
            entry = next_entry(state.origin, previous, result, self.clock.seconds(), self.config)
            await self._store_call("put", entry)
        finally:
            if leased is True:
                await self._store_call("release_lease", state.origin, self._holder)
        return entry

    async def _wait_for_other_crawler(self, origin: str) -> Entry | None:
        """Another crawler holds the fetch lease: poll the store for its entry, at most for the lease's lifetime."""
        deadline = self.clock.seconds() + self.config.store_lease_ttl
        while self.clock.seconds() < deadline:
            pause = deferLater(cast(IReactorTime, self.clock), self.config.store_poll_interval, lambda: None)
            await maybe_deferred_to_future(pause)
            entry = await self._store_get(origin)
            if entry is not None and entry.is_fresh(self.clock.seconds()):
                self.stats.inc_value("rep/cache/store_hits")
                return entry
        return None

    async def _store_get(self, origin: str) -> Entry | None:
        entry = await self._store_call("get", origin)
        return entry if isinstance(entry, Entry) else None

    async def _store_call(self, operation: str, *args: Any) -> Any:
        """A store call; a StoreError is logged and counted and yields None: the in-process state carries on, and a
        store error never means "allow all" (SPEC 3.2)."""
        try:
            return await getattr(self.store, operation)(*args)
        except StoreError as exc:
            self.stats.inc_value("rep/store/errors")
            self.stats.inc_value(f"rep/store/errors/{operation}")
            logger.warning("robots.txt store %s failed for %s: %s", operation, args[0] if args else "", exc)
            return None

    def _count_download(self, result: FetchResult) -> None:
        self.stats.inc_value("rep/robots/downloads")
        if result.status is not None:
            self.stats.inc_value(f"rep/robots/status/{result.status}")
        else:
            self.stats.inc_value(f"rep/robots/exception/{result.error}")
        if len(result.body) >= self.config.max_size:
            self.stats.inc_value("rep/robots/truncated")

    def _adopt(self, state: OriginState, origin: Origin, entry: Entry) -> None:
        """Make ``entry`` the origin's: parse it, move the machine, release or keep holding its waiters."""
        previous = state.entry
        if entry.outcome is not Outcome.RULES:
            state.robots = None
        elif state.robots is None or previous is None or previous.body != entry.body:
            state.robots = parse(entry.body, max_bytes=self.config.max_size)
            self._announce(state, origin)
        state.entry = entry
        self._log_outcome(state, entry)
        if should_hold(entry):
            state.handle(Event.FETCH_FAILED)
            delay = max(entry.expires_at - self.clock.seconds(), 0.0)
            state.retry_call = self.clock.callLater(delay, self._retry_due, state, origin)
            return
        state.handle(Event.FETCH_SUCCEEDED)
        waiters, state.waiters = state.waiters, {}
        snapshot: _Snapshot = (entry, state.robots)
        for waiter in waiters:
            if not waiter.called:
                waiter.callback(snapshot)

    def _announce(self, state: OriginState, origin: Origin) -> None:
        """Scrapy's robots_parsed signal (as the built-in sends it) and the opt-in crawl-delay (SPEC 6.5)."""
        robots = state.robots
        assert robots is not None
        parser = RobotParser(robots)
        self.crawler.signals.send_catch_log(
            signal=signals.robots_parsed, robotparser=parser, request=Request(origin.robots_url)
        )
        if self.config.obey_crawl_delay:
            delay = robots.crawl_delay(self.config.user_agents)
            if delay is not None:
                self._set_slot_delay(origin, min(delay, self.config.max_crawl_delay))

    def _set_slot_delay(self, origin: Origin, delay: float) -> None:
        engine = self.crawler.engine
        if engine is None:
            return
        key = origin.host  # Scrapy's default slot key: the request's hostname
        engine.downloader.per_slot_settings.setdefault(key, {})["delay"] = delay
        if key in engine.downloader.slots:
            engine.downloader.slots[key].delay = delay
        self.stats.set_value(f"rep/crawl_delay/{origin}", delay)

    def _log_outcome(self, state: OriginState, entry: Entry) -> None:
        """INFO once per origin each time what its robots.txt means changes; a first plain 2xx (the normal case) is
        logged at DEBUG so that broad crawls do not log a line per origin."""
        label = str(entry.status) if entry.status is not None else str(entry.error)
        if entry.first_failure_at is None:
            meaning = {Outcome.RULES: "obeying its rules", Outcome.ALLOW_ALL: "allowing everything"}[entry.outcome]
        else:
            retry = f"retry in {entry.expires_at - self.clock.seconds():.0f} s"
            if has_copy(entry):
                fetched = datetime.fromtimestamp(entry.fetched_at, tz=timezone.utc).isoformat(timespec="seconds")
                meaning = f"keeping the copy fetched {fetched}, {retry}"
            elif entry.outcome is Outcome.ALLOW_ALL:
                meaning = f"unreachable past REP_UNREACHABLE_ALLOW_AFTER: allowing everything, {retry}"
            else:
                meaning = f"holding requests, {retry}"
        key = f"{label}/{entry.outcome.value}/{entry.first_failure_at is None}"
        previous = self._logged.get(state.origin)
        if previous != key:
            self._logged[state.origin] = key
            level = logging.DEBUG if previous is None and entry.outcome is Outcome.RULES and not entry.failures else (
                logging.INFO)
            logger.log(level, "%s robots.txt %s: %s", state.origin, label, meaning,
                       extra={"spider": self.crawler.spider})

    # -- public accessors ----------------------------------------------------------------------------------------

    def sitemaps(self, url: str) -> list[str]:
        """The sitemap URLs of ``url``'s origin's robots.txt, if it has been fetched (SPEC 5.5, 6.5)."""
        state = self.origins.get(str(origin_of(url)))
        return list(state.robots.sitemaps) if state is not None and state.robots is not None else []

    # -- signals -------------------------------------------------------------------------------------------------

    def _bytes_received(self, data: bytes, request: Request, **kwargs: Any) -> None:
        stop_at_cap(data, request)

    async def _spider_closed(self, reason: str) -> None:
        self._closed = True
        self._drop_all(_CLOSING)
        counts: dict[str, int] = {}
        for state in self.origins.values():
            if state.retry_call is not None and state.retry_call.active():
                state.retry_call.cancel()
            counts[state.state.value] = counts.get(state.state.value, 0) + 1
        for name, count in counts.items():
            self.stats.set_value(f"rep/origins/{name}", count)
        summary = ", ".join(f"{count} {name}" for name, count in sorted(counts.items())) or "none"
        logger.info("robots.txt origins at close: %s", summary, extra={"spider": self.crawler.spider})
        await self._store_call("close")


class RobotsBodyMiddleware:
    """Decompresses robots.txt responses within the size cap before HttpCompressionMiddleware sees them (SPEC 4.4).

    Only responses to the robots requests of ``RobotsMiddleware`` are touched; their Content-Encoding is removed so
    the compression middleware leaves them alone.
    """

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        if not crawler.settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured("ROBOTSTXT_OBEY is False")
        return cls()

    def process_response(self, request: Request, response: Response) -> Response:
        max_size = request.meta.get(ROBOTS_META_KEY)
        if max_size is None:
            return response
        encodings = [
            part.strip().lower()
            for value in response.headers.getlist(b"Content-Encoding")
            for part in value.decode("latin-1").split(",")
            if part.strip()
        ]
        if not encodings and len(response.body) <= max_size:
            return response
        headers = response.headers.copy()
        headers.pop(b"Content-Encoding", None)
        return response.replace(body=bounded_decode(response.body, encodings, max_size), headers=headers)


def check_middlewares(settings: BaseSettings) -> None:
    """Fail at start-up when the middlewares would not work together (SPEC 8.4): the built-in robots middleware
    enabled beside this one (every robots.txt fetched twice), or the body companion missing or misplaced."""
    enabled = [load_object(path) for path in build_component_list(
        settings.get_component_priority_dict_with_base("DOWNLOADER_MIDDLEWARES")
    )]
    if RobotsTxtMiddleware in enabled:
        raise ConfigError(
            "DOWNLOADER_MIDDLEWARES", "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware",
            "Scrapy's built-in robots.txt middleware is enabled beside scrapy_rep.RobotsMiddleware; remove it "
            "(set it to None in DOWNLOADER_MIDDLEWARES) or use ADDONS = {'scrapy_rep.Addon': 0}",
        )
    if RobotsBodyMiddleware not in enabled:
        raise ConfigError(
            "DOWNLOADER_MIDDLEWARES", None,
            f"scrapy_rep.RobotsBodyMiddleware must be enabled (order {BODY_MIDDLEWARE_ORDER}) with "
            "scrapy_rep.RobotsMiddleware; use ADDONS = {'scrapy_rep.Addon': 0} to enable both",
        )
    if HttpCompressionMiddleware in enabled and enabled.index(RobotsBodyMiddleware) < enabled.index(
        HttpCompressionMiddleware
    ):
        raise ConfigError(
            "DOWNLOADER_MIDDLEWARES", "scrapy_rep.RobotsBodyMiddleware",
            "must be ordered after HttpCompressionMiddleware (590), e.g. at 595",
        )


def _latest(*entries: Entry | None) -> Entry | None:
    """The most recently written of the entries (the in-process one and the stored one)."""
    present = [entry for entry in entries if entry is not None]
    return max(present, key=lambda entry: entry.expires_at) if present else None


def _reactor() -> Clock:
    from twisted.internet import reactor

    return cast(Clock, reactor)


def _schedule_engine(engine: Any) -> None:
    """Let the engine pull the next scheduled request now that a place in the downloader is free."""
    slot = getattr(engine, "_slot", None)
    if slot is not None:
        slot.nextcall.schedule()
