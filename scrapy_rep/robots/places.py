"""Downloader places for robots.txt fetches: the crawl's limits bound what the plugin sends (DESIGN rule 1; issue 26).

The engine pulls a request from the scheduler only while the downloader's active set holds fewer than
CONCURRENT_REQUESTS requests (its back-out). A robots.txt download goes through ``engine.download``, past that check,
and a request waiting for its origin leaves the active set (``parking``); so without this module a store read that
took 50 ms let the engine pull hundreds of new origins meanwhile, each starting its own fetch, and their downloads
then went out all at once: 8-20x the crawl's concurrency.

Contract: every fetch of an origin's robots.txt holds one *place* in the active set from its start (the store read,
the fetch lease) until its download is sent:

- a *placeholder* (a ``Request`` that is never sent) stands in the set while no robots.txt request is in it, so the
  engine counts the fetch and stops pulling when the crawl is at its limit;
- ``enter`` hands the place to the robots.txt request just before it is sent (the placeholder leaves, the request
  enters, in one step of the reactor); after the download nothing is held (storing the outcome sends nothing);
- a fetch started by a request that parked takes the place the request left (at once);
- while a request of the origin waits inside the set (it could not park: REP_MAX_PARKED reached), that request's place
  is *lent* to the fetch: it sends nothing until the fetch ends, so the fetch needs no placeholder (one waiting for a
  place that its own requests hold would never start);
- a fetch that finds another crawler fetching the origin (its store lease taken) steps aside while it waits: it sends
  nothing, and a fleet worker keeps crawling other origins meanwhile;
- a fetch with no place (a retry started by its timer, a redirect's next hop, a fetch back from another crawler's
  lease) waits, placeholder in the set, until the requests in the set other than waiting placeholders number fewer
  than the limit (checked each time a place is given back and every ADMIT_INTERVAL); it counts in the stat
  ``rep/robots/waited_for_place``.

A request released from waiting (``parking``) is back in the set. If the places taken number more than the limit, it
waits there for ``room``, in the same first-come-first-served line as the fetches: it counts in the set, so the engine
pulls nothing meanwhile, as it would not with that request in a downloader slot's queue, and it goes on when a place
frees (each response the engine receives is checked at once, before the engine pulls again; the others every
ADMIT_INTERVAL). Before this, such a request went back through the scheduler: in a broad crawl nearly every request
waits for its origin's first robots.txt, and thousands of released requests in the scheduler's per-slot queues made
each pop of Scrapy's default DownloaderAwarePriorityQueue scan them all (issue 21).

The spider's start requests wait too (``start_room``, from ``middleware.RobotsStartMiddleware``'s
``process_start``): while fetches hold places in the set (or requests wait in it for room) and the scheduler already
holds CONCURRENT_REQUESTS requests, the next start request is not read. Scrapy's engine, while it backs out, moves
start requests into the scheduler one after the other without pause, so a moment at the limit moved every remaining
one there, and each pop of the default DownloaderAwarePriorityQueue then scanned every origin's queue (issue 21:
with a store 60 ms away, 5,857 of 6,000 start requests queued). A downloader's worth read ahead lets the engine
refill places that free together (fetches ending together) from the scheduler at once; with none (the first
version) a crawl whose robots.txt answer 1 s late lost a quarter of its rate. The start stream waits until a place
frees, a fetch's place is given back, or ADMIT_INTERVAL passes (``rep/robots/start_held`` counts the waits).

So at no moment are more requests on the network than CONCURRENT_REQUESTS (0: no limit, as Scrapy reads it),
whatever the store's latency, and waiting fetches and requests keep the engine from pulling. Where parking is
degraded (the engine's active set is not as expected, ``_scrapy.Internals``), places are too: fetches start at once.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from scrapy import Request, signals
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred
from twisted.internet.task import LoopingCall

if TYPE_CHECKING:
    from .._scrapy import Internals
    from ..config import Clock

#: How often (real seconds) fetches waiting for a place look for one, while any waits.
ADMIT_INTERVAL = 0.05
#: Meta key of a placeholder (never sent); its value is the origin whose fetch it stands for.
PLACEHOLDER_META_KEY = "_rep_place_of"


@dataclass(eq=False, slots=True)
class _Waiter:
    """Something in the active set that waits for room (first come, first served): fired True when admitted."""

    admitted: Deferred[bool] | None = None


@dataclass(eq=False, slots=True)
class _Place(_Waiter):
    origin: str = ""
    robots_url: str = ""
    placeholder: Request | None = None  # in the active set while the fetch holds a place and sends nothing


class Places:
    """The places of the robots.txt fetches in flight, by origin (one fetch per origin at a time)."""

    def __init__(self, internals: Internals, lends: Callable[[str], bool]) -> None:
        self.internals = internals
        self.limit = internals.crawler.settings.getint("CONCURRENT_REQUESTS")  # 0: no limit, as Scrapy reads it
        self.lends = lends  # lends(origin): a request of the origin waits inside the active set (it could not park)
        self._held: dict[str, _Place] = {}
        self._queue: deque[_Waiter] = deque()  # in the active set waiting for room, first come first served
        self._check: LoopingCall | None = None
        self._start_waiter: Deferred[None] | None = None  # the start stream, while it waits for room
        self._closed = False

    @property
    def waiting(self) -> int:
        """Fetches and released requests waiting for a place."""
        return len(self._queue)

    async def take(self, origin: str, robots_url: str) -> bool:
        """Before ``origin``'s fetch starts: a place for it. False once closed (the fetch must not start)."""
        if self._closed:
            return False
        place = self._held[origin] = _Place(origin=origin, robots_url=robots_url)
        return await self._placeholder(place)

    async def room(self) -> bool:
        """A request released from waiting is back in the active set: it may go on now if the places taken (it
        among them) are within the limit, else once admitted in turn. False once closed (it must not be sent)."""
        active = self.internals.active_requests()
        if self._closed or active is None or self.limit <= 0 or self._in_use(active) <= self.limit:
            return not self._closed
        return await self._wait(_Waiter())

    async def enter(self, origin: str) -> bool:
        """Just before a robots.txt request of ``origin``'s fetch is sent: the place passes to it (the caller sends
        it in the same reactor step). False once closed."""
        place = self._held.get(origin)
        if place is None:  # not taken (degraded, or a download outside a fetch): nothing to hand over
            return not self._closed
        if place.placeholder is None and not await self._placeholder(place):  # a later hop: a place again
            return False
        self._leave(place)  # lent (no placeholder): nothing to hand over
        return True

    async def start_room(self) -> None:
        """Before the spider's next start request is read: wait while fetches hold places and the scheduler holds a
        downloader's worth (module docstring)."""
        from twisted.internet import reactor  # here: importing it at module level would install the default reactor

        held = False
        while self._start_waits():
            if not held:
                held = True
                self.internals.stats.inc_value("rep/robots/start_held")
            waiter = self._start_waiter = Deferred()
            timer = cast("Clock", reactor).callLater(ADMIT_INTERVAL, self._wake_start)  # real time, as LoopingCall
            self.internals.crawler.signals.connect(self._wake_start, signal=signals.request_left_downloader)
            try:
                await maybe_deferred_to_future(waiter)
            finally:
                self.internals.crawler.signals.disconnect(self._wake_start, signal=signals.request_left_downloader)
                if timer.active():
                    timer.cancel()

    def _start_waits(self) -> bool:
        """Fetches hold places in the active set (or requests wait in it) and the scheduler already holds ``limit``
        requests: the start stream runs ahead of the downloader by that much, so that places freed together
        (fetches that end together) are refilled at once from the scheduler, and by no more, so that each pop of
        the default queue stays cheap."""
        if self._closed or self.limit <= 0 or not (self._held or self._queue):
            return False
        if self.internals.active_requests() is None:
            return False  # degraded: no places
        stats = self.internals.stats
        queued: int = stats.get_value("scheduler/enqueued", 0) - stats.get_value("scheduler/dequeued", 0)
        return queued >= self.limit

    def _wake_start(self, **kwargs: object) -> None:
        waiter, self._start_waiter = self._start_waiter, None
        if waiter is not None and not waiter.called:
            waiter.callback(None)

    def step_aside(self, origin: str) -> None:
        """``origin``'s fetch waits for another crawler's (its fetch lease is taken): it sends nothing meanwhile, so
        its placeholder leaves; ``enter`` takes a place again if it downloads after all."""
        place = self._held.get(origin)
        if place is not None and place.admitted is None:
            self._give_back(place)

    def lent(self, origin: str) -> None:
        """A request of ``origin`` started waiting inside the active set: a fetch of the origin waiting for room
        takes that request's place now. (Scrapy 2.13 runs each ``process_request`` coroutine as its own task, so the
        engine's other pulled requests of the origin reach the middleware after its fetch began waiting.)"""
        place = self._held.get(origin)
        if place is not None and place.admitted is not None:
            self._queue.remove(place)
            self._fire(place, True)
            self._leave(place)  # the lending request's place is the fetch's: no placeholder

    def sent(self) -> None:
        """A robots.txt download ended: its request left the active set, so a waiting fetch may have room."""
        self._admit()

    def freed(self, **kwargs: object) -> None:
        """The ``response_received`` handler, connected while anything waits for room (issue 21: a receiver costs
        every response a dispatch): a download ended and its request left the active set; Scrapy sends this before
        the engine may pull again, so a waiter takes the place first."""
        if self._queue:
            self._admit()

    def release(self, origin: str) -> None:
        """``origin``'s fetch ended (or never sent anything: a store hit): its placeholder, if any, leaves."""
        place = self._held.pop(origin, None)
        if place is not None:
            self._give_back(place)
        self._wake_start()

    def close(self) -> None:
        """The crawl is closing: every placeholder leaves, waiting fetches do not start, waiting requests are not
        sent."""
        self._closed = True
        for place in list(self._held.values()):
            self._leave(place)
        self._held.clear()
        while self._queue:
            self._fire(self._queue.popleft(), False)
        self._stop_checking()
        self._wake_start()

    # -- the active set ------------------------------------------------------------------------------------------

    async def _placeholder(self, place: _Place) -> bool:
        active = self.internals.active_requests()
        if active is None or self.lends(place.origin):
            return not self._closed  # degraded: no places, as before; or lent: a waiting request's place
        room = self._in_use(active) < self.limit or self.limit <= 0
        place.placeholder = Request(place.robots_url, dont_filter=True, meta={PLACEHOLDER_META_KEY: place.origin})
        active.add(place.placeholder)
        if room:
            return True
        self.internals.stats.inc_value("rep/robots/waited_for_place")
        return await self._wait(place)

    async def _wait(self, waiter: _Waiter) -> bool:
        """``waiter`` (in the active set) waits for room, in turn: True once admitted, False if closed meanwhile."""
        waiter.admitted = Deferred()
        self._queue.append(waiter)
        if self._check is None:
            self._check = LoopingCall(self._admit)
            self._check.start(ADMIT_INTERVAL, now=False)
            self.internals.crawler.signals.connect(self.freed, signal=signals.response_received)
        admitted: bool = await maybe_deferred_to_future(waiter.admitted)
        return admitted and not self._closed

    def _in_use(self, active: set[Request]) -> int:
        """The places taken: the active set less the placeholders still waiting for room."""
        return len(active) - len(self._queue)

    def _give_back(self, place: _Place) -> None:
        """``place``'s placeholder leaves the set: the engine, or a waiting fetch, may take the place."""
        if place.placeholder is not None:
            self._leave(place)
            self.internals.schedule_engine()
            self._admit()

    def _admit(self) -> None:
        """Start the waiting fetches that have room, first come first served."""
        if not self._queue:
            return
        active = self.internals.active_requests()
        admitted: list[_Waiter] = []
        while self._queue and (active is None or self.limit <= 0 or self._in_use(active) < self.limit):
            admitted.append(self._queue.popleft())
        if not self._queue:
            self._stop_checking()
        for place in admitted:
            self._fire(place, True)

    def _leave(self, place: _Place) -> None:
        if place.admitted is not None:  # closing while it waits
            self._queue.remove(place)
            self._fire(place, False)
        if place.placeholder is not None:
            active = self.internals.active_requests()
            if active is not None:
                active.discard(place.placeholder)
            place.placeholder = None

    @staticmethod
    def _fire(place: _Waiter, admitted: bool) -> None:
        waiter, place.admitted = place.admitted, None
        if waiter is not None and not waiter.called:
            waiter.callback(admitted)

    def _stop_checking(self) -> None:
        if self._check is not None:
            check, self._check = self._check, None
            if check.running:
                check.stop()
            self.internals.crawler.signals.disconnect(self.freed, signal=signals.response_received)
