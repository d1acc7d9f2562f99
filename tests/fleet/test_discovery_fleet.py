"""Refused at discovery (REP_REFUSE_AT_DISCOVERY) across a scrapy-redis fleet: two workers following links, one
Redis queue, one Redis dupefilter, one robots.txt cache.

A forbidden link a callback yields, of an origin whose robots.txt the worker holds, goes through the shared
dupefilter and is counted and dropped in the worker's spider middleware: it never enters the shared queue, and a
forbidden link both workers discover is counted once for the whole fleet. With the feature off, the same crawl
pushes every distinct forbidden link to the queue and forbids it in the downloader of the worker that pops it.

Real redis-server, real worker processes, origin servers in this process (pytest-twisted's reactor); every wait is
on an event (a server hit, a worker's log line, a process exit) with a deadline.
"""

from __future__ import annotations

from collections import Counter

import pytest
import pytest_twisted
from twisted.internet import defer

from tests.servers import Site, robots
from tests.stores.storetools import RedisServer

from .harness import RULES, Events, Origins, Worker, page_hits, worker_of
from .test_fleet import COMMON, push

pytestmark = pytest.mark.slow

ORIGINS = 6
#: How long a page answer takes: long enough that both workers usually pull the shared queue while it holds requests
#: of every origin (printed: the forbidden links both found; the counts asserted hold however the work is shared).
PAGE_DELAY = 0.5
PAGES = [f"/page/{n}" for n in range(6)]
#: The forbidden links of each origin (RULES: ``Disallow: /private``), each on several of its pages.
PRIVATE = [f"/private/{n}" for n in range(3)]
#: The SPEC 8.2 outcomes, whose sum is ``rep/requests/checked`` in each worker.
OUTCOMES = ["allowed", "forbidden", "dropped_after_hold", "passed_through", "requeued/closing", "rewritten"]


def links(path: str) -> list[str]:
    """``/page/N`` links to the next two pages of its origin (relative hrefs; ``/page/0`` reaches them all) and to
    two of its three forbidden ``/private/K``: each forbidden link is on four of the origin's six pages."""
    n = int(path.rsplit("/", 1)[1])
    return [PAGES[(n + 1) % len(PAGES)], PAGES[(n + 2) % len(PAGES)],
            PRIVATE[n % len(PRIVATE)], PRIVATE[(n + 1) % len(PRIVATE)]]


def discovered_by_both(origins: Origins, sites: list[Site]) -> set[tuple[str, str]]:
    """The (origin, forbidden link) pairs on pages each worker fetched (hence parsed): found by both workers."""
    found: dict[str, set[tuple[str, str]]] = {}
    for site, hit in page_hits(sites):
        for href in links(hit.path):
            if href in PRIVATE:
                found.setdefault(worker_of(hit), set()).add((origins.origin(site), href))
    return set.intersection(*found.values()) if len(found) == 2 else set()


