"""Outcomes written to the store behind the crawl, in batches, for a store whose writes cost much less together
(``Store.batches_writes``: Redis, one pipeline per batch; issue 21, "Redis pipelined").

Contract: ``add`` queues an entry whose fetch lease this crawler holds (its renewals already stopped) and returns at
once, so the origin's waiting requests go on without a store round trip; until it is stored, ``pending`` answers
for it (an origin forgotten in process meanwhile is not fetched again). The queue is sent as one
``put_and_release_all`` WRITE_DELAY after its first entry (the injected clock), or at once when it holds
WRITE_BATCH. ``close`` sends what is queued and waits for every batch in flight. A batch's store error is counted
and logged as any store call's (``Refresher.call``); an unexpected error is logged, never raised.

What it costs a fleet: another crawler waiting for one of these origins sees its entry up to WRITE_DELAY later
(it polls every REP_STORE_POLL_INTERVAL, 1 s by default); a crawler killed meanwhile loses the queued outcomes, and
their leases lapse at REP_STORE_LEASE_TTL: those origins' robots.txt is fetched again by the next crawler.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..stores import Entry

if TYPE_CHECKING:
    from scrapy.statscollectors import StatsCollector

    from ..config import Clock

#: Seconds an outcome waits for others to join its batch.
WRITE_DELAY = 0.1
#: Outcomes queued that are sent at once, without waiting for WRITE_DELAY.
WRITE_BATCH = 64

logger = logging.getLogger("scrapy_rep.middleware")


class WriteBehind:
    """The queue of outcomes to write for ``holder``, sent through ``call`` (``Refresher.call``: store errors
    counted and logged there)."""

    def __init__(self, call: Callable[..., Awaitable[Any]], holder: str, clock: Clock,
                 stats: StatsCollector) -> None:
        self._call = call
        self._holder = holder
        self._clock = clock
        self._stats = stats
        self._queued: dict[str, Entry] = {}  # by origin: a later outcome replaces an earlier one still queued
        self._timer: Any = None  # the clock's delayed call that sends the queue
        self._sending: dict[asyncio.Future[Any], dict[str, Entry]] = {}  # batches in flight

    def add(self, entry: Entry) -> None:
        self._stats.inc_value("rep/store/written_behind")
        self._queued[entry.origin] = entry
        if len(self._queued) >= WRITE_BATCH:
            self._send()
        elif self._timer is None:
            self._timer = self._clock.callLater(WRITE_DELAY, self._send)

    def _send(self) -> None:
        """The queue, as one batch, now (an asyncio task: only the Redis store batches, on asyncio's loop)."""
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None
        batch, self._queued = self._queued, {}
        if not batch:
            return
        self._stats.inc_value("rep/store/write_batches")
        sending = asyncio.ensure_future(self._call("put_and_release_all", list(batch.values()), self._holder))
        self._sending[sending] = batch
        sending.add_done_callback(self._sent)

    def pending(self, origin: str) -> Entry | None:
        """``origin``'s outcome if it is queued or in a batch in flight, not yet known to be stored."""
        found = self._queued.get(origin)
        if found is None:
            for batch in reversed(self._sending.values()):  # the latest first
                if origin in batch:
                    return batch[origin]
        return found

    def _sent(self, sending: asyncio.Future[Any]) -> None:
        del self._sending[sending]
        if not sending.cancelled() and sending.exception() is not None:
            logger.error("robots.txt store write of a batch failed: %r", sending.exception())

    async def close(self) -> None:
        """Send what is queued and wait for every batch in flight."""
        self._send()
        if self._sending:
            await asyncio.wait(set(self._sending))
