"""Every use of Scrapy's private internals and of its version-dependent APIs, in one module.

Each is chosen once, by feature detection (never by parsing version strings). Tested on Scrapy 2.13.2, 2.14.2, 2.16.0
and 2.19.0 (``tox.ini``, run by ``.ci/run``); read in the source of every release from 2.13.0 to 2.19.0.

Private internals (names starting with ``_`` or undocumented attributes), what each is for, and what happens when
one is missing or changed: the plugin degrades to the safe behaviour, says so once at WARNING and sets the stat
``rep/degraded/<feature>`` (``Internals``):

===================================================  ==========================================  =====================
internal                                             used for                                    when missing
===================================================  ==========================================  =====================
``ExecutionEngine.downloader.active`` (a set)        parking: a waiting request leaves it, so    no parking: a waiting
                                                     it does not hold a CONCURRENT_REQUESTS      request keeps its
                                                     place (SPEC 2.3); places: a robots.txt      downloader place, as
                                                     fetch's placeholder stands in it until its  with Scrapy's built-in
                                                     download is sent                            (``parking``); no
``ExecutionEngine._slot.nextcall.schedule()``        parking: let the engine pull the next       places: fetches start
                                                     request at once                             at once
``ExecutionEngine._slot.closing``                    parking: waiting requests are handed back
                                                     or dropped once the engine starts closing
``ExecutionEngine._slot.scheduler``: ``.dqs``        at close, waiting requests go back to a      they are dropped at
(Scrapy's, with JOBDIR), ``.persist`` (scrapy-       scheduler that keeps its queue; REP_MAX_     close; REP_MAX_PARKED
redis's); its class's module                         PARKED's default for a shared queue          10,000
``ExecutionEngine._slot.scheduler.df`` (both          a forbidden link refused at discovery goes  refused in the
schedulers' dupefilter: ``request_seen``, ``log``)   through the dupefilter first, as the        downloader, as with
                                                     scheduler would take it: a duplicate is     Scrapy's built-in
                                                     filtered, not counted                       (``discovery``)
``Downloader.slots[key].delay``,                     the opt-in crawl-delay (SPEC 6.5) as the    crawl-delay not
``Downloader.per_slot_settings``                     slot's download delay                       applied
                                                                                                 (``crawl_delay``)
``SignalManager.sender`` (the sender Scrapy's        ``robots_parsed`` is built and sent only    it is always built
``send_catch_log`` sends as; looked up with          when something receives it (a broad crawl   and sent (no warning:
PyDispatcher's public ``getAllReceivers``)           parses thousands of files)                  nothing is lost)
``Headers`` as a dict keyed by ``Headers.normkey``   a request's own User-Agent read in ~0.1 µs  ``Headers.get`` (same
(``user_agent_header``)                              (every request, when the crawl decides per  answer, ~1.7 µs)
                                                     request)
===================================================  ==========================================  =====================

Version-dependent public APIs, each with what older versions offer instead:

- ``ExecutionEngine.download_async`` (2.14+); before: ``ExecutionEngine.download`` returning a Deferred.
- ``BaseSettings.get_component_priority_dict_with_base`` (2.15+); before: ``getwithbase``.
- ``scrapy.signals.robots_parsed`` (2.18+); before: scrapy-rep's own signal object, ``scrapy_rep.robots_parsed``.
- ``SignalManager.send_catch_log_async`` (2.14+); before: ``send_catch_log_deferred`` (coroutine handlers awaited by
  both).
- ``AsyncCrawlerRunner`` (2.14+) and ``Crawler.crawl_async`` (2.14+); before: ``CrawlerRunner`` and
  ``Crawler.crawl`` returning Deferreds.
- ``scrapy.utils.asyncio.is_asyncio_available`` (2.14+); before: ``scrapy.utils.reactor.is_asyncio_reactor_installed``
  (with a running asyncio loop checked first).
- ``scrapy.downloadermiddlewares.httpcompression.ACCEPTED_ENCODINGS``: the codings Scrapy accepts on this install
  (``br`` with brotli >= 1.2, ``zstd`` with zstandard or backports.zstd, depending on the version).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydispatch import dispatcher  # type: ignore[import-untyped]  # Scrapy's own signal dispatcher
from scrapy import signals
from scrapy.core.engine import ExecutionEngine
from scrapy.downloadermiddlewares import httpcompression
from scrapy.http import Headers
from scrapy.utils.conf import build_component_list
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.misc import load_object
from twisted.internet.defer import Deferred

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler, CrawlerRunner
    from scrapy.http import Response
    from scrapy.settings import BaseSettings, Settings
    from scrapy.statscollectors import StatsCollector

#: The documented logger of every middleware line (docs/stats.md).
logger = logging.getLogger("scrapy_rep.middleware")

#: Sent once per parsed robots.txt with ``robotparser`` and ``request`` (as Scrapy's built-in sends it on 2.18+).
robots_parsed: object = getattr(signals, "robots_parsed", None) or object()

#: The content codings Scrapy's HttpCompressionMiddleware accepts on this install (lower-case bytes).
SCRAPY_ACCEPTED_ENCODINGS: tuple[bytes, ...] = tuple(getattr(httpcompression, "ACCEPTED_ENCODINGS", (b"gzip",
                                                                                                     b"deflate")))

_HAS_DOWNLOAD_ASYNC = hasattr(ExecutionEngine, "download_async")


def has_receivers(crawler: Crawler, signal: object) -> bool:
    """Whether anything is connected to ``signal`` for ``crawler`` (as ``send_catch_log`` finds its receivers); True
    when that cannot be told, so that the signal is sent."""
    sender = getattr(crawler.signals, "sender", None)
    if sender is None:
        return True
    return any(True for _ in dispatcher.liveReceivers(dispatcher.getAllReceivers(sender, signal)))


async def send_signal(crawler: Crawler, signal: object, **kwargs: Any) -> None:
    """Send ``signal`` as Scrapy sends its asynchronous signals (coroutine and Deferred handlers awaited, a handler's
    exception logged, never raised): ``SignalManager.send_catch_log_async`` (2.14+), before it
    ``send_catch_log_deferred``."""
    send_async = getattr(crawler.signals, "send_catch_log_async", None)
    if send_async is not None:
        await send_async(signal=signal, **kwargs)
    else:
        await maybe_deferred_to_future(crawler.signals.send_catch_log_deferred(signal=signal, **kwargs))


#: How ``Headers`` keys the User-Agent header in its dict (``Headers.normkey``): read once, at import.
_USER_AGENT_KEY = Headers().normkey(b"User-Agent")


def user_agent_header(request: Request) -> bytes | None:
    """The request's own ``User-Agent`` header (its last value), or None. Read from ``Headers``' dict under its
    normalised key: ~0.1 µs, where ``Headers.get`` normalises the key on every call (~1.7 µs; it runs on every
    request of a crawl that decides per request, requests/agents.py)."""
    headers = request.headers
    if not isinstance(headers, dict):  # not the CaselessDict it has always been: its public get
        value = headers.get(b"User-Agent")
        return bytes(value) if value else None
    values = dict.get(headers, _USER_AGENT_KEY)
    return bytes(values[-1]) if values else None


def asyncio_available() -> bool:
    """asyncio code can run: an asyncio loop is running, or the installed reactor is the asyncio one. Call only
    once a reactor is installed (``scrapy.utils.reactor.is_reactor_installed``)."""
    try:
        from scrapy.utils.asyncio import is_asyncio_available
    except ImportError:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            from scrapy.utils.reactor import is_asyncio_reactor_installed

            return is_asyncio_reactor_installed()
        return True
    return is_asyncio_available()


async def download(engine: ExecutionEngine, request: Request) -> Response:
    """Download ``request`` through the engine (its downloader middlewares and slots), bypassing the scheduler."""
    if _HAS_DOWNLOAD_ASYNC:
        response: Response = await engine.download_async(request)
        return response
    return await maybe_deferred_to_future(engine.download(request))


def enabled_downloader_middlewares(settings: BaseSettings) -> list[Any]:
    """The classes of the enabled downloader middlewares, in order (DOWNLOADER_MIDDLEWARES over its _BASE)."""
    return _enabled_components(settings, "DOWNLOADER_MIDDLEWARES")


def enabled_spider_middlewares(settings: BaseSettings) -> list[Any]:
    """The classes of the enabled spider middlewares, in order (SPIDER_MIDDLEWARES over its _BASE)."""
    return _enabled_components(settings, "SPIDER_MIDDLEWARES")


def _enabled_components(settings: BaseSettings, name: str) -> list[Any]:
    """The classes a component setting enables, as Scrapy builds them: ``name`` over ``name``_BASE
    (``get_component_priority_dict_with_base``, 2.15+; before, ``getwithbase``), a None removing one, by order."""
    with_base: Callable[[str], BaseSettings] = getattr(
        settings, "get_component_priority_dict_with_base", settings.getwithbase
    )
    return [load_object(path) for path in build_component_list(with_base(name))]


def new_runner(settings: Settings) -> Any:
    """A crawler runner on the installed reactor: ``AsyncCrawlerRunner`` where it exists, else ``CrawlerRunner``."""
    from scrapy import crawler

    runner: type[CrawlerRunner] = getattr(crawler, "AsyncCrawlerRunner", crawler.CrawlerRunner)
    return runner(settings)


async def crawl_with(runner: Any, crawler: Crawler, *args: Any, **kwargs: Any) -> None:
    """``runner.crawl(crawler, ...)`` awaited, whichever runner ``new_runner`` gave."""
    await _awaited(runner.crawl(crawler, *args, **kwargs))


async def run_crawler(crawler: Crawler, *args: Any, **kwargs: Any) -> None:
    """Run ``crawler`` until it finishes: ``Crawler.crawl_async`` where it exists, else ``Crawler.crawl``."""
    crawl_async = getattr(crawler, "crawl_async", None)
    await _awaited(crawl_async(*args, **kwargs) if crawl_async else crawler.crawl(*args, **kwargs))


async def stop_crawler(crawler: Crawler) -> None:
    stop_async = getattr(crawler, "stop_async", None)
    await _awaited(stop_async() if stop_async else crawler.stop())


async def _awaited(result: Any) -> None:
    if isinstance(result, Deferred):
        await maybe_deferred_to_future(result)
    else:
        await result


def is_shared_scheduler(scheduler_class: Any) -> bool:
    """``scheduler_class`` (a class or its import path, as the SCHEDULER setting holds it) is scrapy-redis's
    scheduler or a subclass: a fleet's shared queue."""
    if isinstance(scheduler_class, str):
        try:
            scheduler_class = load_object(scheduler_class)
        except (ImportError, AttributeError, NameError, ValueError):
            return False  # Scrapy itself reports a SCHEDULER it cannot load
    return any(cls.__module__.startswith("scrapy_redis.") for cls in getattr(scheduler_class, "__mro__", ()))


