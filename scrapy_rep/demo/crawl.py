"""Running the demo project's spiders against the demo site, in this process, and collecting what happened.

The spiders and settings are the demo project's (``scrapy_rep.demo.project``), shipped in the package, so that the
demo runs from an installed wheel in any directory; the demo only adds short retry and hold times so that "503 then
recovery" and "dropped at the hold timeout" happen within seconds.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

from scrapy import Request, Spider, signals
from scrapy.settings import Settings

from scrapy_rep import robots_parsed
from scrapy_rep._scrapy import crawl_with, new_runner
from scrapy_rep.demo.site import DemoSite, Hit

#: The demo's Scrapy settings module (its SPIDER_MODULES name the demo's spiders, also in the package).
SETTINGS_MODULE = "scrapy_rep.demo.project.settings"

#: scrapy-rep's timings for the demo: re-fetch a failing robots.txt after 0.2 s (then 0.4, 0.5...), and give up on
#: held requests after 4 s. A real crawl keeps the defaults (docs/settings.md).
DEMO_SETTINGS: dict[str, Any] = {
    "REP_ERROR_RETRY_DELAY": 0.2,
    "REP_ERROR_RETRY_MAX_DELAY": 0.5,
    "REP_UNAVAILABLE_RETRY_DELAY": 0.2,
    "REP_UNAVAILABLE_RETRY_MAX_DELAY": 0.5,
    "REP_HOLD_TIMEOUT": 4.0,
    "LOG_LEVEL": "INFO",
}

#: The same crawl with Scrapy's built-in RobotsTxtMiddleware (and its default parser, Protego) instead.
BUILTIN_SETTINGS: dict[str, Any] = {
    "ADDONS": {},
    "ROBOTSTXT_OBEY": True,
    "ROBOTSTXT_USER_AGENT": "examplebot",
    "LOG_LEVEL": "INFO",
}


@dataclass(slots=True)
class CrawlResult:
    """One spider's crawl: its items (pages crawled and requests stopped), stats, the site's log and scrapy-rep's,
    and the sitemaps of each parsed robots.txt, from the ``robots_parsed`` signal (robots.txt URL -> sitemap URLs)."""

    label: str
    spider: str
    items: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    hits: list[Hit] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    sitemaps: dict[str, list[str]] = field(default_factory=dict)
    seconds: float = 0.0


def project_settings(overrides: dict[str, Any]) -> Settings:
    """The demo project's settings (at Scrapy's "project" priority) + ``overrides`` (at "cmdline", as ``-s``)."""
    settings = Settings()
    settings.setmodule(SETTINGS_MODULE, priority="project")
    settings.setdict(overrides, priority="cmdline")
    return settings


async def crawl(site: DemoSite, label: str, spider: str, urls: list[str], overrides: dict[str, Any]) -> CrawlResult:
    """Run ``spider`` of the demo project over ``urls`` and return what it produced and what the site served."""
    result = CrawlResult(label, spider)
    runner = new_runner(project_settings(overrides))
    crawler = runner.create_crawler(spider)

    def collect(item: dict[str, Any], spider: Spider) -> None:
        result.items.append(dict(item))

    def note_sitemaps(robotparser: Any, request: Request) -> None:
        # ``request``: the page whose request triggered the download (scrapy-rep and Scrapy's built-in alike)
        if sitemaps := list(getattr(robotparser, "sitemaps", [])):  # scrapy-rep's parser has them; Protego's not
            result.sitemaps[urljoin(request.url, "/robots.txt")] = sitemaps

    crawler.signals.connect(collect, signal=signals.item_scraped)
    crawler.signals.connect(note_sitemaps, signal=robots_parsed)
    first_hit = len(site.hits)
    started = time.monotonic()
    with _captured_logs(result.logs):
        await crawl_with(runner, crawler, urls=urls)
    result.seconds = time.monotonic() - started
    result.hits = site.hits[first_hit:]
    assert crawler.stats is not None
    result.stats = dict(crawler.stats.get_stats())
    return result


class _ListHandler(logging.Handler):
    def __init__(self, lines: list[str]):
        super().__init__(logging.INFO)
        self.lines = lines

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@contextmanager
def _captured_logs(lines: list[str]) -> Iterator[None]:
    """Collect scrapy-rep's own INFO log lines (origin outcome changes, drops, the close summary) for the report."""
    handler = _ListHandler(lines)
    logger = logging.getLogger("scrapy_rep")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
