"""Fleet mode on scrapy-redis: many worker processes (the example project's ``fleet`` spider), one Redis queue, one
robots.txt cache (``REP_STORE = "redis"``: scrapy-redis's REDIS_URL), no request lost.

Real redis-server, real worker processes, origin servers in this process (pytest-twisted's reactor); every wait is
on an event (a server hit, a worker's log line, a process exit) with a deadline.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Any

import pytest
import pytest_twisted
import redis

from tests.servers import Reply, Site, robots
from tests.stores.storetools import RedisServer

from .harness import (
    REACTOR,
    REQUESTS_KEY,
    RULES,
    START_URLS_KEY,
    STORE,
    Events,
    Origins,
    Worker,
    now,
    page_hits,
    worker_of,
)

pytestmark = pytest.mark.slow

ALLOWED = [f"/page/{n}" for n in range(8)]
DISALLOWED = ["/private/8", "/private/9"]
PAGES = ALLOWED + DISALLOWED

#: Settings every worker of these tests gets (strings: they go through ``-s``).
COMMON: dict[str, Any] = {
    "REP_STORE": STORE,
    "REP_STORE_POLL_INTERVAL": 0.25,
    "REP_UNAVAILABLE_RETRY_DELAY": 1,
    "RETRY_ENABLED": False,
    "DOWNLOAD_TIMEOUT": 30,
    "LOGSTATS_INTERVAL": 0,
}


def push(server: RedisServer, urls: list[str]) -> None:
    """Push start URLs as scrapy-redis reads them: JSON ``{"url": ...}`` entries on ``fleet:start_urls``."""
    with redis.Redis(port=server.port) as client:
        client.rpush(START_URLS_KEY, *[json.dumps({"url": url}) for url in urls])


def hits(site: Site, path: str) -> int:
    return site.hits_for(path)


@pytest_twisted.ensureDeferred
async def test_three_workers_share_one_queue_and_one_robots_txt_per_origin(
        redis_server: RedisServer, events: Events, origins: Origins, workers: list[Worker]) -> None:
    """20 origins x 10 pages for three workers: each robots.txt downloaded once per answer needed for the whole
    fleet, no disallowed page served, every allowed page served exactly once (shared queue and dupefilter; some URLs
    are pushed twice), every worker exits by itself, more than one worker did the work, and the fleet never has more
    page requests in flight than workers x CONCURRENT_REQUESTS (x CONCURRENT_REQUESTS_PER_DOMAIN per host)."""
    healthy = [origins.add([robots(RULES)], PAGES) for _ in range(13)]
    missing = [origins.add([Reply(status=404, body=b"nope")], PAGES) for _ in range(3)]
    unavailable = [origins.add([Reply(status=503), robots(RULES)], PAGES) for _ in range(3)]
    slow = origins.add([Reply(status=503), Reply(status=503), robots(RULES)], PAGES)  # 503, 503 (1 s, then 2 s)
    everyone = [*healthy, *missing, *unavailable, slow]
    urls = [origins.url(site, path) for path in PAGES for site in everyone]
    push(redis_server, urls + [origins.url(site, "/page/0") for site in everyone])  # duplicates: the dupefilter
    concurrency, per_domain, count = 4, 2, 3
    settings = {**COMMON, "CONCURRENT_REQUESTS": concurrency, "CONCURRENT_REQUESTS_PER_DOMAIN": per_domain,
                "DOWNLOAD_DELAY": 0.01, "MAX_IDLE_TIME_BEFORE_CLOSE": 3}
    fleet = [Worker(f"worker-{n}", events, redis_server.url, settings).start() for n in range(count)]
    workers.extend(fleet)

    codes = [await worker.wait_exit(40) for worker in fleet]

    logs = "\n\n".join(f"== {worker.name}\n{worker.log_tail()}" for worker in fleet)
    assert codes == [0] * count, logs
    robots_hits = {origins.origin(site): hits(site, "/robots.txt") for site in everyone}
    expected = {origins.origin(site): 1 for site in healthy + missing}
    expected |= {origins.origin(site): 2 for site in unavailable} | {origins.origin(slow): 3}
    assert robots_hits == expected, logs
    obeying = [*healthy, *unavailable, slow]
    assert [hit.path for site in obeying for hit in site.hits if hit.path.startswith("/private")] == []
    served = Counter((origins.origin(site), hit.path) for site, hit in page_hits(everyone))
    wanted = {(origins.origin(site), path): 1 for site in obeying for path in ALLOWED}
    wanted |= {(origins.origin(site), path): 1 for site in missing for path in PAGES}  # 404: all allowed
    assert dict(served) == wanted, logs
    shares = Counter(worker_of(hit) for _, hit in page_hits(everyone))
    print(f"\npages per worker: {dict(sorted(shares.items()))}; peak in flight {origins.peak} (limit "
          f"{count * concurrency}), per host {max(origins.site_peak.values())} (limit {count * per_domain})")
    assert max(shares.values()) < sum(shares.values()), f"one worker did everything: {shares}"
    assert origins.peak <= count * concurrency
    assert max(origins.site_peak.values()) <= count * per_domain
    stats = [worker.stats() for worker in fleet]
    assert all(stats), "every worker logs its final stats line"
    assert sum(s.get("rep/requests/forbidden", 0) for s in stats) == len(obeying) * len(DISALLOWED)
    assert not any(s.get("rep/requests/dropped_after_hold", 0) for s in stats)
    assert not any(s.get("rep/store/errors", 0) for s in stats)


@pytest_twisted.ensureDeferred
async def test_a_killed_lease_holder_is_taken_over_after_the_lease_lapses(
        redis_server: RedisServer, events: Events, origins: Origins, workers: list[Worker]) -> None:
    """Worker 1 holds the fetch lease of an origin whose robots.txt answer the server holds back; worker 2 waits for
    it. Worker 1's lease is renewed while its fetch runs (no second fetch for 2 x TTL); worker 1 is then killed with
    SIGKILL, and worker 2 fetches robots.txt within TTL + REP_STORE_POLL_INTERVAL (+ a margin) and crawls every
    allowed page. Worker 1 takes one request (its trigger, ``/trigger``) to its grave: scrapy-redis has no
    acknowledgement of popped requests, so the pages asserted are those pushed once worker 1 is fetching."""
    ttl, poll, margin = 2.0, 0.25, 1.5
    site = origins.add([Reply(hang=True), robots(RULES)], [*PAGES, "/trigger"])
    settings = {**COMMON, "REP_STORE_LEASE_TTL": ttl, "REP_STORE_POLL_INTERVAL": poll,
                "MAX_IDLE_TIME_BEFORE_CLOSE": 3, "DOWNLOAD_TIMEOUT": 60}
    # Worker 1 takes no more than its trigger: one downloader place, held by the request waiting (no parking).
    holder = Worker("worker-1", events, redis_server.url,
                    {**settings, "CONCURRENT_REQUESTS": 1, "REP_MAX_PARKED": 0, "MAX_IDLE_TIME_BEFORE_CLOSE": 60})
    workers.append(holder)
    push(redis_server, [origins.url(site, "/trigger")])
    holder.start()
    await events.until(lambda: hits(site, "/robots.txt") >= 1 or holder.ended, 20, "worker 1 requests robots.txt")
    assert hits(site, "/robots.txt") == 1, f"worker 1 ended first:\n{holder.log_tail()}"
    assert worker_of(site.hits[-1]) == "worker-1"
    first_fetch = now()

    push(redis_server, [origins.url(site, path) for path in PAGES])
    # LOGSTATS_INTERVAL 1: worker 2 says every second what it holds ("robots.txt: 4 requests held for 1 origin").
    taker = Worker("worker-2", events, redis_server.url, {**settings, "CONCURRENT_REQUESTS": 4, "LOGSTATS_INTERVAL": 1})
    workers.append(taker)
    taker.start()
    await taker.wait_line("held for 1 origin", 20)  # it waits for worker 1's fetch
    # The scenario: worker 1's fetch outlasts its lease's TTL twice; renewed, the lease is still worker 1's.
    REACTOR.callLater(max(0.0, first_fetch + 2 * ttl - now()), events.notify)  # re-check the condition then
    await events.until(lambda: now() - first_fetch >= 2 * ttl or hits(site, "/robots.txt") > 1,
                       2 * ttl + 5, "2 x TTL of worker 1's fetch")
    assert hits(site, "/robots.txt") == 1, "the lease lapsed while its holder was fetching: not renewed"

    holder.signal("KILL")
    killed = now()
    await events.until(lambda: hits(site, "/robots.txt") >= 2, ttl + poll + margin + 5, "worker 2 takes over")
    second = [hit for hit in site.hits if hit.path == "/robots.txt"][1]
    takeover = second.at - killed
    print(f"\nkill -> second robots.txt request: {takeover:.2f} s (TTL {ttl}, poll {poll})")
    assert worker_of(second) == "worker-2"
    assert takeover < ttl + poll + margin

    assert await taker.wait_exit(40) == 0, taker.log_tail()
    served = Counter(hit.path for hit in site.hits if hit.path != "/robots.txt")
    assert {path: served[path] for path in ALLOWED} == dict.fromkeys(ALLOWED, 1), taker.log_tail()
    assert not any(path.startswith("/private") for path in served)
    assert hits(site, "/robots.txt") == 2


@pytest_twisted.ensureDeferred
async def test_a_worker_stopped_while_requests_wait_hands_them_back_to_the_fleet(
        redis_server: RedisServer, events: Events, origins: Origins, workers: list[Worker]) -> None:
    """Worker 1's requests wait for an origin whose robots.txt answers 503; one SIGINT stops it. With
    SCHEDULER_PERSIST they go back to the shared queue (``rep/requests/requeued/closing``), and, once robots.txt
    answers 200, workers 2 and 3 crawl every allowed page of the origin exactly once."""
    answer = [Reply(status=503)]
    site = origins.add([lambda request: answer[0]], PAGES)
    settings = {**COMMON, "REP_UNAVAILABLE_RETRY_DELAY": 1, "MAX_IDLE_TIME_BEFORE_CLOSE": 3,
                "CONCURRENT_REQUESTS": 4}
    first = Worker("worker-1", events, redis_server.url, {**settings, "MAX_IDLE_TIME_BEFORE_CLOSE": 60})
    workers.append(first)
    push(redis_server, [origins.url(site, path) for path in PAGES])
    first.start()
    await first.wait_line("robots.txt: ", 20)  # "N requests held for 1 origin; ... 503 ..."
    assert hits(site, "/robots.txt") >= 1
    await first.interrupt()
    assert await first.wait_exit(30) == 0, first.log_tail()

    requeued = first.stat("rep/requests/requeued/closing")
    assert requeued > 0, first.log_tail()
    assert not first.stat("rep/requests/dropped_after_hold/closing"), first.log_tail()
    said = [line for line in first.lines
            if "INFO" in line and "scrapy_rep" in line and f" {requeued} request" in line and "scheduler" in line]
    assert len(said) == 1, first.log_tail()  # one INFO line with the count
    with redis.Redis(port=redis_server.port) as client:
        queued = int(client.zcard(REQUESTS_KEY))
    assert queued >= requeued, (queued, requeued)
    assert not [hit for hit in site.hits if hit.path != "/robots.txt"]  # nothing of the origin crawled yet

    answer[0] = robots(RULES)
    rest = [Worker(f"worker-{n}", events, redis_server.url, settings).start() for n in (2, 3)]
    workers.extend(rest)
    codes = [await worker.wait_exit(40) for worker in rest]
    logs = "\n\n".join(f"== {worker.name}\n{worker.log_tail()}" for worker in [first, *rest])
    assert codes == [0, 0], logs
    served = Counter(hit.path for hit in site.hits if hit.path != "/robots.txt")
    assert dict(served) == dict.fromkeys(ALLOWED, 1), logs
    assert {worker_of(hit) for hit in site.hits if hit.path != "/robots.txt"} <= {"worker-2", "worker-3"}


@pytest_twisted.ensureDeferred
async def test_two_workers_on_one_store_fetch_each_tdmrep_json_once(
        redis_server: RedisServer, events: Events, origins: Origins, workers: list[Worker]) -> None:
    """A crawl declaring AI training (REP_CONTENT_USES) reads each origin's /.well-known/tdmrep.json: once per origin
    for the whole fleet (the shared store and its fetch lease), and no page it reserves is ever requested."""
    tdmrep = json.dumps([{"location": "/private/*", "tdm-reservation": 1},
                         {"location": "/*", "tdm-reservation": 0}]).encode()
    sites = [origins.add([robots("User-agent: *\nAllow: /\n")], PAGES) for _ in range(8)]
    for site in sites:
        site.route("/.well-known/tdmrep.json", Reply(body=tdmrep, headers={"Content-Type": "application/json"}))
    push(redis_server, [origins.url(site, path) for path in PAGES for site in sites])
    settings = {**COMMON, "CONCURRENT_REQUESTS": 4, "MAX_IDLE_TIME_BEFORE_CLOSE": 3, "REP_CONTENT_USES": "train-ai"}
    fleet = [Worker(f"worker-{n}", events, redis_server.url, settings).start() for n in range(2)]
    workers.extend(fleet)

    codes = [await worker.wait_exit(40) for worker in fleet]

    logs = "\n\n".join(f"== {worker.name}\n{worker.log_tail()}" for worker in fleet)
    assert codes == [0, 0], logs
    assert {origins.origin(site): hits(site, "/.well-known/tdmrep.json") for site in sites} == {
        origins.origin(site): 1 for site in sites}, logs
    assert [hit.path for site in sites for hit in site.hits if hit.path.startswith("/private")] == []
    served = Counter((origins.origin(site), hit.path) for site, hit in page_hits(sites)
                     if hit.path != "/.well-known/tdmrep.json")
    assert dict(served) == {(origins.origin(site), path): 1 for site in sites for path in ALLOWED}, logs
    stats = [worker.stats() for worker in fleet]
    assert sum(s.get("rep/tdmrep/downloads", 0) for s in stats) == len(sites)
    assert sum(s.get("rep/requests/forbidden/usage", 0) for s in stats) == len(sites) * len(DISALLOWED)


@pytest_twisted.ensureDeferred
async def test_two_workers_decide_by_the_same_robots_txt_version(
        redis_server: RedisServer, events: Events, origins: Origins, workers: list[Worker], tmp_path: Any) -> None:
    """Evidence across a fleet: the worker that downloads an origin's robots.txt versions it (its body's SHA-256),
    the store carries the version, and the other worker, reading the entry from the store, decides by the same
    version: every checked request's basis (each worker's decision log, REP_DECISION_LOG) names it."""
    sites = [origins.add([robots(RULES)], PAGES) for _ in range(6)]
    push(redis_server, [origins.url(site, path) for path in PAGES for site in sites])
    logs = [tmp_path / f"decisions-{n}.jsonl" for n in range(2)]
    fleet = [Worker(f"worker-{n}", events, redis_server.url,
                    {**COMMON, "CONCURRENT_REQUESTS": 4, "MAX_IDLE_TIME_BEFORE_CLOSE": 3,
                     "REP_DECISION_LOG": str(logs[n])}).start() for n in range(2)]
    workers.extend(fleet)

    codes = [await worker.wait_exit(40) for worker in fleet]

    tails = "\n\n".join(f"== {worker.name}\n{worker.log_tail()}" for worker in fleet)
    assert codes == [0, 0], tails
    assert [hits(site, "/robots.txt") for site in sites] == [1] * len(sites)
    lines = [[json.loads(line) for line in log.read_text().splitlines()] for log in logs]
    decided = [[line for line in worker if line["type"] == "decision"] for worker in lines]
    versions: dict[str, set[str]] = {}
    deciders: dict[str, set[int]] = {}
    for n, worker in enumerate(decided):
        for line in worker:
            robots_txt = line["robots_txt"]
            versions.setdefault(robots_txt["url"], set()).add(robots_txt["version"])
            deciders.setdefault(robots_txt["url"], set()).add(n)
    expected = hashlib.sha256(RULES.encode()).hexdigest()
    assert versions == {origins.origin(site) + "/robots.txt": {expected} for site in sites}, tails
    assert any(len(workers_of) == 2 for workers_of in deciders.values()), deciders  # one origin, both workers
    assert sum(len(worker) for worker in decided) == len(sites) * len(PAGES)
    assert [worker[-1]["type"] for worker in lines] == ["close", "close"]
