"""One real crawl of a faulty origin through the real middleware (add-on enabled), and what became of it.

``crawl_fault(server_or_origin, clock)`` crawls ``PAGES`` of the origin with a short DOWNLOAD_TIMEOUT and an injected
clock. When the crawl goes idle with requests still held, the clock jumps past REP_HOLD_TIMEOUT (retries are
scheduled later than that, so a failing robots.txt is downloaded exactly once) and the held requests are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scrapy.crawler import Crawler
from twisted.internet.task import Clock

from scrapy_rep.robots.state import OriginState
from tests.crawl import Result, crawl, middleware, when_settled
from tests.faults.memory import PeakGrowth, peak_rss_growth
from tests.versions import error_names

#: Every page a fault test requests of the faulty origin: one the rules allow, one they forbid.
PAGES = ("/a", "/private/x")
RULES = b"User-agent: *\nDisallow: /private\n"
HOLD_TIMEOUT = 600.0
#: Retries (SPEC 2.5) come after the hold timeout, so each test sees one robots.txt download.
RETRY_DELAY = 10 * HOLD_TIMEOUT
FAULT_SETTINGS: dict[str, Any] = {
    "DOWNLOAD_TIMEOUT": 1,
    "REP_HOLD_TIMEOUT": HOLD_TIMEOUT,
    "REP_ERROR_RETRY_DELAY": RETRY_DELAY,
    "REP_ERROR_RETRY_MAX_DELAY": RETRY_DELAY,
    "REP_UNAVAILABLE_RETRY_DELAY": RETRY_DELAY,
    "REP_UNAVAILABLE_RETRY_MAX_DELAY": RETRY_DELAY,
    "REP_RETRY_AFTER_MAX": RETRY_DELAY,
    "LOG_LEVEL": "WARNING",
}


@dataclass
class FaultRun:
    result: Result
    origin: str
    state: OriginState
    memory: PeakGrowth

    def stat(self, key: str) -> Any:
        return self.result.stat(key)

    def held_requests(self) -> tuple[int, int, int, int]:
        """(allowed, forbidden, dropped after hold, downloaded) of the origin's pages."""
        return (self.stat("rep/requests/allowed"), self.stat("rep/requests/forbidden"),
                self.stat("rep/requests/dropped_after_hold"), len(self.result.downloaded))

    def robots_downloads(self) -> dict[str, int]:
        prefix = "rep/robots/"
        return {key[len(prefix):]: value for key, value in self.result.stats.items()
                if key.startswith((prefix + "status/", prefix + "exception/"))}

    def assert_downloads(self, expected: dict[str, int]) -> None:
        """``robots_downloads() == expected``, with ``exception/<name>`` as Scrapy 2.15+ names the failure
        (``tests.versions.error_names``: older versions name Twisted's exception)."""
        actual = self.robots_downloads()
        assert len(actual) == len(expected), (actual, expected)
        for key, count in expected.items():
            kind, _, name = key.partition("/")
            names = error_names(name) if kind == "exception" else {name}
            assert sum(actual.get(f"{kind}/{each}", 0) for each in names) == count, (actual, expected)


async def crawl_fault(origin: str, *, pages: tuple[str, ...] = PAGES, phases: list[Any] | None = None,
                      clock: Clock | None = None, **settings: Any) -> FaultRun:
    """Crawl ``pages`` of ``origin``; ``phases`` (see tests.crawl) run before the final clock jump."""
    clock = clock or Clock()
    crawlers: list[Crawler] = []

    jump = when_settled(crawlers, lambda: clock.advance(HOLD_TIMEOUT + 1))

    with peak_rss_growth() as memory:
        result = await crawl([origin + page for page in pages], on_crawler=crawlers.append,
                             spider_kwargs={"phases": [*(phases or []), (jump, [])]},
                             **{**FAULT_SETTINGS, "REP_CLOCK": lambda: clock, **settings})
    result.assert_accounted()  # SPEC 8.2, whatever the fault
    return FaultRun(result, origin, middleware(result.crawler).origins[origin], memory)
