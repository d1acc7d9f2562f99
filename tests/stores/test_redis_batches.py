"""Outcomes written behind, in batches (issue 21, "Redis pipelined"): the Redis store's ``put_and_release_all`` (one
pipeline) against a real redis-server, and ``robots.write_behind`` as the refresher drives it (its clock injected):
queued and sent WRITE_DELAY after the first, at once at WRITE_BATCH, the rest at close; the fetch does not wait."""

from __future__ import annotations

import asyncio

import redis

from scrapy_rep.robots.origin import origin_of
from scrapy_rep.robots.write_behind import WRITE_BATCH, WRITE_DELAY
from scrapy_rep.stores import Entry, StoreError, open_store

from .leasetools import ORIGIN, RULES, Crawler, until
from .storetools import DEADLINE, RedisServer, entry, run


def origins(n: int) -> list[str]:
    return [f"https://site{i}.example" for i in range(n)]


def keys(client: redis.Redis, kind: str, names: list[str]) -> list[int]:
    return [client.exists(f"rep:{kind}:{name}") for name in names]


def test_put_and_release_all_writes_every_entry_and_releases_only_its_own_leases(redis_server: RedisServer) -> None:
    names = origins(20)

    async def scenario() -> tuple[list[bytes | None], list[int], bytes | None]:
        store = open_store(redis_server.url)
        for name in names[:-1]:
            assert await store.acquire_lease(name, "me", 30.0)
        assert await store.acquire_lease(names[-1], "other", 30.0)
        await store.put_and_release_all([entry(name) for name in names], "me")
        found = [await store.get(name) for name in names]
        with redis.Redis(port=redis_server.port) as client:
            leases, last = keys(client, "lease", names), client.get(f"rep:lease:{names[-1]}")
        await store.close()
        return [None if e is None else e.body for e in found], leases, last

    bodies, leases, last = run(scenario())
    assert bodies == [entry("x").body] * 20
    assert leases == [0] * 19 + [1]  # ours released; another crawler's lease left alone
    assert last == b"other"


def test_put_and_release_all_after_the_server_lost_its_scripts_still_writes(redis_server: RedisServer) -> None:
    async def scenario() -> list[Entry | None]:
        store = open_store(redis_server.url)
        await store.put_and_release_all([entry("https://first.example")], "me")  # the script is loaded
        with redis.Redis(port=redis_server.port) as client:
            client.script_flush()  # as after a restart: EVALSHA answers NOSCRIPT
        await store.put_and_release_all([entry(name) for name in origins(3)], "me")
        found = [await store.get(name) for name in origins(3)]
        await store.close()
        return found

    assert [None if e is None else e.body for e in run(scenario())] == [entry("x").body] * 3


def test_put_and_release_all_on_a_dead_server_raises_a_store_error_naming_it(redis_server: RedisServer) -> None:
    async def scenario() -> BaseException | None:
        store = open_store(f"{redis_server.url}?timeout=0.5")
        await store.get("warm")  # connected
        redis_server.kill()
        try:
            await store.put_and_release_all([entry(name) for name in origins(3)], "me")
        except StoreError as exc:
            return exc
        finally:
            await store.close()
        return None

    error = run(scenario())
    assert isinstance(error, StoreError) and f"127.0.0.1:{redis_server.port}" in str(error)


def test_the_fetch_does_not_wait_for_its_write_which_goes_in_a_batch_after_write_delay(
        redis_server: RedisServer) -> None:
    async def scenario() -> tuple[tuple[int, int], tuple[int, int], dict[str, int]]:
        crawler = Crawler(open_store(redis_server.url), ttl=15, poll=1)
        with redis.Redis(port=redis_server.port) as client:
            task = crawler.current()
            await until(lambda: len(crawler.fetcher.pending) == 1)
            crawler.fetcher.answer()
            assert (await task).entry.body == RULES  # the waiting requests go on now
            before = client.exists(f"rep:entry:{ORIGIN.key}"), client.exists(f"rep:lease:{ORIGIN.key}")
            crawler.clock.advance(WRITE_DELAY)
            await until(lambda: bool(client.exists(f"rep:entry:{ORIGIN.key}")))
            after = client.exists(f"rep:entry:{ORIGIN.key}"), client.exists(f"rep:lease:{ORIGIN.key}")
        await crawler.refresher.close()
        return before, after, dict(crawler.stats.values)

    before, after, stats = run(scenario())
    assert before == (0, 1)  # not written yet, the lease still held
    assert after == (1, 0)  # written, and the lease released with it
    assert stats["rep/store/written_behind"] == 1 and stats["rep/store/write_batches"] == 1


