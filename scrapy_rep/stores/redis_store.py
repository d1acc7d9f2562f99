"""A store shared by crawlers on many machines, in Redis (SPEC 3.2), through redis-py's asyncio client.

The asyncio client needs a running asyncio event loop: under Scrapy that is the asyncio reactor
(``TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"``, Scrapy's default).

Keys: ``{prefix}entry:{origin}`` holds the compressed JSON record (``_codec``), ``{prefix}lease:{origin}`` the
fetch lease's holder.
Lease lifetimes are Redis server time (``PX``), not the crawler's clock.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Callable

import redis.asyncio
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError
from scrapy.utils.reactor import is_reactor_installed

from scrapy_rep._scrapy import asyncio_available
from scrapy_rep.stores._base import CorruptEntry, Entry, StoredEntry, StoreError
from scrapy_rep.stores._codec import decode, describe, encode

logger = logging.getLogger(__name__)

# Take the lease if it is free (SET NX PX) or renew it if it is already ours.
_ACQUIRE = """
local current = redis.call('GET', KEYS[1])
if current == false then
    redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])
    return 1
end
if current == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return 1
end
return 0
"""

# Delete the lease only if it is still ours: after it lapsed another crawler may hold it.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('DEL', KEYS[1])
end
return 0
"""

_ERRORS = (RedisError, OSError, asyncio.TimeoutError)
_PAGE = 500  # SCAN COUNT hint, and keys per MGET, when listing entries
_GLOB_SPECIAL = re.compile(r"([*?\[\]\\])")


class RedisStore:
    """Entries and fetch leases in the Redis database at ``url``.

    ``timeout`` bounds connecting and every command, so a dead server raises ``StoreError`` within about twice
    that (one retry on a fresh connection rides over a server restart). Entries are kept for ``keep`` seconds
    past their own ``expires_at`` so the last good copy outlives the TTL for stale-on-error (SPEC 2.4) and the
    30-day rule (SPEC 2.2); every write renews that.
    """

    def __init__(
        self, url: str, *, prefix: str, timeout: float, keep: float, clock: Callable[[], float]
    ) -> None:
        require_asyncio_reactor()
        self.corrupt_records = 0
        self._prefix = prefix
        self._keep = keep
        self._clock = clock
        self._client = redis.asyncio.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout, retry=Retry(NoBackoff(), 1)
        )
        # How messages name the server: without the password, with redis-py's defaults filled in.
        kw = self._client.connection_pool.connection_kwargs
        scheme = url.partition(":")[0]
        self.where = f"{scheme}://{kw.get('host', 'localhost')}:{kw.get('port', 6379)}/{kw.get('db', 0)}"
        self._acquire = self._client.register_script(_ACQUIRE)
        self._release = self._client.register_script(_RELEASE)

    async def get(self, origin: str) -> Entry | None:
        try:
            data = await self._client.get(self._key("entry", origin))
        except _ERRORS as exc:
            raise self._error(exc) from exc
        if data is None:
            return None
        try:
            return decode(data)
        except CorruptEntry as exc:
            self.corrupt_records += 1
            logger.warning("Ignoring corrupt robots.txt cache record for %s in %s: %s", origin, self.where, exc)
            return None

    async def put(self, entry: Entry) -> None:
        keep_ms = _ms(max(entry.expires_at - self._clock(), 0.0) + self._keep)
        try:
            await self._client.set(self._key("entry", entry.origin), encode(entry), px=keep_ms)
        except _ERRORS as exc:
            raise self._error(exc) from exc

    async def acquire_lease(self, origin: str, holder: str, ttl: float) -> bool:
        try:
            granted = await self._acquire(keys=[self._key("lease", origin)], args=[holder, _ms(ttl)])
        except _ERRORS as exc:
            raise self._error(exc) from exc
        return bool(granted)

    async def release_lease(self, origin: str, holder: str) -> None:
        try:
            await self._release(keys=[self._key("lease", origin)], args=[holder])
        except _ERRORS as exc:
            raise self._error(exc) from exc

    async def entries(self) -> AsyncIterator[StoredEntry]:
        """Every stored record, corrupt ones described (``scrapy-rep cache``), found with SCAN over this store's
        key prefix (never KEYS, which blocks the server) and read with MGET a page at a time. SCAN may return a
        key twice (listed once) and may miss keys written during the listing; keys that lapse meanwhile are
        skipped."""
        start = self._key("entry", "")
        cut = len(start.encode("utf-8"))
        seen: set[bytes] = set()
        page: list[bytes] = []
        try:
            async for key in self._client.scan_iter(match=_GLOB_SPECIAL.sub(r"\\\1", start) + "*", count=_PAGE):
                if key not in seen:
                    seen.add(key)
                    page.append(key)
                if len(page) >= _PAGE:
                    for stored in await self._read_page(page, cut):
                        yield stored
                    page = []
            for stored in await self._read_page(page, cut):
                yield stored
        except _ERRORS as exc:
            raise self._error(exc) from exc

    async def _read_page(self, keys: list[bytes], cut: int) -> list[StoredEntry]:
        if not keys:
            return []
        values = await self._client.mget(keys)
        return [describe(key[cut:].decode("utf-8", "replace"), value)
                for key, value in zip(keys, values, strict=True) if value is not None]

    async def inspect(self, origin: str) -> StoredEntry | None:
        """``origin``'s record, corrupt or not; ``None`` when there is none."""
        try:
            data = await self._client.get(self._key("entry", origin))
        except _ERRORS as exc:
            raise self._error(exc) from exc
        return None if data is None else describe(origin, data)

    async def delete(self, origin: str) -> bool:
        """Remove ``origin``'s entry (its robots.txt is fetched again when next needed); ``False`` if there was
        none. A fetch lease is left alone: it lapses by itself."""
        try:
            return bool(await self._client.delete(self._key("entry", origin)))
        except _ERRORS as exc:
            raise self._error(exc) from exc

    async def close(self) -> None:
        try:
            await self._client.aclose()
        except _ERRORS as exc:
            raise self._error(exc) from exc

    def _key(self, kind: str, origin: str) -> str:
        return f"{self._prefix}{kind}:{origin}"

    def _error(self, exc: BaseException) -> StoreError:
        return StoreError(f"Redis store {self.where}: {exc!r}")


def require_asyncio_reactor() -> None:
    """redis.asyncio needs asyncio's event loop: fine inside a running loop, or under the asyncio reactor; a
    store opened outside any loop with another Twisted reactor installed could never run."""
    if is_reactor_installed() and not asyncio_available():
        raise ValueError(
            "REP_STORE: a redis:// store needs Scrapy's asyncio reactor; set TWISTED_REACTOR = "
            '"twisted.internet.asyncioreactor.AsyncioSelectorReactor", which is Scrapy\'s default'
        )


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))
