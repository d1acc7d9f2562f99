"""The crawling logic both example spiders share (this base class has no ``name``, so Scrapy does not list it)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import urljoin, urlsplit

import scrapy
from scrapy.crawler import Crawler
from scrapy.http import Response
from twisted.python.failure import Failure

from scrapy_rep import robots_parsed  # Scrapy's signal on 2.18+; scrapy-rep sends its own on older Scrapy


class PageSpider(scrapy.Spider):
    """Crawls the pages given as ``-a start_url=URL[,URL...]`` and every link to the same origin.

    Yields one item per page crawled (``outcome: crawled``) and one per request that did not reach the site
    (``outcome: stopped``, with the reason: e.g. robots.txt forbids it), so ``-O items.jsonl`` shows both.
    """

    def __init__(self, start_url: str = "", *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.start_urls = [url.strip() for url in start_url.split(",") if url.strip()]
        if not self.start_urls:
            raise ValueError("give the pages to crawl: scrapy crawl NAME -a start_url=URL[,URL...]")
        self.sitemaps: dict[str, list[str]] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> PageSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.robots_parsed, signal=robots_parsed)
        return spider

    async def robots_parsed(self, robotparser: Any, request: scrapy.Request) -> None:
        """Sent once per parsed robots.txt (by scrapy-rep as by Scrapy's built-in), with the request that triggered
        its download, and awaited before that origin's waiting requests go on: note the file's sitemaps."""
        sitemaps = list(getattr(robotparser, "sitemaps", []))  # scrapy-rep's parser has them; Scrapy's do not
        if sitemaps:
            robots_url = urljoin(request.url, "/robots.txt")
            self.sitemaps[robots_url] = sitemaps
            self.logger.info("%s (for %s) lists the sitemaps %s", robots_url, request.url, sitemaps)

    async def start(self) -> AsyncIterator[scrapy.Request]:
        for url in self.start_urls:
            yield scrapy.Request(url, errback=self.stopped)

    def parse(self, response: Response, **kwargs: Any) -> Iterator[dict[str, Any] | scrapy.Request]:
        # The basis of the decision (scrapy-rep's evidence: the robots.txt version, the rule...), kept with the item.
        yield {"url": response.url, "outcome": "crawled", "status": response.status,
               "rep_basis": response.meta.get("rep_basis")}
        here = urlsplit(response.url).netloc
        for href in response.css("a::attr(href)").getall():
            url = response.urljoin(href)
            if urlsplit(url).netloc == here:
                yield scrapy.Request(url, errback=self.stopped)

    def stopped(self, failure: Failure) -> Iterator[dict[str, Any]]:
        request = failure.request  # type: ignore[attr-defined]
        yield {"url": request.url, "outcome": "stopped", "reason": f"{failure.type.__name__}: {failure.value}",
               "rep_basis": request.meta.get("rep_basis")}
