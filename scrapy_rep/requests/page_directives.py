"""Page-level robots directives obeyed in a spider's output: the robots meta tag and the X-Robots-Tag header
(Google's "Robots meta tag, data-nosnippet, and X-Robots-Tag specifications"; parsed by matcher/_robots_tags.py).

``RobotsTagsMiddleware`` is a spider middleware (the add-on enables it at ``SPIDER_ORDER``, before Scrapy's
HttpErrorMiddleware, so an error page's directives are read too):

- every response reaching the spider gets ``response.meta["rep_robots_tags"]``, a ``matcher.RobotsTags`` (HTML or
  not: the header applies to any response; the meta tag is read from an HTML body's ``<head>`` only), counted under
  ``rep/robots_tags/responses`` when it holds a directive, and per directive at close;
- requests a callback yields from a ``nofollow`` response are not scheduled (REP_OBEY_NOFOLLOW, default True), each
  counted and explained at DEBUG; one with ``meta["dont_obey_robotstxt"]`` passes, as it does for robots.txt;
- items a callback yields from a ``noindex`` response, or one past its ``unavailable_after``, are dropped
  (REP_OBEY_NOINDEX, opt-in), each counted and explained at DEBUG.

With ``RobotsMiddleware`` enabled, the crawl does not start when the settings ask for page-level obedience but
SPIDER_MIDDLEWARES does not enable this middleware (``check_spider_middlewares``).

Start requests have no response, so they are never affected. Only ``robots`` and the product tokens the response's
request obeys robots.txt as (agents.py: the crawl's, REP_USER_AGENT else ROBOTSTXT_USER_AGENT's else USER_AGENT's, or
with neither of the first two set the request's own User-Agent header's) address the crawl; other crawlers' names
are ignored. ``ROBOTSTXT_OBEY = False`` or ``REP_ROBOTS_TAGS = False`` disables the middleware (nothing is read).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse
from scrapy.spidermiddlewares.base import BaseSpiderMiddleware

from .._scrapy import enabled_spider_middlewares, logger
from ..config import Clock, Config, ConfigError
from ..matcher import RobotsTags, is_unavailable, robots_tags
from .agents import RequestAgents

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.settings import BaseSettings
    from scrapy.statscollectors import StatsCollector
    from typing_extensions import Self

#: The request meta key holding a response's page-level directives (docs/meta-and-signals.md).
META_KEY = "rep_robots_tags"
#: Where the add-on enables the middleware in SPIDER_MIDDLEWARES: before HttpErrorMiddleware (50).
SPIDER_ORDER = 45
#: Where the add-on enables RobotsStartMiddleware in SPIDER_MIDDLEWARES: nearest the engine (below Scrapy's lowest,
#: 25), so the start requests other spider middlewares add wait too. Here, beside SPIDER_ORDER, for the start-up check.
START_ORDER = 10
_HEADER = b"X-Robots-Tag"
_PREFIX = "rep/robots_tags"


class RobotsTagsMiddleware(BaseSpiderMiddleware):
    """Reads each response's page-level directives and obeys ``nofollow`` (and, opt-in, ``noindex``) in the
    callback's output; see the module docstring."""

    def __init__(self, crawler: Crawler, config: Config, clock: Clock) -> None:
        super().__init__(crawler)
        assert crawler.stats is not None
        self.stats: StatsCollector = crawler.stats
        self.agents = RequestAgents(config, self.stats)  # the crawl's tokens, or the request's own User-Agent's
        self.obey_nofollow = config.obey_nofollow
        self.obey_noindex = config.obey_noindex
        self.clock = clock
        # Responses per directive: counted here and added to the stats at close (one stat call per response, not
        # one per directive: a Scrapy stat call costs ~1.5 µs and a page often carries five directives).
        self._directives: Counter[str] = Counter()
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = Config.from_settings(crawler.settings)  # NotConfigured with ROBOTSTXT_OBEY = False
        if not config.robots_tags:
            raise NotConfigured("REP_ROBOTS_TAGS is False")
        return cls(crawler, config, config.time())

    def process_spider_input(self, response: Response, spider: Spider | None = None) -> None:
        """``response.meta[META_KEY]``: its directives for this crawl, each counted once per response."""
        if response.request is None:
            return  # a response made without a request has no meta to hold them
        body = response.body if isinstance(response, HtmlResponse) else None
        tags = robots_tags(response.headers.getlist(_HEADER), body, self.agents.tokens(response.request))
        response.meta[META_KEY] = tags
        if tags.directives:
            self.stats.inc_value(f"{_PREFIX}/responses")
            self._directives.update(tags.directives)

    def get_processed_request(self, request: Request, response: Response | None) -> Request | None:
        """The request, or None when it comes from a ``nofollow`` response and REP_OBEY_NOFOLLOW holds."""
        tags = _tags_of(response)
        if tags is None or not tags.nofollow or not self.obey_nofollow:
            return request
        if request.meta.get("dont_obey_robotstxt"):
            self.stats.inc_value(f"{_PREFIX}/requests/passed_through/dont_obey_robotstxt")
            return request
        assert response is not None
        self.stats.inc_value(f"{_PREFIX}/requests/not_followed")
        logger.debug("Not following %s: %s says nofollow (%s)", request, response, tags.source("nofollow"),
                     extra={"spider": self.crawler.spider})
        return None

    def get_processed_item(self, item: Any, response: Response | None) -> Any:
        """The item, or None when it comes from a ``noindex`` response (or one past its ``unavailable_after``)
        and REP_OBEY_NOINDEX holds."""
        tags = _tags_of(response)
        if tags is None or not self.obey_noindex or not (why := self._noindex(tags)):
            return item
        assert response is not None
        self.stats.inc_value(f"{_PREFIX}/items/dropped/{why}")
        logger.debug("Dropped an item of %s: it says %s (%s)", response, why, tags.source(why),
                     extra={"spider": self.crawler.spider})
        return None

    def _spider_closed(self) -> None:
        """``rep/robots_tags/directives/<name>``: the responses that carried each directive."""
        for name, count in sorted(self._directives.items()):
            self.stats.inc_value(f"{_PREFIX}/directives/{name}", count)
        self._directives.clear()

    def _noindex(self, tags: RobotsTags) -> str | None:
        """The directive that keeps ``tags``' page out of an index now: ``noindex`` or ``unavailable_after``."""
        if tags.noindex:
            return "noindex"
        if tags.unavailable_after is not None:
            now = datetime.fromtimestamp(self.clock.seconds(), timezone.utc)
            if is_unavailable(tags, now):
                return "unavailable_after"
        return None


