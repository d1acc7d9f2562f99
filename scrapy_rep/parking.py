"""Parking: a request waiting for its origin's robots.txt leaves the downloader's active set (SPEC 2.3).

A parked request does not hold one of the CONCURRENT_REQUESTS places, so the engine keeps pulling other origins'
requests from the scheduler; it is put back just before its ``process_request`` returns. At most REP_MAX_PARKED
requests are parked: beyond that they wait inside the active set, so the engine stops draining the scheduler into
memory (back-pressure). While requests are parked the middleware keeps the spider open; once the engine begins
closing, ``on_closing`` is called so the middleware can drop them (they would keep the close waiting).

The engine internals this needs are reached through ``_scrapy.Internals``; where they are missing, nothing is
parked (the waiting request keeps its downloader place, as with Scrapy's built-in middleware).
"""

from __future__ import annotations

from collections.abc import Callable

from scrapy import Request
from twisted.internet.task import LoopingCall

from ._scrapy import Internals

#: How often (real seconds) parking checks, while requests are parked, whether the engine began closing.
CLOSING_CHECK_INTERVAL = 0.5


class Parking:
    def __init__(self, internals: Internals, max_parked: int, on_closing: Callable[[], None]) -> None:
        self.internals = internals
        self.max_parked = max_parked
        self.on_closing = on_closing
        self.parked: set[Request] = set()
        self._active: set[Request] = set()  # the downloader's active set parked requests were taken from
        self._closing_check: LoopingCall | None = None

    def park(self, request: Request) -> bool:
        """Take ``request`` out of the downloader's active set; False when it stays there (bound reached,
        not downloading through the engine, or parking degraded)."""
        if len(self.parked) >= self.max_parked:
            return False
        active = self.internals.active_requests()
        if active is None or request not in active:
            return False
        active.discard(request)
        self._active = active
        self.parked.add(request)
        if self._closing_check is None:
            self._closing_check = LoopingCall(self._check_closing)
            self._closing_check.start(CLOSING_CHECK_INTERVAL, now=False)
        self.internals.schedule_engine()
        return True

    def unpark(self, request: Request) -> None:
        """Give the request its place back: Downloader.fetch removes it from the active set when it returns."""
        self.parked.discard(request)
        self._active.add(request)
        if not self.parked and self._closing_check is not None:
            self._closing_check.stop()
            self._closing_check = None

    def _check_closing(self) -> None:
        if self.internals.engine_closing():
            self.on_closing()
