"""A store shared by crawlers on many machines, in Redis (SPEC 3.2), through redis-py's asyncio client.

The asyncio client needs a running asyncio event loop: under Scrapy that is the asyncio reactor
(``TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"``, Scrapy's default).

Keys: ``{prefix}entry:{origin}`` holds the entry's record (``_codec``), ``{prefix}lease:{origin}`` the
fetch lease's holder, ``{prefix}history:{origin}`` and ``{prefix}body:{id}`` the history (``_redis_history``;
docs/stores.md lists them beside scrapy-redis's keys).
Lease lifetimes are Redis server time (``PX``), not the crawler's clock.
The server (``RedisTarget``) is named in messages, logs and stats without its password.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, TypeVar

import redis
import redis.asyncio
import redis.asyncio.retry
import redis.retry
from redis.backoff import NoBackoff
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError, RedisError
from scrapy.utils.reactor import is_reactor_installed

from scrapy_rep._scrapy import asyncio_available
from scrapy_rep.config import ConfigError
from scrapy_rep.config.evidence import HISTORY_VERSIONS
from scrapy_rep.config.redis_target import RedisTarget
from scrapy_rep.stores._base import Entry, HistoryVersion, StoredEntry, StoreError
from scrapy_rep.stores._codec import describe, encode, read
from scrapy_rep.stores._redis_history import PUT_RECORDING, history_part, read_history, recording

logger = logging.getLogger(__name__)

def _take_lease(key: str) -> str:
    """Lua taking the lease at ``key`` if it is free (SET NX PX) or renewing it if it is already ours (ARGV[1] the
    holder, ARGV[2] the TTL in ms): returns 1, or 0 when another holder has it."""
    return f"""
local current = redis.call('GET', {key})
if current == false then
    redis.call('SET', {key}, ARGV[1], 'NX', 'PX', ARGV[2])
    return 1
end
if current == ARGV[1] then
    redis.call('PEXPIRE', {key}, ARGV[2])
    return 1
end
return 0
"""


_ACQUIRE = _take_lease("KEYS[1]")

# Delete the lease only if it is still ours: after it lapsed another crawler may hold it.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('DEL', KEYS[1])
end
return 0
"""

# lookup: the entry if there is one, else the lease as _ACQUIRE takes it (1 or 0): one round trip for a new origin.
_LOOKUP = """
local entry = redis.call('GET', KEYS[1])
if entry then
    return entry
end
""" + _take_lease("KEYS[2]")

# put_and_release: the entry written, then _RELEASE, in one round trip.
_PUT_AND_RELEASE = """
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if redis.call('GET', KEYS[2]) == ARGV[3] then
    redis.call('DEL', KEYS[2])
end
return 1
"""

_ERRORS = (RedisError, OSError, asyncio.TimeoutError)
_Client = TypeVar("_Client", redis.Redis, redis.asyncio.Redis)
_PAGE = 500  # SCAN COUNT hint, and keys per MGET, when listing entries
_GLOB_SPECIAL = re.compile(r"([*?\[\]\\])")