#: The private attribute names Internals reads, in one place: a Scrapy that renames one degrades that feature.
ENGINE_SLOT = "_slot"  # ExecutionEngine._slot: .closing (a Deferred once closing), .nextcall.schedule()
DOWNLOADER_ACTIVE = "active"  # Downloader.active: the set of requests in the downloader
DOWNLOADER_SLOTS = "slots"  # Downloader.slots: key -> Slot, whose .delay is the download delay
DOWNLOADER_PER_SLOT = "per_slot_settings"  # Downloader.per_slot_settings: key -> settings of slots created later
SCHEDULER_DUPEFILTER = "df"  # Scheduler.df (Scrapy's and scrapy-redis's): the dupefilter it filters requests with
SCHEDULER_DISK_QUEUE = "dqs"  # scrapy.core.scheduler.Scheduler.dqs: its disk queue with JOBDIR, else None


class Internals:
    """The engine internals the middleware uses, each checked at its first use; a missing one degrades the feature
    for the rest of the crawl, with one WARNING and a ``rep/degraded/<feature>`` stat."""

    def __init__(self, crawler: Crawler, stats: StatsCollector) -> None:
        self.crawler = crawler
        self.stats = stats
        self.degraded: set[str] = set()

    def _degrade(self, feature: str, why: str, consequence: str) -> None:
        if feature in self.degraded:
            return
        self.degraded.add(feature)
        self.stats.set_value(f"rep/degraded/{feature}", 1)
        logger.warning("scrapy-rep: %s on this Scrapy (%s): %s", why, feature, consequence,
                       extra={"spider": self.crawler.spider})

    # -- parking (downloader.active, engine._slot) -----------------------------------------------------------------

    def active_requests(self) -> set[Request] | None:
        """The downloader's active set if parking can work on this engine, else None (degraded, said once)."""
        if "parking" in self.degraded:
            return None
        engine = self.crawler.engine
        if engine is None:
            return None
        active = getattr(getattr(engine, "downloader", None), DOWNLOADER_ACTIVE, None)
        slot = getattr(engine, ENGINE_SLOT, None)
        if (
            not isinstance(active, set)
            or slot is None
            or not hasattr(slot, "closing")
            or not callable(getattr(getattr(slot, "nextcall", None), "schedule", None))
        ):
            self._degrade(
                "parking", "the engine's downloader.active or _slot is not as expected",
                "requests waiting for robots.txt keep their downloader place (as with Scrapy's built-in middleware)",
            )
            return None
        return active

    def schedule_engine(self) -> None:
        """Let the engine pull the next scheduled request now (a downloader place was freed)."""
        slot = getattr(self.crawler.engine, ENGINE_SLOT, None)
        if slot is not None:
            slot.nextcall.schedule()

    # -- the scheduler (engine._slot.scheduler) ----------------------------------------------------------------

    def _scheduler(self) -> Any:
        return getattr(getattr(self.crawler.engine, ENGINE_SLOT, None), "scheduler", None)

    def scheduler_is_shared(self) -> bool:
        """The scheduler's queue is shared by a fleet of workers: scrapy-redis's scheduler (or a subclass)."""
        return is_shared_scheduler(type(self._scheduler()))

    def scheduler_keeps_queue(self) -> bool:
        """The scheduler's queue outlives this process: Scrapy's scheduler with a disk queue (JOBDIR), or
        scrapy-redis's with SCHEDULER_PERSIST. Unknown schedulers are assumed not to."""
        scheduler = self._scheduler()
        if self.scheduler_is_shared():
            return bool(getattr(scheduler, "persist", False))
        return getattr(scheduler, SCHEDULER_DISK_QUEUE, None) is not None

    def dupefilter(self) -> Any:
        """The scheduler's dupefilter (``df``: Scrapy's and scrapy-redis's schedulers both filter a request with
        ``request_seen`` and say so with ``log``), or None (degraded, said once)."""
        if "discovery" in self.degraded:
            return None
        scheduler = self._scheduler()
        if scheduler is None:
            return None  # no engine slot yet (or any more): nothing is scheduled now
        df = getattr(scheduler, SCHEDULER_DUPEFILTER, None)
        if not callable(getattr(df, "request_seen", None)) or not callable(getattr(df, "log", None)):
            self._degrade("discovery", "the scheduler has no dupefilter (df) as expected",
                          "forbidden links are refused in the downloader, as with Scrapy's built-in middleware")
            return None
        return df

    def engine_closing(self) -> bool:
        """True once the engine has begun closing the spider (or has no slot any more)."""
        slot = getattr(self.crawler.engine, ENGINE_SLOT, None)
        return slot is None or slot.closing is not None

    # -- crawl-delay (downloader.slots, per_slot_settings) -----------------------------------------------------------

    def set_slot_delay(self, key: str, delay: float) -> bool:
        """Make ``delay`` the download delay of the downloader slot ``key`` (now and when it is created again);
        False when this downloader does not offer it (degraded, said once)."""
        if "crawl_delay" in self.degraded:
            return False
        downloader = getattr(self.crawler.engine, "downloader", None)
        per_slot = getattr(downloader, DOWNLOADER_PER_SLOT, None)
        slots = getattr(downloader, DOWNLOADER_SLOTS, None)
        if not isinstance(per_slot, dict) or not isinstance(slots, dict):
            self._degrade("crawl_delay", "the downloader's per_slot_settings or slots are not as expected",
                          "robots.txt crawl-delay is not applied (REP_OBEY_CRAWL_DELAY)")
            return False
        per_slot.setdefault(key, {})["delay"] = delay
        if key in slots:
            slots[key].delay = delay
        return True
