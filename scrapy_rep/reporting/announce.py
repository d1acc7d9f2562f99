"""What adopting a newly parsed robots.txt announces: the ``robots_parsed`` signal (as Scrapy's built-in sends it on
2.18+: through the asynchronous signal API, with the request that triggered the download) and the opt-in crawl-delay
(SPEC 6.5)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _scrapy
from ..robotparser import RobotParser

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from ..config import Config
    from ..matcher import Robots
    from ..robots.origin import Origin


async def announce(crawler: Crawler, internals: _scrapy.Internals, config: Config, stats: StatsCollector,
                   origin: Origin, robots: Robots, trigger: Request) -> None:
    """Send ``robots_parsed`` (if anything receives it) with ``trigger``, the request that triggered the download
    (the first waiting request; for a refresh, the one that found the entry stale), and wait for its handlers,
    coroutines included, as Scrapy's built-in does before its waiting requests go on. With REP_OBEY_CRAWL_DELAY,
    set the origin's slot delay (capped) and its stat."""
    if config.obey_crawl_delay:
        delay = robots.crawl_delay(config.user_agents)
        if delay is not None:
            delay = min(delay, config.max_crawl_delay)
            # Scrapy's default slot key is the request's hostname.
            if internals.set_slot_delay(origin.host, delay):
                stats.set_value(f"rep/crawl_delay/{origin}", delay)
    if _scrapy.has_receivers(crawler, _scrapy.robots_parsed):
        await _scrapy.send_signal(crawler, _scrapy.robots_parsed, robotparser=RobotParser(robots), request=trigger)
