"""What adopting a newly parsed robots.txt announces: the ``robots_parsed`` signal (as Scrapy's built-in sends it)
and the opt-in crawl-delay (SPEC 6.5)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy import Request

from .. import _scrapy
from ..robotparser import RobotParser

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from ..config import Config
    from ..matcher import Robots
    from ..robots.origin import Origin


def announce(crawler: Crawler, internals: _scrapy.Internals, config: Config, stats: StatsCollector, origin: Origin,
             robots: Robots) -> None:
    """Send ``robots_parsed`` (if anything receives it); with REP_OBEY_CRAWL_DELAY, set the origin's slot delay
    (capped) and its stat."""
    if _scrapy.has_receivers(crawler, _scrapy.robots_parsed):
        crawler.signals.send_catch_log(
            signal=_scrapy.robots_parsed, robotparser=RobotParser(robots), request=Request(origin.robots_url)
        )
    if config.obey_crawl_delay:
        delay = robots.crawl_delay(config.user_agents)
        if delay is not None:
            delay = min(delay, config.max_crawl_delay)
            # Scrapy's default slot key is the request's hostname.
            if internals.set_slot_delay(origin.host, delay):
                stats.set_value(f"rep/crawl_delay/{origin}", delay)
