"""Where a current entry for an origin comes from: the shared store, another crawler's fetch, or a download of our
own under the store's fetch lease (SPEC 2.1, 3.2).

Fetch leases: a crawler downloads an origin's robots.txt only while it holds the origin's lease, so crawlers
sharing a store download it once between them (SPEC 2.1 across crawlers). A lease lives ``REP_STORE_LEASE_TTL``
seconds and is renewed within every third of that while its fetch runs (one timer, ticking every sixth of it,
renews every lease held for a sixth or more); it is released when the fetch's outcome is stored (with a store that
``batches_writes``, behind the crawl: write_behind.py) and, for every lease still held, at ``close``. A crawler
that finds the lease taken polls every ``REP_STORE_POLL_INTERVAL``: each poll reads the store for a fresh entry and
tries to take the lease, so a holder that died (no release, no renewal) blocks the origin for at most the TTL plus
one poll interval, while a live holder keeps the others waiting as long as its fetch runs. The only fetch without a
lease is when the store fails.

A ``StoreError`` is logged and counted and never means "allow all": the in-process state carries on. Any other
exception propagates to the middleware, which treats it as an internal error (a network-error outcome, SPEC 2.2).
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, cast
from uuid import uuid4

from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IReactorTime
from twisted.internet.task import LoopingCall, deferLater
from twisted.python.failure import Failure

from ..config import Clock, Config
from ..stores import Entry, Outcome, Store, StoreError
from .fetch import Fetcher
from .origin import Located
from .policy import FetchResult, next_entry
from .write_behind import WriteBehind

if TYPE_CHECKING:
    from scrapy.statscollectors import StatsCollector

#: The documented logger of every middleware line (docs/stats.md).
logger = logging.getLogger("scrapy_rep.middleware")


class Source(enum.Enum):
    """Where a current entry came from, as the origin's log line says it (issue 25)."""

    DOWNLOADED = "downloaded"
    STORE = "from the store"  # fresh there at once: an earlier run's or another crawler's download
    OTHER_CRAWLER = "from another crawler's download"  # stored while this crawler waited for that one's fetch lease


class Current(NamedTuple):
    """A current entry, where it came from and, when this process downloaded robots.txt for it, how that download
    ended (what the log says about redirects, and the response the ``robots_version_adopted`` signal carries; an entry
    read from the store has its version's final URL only)."""

    entry: Entry
    source: Source
    fetched: FetchResult | None = None


class StatNames(NamedTuple):
    """The stat prefixes of one kind of origin-level file: its cache lookups and its downloads."""

    cache: str = "rep/cache"
    downloads: str = "rep/robots"


ROBOTS_STATS = StatNames()


