"""``fleet``: one of many workers sharing one scrapy-redis queue and one scrapy-rep robots.txt cache in Redis.

Run it with the fleet profile (see docs/fleet.md), as many times as you want workers::

    SCRAPY_SETTINGS_MODULE=example_project.fleet_settings scrapy crawl fleet

It reads ``fleet:start_urls`` (JSON entries ``{"url": "..."}``) and yields one item per page (url, status). By default
it follows no links; with ``-a follow=1`` it follows each page's links too (every ``a[href]`` of an HTML page, through
the shared dupefilter, with no errback: a forbidden link of an origin whose robots.txt the worker holds is refused at
discovery, REP_REFUSE_AT_DISCOVERY, and never enters the shared queue). At close it logs its stats as one JSON line
(``fleet worker stats: {...}``): the ``rep/`` stats and the page and item counts, so a fleet's workers can be compared.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import scrapy
from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.http import HtmlResponse, Response
from scrapy_redis.spiders import RedisSpider  # type: ignore[import-untyped]
from scrapy_redis.utils import bytes_to_str  # type: ignore[import-untyped]
from twisted.python.failure import Failure

#: The prefix of the one log line with the worker's final stats (JSON after it).
STATS_LINE = "fleet worker stats: "

#: Stats copied into that line besides every ``rep/`` one.
KEPT_STATS = ("downloader/request_count", "response_received_count", "item_scraped_count", "finish_reason",
              "scheduler/enqueued/redis", "scheduler/dequeued/redis")


class FleetSpider(RedisSpider):  # type: ignore[misc]
    """A RedisSpider: every worker pops start URLs from ``fleet:start_urls`` and crawls from the shared queue."""

    name = "fleet"

    def __init__(self, *args: Any, follow: str | bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: ``-a follow=1`` (or true, yes, on): ``parse`` also follows each HTML page's links.
        self.follow = follow is True or str(follow).strip().lower() in {"1", "true", "yes", "on"}

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> FleetSpider:
        spider: FleetSpider = super().from_crawler(crawler, *args, **kwargs)
        # engine_stopped comes after the scheduler, the middlewares and the stats collector have closed the spider,
        # so every count made while closing (e.g. requests handed back to the shared queue) is in the line.
        crawler.signals.connect(spider.log_stats, signal=signals.engine_stopped)
        return spider

    def make_request_from_data(self, data: bytes) -> scrapy.Request | list[scrapy.Request]:
        """``{"url": ...}`` (JSON, as scrapy-redis reads it) or a bare URL: a plain GET that goes through the shared
        dupefilter (scrapy-redis's own default sends a ``dont_filter`` FormRequest), so a URL pushed twice is crawled
        once by the whole fleet."""
        text = bytes_to_str(data, self.redis_encoding).strip()
        url = json.loads(text).get("url") if text.startswith("{") else text
        if not url:
            self.logger.warning("no url in %r", text)
            return []
        return scrapy.Request(url, errback=self.stopped)

    def parse(self, response: Response, **kwargs: Any) -> Iterator[dict[str, Any] | scrapy.Request]:
        yield {"url": response.url, "status": response.status}
        if self.follow and isinstance(response, HtmlResponse):
            for href in response.css("a::attr(href)").getall():
                yield response.follow(href)  # no errback: eligible for refusal at discovery

    def stopped(self, failure: Failure) -> Iterator[dict[str, Any]]:
        request = failure.request  # type: ignore[attr-defined]
        yield {"url": request.url, "status": None, "reason": f"{type(failure.value).__name__}: {failure.value}"}

    def log_stats(self) -> None:
        stats = self.crawler.stats.get_stats() if self.crawler.stats is not None else {}
        kept = {key: value for key, value in stats.items() if key.startswith("rep/") or key in KEPT_STATS}
        self.logger.info("%s%s", STATS_LINE, json.dumps(kept, sort_keys=True, default=str))
