"""Running the example project's spiders against the demo site, in this process, and collecting what happened.

The spiders and settings are the example project's own (``example_project/``, loaded as ``scrapy crawl`` would from
that directory); the demo only adds short retry and hold times so that "503 then recovery" and "dropped at the hold
timeout" happen within seconds.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scrapy import Spider, signals
from scrapy.crawler import AsyncCrawlerRunner
from scrapy.settings import Settings

from scrapy_rep.demo.site import DemoSite, Hit

PROJECT_DIR = Path(__file__).resolve().parents[2] / "example_project"

#: scrapy-rep's timings for the demo: re-fetch a failing robots.txt after 0.2 s (then 0.4, 0.5...), and give up on
#: held requests after 4 s. A real crawl keeps the defaults (README, settings reference).
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


class DemoError(Exception):
    """The demo cannot run (e.g. no example project next to the package): one line for the user."""


@dataclass(slots=True)
class CrawlResult:
    """One spider's crawl: its items (pages crawled and requests stopped), stats, the site's log and scrapy-rep's,
    and the sitemaps its spider saw in ``robots_parsed`` signals (robots.txt URL -> sitemap URLs)."""

    label: str
    spider: str
    items: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    hits: list[Hit] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    sitemaps: dict[str, list[str]] = field(default_factory=dict)
    seconds: float = 0.0


def project_settings(overrides: dict[str, Any]) -> Settings:
    """The example project's settings (as ``scrapy crawl`` run in ``example_project/`` reads them) + ``overrides``."""
    if not (PROJECT_DIR / "scrapy.cfg").is_file():
        raise DemoError(f"example project not found at {PROJECT_DIR}: run the demo from a source checkout")
    if str(PROJECT_DIR) not in sys.path:
        sys.path.insert(0, str(PROJECT_DIR))
    settings = Settings()
    settings.setmodule("example_project.settings", priority="project")
    settings.setdict(overrides, priority="cmdline")
    return settings


async def crawl(site: DemoSite, label: str, spider: str, urls: list[str], overrides: dict[str, Any]) -> CrawlResult:
    """Run ``spider`` of the example project over ``urls`` and return what it produced and what the site served."""
    result = CrawlResult(label, spider)
    runner = AsyncCrawlerRunner(project_settings(overrides))
    crawler = runner.create_crawler(spider)

    def collect(item: dict[str, Any], spider: Spider) -> None:
        result.items.append(dict(item))

    crawler.signals.connect(collect, signal=signals.item_scraped)
    first_hit = len(site.hits)
    started = time.monotonic()
    with _captured_logs(result.logs):
        await runner.crawl(crawler, start_url=",".join(urls))
    result.seconds = time.monotonic() - started
    result.hits = site.hits[first_hit:]
    assert crawler.stats is not None
    result.stats = dict(crawler.stats.get_stats())
    result.sitemaps = dict(getattr(crawler.spider, "sitemaps", {}))  # gathered from the robots_parsed signal
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
