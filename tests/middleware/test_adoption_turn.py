"""An origin's waiting requests get its adopted entry in a later turn of the reactor's loop (issue 21)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest_twisted
from scrapy import signals
from scrapy.crawler import Crawler
from twisted.internet.task import Clock

from tests.crawl import crawl, middleware
from tests.servers import Reply

RULES = b"User-agent: *\nDisallow: /private\n"


def _after(crawler: Crawler, method: str, then: Any, *, before: bool = False) -> None:
    """Call ``then()`` right after (``before``: right before) each call of the middleware's ``method``, in its turn."""

    def opened() -> None:
        robots: Any = middleware(crawler)
        *path, method_name = method.split(".")  # "_decider.decide": the method of one of the middleware's parts
        for part in path:
            robots = getattr(robots, part)
        original = getattr(robots, method_name)

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            if before:
                then()
            result = original(*args, **kwargs)
            if not before:
                then()
            return result

        setattr(robots, method_name, wrapped)

    crawler.signals.connect(opened, signal=signals.spider_opened, weak=False)


@pytest_twisted.ensureDeferred
async def test_the_waiting_requests_are_decided_in_a_later_turn_than_the_adoption(sites: Any) -> None:
    """Deciding them in the adoption's turn (with a memory or SQLite store, often the turn the robots.txt response
    reached the middleware in) made a broad crawl's garbage collector run about a third more often
    (measured with benchmarks/bench_broad.py): a callback queued at the adoption runs before any decision."""
    site = sites()
    site.route("/robots.txt", Reply(body=RULES))
    order: list[str] = []

    def hook(crawler: Crawler) -> None:
        _after(crawler, "_adopt", lambda: asyncio.get_running_loop().call_soon(order.append, "queued at adoption"))
        _after(crawler, "_decider.decide", lambda: order.append("decided"), before=True)

    result = await crawl([site.url("/public"), site.url("/private")], on_crawler=hook)
    assert order == ["queued at adoption", "decided", "decided"]
    assert result.downloaded == [site.url("/public")]
    assert result.failed == [(site.url("/private"), "IgnoreRequest")]
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_a_hold_timeout_due_before_the_decision_does_not_drop_a_released_request(sites: Any) -> None:
    """Released is final: REP_HOLD_TIMEOUT passing between the adoption and the decision drops nothing."""
    clock = Clock()
    site = sites()
    site.route("/robots.txt", Reply(body=RULES))

    def hook(crawler: Crawler) -> None:
        _after(crawler, "_adopt", lambda: clock.advance(600))  # REP_HOLD_TIMEOUT's default

    result = await crawl([site.url("/public"), site.url("/private")], REP_CLOCK=lambda: clock, on_crawler=hook)
    assert result.downloaded == [site.url("/public")]
    assert result.failed == [(site.url("/private"), "IgnoreRequest")]
    assert result.stat("rep/requests/dropped_after_hold") == 0
    result.assert_accounted()
