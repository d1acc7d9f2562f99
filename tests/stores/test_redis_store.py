"""The Redis store against a real redis-server: key layout, lifetimes, and outages -> StoreError promptly."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import pytest
import redis

from scrapy_rep.stores import Entry, RedisTarget, StoreError, open_store

from .storetools import DEADLINE, RedisServer, entry, run

ORIGIN = "https://example.com"
DAY = 86400.0


def test_prefix_separates_stores_on_one_server(redis_server: RedisServer) -> None:
    async def scenario() -> tuple[Entry | None, Entry | None, bool]:
        a = open_store(f"{redis_server.url}?prefix=crawl-a:")
        b = open_store(f"{redis_server.url}?prefix=crawl-b:")
        await a.put(entry(ORIGIN))
        await a.acquire_lease(ORIGIN, "a", 60)
        result = await a.get(ORIGIN), await b.get(ORIGIN), await b.acquire_lease(ORIGIN, "b", 60)
        await a.close()
        await b.close()
        return result

    assert run(scenario()) == (entry(ORIGIN), None, True)
    with redis.Redis(port=redis_server.port) as client:
        assert sorted(client.keys()) == [b"crawl-a:entry:" + ORIGIN.encode(), b"crawl-a:lease:" + ORIGIN.encode(),
                                         b"crawl-b:lease:" + ORIGIN.encode()]


def test_more_calls_at_once_than_the_pools_connections_wait_for_one(redis_server: RedisServer) -> None:
    """A burst of 200 calls on a pool capped at 4 connections (REDIS_PARAMS' max_connections; redis-py 8 caps at
    100 by default): every call is answered, none fails with "Too many connections", and the server never saw more
    than 4 connections of the store."""

    async def scenario() -> tuple[list[Entry | None], int]:
        store = open_store("redis", redis=RedisTarget(redis_server.url, {"max_connections": 4}))
        await store.put(entry(ORIGIN))
        answers = await asyncio.gather(*(store.get(ORIGIN if n % 2 else f"https://absent{n}.example")
                                         for n in range(200)))
        with redis.Redis(port=redis_server.port) as client:
            clients = len(client.client_list()) - 1  # the store's connections, less this one
        await store.close()
        return answers, clients

    answers, clients = run(scenario())
    assert answers == [entry(ORIGIN) if n % 2 else None for n in range(200)]
    assert clients <= 4


def test_entries_outlive_their_expiry_by_the_keep_period(redis_server: RedisServer) -> None:
    """SPEC 2.4 and 2.2's 30-day rule need the last good copy after its TTL: the key lives keep_days longer."""
    now = 1000.0

    async def scenario() -> None:
        store = open_store(f"{redis_server.url}?keep_days=40", clock=lambda: now)
        await store.put(entry(ORIGIN, fetched_at=now, ttl=DAY))
        await store.put(entry("https://expired.example", fetched_at=now - 2 * DAY, ttl=DAY))
        await store.close()

    run(scenario())
    with redis.Redis(port=redis_server.port) as client:
        assert client.pttl(f"rep:entry:{ORIGIN}") / 1000 == pytest.approx(41 * DAY, abs=60)
        assert client.pttl("rep:entry:https://expired.example") / 1000 == pytest.approx(40 * DAY, abs=60)


def test_killed_server_raises_store_error_promptly(redis_server: RedisServer) -> None:
    """Issue 4: a dead Redis is an error the middleware can count, never a hang and never "allow all"."""

    async def scenario() -> None:
        store = open_store(f"{redis_server.url}?timeout=0.5")
        await store.put(entry(ORIGIN))
        redis_server.kill()
        for call in (store.get(ORIGIN), store.put(entry(ORIGIN)), store.acquire_lease(ORIGIN, "a", 60),
                     store.release_lease(ORIGIN, "a")):
            with pytest.raises(StoreError, match=r"Redis store redis://127\.0\.0\.1"):
                await asyncio.wait_for(call, DEADLINE)  # the guard turns a hang into a failure, not a stall
        await store.close()

    run(scenario())


def test_hung_server_raises_store_error_after_the_timeout(redis_server: RedisServer) -> None:
    """A server that accepts connections but never answers (SIGSTOP): each call fails after ``timeout``."""

    async def scenario() -> float:
        store = open_store(f"{redis_server.url}?timeout=0.2")
        await store.put(entry(ORIGIN))
        redis_server.pause()
        try:
            started = time.monotonic()
            with pytest.raises(StoreError, match="Timeout"):
                await asyncio.wait_for(store.get(ORIGIN), DEADLINE)
            return time.monotonic() - started
        finally:
            redis_server.resume()
            await store.close()

    assert run(scenario()) < DEADLINE


def test_store_works_again_after_the_server_restarts(redis_server: RedisServer) -> None:
    async def scenario() -> Entry | None:
        store = open_store(f"{redis_server.url}?timeout=0.5")
        await store.put(entry(ORIGIN))
        redis_server.kill()
        with pytest.raises(StoreError):
            await store.get(ORIGIN)
        redis_server.start()  # same port, empty (nothing persisted)
        missing = await store.get(ORIGIN)
        await store.put(entry(ORIGIN))
        read = await store.get(ORIGIN)
        await store.close()
        assert missing is None
        return read

    assert run(scenario()) == entry(ORIGIN)


def test_a_non_asyncio_reactor_is_refused_naming_twisted_reactor() -> None:
    """redis.asyncio cannot run under e.g. the select reactor: say so at start-up, naming the setting."""
    code = (
        "from twisted.internet import selectreactor; selectreactor.install()\n"
        "from scrapy_rep.stores import open_store\n"
        "open_store('redis://127.0.0.1:6379/0')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert ("scrapy_rep.config.ConfigError: TWISTED_REACTOR='twisted.internet.selectreactor.SelectReactor': a "
            "Redis store (REP_STORE) needs Scrapy's asyncio reactor: set "
            "'twisted.internet.asyncioreactor.AsyncioSelectorReactor', Scrapy's default") in done.stderr
