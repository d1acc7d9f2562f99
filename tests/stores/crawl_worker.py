"""One crawler process for the shared-store tests: ``python -m tests.stores.crawl_worker STORE READY_URL URL...``.

Crawls the URLs with ``REP_STORE = STORE`` under Scrapy's own ``CrawlerProcess`` (its own reactor), after first
fetching ``READY_URL`` unchecked so the test knows this process is running. Prints one JSON line: the ``rep/`` stats,
the pages downloaded and the requests that failed.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from typing import Any

from scrapy.utils.reactor import install_reactor

# Before anything imports twisted.internet.reactor (tests.crawl does), which would install the default.
install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")

from scrapy import Request  # noqa: E402
from scrapy.crawler import CrawlerProcess  # noqa: E402

from tests.crawl import BASE_SETTINGS, ListSpider  # noqa: E402


class AnnouncingSpider(ListSpider):
    """``ListSpider`` that first requests ``ready_url`` past the robots check (SPEC 1.4's meta key)."""

    name = "announcing"

    def __init__(self, ready_url: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ready_url = ready_url

    async def start(self) -> AsyncIterator[Any]:
        yield Request(self.ready_url, meta={"dont_obey_robotstxt": True}, priority=100, dont_filter=True)
        async for request in super().start():
            yield request


def main(store: str, ready_url: str, urls: list[str]) -> None:
    settings = {
        **BASE_SETTINGS,
        "REP_STORE": store,
        "REP_STORE_POLL_INTERVAL": 0.05,
        "LOG_LEVEL": "WARNING",
        "DOWNLOAD_TIMEOUT": 60,  # robots.txt answers are held back until both crawlers run
        "CONCURRENT_REQUESTS": 100,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 100,
    }
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(AnnouncingSpider)
    process.crawl(crawler, ready_url=ready_url, urls=urls)
    process.start()
    assert crawler.stats is not None and isinstance(crawler.spider, ListSpider)
    stats = {key: value for key, value in crawler.stats.get_stats().items() if key.startswith("rep/")}
    print(json.dumps({"stats": stats, "downloaded": crawler.spider.downloaded, "failed": crawler.spider.failed}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
