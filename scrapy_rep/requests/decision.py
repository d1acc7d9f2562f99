"""One request decided against its origin's entry (SPEC 8.1-8.2): one path for every caller.

``Decider.decide`` allows a request (its usage answer put in its meta: usage.py) or forbids it: a rule disallows it
(the rule cited, ``matcher.cite``), or an opt-out known before download refuses a use of REP_CONTENT_USES. It puts
the decision's basis in the request's meta (basis.py) and writes it to the decision log (REP_DECISION_LOG), counts
the outcome once (``rep/requests/allowed`` or ``forbidden``), tells the close report, and raises ``IgnoreRequest``
(the basis attached) for a forbidden one unless the crawl is a dry run (dry_run.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..robotparser import url_to_decide
from .agents import RequestAgents
from .basis import ALLOWED, FORBIDDEN, decided, no_rules_reason
from .usage import Usage, refusal_words

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from ..config import Clock, Config
    from ..matcher import AgentRules, Statement
    from ..reporting.close_report import CloseReport
    from ..reporting.decision_log import DecisionLog
    from ..robots.state import OriginMap
    from ..stores import Entry
    from .dry_run import DryRun


class Decider:
    def __init__(self, crawler: Crawler, config: Config, stats: StatsCollector, origins: OriginMap,
                 dry_run: DryRun, report: CloseReport, clock: Clock, log: DecisionLog | None) -> None:
        self.crawler = crawler
        self.clock = clock  # dates each basis
        self.log = log  # REP_DECISION_LOG
        self.origins = origins  # an origin's tdmrep.json is read from its state (REP_TDMREP)
        self.dry_run = dry_run
        self.report = report
        self.usage = Usage(config, stats)  # meta["rep_usage"]; REP_CONTENT_USES enforced
        self.agents = RequestAgents(config, stats)  # a request's own User-Agent token (Scrapy's contract)

    def decide(self, request: Request, entry: Entry, rules: AgentRules | None) -> None:
        """Allow, or forbid (``IgnoreRequest``, unless a dry run); either way the request's basis
        goes in its meta (basis.py) and to the decision log. ``rules``: the origin's form for the crawl's tokens,
        replaced by the request's own User-Agent token's form when it has one (agents.py)."""
        tokens, rules = self.agents.decision_form(request, entry, rules)
        url = url_to_decide(request)  # request.url, encoded when meta["verbatim_url"] kept it as written
        verdict = None if rules is None else rules.explain(url)  # the rule too: the basis names it when allowed
        spider = self.crawler.spider
        state = self.origins.get(entry.origin)
        refused: list[Statement] = []
        if verdict is None or verdict.allowed:
            refused = self.usage.refusal(request, {} if verdict is None else verdict.usage, state, url, spider)
            if not refused:
                reason = no_rules_reason(entry) if verdict is None else verdict.reason
                self._record(decided(request, url, entry, tokens, verdict, ALLOWED, reason, [], self.dry_run.enforce,
                                     self.clock.seconds(), state))
                self.dry_run.allowed(entry)
                self.report.allowed(entry.origin, request)
                return
            where = refusal_words(refused)
        else:
            where = verdict.reason  # matcher.cite's words: the rule, and the group it is in
        basis = decided(request, url, entry, tokens, verdict, FORBIDDEN, where,
                        [statement.use for statement in refused], self.dry_run.enforce, self.clock.seconds(), state)
        self._record(basis)
        self.report.forbidden(entry, request, where)
        self.dry_run.forbid(request, entry, where, tokens, spider, basis, usage=bool(refused))  # IgnoreRequest unless a
        # dry run

    def _record(self, basis: dict[str, Any]) -> None:
        if self.log is not None:
            self.log.decided(basis)
