"""Where a current entry for an origin comes from: the shared store, another crawler's fetch, or a download of our
own under the store's fetch lease (SPEC 2.1, 3.2).

A ``StoreError`` is logged and counted and never means "allow all": the in-process state carries on. Any other
exception propagates to the middleware, which treats it as an internal error (a network-error outcome, SPEC 2.2).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, NamedTuple, cast
from uuid import uuid4

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.interfaces import IReactorTime
from twisted.internet.task import deferLater

from .config import Clock, Config
from .fetch import RobotsFetcher
from .origin import Origin
from .policy import FetchResult, next_entry
from .stores import Entry, Store, StoreError

if TYPE_CHECKING:
    from scrapy.statscollectors import StatsCollector

#: The documented logger of every middleware line (docs/stats.md).
logger = logging.getLogger("scrapy_rep.middleware")


class Current(NamedTuple):
    """A current entry and, when this process downloaded robots.txt for it, how that download ended (what the log
    says about redirects; an entry read from the store has no such detail: ``Entry`` stores no URL)."""

    entry: Entry
    fetched: FetchResult | None = None


class Refresher:
    def __init__(self, store: Store, fetcher: RobotsFetcher, config: Config, clock: Clock,
                 stats: StatsCollector) -> None:
        self.store = store
        self.fetcher = fetcher
        self.config = config
        self.clock = clock
        self.stats = stats
        self.holder = uuid4().hex  # this crawler's identity for store leases

    async def current_entry(self, origin: Origin, previous: Entry | None) -> Current:
        """A fresh stored entry, else the entry after fetching under the lease. ``previous`` is the entry in
        effect in this process (it and the stored one count for stale-on-error, SPEC 2.4)."""
        stored = await self.get(origin.key)
        if stored is not None and stored.is_fresh(self.clock.seconds()):
            self.stats.inc_value("rep/cache/store_hits")
            return Current(stored)
        # The stored copy may be the only one (e.g. after a restart): it counts for stale-on-error (SPEC 2.4).
        return await self._fetch_under_lease(origin, _latest(previous, stored))

    async def _fetch_under_lease(self, origin: Origin, previous: Entry | None) -> Current:
        key = origin.key
        leased = await self.call("acquire_lease", key, self.holder, self.config.store_lease_ttl)
        if leased is False:
            entry = await self._wait_for_other_crawler(key)
            if entry is not None:
                return Current(entry)
        try:
            if leased is True:
                # Another crawler may have fetched, stored and released between our read and our lease.
                stored = await self.get(key)
                if stored is not None and stored.is_fresh(self.clock.seconds()):
                    self.stats.inc_value("rep/cache/store_hits")
                    return Current(stored)
            result = await self.fetcher.fetch(origin)
            self._count_download(result)
            entry = next_entry(key, previous, result, self.clock.seconds(), self.config)
            await self.call("put", entry)
        finally:
            if leased is True:
                await self.call("release_lease", key, self.holder)
        return Current(entry, result)

    async def _wait_for_other_crawler(self, origin: str) -> Entry | None:
        """Another crawler holds the fetch lease: poll the store for its entry, at most for the lease's lifetime."""
        deadline = self.clock.seconds() + self.config.store_lease_ttl
        while self.clock.seconds() < deadline:
            pause = deferLater(cast(IReactorTime, self.clock), self.config.store_poll_interval, lambda: None)
            await maybe_deferred_to_future(pause)
            entry = await self.get(origin)
            if entry is not None and entry.is_fresh(self.clock.seconds()):
                self.stats.inc_value("rep/cache/store_hits")
                return entry
        return None

    async def get(self, origin: str) -> Entry | None:
        entry = await self.call("get", origin)
        return entry if isinstance(entry, Entry) else None

    async def call(self, operation: str, *args: Any) -> Any:
        """A store call; a StoreError is logged and counted and yields None (SPEC 3.2)."""
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


def _latest(*entries: Entry | None) -> Entry | None:
    """The most recently written of the entries (the in-process one and the stored one)."""
    present = [entry for entry in entries if entry is not None]
    return max(present, key=lambda entry: entry.expires_at) if present else None
