"""Yandex's Clean-param obeyed before download (REP_CLEAN_PARAM, opt-in; SPEC 5.3 records the lines).

``Clean-param: p1&p2 [path-prefix]`` in an origin's robots.txt (anywhere in the file, whatever the group: Yandex's
reading; matcher/_clean_param.py) says URLs that differ only in those query parameters are one page. With
REP_CLEAN_PARAM = True, a checked request whose URL holds such a parameter where its path matches goes back to the
scheduler as a copy with the canonical URL, so Scrapy's dupefilter sees the canonical URL: URLs that differ only in
those parameters are downloaded once. The copy is checked again when it comes back (its rules decide the canonical
URL). Each rewrite is counted (``rep/requests/rewritten``) and logged at DEBUG with the original URL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._scrapy import logger

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from ..matcher import AgentRules, CleanParam


class CleanParams:
    def __init__(self, crawler: Crawler, stats: StatsCollector) -> None:
        self.crawler = crawler
        self.stats = stats

    def rewritten(self, request: Request, rules: AgentRules | None) -> Request | None:
        """A copy of ``request`` with the canonical URL, or None when its origin's Clean-param lines remove nothing
        from its URL (or the origin has none: the common case, one attribute read)."""
        cleaned = canonical(request, rules)
        return None if cleaned is None else self.rewrite(request, cleaned)

    def rewrite(self, request: Request, cleaned: tuple[str, tuple[CleanParam, ...]]) -> Request:
        """The copy of ``request`` under ``cleaned``'s URL (``canonical``'s answer), counted and logged."""
        url, applied = cleaned
        self.stats.inc_value("rep/requests/rewritten")
        self.stats.inc_value("rep/requests/rewritten/clean_param")
        logger.debug("Clean-param: %s goes back to the scheduler as %s (%s)", request.url, url,
                     "; ".join(f"line {rule.line}: Clean-param: {rule.written}" for rule in applied),
                     extra={"spider": self.crawler.spider})
        return request.replace(url=url)


def canonical(request: Request, rules: AgentRules | None) -> tuple[str, tuple[CleanParam, ...]] | None:
    """(``request``'s canonical URL, the Clean-param lines that made it), or None when they remove nothing."""
    if rules is None or not rules.clean_params:
        return None
    return rules.clean(request.url)
