"""The demo's spiders, ``catalog`` and ``news``: the crawl of ``example_project/``'s two spiders, as the demo needs it.

The demo hands each spider every page URL to try (``urls``), so they follow no links, and records what happened to
each request from the items: ``crawled`` (the site answered) or ``stopped`` (with the reason, e.g. the robots.txt rule
that forbids it). Each spider is declared by its robots.txt tokens; its User-Agent is made from the first.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import Any, ClassVar

import scrapy
from scrapy.http import Response
from scrapy.settings import BaseSettings
from twisted.python.failure import Failure


class DemoSpider(scrapy.Spider):
    """Requests each of ``urls`` once; no ``name``, so Scrapy does not list it."""

    #: ``REP_USER_AGENT``: the robots.txt product tokens, most specific first (SPEC 6.3).
    tokens: ClassVar[list[str]]
    #: ``REP_OBEY_CRAWL_DELAY`` (opt-in, SPEC 6.5).
    obey_crawl_delay: ClassVar[bool] = False

    def __init__(self, urls: Iterable[str] = (), **kwargs: Any):
        super().__init__(**kwargs)
        self.urls = list(urls)

    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        super().update_settings(settings)
        spider_settings = {
            "USER_AGENT": f"{cls.tokens[0]}/1.0 (+https://example.com/bot)",
            "REP_USER_AGENT": cls.tokens,
            "REP_OBEY_CRAWL_DELAY": cls.obey_crawl_delay,
        }
        settings.setdict(spider_settings, priority="spider")

    async def start(self) -> AsyncIterator[scrapy.Request]:
        for url in self.urls:
            yield scrapy.Request(url, callback=self.crawled, errback=self.stopped)

    def crawled(self, response: Response) -> dict[str, Any]:
        return {"url": response.url, "outcome": "crawled", "status": response.status}

    def stopped(self, failure: Failure) -> dict[str, Any]:
        url = failure.request.url  # type: ignore[attr-defined]
        return {"url": url, "outcome": "stopped", "reason": f"{type(failure.value).__name__}: {failure.value}"}


class CatalogSpider(DemoSpider):
    """Obeys the groups written for ``examplebot`` (or ``*`` where there is none, SPEC 6.2)."""

    name = "catalog"
    tokens: ClassVar[list[str]] = ["examplebot"]


class NewsSpider(DemoSpider):
    """``examplebot-news``'s group where a robots.txt has one, else ``examplebot``'s; obeys ``crawl-delay``."""

    name = "news"
    tokens: ClassVar[list[str]] = ["examplebot-news", "examplebot"]
    obey_crawl_delay = True