@pytest.mark.parametrize("at_discovery", [True, False], ids=["refused_at_discovery", "decided_in_downloader"])
@pytest_twisted.ensureDeferred
async def test_two_workers_following_links_never_queue_a_forbidden_one_and_count_each_once(
        at_discovery: bool, redis_server: RedisServer, events: Events, origins: Origins,
        workers: list[Worker]) -> None:
    """6 origins x 6 pages, each page linking to two allowed pages and two forbidden ones of its origin; each
    origin's first page pushed; two workers with ``-a follow=1``. Both exit by themselves; every allowed page is
    served once, no forbidden one, each robots.txt once. The fleet queues exactly the allowed pages (on: no
    forbidden request ever enters the Redis queue; off: every distinct forbidden link does too) and counts each
    distinct forbidden link once (the shared dupefilter); each worker's SPEC 8.2 accounting holds."""
    opened: defer.Deferred[None] = defer.Deferred()  # page answers wait for both workers to be crawling
    sites = [origins.add([robots(RULES)], PAGES, delay=PAGE_DELAY, links=links, after=opened)
             for _ in range(ORIGINS)]
    push(redis_server, [origins.url(site, PAGES[0]) for site in sites])
    settings = {**COMMON, "CONCURRENT_REQUESTS": 4, "MAX_IDLE_TIME_BEFORE_CLOSE": 3,
                "REP_REFUSE_AT_DISCOVERY": at_discovery}
    # One start URL per pop (scrapy-redis's batch is CONCURRENT_REQUESTS): both workers start with work.
    arguments = {"follow": "1", "redis_batch_size": "1"}
    fleet = [Worker(f"worker-{n}", events, redis_server.url, settings, spider_args=arguments).start()
             for n in range(2)]
    workers.extend(fleet)
    # Neither worker crawls the origins alone before the other starts: no page is answered until both have opened
    # (each pops a batch of start URLs, CONCURRENT_REQUESTS, when it opens, and pulls from the shared queue after).
    await events.until(lambda: all(worker.saw("Spider opened") or worker.ended for worker in fleet), 30,
                       lambda: "both workers open: " + "\n\n".join(worker.log_tail() for worker in fleet))
    opened.callback(None)

    codes = [await worker.wait_exit(40) for worker in fleet]

    logs = "\n\n".join(f"== {worker.name}\n{worker.log_tail()}" for worker in fleet)
    assert codes == [0, 0], logs
    assert [site.hits_for("/robots.txt") for site in sites] == [1] * ORIGINS, logs
    assert [hit.path for _, hit in page_hits(sites) if hit.path.startswith("/private")] == [], logs
    served = Counter((origins.origin(site), hit.path) for site, hit in page_hits(sites))
    allowed = {(origins.origin(site), path): 1 for site in sites for path in PAGES}
    assert dict(served) == allowed, logs

    stats = [worker.stats() for worker in fleet]
    assert all(stats), f"every worker logs its final stats line:\n{logs}"

    def total(key: str) -> int:
        return sum(int(s.get(key, 0)) for s in stats)

    forbidden = ORIGINS * len(PRIVATE)  # distinct forbidden URLs of the fleet's crawl
    # Every page request the fleet queued once: the pushed first pages and each allowed link the shared dupefilter
    # saw first (an allowed request a worker parked while its origin's robots.txt was fetched and then released
    # through the scheduler goes into the queue a second time: ``requeued/released``, each an allowed one).
    queued = total("scheduler/enqueued/redis") - total("rep/requests/requeued/released")
    found_by_both = discovered_by_both(origins, sites)
    shares = dict(sorted(Counter(worker_of(hit) for _, hit in page_hits(sites)).items()))
    print(f"\n[{'on' if at_discovery else 'off'}] enqueued/redis per worker "
          f"{[s.get('scheduler/enqueued/redis', 0) for s in stats]}, requeued/released "
          f"{[s.get('rep/requests/requeued/released', 0) for s in stats]}, forbidden "
          f"{[s.get('rep/requests/forbidden', 0) for s in stats]}, at_discovery "
          f"{[s.get('rep/requests/forbidden/at_discovery', 0) for s in stats]}, pages per worker {shares}, "
          f"forbidden links found by both workers {len(found_by_both)} of {forbidden}")
    if at_discovery:
        # Only the allowed pages: 36. Without the feature it would be 36 + 18 (each distinct forbidden link queued
        # once, then forbidden in the downloader of the worker popping it): the case below.
        assert queued == len(allowed), logs
        # A page is decided in the downloader of the worker that fetches it (the origin's robots.txt fetched, or read
        # from the store, for it), so every link a worker parses is of an origin it holds: each forbidden one is
        # refused at discovery (> 0 and, here, all of them).
        assert total("rep/requests/forbidden/at_discovery") == forbidden, logs
    else:
        assert queued == len(allowed) + forbidden, logs
        assert total("rep/requests/forbidden/at_discovery") == 0, logs
    assert total("rep/requests/forbidden") == forbidden, logs  # once for the fleet, by whichever worker saw it first
    assert total("rep/requests/allowed") == len(allowed), logs
    for worker, s in zip(fleet, stats, strict=True):
        parts = sum(int(s.get(f"rep/requests/{part}", 0)) for part in OUTCOMES)
        assert parts == s.get("rep/requests/checked", 0), f"{worker.name}: SPEC 8.2 {s}\n{worker.log_tail()}"
    assert not any(s.get("rep/requests/dropped_after_hold", 0) for s in stats), logs
    assert not any(s.get("rep/store/errors", 0) for s in stats), logs