def _tags_of(response: Response | None) -> RobotsTags | None:
    """The directives read for ``response``; None for a start request (no response) or one never read."""
    if response is None or response.request is None:
        return None
    tags = response.meta.get(META_KEY)
    return tags if isinstance(tags, RobotsTags) else None


def check_spider_middlewares(settings: BaseSettings, config: Config, start_middleware: type) -> None:
    """Called where ``RobotsMiddleware`` starts. A ``ConfigError`` naming SPIDER_MIDDLEWARES when page-level
    obedience is asked for (REP_ROBOTS_TAGS with REP_OBEY_NOFOLLOW or REP_OBEY_NOINDEX) and ``RobotsTagsMiddleware``
    is not enabled: nothing would obey it, silently. One WARNING when ``start_middleware`` (``RobotsStartMiddleware``,
    passed in: it lives in a room above) is not enabled: start requests are not paced, no obedience is lost."""
    enabled = enabled_spider_middlewares(settings)
    obeyed = [why for on, why in ((config.obey_nofollow, "REP_OBEY_NOFOLLOW: the links of nofollow pages followed"),
                                  (config.obey_noindex, "REP_OBEY_NOINDEX: the items of noindex pages kept")) if on]
    if config.robots_tags and obeyed and RobotsTagsMiddleware not in enabled:
        raise ConfigError(
            "SPIDER_MIDDLEWARES", settings.getdict("SPIDER_MIDDLEWARES"),
            f"scrapy_rep.RobotsTagsMiddleware is not enabled, so page-level directives would silently go unobeyed "
            f"({'; '.join(obeyed)}); enable it with 'scrapy_rep.RobotsTagsMiddleware': {SPIDER_ORDER} in "
            "SPIDER_MIDDLEWARES, or use ADDONS = {'scrapy_rep.Addon': 0}; to crawl without page-level obedience set "
            "REP_ROBOTS_TAGS = False (or REP_OBEY_NOFOLLOW and REP_OBEY_NOINDEX to False)",
        )
    if start_middleware not in enabled:
        logger.warning("scrapy-rep: SPIDER_MIDDLEWARES does not enable scrapy_rep.RobotsStartMiddleware: start "
                       "requests are not held while robots.txt fetches fill the downloader, so Scrapy's engine may "
                       "move them all into the scheduler (nothing robots.txt forbids is let through); enable it with "
                       "'scrapy_rep.RobotsStartMiddleware': %d in SPIDER_MIDDLEWARES, or use ADDONS = "
                       "{'scrapy_rep.Addon': 0}", START_ORDER)