class Refresher:
    """Serves one kind of origin-level file (robots.txt; tdmrep.json, keyed by its URL: tdmrep.py) from the store,
    another crawler's fetch or a download; ``names`` prefixes its stats. ``owns_store``: ``close`` closes the store
    (one refresher per store does)."""

    def __init__(self, store: Store, fetcher: Fetcher, config: Config, clock: Clock,
                 stats: StatsCollector, on_lease_wait: Callable[[str], None] = lambda origin: None,
                 names: StatNames = ROBOTS_STATS, owns_store: bool = True) -> None:
        self.store = store
        self.names = names
        self.owns_store = owns_store
        self.on_lease_wait = on_lease_wait  # called with the origin when another crawler holds its fetch lease
        self.fetcher = fetcher
        self.config = config
        self.clock = clock
        self.stats = stats
        self.holder = uuid4().hex  # this crawler's identity for store leases
        # The leases this crawler holds: when each was taken or last renewed (None: its renewals stopped on an
        # unexpected error), and one renewal timer for all of them while any is held (issue 21: not one per fetch).
        self._leases: dict[str, float | None] = {}
        self._renewal: LoopingCall | None = None
        self._closed = False  # close() began: no more waiting, renewing or taking leases
        self._store_closed = False  # close() closed the store: no more store calls
        self._store_errors = 0  # store calls that failed: the first is a WARNING, the rest DEBUG (and the close)
        self._behind = WriteBehind(self.call, self.holder, clock, stats)  # a store that batches_writes

    async def current_entry(self, origin: Located, previous: Entry | None) -> Current:
        """A fresh stored entry, else the entry after fetching under the lease. ``previous`` is the entry in
        effect in this process (it and the stored one count for stale-on-error, SPEC 2.4). Each call is one cache
        lookup, counted once: ``rep/cache/store_hits`` (the store had it fresh) or ``rep/cache/misses`` (it had not:
        downloaded here, or by the crawler holding the lease, ``rep/cache/misses/other_crawler``).

        An outcome of ours still being written behind (write_behind.py) answers first, as the store will.
        The first store call is ``Store.lookup``: for an origin the store has no entry of (a broad crawl's every
        origin), it also tries the lease, and a lease taken there needs no second read (issue 21)."""
        key = origin.key
        behind = self._behind.pending(key)  # our own outcome, not stored yet: the freshest there is
        if behind is not None and behind.is_fresh(self.clock.seconds()):
            self.stats.inc_value(f"{self.names.cache}/store_hits")
            return Current(behind, Source.STORE)
        stored, leased = await self._lookup(key)
        if stored is not None and stored.is_fresh(self.clock.seconds()):
            self.stats.inc_value(f"{self.names.cache}/store_hits")
            return Current(stored, Source.STORE)
        self.stats.inc_value(f"{self.names.cache}/misses")
        # The stored copy may be the only one (e.g. after a restart): it counts for stale-on-error (SPEC 2.4).
        previous = _latest(previous, stored)
        if stored is not None:  # stale: the lease was not tried yet
            return await self._fetch_under_lease(origin, previous, await self._take_lease(key), read_again=True)
        return await self._fetch_under_lease(origin, previous, leased, read_again=False)

    async def _fetch_under_lease(self, origin: Located, previous: Entry | None, leased: bool | None,
                                 read_again: bool) -> Current:
        """Fetch under the lease (``leased``: as ``_take_lease`` says), waiting for it while another crawler holds
        it. ``read_again``: the lease was taken after the store was read, so another crawler may have stored
        meanwhile."""
        key = origin.key
        if leased is False:
            self.on_lease_wait(key)
        while leased is False:  # another crawler is fetching: wait for its entry, or for its lease to lapse
            await maybe_deferred_to_future(
                deferLater(cast(IReactorTime, self.clock), self.config.store_poll_interval, lambda: None)
            )
            if self._closed:
                return Current(_unknown(key, previous, self.clock.seconds()), Source.DOWNLOADED)
            stored = await self._fresh(key)
            if stored is not None:
                return Current(stored, Source.OTHER_CRAWLER)
            leased, read_again = await self._take_lease(key), True
        try:
            if leased and read_again:
                # Another crawler may have fetched, stored and released between our read and our lease.
                stored = await self._fresh(key)
                if stored is not None:
                    return Current(stored, Source.OTHER_CRAWLER)
            # leased is None: the store failed; fetch without a lease rather than not at all (SPEC 3.2).
            result = await self.fetcher.fetch(origin)
            if self._closed and result.status is None:  # cut short by our own close: no outcome of the site's
                return Current(_unknown(key, previous, self.clock.seconds()), Source.DOWNLOADED)
            self._count_download(result)
            entry = next_entry(key, previous, result, self.clock.seconds(), self.config)
            if leased and self._stop_renewing(key):
                # A store that batches_writes: written behind, and the waiting requests go on now (the lease is
                # released with the write). Once close began, written here: close sends the last batch first.
                if self.store.batches_writes and not self._closed:
                    self._behind.add(entry)
                else:
                    await self.call("put_and_release", entry, self.holder)
            else:
                await self.call("put", entry)
        finally:
            if leased:
                await self._release(key)
        return Current(entry, Source.DOWNLOADED, result)

    async def _lookup(self, origin: str) -> tuple[Entry | None, bool | None]:
        """``Store.lookup``: (the stored entry, None) or (None, whether the lease was taken: ``_take_lease``'s
        answer). After ``close`` began: the entry only, no lease."""
        if self._closed:
            return await self.get(origin), False
        found = await self.call("lookup", origin, self.holder, self.config.store_lease_ttl)
        if found is None:  # the store failed
            return None, None
        entry, leased = found
        if entry is not None:
            return entry, None
        return None, await self._held(origin) if leased else False

    async def _fresh(self, origin: str) -> Entry | None:
        """The stored entry if it is fresh (another crawler's download: the lookup was counted a miss), else None."""
        stored = await self.get(origin)
        if stored is None or not stored.is_fresh(self.clock.seconds()):
            return None
        self.stats.inc_value(f"{self.names.cache}/misses/other_crawler")
        return stored

    async def _take_lease(self, origin: str) -> bool | None:
        """Try to take ``origin``'s fetch lease: True (taken, and renewed within every third of its TTL until released),
        False (another crawler holds it, or we are closing), None (the store failed)."""
        if self._closed:
            return False
        leased = await self.call("acquire_lease", origin, self.holder, self.config.store_lease_ttl)
        if leased is not True:
            return cast("bool | None", leased)
        return await self._held(origin)

    async def _held(self, origin: str) -> bool:
        """A lease just taken: renewed within a third of its TTL from now on, while held (True); given back at once
        if ``close`` ran meanwhile and released what it knew of (False)."""
        if self._closed:
            await self.call("release_lease", origin, self.holder)
            return False
        self._leases[origin] = self.clock.seconds()
        if self._renewal is None or not self._renewal.running:
            self._renewal = LoopingCall(self._renew_due)
            self._renewal.clock = cast(IReactorTime, self.clock)
            self._renewal.start(self._renew_every, now=False).addErrback(self._renewal_failed)
        return True

    @property
    def _renew_every(self) -> float:
        """The renewal timer's period, and the age from which a lease is renewed at its tick: a sixth of the TTL, so
        that every lease is renewed between a sixth and a third of its TTL after it was taken or last renewed."""
        return self.config.store_lease_ttl / 6

    @property
    def closed(self) -> bool:
        """``close`` began: no fetch starts, and the outcome of one cut short is not stored."""
        return self._closed

    def _renew_due(self) -> Deferred[None] | None:
        """The renewal timer's tick: extend by a full TTL every lease held for ``_renew_every`` or more. The next tick
        waits for these renewals."""
        now = self.clock.seconds()
        due = [origin for origin, renewed in self._leases.items()
               if renewed is not None and now - renewed >= self._renew_every]
        for origin in due:
            self._leases[origin] = now
        return deferred_from_coro(self._renew(due)) if due else None

    async def _renew(self, origins: list[str]) -> None:
        """Renew each of ``origins``' leases; a store error is counted and the next tick tries again. A refused
        renewal (our lease lapsed and another crawler took it) leaves our fetch running: both store the outcome. An
        unexpected error stops that lease's renewals (it lapses at its TTL), said once; never raises."""
        for origin in origins:
            try:
                await self.call("acquire_lease", origin, self.holder, self.config.store_lease_ttl)
            except Exception as exc:
                if origin in self._leases:
                    self._leases[origin] = None
                logger.error("robots.txt store lease renewal for %s stopped: %s", origin, exc)

    def _renewal_failed(self, failure: Failure) -> None:
        """The renewal timer itself failed (the leases lapse at their TTL): say so, never raise."""
        logger.error("robots.txt store lease renewals stopped: %s", failure.getErrorMessage())

    def _stop_renewing(self, origin: str) -> bool:
        """Stop renewing ``origin``'s lease, which the caller releases now: False if it is no longer held (``close``
        released it, or the caller already did). The timer stops with the last lease held."""
        if self._leases.pop(origin, _NOT_HELD) is _NOT_HELD:
            return False
        if not self._leases and self._renewal is not None:
            if self._renewal.running:
                self._renewal.stop()
            self._renewal = None
        return True

    async def _release(self, origin: str) -> None:
        """Stop renewing ``origin``'s lease and release it, unless ``close`` already did."""
        if self._stop_renewing(origin):
            await self.call("release_lease", origin, self.holder)

    async def close(self) -> None:
        """Stop waiting and renewing, release every lease this crawler holds (other crawlers take the origins at
        their next poll, not at the TTL), then close the store. No store call is made afterwards."""
        self._closed = True
        await self._behind.close()  # the outcomes written behind are stored, their leases released
        for origin in list(self._leases):
            await self._release(origin)
        if self.owns_store:
            await self.call("close")
        self._store_closed = True
        if self._store_errors > 1:
            logger.warning("robots.txt store: %d calls failed in this crawl (rep/store/errors/<operation> says which)",
                           self._store_errors)

    async def get(self, origin: str) -> Entry | None:
        entry = await self.call("get", origin)
        return entry if isinstance(entry, Entry) else None

    async def call(self, operation: str, *args: Any) -> Any:
        """A store call; a StoreError is logged and counted and yields None (SPEC 3.2). After ``close``: None."""
        if self._store_closed:
            return None
        try:
            return await getattr(self.store, operation)(*args)
        except StoreError as exc:
            self.stats.inc_value("rep/store/errors")
            self.stats.inc_value(f"rep/store/errors/{operation}")
            self._store_errors += 1
            subject = args[0].origin if args and isinstance(args[0], Entry) else args[0] if args else "the crawl"
            if self._store_errors == 1:  # once, then a count: an unusable store fails for every origin
                logger.warning("robots.txt store %s failed for %s: %s (the crawl goes on with what this process "
                               "holds; further store errors are logged at DEBUG and counted in rep/store/errors)",
                               operation, subject, exc)
            else:
                logger.debug("robots.txt store %s failed for %s: %s", operation, subject, exc)
            return None

    def _count_download(self, result: FetchResult) -> None:
        prefix = self.names.downloads
        self.stats.inc_value(f"{prefix}/downloads")
        if result.status is not None:
            self.stats.inc_value(f"{prefix}/status/{result.status}")
        else:
            self.stats.inc_value(f"{prefix}/exception/{result.error}")
        if len(result.body) >= self.config.max_size:
            self.stats.inc_value(f"{prefix}/truncated")


_NOT_HELD = object()  # ``_stop_renewing``'s default: a lease not in ``_leases`` (a held one may map to None)


def _unknown(origin: str, previous: Entry | None, now: float) -> Entry:
    """What a wait cut short by ``close`` returns: the entry in effect, else a full disallow that has expired.
    The middleware has stopped by then and does not use it; it is never "allow all" (SPEC 3.2)."""
    if previous is not None:
        return previous
    return Entry(origin=origin, outcome=Outcome.DISALLOW_ALL, fetched_at=now, expires_at=now, error="closing")


def _latest(*entries: Entry | None) -> Entry | None:
    """The most recently written of the entries (the in-process one and the stored one)."""
    present = [entry for entry in entries if entry is not None]
    return max(present, key=lambda entry: entry.expires_at) if present else None