class RedisStore:
    """Entries and fetch leases in the Redis database ``target`` names.

    ``timeout`` bounds connecting and every command, so a dead server raises ``StoreError`` within about twice that
    (one retry on a fresh connection rides over a server restart). Entries are kept for ``keep`` seconds past their
    own ``expires_at`` so the last good copy outlives the TTL for stale-on-error (SPEC 2.4) and the 30-day rule (SPEC
    2.2); every write renews that. The history keeps ``history_versions`` per origin (0: none; ``_redis_history``).
    """

    #: Writes are cheaper together (``put_and_release_all``: one pipeline), so the crawler writes behind, in batches.
    batches_writes = True

    def __init__(self, target: RedisTarget, *, prefix: str, timeout: float, keep: float, clock: Callable[[], float],
                 history_versions: int = HISTORY_VERSIONS) -> None:
        require_asyncio_reactor()
        self.corrupt_records = 0
        self.target = target
        self._timeout = timeout
        self._prefix = prefix
        self._keep = keep
        self._clock = clock
        self._history_versions = history_versions
        self._client: redis.asyncio.Redis = _waiting_for_connections(
            _client(redis.asyncio.Redis, target, timeout, redis.asyncio.retry.Retry(NoBackoff(), 1))
        )
        pool = self._client.connection_pool
        kw = pool.connection_kwargs
        self._password = str(kw.get("password") or "")
        #: How messages name the server: without the password, with redis-py's defaults filled in.
        self.where = _where(pool.connection_class.__name__, kw)
        self._acquire = self._client.register_script(_ACQUIRE)
        self._release = self._client.register_script(_RELEASE)
        self._lookup = self._client.register_script(_LOOKUP)
        self._put_and_release = self._client.register_script(_PUT_AND_RELEASE)
        self._put_recording = self._client.register_script(PUT_RECORDING)
        self._put_and_release_recording = self._client.register_script(recording(_PUT_AND_RELEASE, 2, 3))

    async def get(self, origin: str) -> Entry | None:
        try:
            data = await self._client.get(self._key("entry", origin))
        except _ERRORS as exc:
            raise self._error(exc) from exc
        return None if data is None else read(self, logger, self.where, origin, data)

    async def lookup(self, origin: str, holder: str, ttl: float) -> tuple[Entry | None, bool]:
        """One script: the entry, or the lease taken when there is none. A corrupt record: the lease as
        ``acquire_lease`` takes it (a second round trip)."""
        try:
            found = await self._lookup(keys=[self._key("entry", origin), self._key("lease", origin)],
                                       args=[holder, _ms(ttl)])
        except _ERRORS as exc:
            raise self._error(exc) from exc
        if not isinstance(found, bytes):
            return None, bool(found)
        entry = read(self, logger, self.where, origin, found)
        return (entry, False) if entry is not None else (None, await self.acquire_lease(origin, holder, ttl))

    async def put_and_release(self, entry: Entry, holder: str) -> None:
        """One script (``put_and_release_all`` of one)."""
        await self.put_and_release_all([entry], holder)

    async def put_and_release_all(self, entries: Sequence[Entry], holder: str) -> None:
        """``put_and_release`` of each entry, their scripts in one pipeline (issue 21, "Redis pipelined"): one round
        trip and one connection from the pool for the lot (benchmarks/bench_redis_writes.py: in batches of ten, a new
        origin's lookup and write cost 0.58x the crawler's CPU of one write at a time, ~230 µs less). A script the
        server no longer knows (it restarted and lost its scripts) runs again through redis-py's ``Script``, which
        loads it. Every script is tried; then the first error is raised, the server named."""
        scripts = [self._put_and_release_script(entry, holder) for entry in entries]
        failure: BaseException | None = None
        try:
            async with self._client.pipeline(transaction=False) as pipe:
                for script, keys, args in scripts:
                    pipe.evalsha(script.sha, len(keys), *keys, *args)
                replies: list[Any] = await pipe.execute(raise_on_error=False)
        except _ERRORS as exc:
            raise self._error(exc) from exc
        for (script, keys, args), reply in zip(scripts, replies, strict=True):
            if isinstance(reply, NoScriptError):
                try:
                    await script(keys=keys, args=args)
                    continue
                except _ERRORS as exc:
                    reply = exc
            if isinstance(reply, Exception) and failure is None:
                failure = reply
        if failure is not None:
            raise self._error(failure)

    def _put_and_release_script(self, entry: Entry, holder: str) -> tuple[AsyncScript, list[str], list[Any]]:
        """The script writing ``entry`` and releasing its lease, recording its version when it is to be kept."""
        keys = [self._key("entry", entry.origin), self._key("lease", entry.origin)]
        args: list[Any] = [encode(entry), self._keep_ms(entry), holder]
        history = history_part(self._prefix, entry, self._history_versions)
        if history is None:
            return self._put_and_release, keys, args
        return self._put_and_release_recording, keys + history[0], args + history[1]

    async def put(self, entry: Entry) -> None:
        """A SET, or a script recording the version with it (one round trip either way)."""
        key, record, keep = self._key("entry", entry.origin), encode(entry), self._keep_ms(entry)
        history = history_part(self._prefix, entry, self._history_versions)
        try:
            if history is None:
                await self._client.set(key, record, px=keep)
            else:
                await self._put_recording(keys=[key, *history[0]], args=[record, keep, *history[1]])
        except _ERRORS as exc:
            raise self._error(exc) from exc

    async def history(self, origin: str) -> list[HistoryVersion]:
        try:
            return await read_history(self._client, self._prefix, origin)
        except _ERRORS as exc:
            raise self._error(exc) from exc

    def _keep_ms(self, entry: Entry) -> int:
        """How long the entry's key lives: to its expiry, then ``keep`` more."""
        return _ms(max(entry.expires_at - self._clock(), 0.0) + self._keep)

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
            async for key in self._client.scan_iter(match=self._entries_glob(), count=_PAGE):
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

    async def count(self) -> int:
        """The entry keys under this store's prefix, counted with SCAN (as ``entries`` finds them, without reading
        them)."""
        try:
            return len({key async for key in self._client.scan_iter(match=self._entries_glob(), count=_PAGE)})
        except _ERRORS as exc:
            raise self._error(exc) from exc

    def _entries_glob(self) -> str:
        """The SCAN pattern of this store's entry keys (its prefix's glob characters escaped)."""
        return _GLOB_SPECIAL.sub(r"\\\1", self._key("entry", "")) + "*"

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

    def ping(self) -> None:
        """One PING now, with redis-py's synchronous client and this store's timeout (the start-up check, before
        any event loop runs); ``StoreError`` if the server does not answer it."""
        client: redis.Redis = _client(redis.Redis, self.target, self._timeout, redis.retry.Retry(NoBackoff(), 0))
        try:
            client.ping()
        except _ERRORS as exc:
            raise self._error(exc) from exc
        finally:
            client.close()

    def _error(self, exc: BaseException) -> StoreError:
        """The store error for ``exc``: names the server, never its password (redis-py's messages do not
        include it; scrubbed in case one ever does)."""
        message = f"Redis store {self.where}: {type(exc).__name__}: {exc}"
        return StoreError(message.replace(self._password, "***") if self._password else message)


