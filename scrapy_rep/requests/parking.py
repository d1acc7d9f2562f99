"""Where a request waiting for its origin's robots.txt lives (SPEC 2.3; ../shared/DESIGN.md's open question).

A waiting request is *parked*: its ``process_request`` awaits, and it leaves the downloader's active set, so it does
not hold one of the CONCURRENT_REQUESTS places and the engine keeps pulling other origins' requests. When its origin
is decided, a parked request re-enters the active set. The first few allowed ones of the origin (``straight``: as
many as its download slot sends at once, CONCURRENT_REQUESTS_PER_DOMAIN or _PER_IP, and one with a download delay
or AutoThrottle) go on from there: at once while the places taken are within CONCURRENT_REQUESTS, else in turn
(``robots.places``: they wait in the set, so the engine pulls nothing meanwhile). The rest go back through the
scheduler (the middleware returns each, marked as decided, with ``dont_filter``), which paces them like any other
request: an origin's thousand parked requests never wait in the downloader ahead of every other origin's.

At most ``bound`` requests are parked (REP_MAX_PARKED; by default 10,000, or CONCURRENT_REQUESTS when the
scheduler's queue is shared by a fleet, scrapy-redis): beyond that they wait inside the active set, so the engine
stops pulling (back-pressure). In a fleet this keeps a worker whose requests all wait from draining the shared queue
while the other workers idle: its parked requests count as its work.

While any request waits, ``closing`` is checked every CLOSING_CHECK_INTERVAL real seconds: once the engine begins
closing the spider, the middleware's ``on_closing`` hands the waiting requests back to the scheduler (when it keeps
its queue: JOBDIR, scrapy-redis's SCHEDULER_PERSIST) or drops them; the engine's close waits for them otherwise.

The engine internals this needs are reached through ``_scrapy.Internals``; where they are missing, nothing is
parked (the waiting request keeps its downloader place, as with Scrapy's built-in middleware).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import islice
from typing import TYPE_CHECKING
from uuid import uuid4

from scrapy import Request
from twisted.internet.task import LoopingCall

from .._scrapy import Internals, logger  # logger: the documented logger of every middleware line
from ..reporting.outcome_log import plural

if TYPE_CHECKING:
    from scrapy.statscollectors import StatsCollector

#: How often (real seconds) parking checks, while requests wait, whether the engine began closing.
CLOSING_CHECK_INTERVAL = 0.5
#: REP_MAX_PARKED's default for a scheduler whose queue lives in this process.
DEFAULT_MAX_PARKED = 10_000
#: Meta key of a request released from waiting and handed back to the scheduler already decided. Its value is the
#: deciding middleware's token: only that process skips the check; another worker, or a resumed job, checks again.
DECIDED_META_KEY = "_rep_decided_by"
#: Meta key set on every request entering a scheduler that keeps its queue (``request_scheduled``), kept when it is
#: persisted: only such requests are handed back at close (``engine.download`` requests never were in the scheduler).
SCHEDULED_META_KEY = "_rep_scheduled"
#: Why a request goes back to the scheduler (the ``rep/requests/requeued/<why>`` stat).
RELEASED = "released"
AT_CLOSE = "closing"


class Parking:
    def __init__(self, internals: Internals, stats: StatsCollector, max_parked: int | None,
                 on_closing: Callable[[], None]) -> None:
        self.internals = internals
        self.stats = stats
        self.token = uuid4().hex  # DECIDED_META_KEY's value for this process
        self._max_parked = max_parked  # None: chosen at the first park, once the engine's scheduler exists
        self.on_closing = on_closing
        self.parked: set[Request] = set()
        self.waiting = 0  # requests waiting, parked or not
        self._active: set[Request] = set()  # the downloader's active set parked requests were taken from
        self._straight: set[Request] = set()  # released, and among the first of their origin: no scheduler round trip
        self._per_release: int | None = None  # how many of an origin's released requests go straight on
        self._closing_check: LoopingCall | None = None

    @property
    def bound(self) -> int:
        """REP_MAX_PARKED, or its default: CONCURRENT_REQUESTS with a fleet's shared queue, else 10,000."""
        if self._max_parked is None:
            shared = self.internals.scheduler_is_shared()
            concurrency = self.internals.crawler.settings.getint("CONCURRENT_REQUESTS")
            self._max_parked = max(concurrency, 1) if shared else DEFAULT_MAX_PARKED
        return self._max_parked

    def wait(self, request: Request) -> bool:
        """``request`` starts waiting: parked (True) or kept in the active set (False: bound reached, not
        downloading through the engine, or parking degraded)."""
        self.waiting += 1
        if self._closing_check is None:
            self._closing_check = LoopingCall(self._check_closing)
            self._closing_check.start(CLOSING_CHECK_INTERVAL, now=False)
        if len(self.parked) >= self.bound:
            return False
        active = self.internals.active_requests()
        if active is None or request not in active:
            return False
        active.discard(request)
        self._active = active
        self.parked.add(request)
        self.internals.schedule_engine()
        return True

    def done(self, request: Request, parked: bool) -> None:
        """``request`` stops waiting. A parked one gets its place back, which ``Downloader.fetch`` frees when
        ``process_request`` returns."""
        self.waiting -= 1
        if parked:
            self.parked.discard(request)
            self._active.add(request)
        if not self.waiting and self._closing_check is not None:
            self._closing_check.stop()
            self._closing_check = None

    @property
    def per_release(self) -> int:
        """How many of an origin's parked requests go straight on when it is decided: what its download slot sends
        at once (CONCURRENT_REQUESTS_PER_IP, else _PER_DOMAIN), one with a DOWNLOAD_DELAY or AutoThrottle."""
        if self._per_release is None:
            settings = self.internals.crawler.settings
            paced = settings.getfloat("DOWNLOAD_DELAY") > 0 or settings.getbool("AUTOTHROTTLE_ENABLED")
            slot = settings.getint("CONCURRENT_REQUESTS_PER_IP") or settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN")
            self._per_release = 1 if paced else max(slot, 1)
        return self._per_release

    def releasing(self, requests: Iterable[Request]) -> None:
        """An origin's waiting ``requests`` (in arrival order) are about to be released: the first ``per_release``
        parked ones may go straight on (``straight``)."""
        self._straight.update(islice((request for request in requests if request in self.parked), self.per_release))

    def straight(self, request: Request) -> bool:
        """``request``, released, may go straight on (its place in turn) rather than through the scheduler."""
        if request in self._straight:
            self._straight.discard(request)
            return True
        return False

    def requeue(self, request: Request, why: str) -> Request:
        """What ``process_request`` returns to send ``request`` back through the scheduler: a copy with
        ``dont_filter`` (the dupefilter has seen it), marked as decided when RELEASED (an allowed parked request),
        undecided AT_CLOSE (the scheduler keeps its queue: the resumed job or another worker checks it)."""
        self.stats.inc_value(f"rep/requests/requeued/{why}")
        meta = dict(request.meta)
        if why == RELEASED:
            meta[DECIDED_META_KEY] = self.token
        return request.replace(dont_filter=True, meta=meta)

    def decided_here(self, request: Request) -> bool:
        """``request`` was decided by this process when it was released, and comes back from the scheduler."""
        if request.meta.get(DECIDED_META_KEY) != self.token:
            return False
        del request.meta[DECIDED_META_KEY]
        return True

    def close(self) -> None:
        """At spider close: say once how many waiting requests went back to a persistent queue."""
        if requeued := self.stats.get_value(f"rep/requests/requeued/{AT_CLOSE}", 0):
            logger.info("scrapy-rep: %s waiting for robots.txt went back to the scheduler, which keeps its queue "
                        "(JOBDIR, SCHEDULER_PERSIST): the resumed job or another worker checks them",
                        plural(requeued, "request"), extra={"spider": self.internals.crawler.spider})

    def _check_closing(self) -> None:
        if self.internals.engine_closing():
            self.on_closing()


def mark_scheduled(request: Request, **kwargs: object) -> None:
    """The ``request_scheduled`` handler: ``request`` enters the scheduler. Connected only when the scheduler keeps
    its queue (``Internals.scheduler_keeps_queue`` at spider_opened), the only one waiting requests go back to: a
    receiver costs every scheduled request a dispatch (issue 21)."""
    request.meta[SCHEDULED_META_KEY] = True


def came_from_scheduler(request: Request) -> bool:
    return bool(request.meta.get(SCHEDULED_META_KEY))
