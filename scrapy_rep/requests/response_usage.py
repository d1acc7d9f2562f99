"""The opt-outs a response states, combined with those known before its download: one answer per response
(docs/opt-outs.md).

``UsageMiddleware`` is a spider middleware (the add-on enables it at ``USAGE_ORDER``, after ``RobotsTagsMiddleware``
and before Scrapy's HttpErrorMiddleware). For every response reaching the spider it reads:

- the ``Content-Usage`` (draft-ietf-aipref-attach-05) and ``Content-Signal`` response headers;
- TDMRep's ``tdm-reservation`` / ``tdm-policy`` headers and, in an HTML head, its meta tags: they override the origin's
  tdmrep.json (the protocol's precedence: meta tag over header over file);
- ``noai`` / ``noimageai`` in the robots meta tag and ``X-Robots-Tag`` (``meta["rep_robots_tags"]`` when
  RobotsTagsMiddleware read them, else read here): a refusal of AI training (``noimageai``: of an image response);

and combines them with the request's statements (usage.py) by vocab-08 7.1 (any ``n`` wins) into ``meta["rep_usage"]``,
``meta["rep_usage_sources"]`` and ``meta["rep_usage_statements"]`` (the sources also in ``meta["rep_basis"]["usage"]``,
basis.py). A response that states nothing keeps its request's answer as is (nothing is recomputed). With
REP_CONTENT_USES, the items a callback yields from a response whose answer refuses one of those uses are dropped
(``rep/usage/items_dropped/<use>``, a DEBUG line naming the source, and one INFO line per origin at close); the
requests it yields are followed (links are not content use). Without REP_CONTENT_USES nothing is dropped.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.http import HtmlResponse
from scrapy.spidermiddlewares.base import BaseSpiderMiddleware

from .._scrapy import enabled_spider_middlewares, logger
from ..config import Config, ConfigError
from ..matcher import RobotsTags, page_statements, robots_tags, with_page
from ..robots.origin import NoOrigin, origin_of
from .agents import RequestAgents
from .basis import BASIS_KEY
from .page_directives import META_KEY as TAGS_KEY
from .usage import META_KEY, SOURCES_KEY, STATEMENTS_KEY, put_answer, refusal_words, statement_of

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.settings import BaseSettings
    from scrapy.statscollectors import StatsCollector
    from typing_extensions import Self

#: Where the add-on enables the middleware in SPIDER_MIDDLEWARES: after RobotsTagsMiddleware (45), whose directives it
#: reads, before HttpErrorMiddleware (50), so an error page's opt-outs are read too.
USAGE_ORDER = 46
_PREFIX = "rep/usage"
#: Origins named at close, most dropped items first; the others are summed in one line.
CLOSE_ORIGINS = 20


class UsageMiddleware(BaseSpiderMiddleware):
    """Completes each response's usage answer and, with REP_CONTENT_USES, drops the items of a refused one."""

    def __init__(self, crawler: Crawler, config: Config) -> None:
        super().__init__(crawler)
        assert crawler.stats is not None
        self.stats: StatsCollector = crawler.stats
        self.uses = config.content_uses
        self.legacy = config.usage_legacy_labels
        self.agents = RequestAgents(config, self.stats)
        self._dropped: Counter[tuple[str, str]] = Counter()  # (origin, refusal) -> items dropped
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler, Config.from_settings(crawler.settings))  # NotConfigured with ROBOTSTXT_OBEY = False

    def process_spider_input(self, response: Response, spider: Spider | None = None) -> None:
        if response.request is None:
            return  # a response made without a request has no meta to hold the answer
        meta = response.meta
        headers = response.headers
        html = response.body if isinstance(response, HtmlResponse) else None
        tags = meta.get(TAGS_KEY)
        if not isinstance(tags, RobotsTags):  # REP_ROBOTS_TAGS = False: RobotsTagsMiddleware did not read them
            tags = robots_tags(headers.getlist(b"X-Robots-Tag"), html, self.agents.tokens(response.request))
        page = page_statements(headers.getlist(b"Content-Usage"), headers.getlist(b"Content-Signal"),
                               headers.getlist(b"tdm-reservation"), headers.getlist(b"tdm-policy"), html,
                               tags.from_meta, tags.from_header,
                               image="noimageai" in tags.directives and _is_image(response),
                               legacy_labels=self.legacy)
        if not page and STATEMENTS_KEY in meta:
            return  # nothing stated by the response: its request's answer stands
        before = [statement_of(fields) for fields in meta.get(STATEMENTS_KEY, ())]
        put_answer(meta, with_page(before, page))  # TDMRep: the page's own technique overrides the origin's file
        if isinstance(basis := meta.get(BASIS_KEY), dict):
            basis["usage"] = meta[SOURCES_KEY]  # the decision's basis names the answer's sources as completed
        if page:
            self.stats.inc_value(f"{_PREFIX}/responses_stating")

    def get_processed_item(self, item: Any, response: Response | None) -> Any:
        """The item, or None when the response's answer refuses a use of REP_CONTENT_USES."""
        if not self.uses or response is None or response.request is None:
            return item
        answer = response.meta.get(META_KEY) or {}
        refused = [use for use in self.uses if answer.get(use) == "n"]
        if not refused:
            return item
        sources = response.meta.get(SOURCES_KEY) or {}
        words = refusal_words([statement_of(sources[use]) for use in refused if use in sources])
        for use in refused:
            self.stats.inc_value(f"{_PREFIX}/items_dropped/{use}")
        self.stats.inc_value(f"{_PREFIX}/items_dropped")
        self._dropped[(_origin(response.url), words)] += 1
        logger.debug("Dropped an item of %s: %s", response, words, extra={"spider": self.crawler.spider})
        return None

    def _spider_closed(self) -> None:
        """One INFO line per origin whose items were dropped (the first CLOSE_ORIGINS, most first)."""
        if not self._dropped:
            return
        ranked = self._dropped.most_common()
        for (origin, words), count in ranked[:CLOSE_ORIGINS]:
            logger.info("scrapy-rep: %d item(s) of %s dropped: %s", count, origin, words,
                        extra={"spider": self.crawler.spider})
        rest = sum(count for _, count in ranked[CLOSE_ORIGINS:])
        if rest:
            logger.info("scrapy-rep: %d more item(s) of %d more origin/refusal pairs dropped (rep/usage/items_dropped)",
                        rest, len(ranked) - CLOSE_ORIGINS, extra={"spider": self.crawler.spider})
        self._dropped.clear()


def _is_image(response: Response) -> bool:
    return (response.headers.get(b"Content-Type") or b"").strip().lower().startswith(b"image/")


def _origin(url: str) -> str:
    try:
        return str(origin_of(url))
    except NoOrigin:
        return url


def check_usage_middleware(settings: BaseSettings, config: Config) -> None:
    """Called where ``RobotsMiddleware`` starts: a ``ConfigError`` naming SPIDER_MIDDLEWARES when REP_CONTENT_USES is
    set and ``UsageMiddleware`` is not enabled (the items of responses that refuse a use would be kept, silently)."""
    if config.content_uses and UsageMiddleware not in enabled_spider_middlewares(settings):
        raise ConfigError(
            "SPIDER_MIDDLEWARES", settings.getdict("SPIDER_MIDDLEWARES"),
            "scrapy_rep.UsageMiddleware is not enabled, so the items of responses whose headers or meta tags refuse a "
            f"use of REP_CONTENT_USES would be kept; enable it with 'scrapy_rep.UsageMiddleware': {USAGE_ORDER} in "
            "SPIDER_MIDDLEWARES, or use ADDONS = {'scrapy_rep.Addon': 0}",
        )
