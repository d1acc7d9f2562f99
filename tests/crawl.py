"""Run a real Scrapy crawl in-process against the test servers and collect what happened.

``crawl(urls, **settings)`` returns a ``Result`` with the stats, the URLs downloaded and the requests dropped. The
clock for time-dependent behaviour is a ``twisted.internet.task.Clock`` passed as ``REP_CLOCK``; tests advance it
from signal handlers or server hit callbacks (``on_crawler`` gives access to the crawler before it starts).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from scrapy import Request, Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import DontCloseSpider
from scrapy.http import Response
from scrapy.settings import Settings
from scrapy.utils.defer import deferred_from_coro
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

from scrapy_rep import RobotsMiddleware
from scrapy_rep._scrapy import Internals, run_crawler, stop_crawler
from scrapy_rep.robots.state import State

WATCHDOG_SECONDS = 20

BASE_SETTINGS: dict[str, Any] = {
    "ROBOTSTXT_OBEY": True,
    "ADDONS": {"scrapy_rep.Addon": 0},
    "USER_AGENT": "TestBot/1.0 (+https://example.invalid/bot)",
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "INFO",
    "DOWNLOAD_TIMEOUT": 5,
    "RETRY_ENABLED": False,
    "COOKIES_ENABLED": False,
}


#: A phase runs when the crawl is idle (nothing downloading; requests may be parked): ``action`` (e.g. advance the
#: clock), then its URLs are requested. An action returning False is not ready yet: it is tried again at the next
#: idle moment.
Phase = tuple[Callable[[], bool | None] | None, list[str]]


class ListSpider(Spider):
    """Requests ``urls`` in order (``priorities`` optional), then each of ``phases`` in turn whenever the crawl
    goes idle; records responses and failures."""

    name = "list"

    def __init__(self, urls: list[str], priorities: list[int] | None = None, meta: dict[str, Any] | None = None,
                 phases: list[Phase] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.urls = urls
        self.priorities = priorities or [0] * len(urls)
        self.meta = meta or {}
        self.phases = list(phases or [])
        self.downloaded: list[str] = []
        self.failed: list[tuple[str, str]] = []

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> ListSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.next_phase, signal=signals.spider_idle)
        return spider  # type: ignore[return-value]

    def next_phase(self) -> None:
        if not self.phases:
            return
        action, urls = self.phases.pop(0)
        if action is not None and action() is False:
            self.phases.insert(0, (action, urls))
            urls = []
        engine = self.crawler.engine
        for url in urls:
            engine.crawl(Request(url, dont_filter=True, errback=self.failure, meta=dict(self.meta)))
        # Let the engine look again at once rather than at its next 5-second heartbeat.
        reactor.callLater(0, Internals(self.crawler, self.crawler.stats).schedule_engine)  # type: ignore[arg-type]
        raise DontCloseSpider

    async def start(self) -> AsyncIterator[Any]:
        for url, priority in zip(self.urls, self.priorities, strict=True):
            yield Request(url, priority=priority, dont_filter=True, errback=self.failure, meta=dict(self.meta))

    def parse(self, response: Response) -> None:
        self.downloaded.append(response.url)

    def failure(self, failure: Failure) -> None:
        request = failure.request  # type: ignore[attr-defined]
        self.failed.append((request.url, type(failure.value).__name__))


@dataclass
class Result:
    crawler: Crawler
    spider: ListSpider
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def downloaded(self) -> list[str]:
        return self.spider.downloaded

    @property
    def failed(self) -> list[tuple[str, str]]:
        return self.spider.failed

    def stat(self, key: str) -> Any:
        return self.stats.get(key, 0)

    def assert_accounted(self) -> None:
        """SPEC 8.2: allowed + forbidden + dropped-after-hold + passed-through + requeued at close + rewritten
        (Clean-param) = checked."""
        parts = ["allowed", "forbidden", "dropped_after_hold", "passed_through", "requeued/closing", "rewritten"]
        total = sum(self.stat(f"rep/requests/{part}") for part in parts)
        assert total == self.stat("rep/requests/checked"), (total, self.stats)


def crawl(
    urls: Iterable[str],
    *,
    spider: type[ListSpider] = ListSpider,
    on_crawler: Callable[[Crawler], None] | None = None,
    spider_kwargs: dict[str, Any] | None = None,
    **settings: Any,
) -> Deferred[Result]:
    """Crawl ``urls`` with BASE_SETTINGS updated by ``settings``; a Deferred (awaitable from pytest-twisted)."""
    crawler = Crawler(spider, Settings({**BASE_SETTINGS, **settings}))

    async def run() -> Result:
        if on_crawler is not None:
            on_crawler(crawler)
        # A safety net, not a synchronisation: a crawl that hangs fails the test instead of stalling the suite.
        watchdog = reactor.callLater(  # type: ignore[attr-defined]
            WATCHDOG_SECONDS, lambda: deferred_from_coro(stop_crawler(crawler))
        )
        try:
            await run_crawler(crawler, urls=list(urls), **(spider_kwargs or {}))
        finally:
            if watchdog.active():
                watchdog.cancel()
        assert not watchdog.called, f"crawl stopped by the {WATCHDOG_SECONDS} s watchdog"
        assert crawler.stats is not None and isinstance(crawler.spider, ListSpider)
        return Result(crawler, crawler.spider, dict(crawler.stats.get_stats()))

    return deferred_from_coro(run())


def when_settled(crawlers: list[Crawler], action: Callable[[], Any]) -> Callable[[], bool]:
    """A phase action that runs ``action`` only once no origin's robots.txt is being fetched or adopted.

    The engine can look idle while robots.txt is in flight or its response is being adopted (the waiters not yet
    released): a clock jump then would time out requests that are about to be released. Returns False (the phase is
    tried again at the next idle moment) until every origin is settled.
    """

    def settled_then_act() -> bool:
        states = middleware(crawlers[0]).origins.values()
        if any(state.state in (State.FETCHING, State.REFRESHING) for state in states):
            return False
        action()
        return True

    return settled_then_act


def middleware(crawler: Crawler) -> RobotsMiddleware:
    found = crawler.get_downloader_middleware(RobotsMiddleware)
    assert found is not None
    return found
