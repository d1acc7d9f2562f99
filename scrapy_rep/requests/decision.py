"""One request decided against its origin's entry (SPEC 8.1-8.2): one path for every caller.

``Decider.decide`` allows a request (its usage answer put in its meta: usage.py) or forbids it: a rule disallows it
(the rule cited, ``matcher.cite``), or an opt-out known before download refuses a use of REP_CONTENT_USES. It
counts the outcome once (``rep/requests/allowed`` or ``forbidden``), tells the close report, and raises
``IgnoreRequest`` for a forbidden one unless the crawl is a dry run (dry_run.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..robotparser import url_to_decide
from .agents import RequestAgents
from .usage import Usage

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from ..config import Config
    from ..matcher import AgentRules
    from ..reporting.close_report import CloseReport
    from ..robots.state import OriginMap
    from ..stores import Entry
    from .dry_run import DryRun


class Decider:
    def __init__(self, crawler: Crawler, config: Config, stats: StatsCollector, origins: OriginMap,
                 dry_run: DryRun, report: CloseReport) -> None:
        self.crawler = crawler
        self.origins = origins  # an origin's tdmrep.json is read from its state (REP_TDMREP)
        self.dry_run = dry_run
        self.report = report
        self.usage = Usage(config, stats)  # meta["rep_usage"]; REP_CONTENT_USES enforced
        self.agents = RequestAgents(config, stats)  # a request's own User-Agent token (Scrapy's contract)

    def decide(self, request: Request, entry: Entry, rules: AgentRules | None) -> None:
        """Allow, or forbid (``IgnoreRequest`` unless a dry run). ``rules``: the origin's form for the crawl's tokens,
        replaced by the request's own User-Agent token's form when it has one (agents.py)."""
        tokens, rules = self.agents.decision_form(request, entry, rules)
        url = url_to_decide(request)  # request.url, encoded when meta["verbatim_url"] kept it as written
        allowed, preferences = (True, {}) if rules is None else rules.decide(url)
        spider = self.crawler.spider
        if allowed:
            state = self.origins.get(entry.origin)
            where = self.usage.refusal(request, preferences, state, url, spider)
            if where is None:
                self.dry_run.allowed(entry)
                self.report.allowed(entry.origin, request)
                return
        else:
            assert rules is not None
            where = rules.explain(url).reason  # matcher.cite's words: the rule, and the group it is in
        self.report.forbidden(entry, request, where)
        self.dry_run.forbid(request, entry, where, tokens, spider, usage=allowed)  # IgnoreRequest unless a dry run