def require_asyncio_reactor() -> None:
    """redis.asyncio needs asyncio's event loop: fine inside a running loop, or under the asyncio reactor; a
    store opened outside any loop with another Twisted reactor installed could never run: a ``ConfigError``
    naming ``TWISTED_REACTOR`` and the reactor installed (SPEC 8.4)."""
    if is_reactor_installed() and not asyncio_available():
        from twisted.internet import reactor

        installed = f"{type(reactor).__module__}.{type(reactor).__qualname__}"
        raise ConfigError("TWISTED_REACTOR", installed, "a Redis store (REP_STORE) needs Scrapy's asyncio reactor: "
                          "set 'twisted.internet.asyncioreactor.AsyncioSelectorReactor', Scrapy's default")


def _client(cls: type[_Client], target: RedisTarget, timeout: float, retry: Any) -> _Client:
    """A ``cls`` (redis-py's asyncio or synchronous client) for ``target``, with the store's own timeouts and
    retry (``redis_target.OURS``), and bytes replies."""
    kw = {**target.params, "socket_timeout": timeout, "socket_connect_timeout": timeout, "retry": retry}
    return cls.from_url(target.url, **kw) if target.url is not None else cls(**kw)


def _waiting_for_connections(client: redis.asyncio.Redis) -> redis.asyncio.Redis:
    """``client`` on a pool whose calls wait for a free connection past its cap (issue 26). redis-py 8 caps a pool
    at 100 connections (``max_connections``, REDIS_PARAMS may set another) and fails the next call at once with
    "Too many connections": a burst of store calls (a broad crawl's fetches at a high CONCURRENT_REQUESTS) would be
    store errors, and the fetches would go without their leases. The same connections, kwargs and cap; the wait has
    no bound of its own: each command holding a connection is bounded by the store's timeout. (redis-py 5.0.1's
    blocking pool deadlocked after a failed connect, hence ``redis>=5.0.2``.)"""
    pool = client.connection_pool
    blocking = redis.asyncio.BlockingConnectionPool(
        max_connections=pool.max_connections, timeout=None, connection_class=pool.connection_class,
        **pool.connection_kwargs,
    )
    return redis.asyncio.Redis.from_pool(blocking)


def _where(connection_class: str, kw: dict[str, Any]) -> str:
    """The server as messages name it: scheme, host, port and database, or the socket path; no password."""
    if "path" in kw:
        return f"unix://{kw['path']}?db={kw.get('db', 0)}"
    scheme = "rediss" if "SSL" in connection_class else "redis"
    return f"{scheme}://{kw.get('host', 'localhost')}:{kw.get('port', 6379)}/{kw.get('db', 0)}"


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))
