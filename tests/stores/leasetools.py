"""A ``Refresher`` driven directly by the lease tests: a fetcher the test answers, stats, and waits on conditions."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from twisted.internet.task import Clock

from scrapy_rep.config import Config
from scrapy_rep.robots.fetch import RobotsFetcher
from scrapy_rep.robots.origin import Origin, origin_of
from scrapy_rep.robots.policy import FetchResult
from scrapy_rep.robots.refresh import Current, Refresher
from scrapy_rep.stores import Store

from .storetools import DEADLINE

if TYPE_CHECKING:
    from scrapy.statscollectors import StatsCollector

ORIGIN = origin_of("https://example.com/")
RULES = b"User-agent: *\nDisallow: /private\n"


class Fetcher:
    """Stands in for ``RobotsFetcher``: each fetch waits until the test calls ``answer``."""

    def __init__(self) -> None:
        self.pending: list[asyncio.Future[FetchResult]] = []

    async def fetch(self, origin: Origin) -> FetchResult:
        answer: asyncio.Future[FetchResult] = asyncio.get_running_loop().create_future()
        self.pending.append(answer)
        return await answer

    def answer(self) -> None:
        self.pending[-1].set_result(FetchResult(status=200, body=RULES))


class Stats:
    def __init__(self) -> None:
        self.values: Counter[str] = Counter()

    def inc_value(self, key: str, count: int = 1, start: int = 0) -> None:
        self.values[key] += count


class Crawler:
    """One crawler's ``Refresher`` on ``store``, its own clock starting at ``start``, and what it fetched."""

    def __init__(self, store: Store, *, ttl: float, poll: float, start: float = 1000.0) -> None:
        self.clock = Clock()
        self.clock.advance(start)
        self.fetcher = Fetcher()
        self.stats = Stats()
        config = Config(user_agents=("TestBot",), store_lease_ttl=ttl, store_poll_interval=poll)
        self.refresher = Refresher(store, cast(RobotsFetcher, self.fetcher), config, self.clock,
                                   cast("StatsCollector", self.stats))

    def current(self) -> asyncio.Task[Current]:
        """Start getting ORIGIN's current entry, as the middleware does."""
        return asyncio.ensure_future(self.refresher.current_entry(ORIGIN, None))

    def waits_on_clock(self, delay: float) -> bool:
        """A call is due ``delay`` from now on the clock (a poll, or a renewal)."""
        return any(abs(call.getTime() - (self.clock.seconds() + delay)) < 1e-9 for call in self.clock.getDelayedCalls())


async def until(condition: Callable[[], bool]) -> None:
    """Let the loop run (store round trips, Redis expiry) until ``condition`` holds; failing after DEADLINE."""
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, "condition not met before the deadline"
        await asyncio.sleep(0.002)  # one poll tick, not a synchronisation delay