def test_a_full_batch_goes_at_once_and_close_sends_the_rest(redis_server: RedisServer) -> None:
    """WRITE_BATCH + 1 origins fetched with the clock standing still: the first WRITE_BATCH are written at once, in
    one batch; the last waits for WRITE_DELAY, and ``close`` writes it."""
    n = WRITE_BATCH + 1

    async def scenario() -> tuple[int, int, int, int, dict[str, int]]:
        crawler = Crawler(open_store(redis_server.url), ttl=15, poll=1)
        names = origins(n)
        with redis.Redis(port=redis_server.port) as client:
            for name in names:
                task = asyncio.ensure_future(crawler.refresher.current_entry(origin_of(name), None))
                await until(lambda: len(crawler.fetcher.pending) == 1)
                crawler.fetcher.answer()
                crawler.fetcher.pending.clear()
                await task
            await until(lambda: sum(keys(client, "entry", names)) == WRITE_BATCH)
            written, held = sum(keys(client, "entry", names)), sum(keys(client, "lease", names))
            await crawler.refresher.close()
            closed, held_after = sum(keys(client, "entry", names)), sum(keys(client, "lease", names))
        return written, held, closed, held_after, dict(crawler.stats.values)

    written, held, closed, held_after, stats = run(scenario())
    assert (written, held) == (WRITE_BATCH, 1)  # the full batch went without the clock; the last one waits
    assert (closed, held_after) == (n, 0)
    assert stats["rep/store/written_behind"] == n and stats["rep/store/write_batches"] == 2


def test_a_failed_batch_is_counted_as_a_store_error_and_close_still_returns(redis_server: RedisServer) -> None:
    async def scenario() -> dict[str, int]:
        crawler = Crawler(open_store(f"{redis_server.url}?timeout=0.5"), ttl=15, poll=1)
        task = crawler.current()
        await until(lambda: len(crawler.fetcher.pending) == 1)
        redis_server.kill()
        crawler.fetcher.answer()
        await task
        await crawler.refresher.close()
        return dict(crawler.stats.values)

    stats = run(scenario())
    assert stats["rep/store/errors/put_and_release_all"] == 1


def test_an_origin_looked_up_again_before_its_write_lands_is_not_fetched_again(redis_server: RedisServer) -> None:
    """The middleware forgot the origin (REP_MEMORY_MAX_ORIGINS) while its outcome waits in the queue: the next
    lookup answers from the queue, as the store will, and never downloads robots.txt a second time."""

    async def scenario() -> tuple[bytes, int, int, dict[str, int]]:
        crawler = Crawler(open_store(redis_server.url), ttl=15, poll=1)
        first = crawler.current()
        await until(lambda: len(crawler.fetcher.pending) == 1)
        crawler.fetcher.answer()
        await first
        # The clock stood still: nothing sent yet. (A second fetch would wait for an answer: the deadline fails it.)
        again = await asyncio.wait_for(crawler.refresher.current_entry(ORIGIN, None), DEADLINE)
        with redis.Redis(port=redis_server.port) as client:
            unsent = client.exists(f"rep:entry:{ORIGIN.key}")
        await crawler.refresher.close()
        return again.entry.body, len(crawler.fetcher.pending), unsent, dict(crawler.stats.values)

    body, fetches, unsent, stats = run(scenario())
    assert (body, fetches, unsent) == (RULES, 1, 0)
    assert stats["rep/robots/downloads"] == 1 and stats["rep/cache/store_hits"] == 1
