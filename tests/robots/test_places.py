"""``places.Places``' branches, one at a time, on a stand-in for the engine's active set (the crawls of
tests/broad/test_politeness.py measure the whole at the server): admission while the set has room, waiting
placeholders first come first served, hand-over to the robots.txt request, lending, stepping aside, closing."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

from scrapy import Request
from scrapy.signals import response_received

from scrapy_rep.robots.places import PLACEHOLDER_META_KEY, Places


class Settings:
    def __init__(self, limit: int) -> None:
        self.limit = limit

    def getint(self, name: str) -> int:
        assert name == "CONCURRENT_REQUESTS"
        return self.limit


class Signals:
    """The receivers connected, by signal."""

    def __init__(self) -> None:
        self.receivers: dict[object, list[object]] = {}

    def connect(self, receiver: object, signal: object) -> None:
        self.receivers.setdefault(signal, []).append(receiver)

    def disconnect(self, receiver: object, signal: object) -> None:
        self.receivers[signal].remove(receiver)


class Crawler:
    def __init__(self, limit: int) -> None:
        self.settings = Settings(limit)
        self.signals = Signals()


class Stats:
    def __init__(self) -> None:
        self.values: dict[str, int] = {}

    def inc_value(self, key: str) -> None:
        self.values[key] = self.values.get(key, 0) + 1


class Internals:
    """What Places uses of the engine: the downloader's active set and a nudge, and the crawl's settings and stats."""

    def __init__(self, limit: int) -> None:
        self.crawler = Crawler(limit)
        self.stats = Stats()
        self.active: set[Request] = set()
        self.nudges = 0

    def active_requests(self) -> set[Request]:
        return self.active

    def schedule_engine(self) -> None:
        self.nudges += 1


def places(limit: int, lent: frozenset[str] = frozenset()) -> tuple[Places, Internals]:
    internals = Internals(limit)
    return Places(internals, lambda origin: origin in lent), internals  # type: ignore[arg-type]


class Run:
    """Drives a coroutine by hand, so a test sees exactly where it waits: ``poll`` resumes it once what it awaits
    is done (no event-loop turn, no timing)."""

    def __init__(self, coro: Coroutine[Any, Any, bool]) -> None:
        self.coro = coro
        self.awaiting: Any = None
        self.done = False
        self.result: bool | None = None
        self._send()

    def _send(self) -> None:
        try:
            self.awaiting = self.coro.send(None)
        except StopIteration as stop:
            self.done, self.result, self.awaiting = True, stop.value, None

    def poll(self) -> bool:
        if not self.done and self.awaiting.done():
            self._send()
        return self.done


def now(coro: Coroutine[Any, Any, bool]) -> bool | None:
    """What ``coro`` returns without waiting (it must not wait)."""
    run = Run(coro)
    assert run.done, "it waits"
    return run.result


def pages(n: int) -> set[Request]:
    return {Request(f"http://page{i}.test/") for i in range(n)}


def placeholders(internals: Internals) -> list[str]:
    return sorted(r.meta[PLACEHOLDER_META_KEY] for r in internals.active if PLACEHOLDER_META_KEY in r.meta)


def test_a_fetch_takes_a_place_while_the_set_has_room_and_hands_it_to_its_download() -> None:
    pool, internals = places(2)
    internals.active |= pages(1)
    assert now(pool.take("http://a.test", "http://a.test/robots.txt"))
    assert placeholders(internals) == ["http://a.test"] and len(internals.active) == 2  # the engine backs out
    assert now(pool.enter("http://a.test"))
    assert placeholders(internals) == [] and len(internals.active) == 1  # the robots.txt request enters now
    pool.sent()
    pool.release("http://a.test")
    assert len(internals.active) == 1


def test_fetches_past_the_limit_wait_in_the_set_and_start_in_turn() -> None:
    pool, internals = places(2)
    busy = pages(2)
    internals.active |= busy
    waiting = [Run(pool.take(f"http://{n}.test", f"http://{n}.test/robots.txt")) for n in ("a", "b", "c")]
    assert [w.poll() for w in waiting] == [False, False, False]
    assert pool.waiting == 3 and len(internals.active) == 5  # placeholders in the set: the engine pulls nothing
    internals.active.discard(busy.pop())  # a page download ends
    pool.sent()
    assert [w.poll() for w in waiting] == [True, False, False] and pool.waiting == 2
    pool.release("http://a.test")  # a's fetch ended without a download (a store hit): its place is free again
    assert [w.poll() for w in waiting] == [True, True, False]
    assert [w.result for w in waiting] == [True, True, None]
    assert internals.stats.values == {"rep/robots/waited_for_place": 3}
    assert internals.nudges == 1
    pool.close()  # c still waits: its periodic check stops here


def test_a_request_waiting_inside_the_set_lends_its_place_for_every_hop() -> None:
    pool, internals = places(1, lent=frozenset({"http://a.test"}))
    internals.active |= pages(1)  # the set is full: with the request of a.test that could not park
    assert now(pool.take("http://a.test", "http://a.test/robots.txt"))
    assert placeholders(internals) == []
    assert now(pool.enter("http://a.test"))
    pool.sent()
    assert now(pool.enter("http://a.test"))  # a redirect's next hop
    pool.release("http://a.test")


def test_a_fetch_stepping_aside_for_another_crawler_frees_its_place_and_takes_one_to_download() -> None:
    pool, internals = places(1)
    assert now(pool.take("http://a.test", "http://a.test/robots.txt"))
    pool.step_aside("http://a.test")
    assert internals.active == set() and internals.nudges == 1
    internals.active |= pages(1)  # the engine filled the place meanwhile
    entering = Run(pool.enter("http://a.test"))  # the lease lapsed: a download after all
    assert not entering.poll() and placeholders(internals) == ["http://a.test"]
    internals.active -= {r for r in internals.active if PLACEHOLDER_META_KEY not in r.meta}
    pool.sent()
    assert entering.poll() and entering.result is True
    assert internals.active == set()


def test_closing_removes_every_placeholder_and_starts_no_waiting_fetch() -> None:
    pool, internals = places(1)
    assert now(pool.take("http://a.test", "http://a.test/robots.txt"))
    waiting = Run(pool.take("http://b.test", "http://b.test/robots.txt"))
    pool.close()
    assert waiting.poll() and waiting.result is False
    assert internals.active == set() and pool.waiting == 0
    assert not now(pool.take("http://c.test", "http://c.test/robots.txt"))
    assert not now(pool.enter("http://a.test"))


def test_a_fetch_waiting_for_room_takes_the_place_of_its_origins_request_that_arrives_later() -> None:
    """Scrapy 2.13 runs each ``process_request`` coroutine as its own task: the engine's other pulled requests (here
    of the same origin) reach the middleware after the fetch began waiting for room, and wait inside the set (they
    could not park). The fetch then takes one of their places instead of waiting for room they hold."""
    lending: set[str] = set()
    internals = Internals(2)
    pool = Places(internals, lambda origin: origin in lending)  # type: ignore[arg-type]
    internals.active |= pages(2)  # the origin's two requests, not yet registered as waiting
    waiting = Run(pool.take("http://a.test", "http://a.test/robots.txt"))
    assert not waiting.poll() and pool.waiting == 1
    lending.add("http://a.test")  # they wait now, inside the set
    pool.lent("http://a.test")
    assert waiting.poll() and waiting.result is True
    assert placeholders(internals) == [] and pool.waiting == 0
    assert now(pool.enter("http://a.test"))  # sends in the lent place
    pool.release("http://a.test")


def test_a_released_request_goes_on_at_once_while_the_places_taken_are_within_the_limit() -> None:
    pool, internals = places(2)
    released = pages(2)  # one released request back in the set, beside one download
    internals.active |= released
    assert now(pool.room()) is True
    assert pool.waiting == 0


def test_released_requests_past_the_limit_wait_in_the_set_and_go_on_as_responses_free_places() -> None:
    """Each response the engine receives admits the next waiter before the engine may pull (``freed``); fetches
    and released requests wait in one line, first come first served."""
    pool, internals = places(2)
    busy = pages(2)
    internals.active |= busy
    first, second = Request("http://x.test/1"), Request("http://x.test/2")
    internals.active |= {first}
    waiting_first = Run(pool.room())
    fetch = Run(pool.take("http://a.test", "http://a.test/robots.txt"))
    internals.active |= {second}
    waiting_second = Run(pool.room())
    assert [waiting_first.poll(), fetch.poll(), waiting_second.poll()] == [False, False, False]
    assert pool.waiting == 3 and len(internals.active) == 5  # all in the set: the engine pulls nothing
    assert internals.crawler.signals.receivers[response_received] == [pool.freed]  # connected while they wait
    internals.active.discard(busy.pop())  # a download ends: the engine sends response_received
    pool.freed()
    assert [waiting_first.poll(), fetch.poll(), waiting_second.poll()] == [True, False, False]
    internals.active.discard(busy.pop())
    pool.freed()
    assert [fetch.poll(), waiting_second.poll()] == [True, False]
    pool.close()  # the crawl closes while the last one waits: it is not sent
    assert waiting_second.poll() and waiting_second.result is False
    assert internals.crawler.signals.receivers[response_received] == []  # nothing waits: no dispatch per response
    assert [waiting_first.result, fetch.result] == [True, True]
    assert not now(pool.room())
