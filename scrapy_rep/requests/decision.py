"""One request decided against its origin's entry (SPEC 8.1-8.2): one path for every caller.

``Decider.judge`` reads what the entry says of a request, with no side effect: the tokens it obeys, the matcher's
verdict (the rule cited, ``matcher.cite``), what the opt-outs known before download say and whether one refuses a use
of REP_CONTENT_USES. ``Decider.decide`` records a judgement: the request is allowed (its usage answer put in its meta:
usage.py) or forbidden; its basis goes in its meta (basis.py) and to the decision log (REP_DECISION_LOG), the outcome
is counted once (``rep/requests/allowed`` or ``forbidden``), the close report is told, and a forbidden request's
``IgnoreRequest`` (the basis attached) is returned for the caller to raise, unless the crawl is a dry run
(dry_run.py). The downloader middleware decides every request it checks; the spider middleware judges the requests a
callback yields and records only those forbidden (discovery.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..robotparser import url_to_decide
from .agents import RequestAgents
from .basis import ALLOWED, FORBIDDEN, decided, no_rules_reason
from .usage import Usage, refusal_words

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.exceptions import IgnoreRequest
    from scrapy.statscollectors import StatsCollector

    from ..config import Clock, Config
    from ..matcher import AgentRules, Preference, Statement, Verdict
    from ..reporting.close_report import CloseReport
    from ..reporting.decision_log import DecisionLog
    from ..robots.state import OriginMap, OriginState
    from ..stores import Entry
    from .dry_run import DryRun


@dataclass(slots=True)
class Judgement:
    """What an entry says of one request (``Decider.judge``): nothing recorded yet."""

    url: str  # as decided: request.url, encoded when meta["verbatim_url"] kept it as written
    tokens: tuple[str, ...]
    by_rules: bool  # robots.txt's rules allow it (an entry without rules allows everything)
    verdict: Verdict | None  # the matcher's, with the rule cited; None: an entry without rules, or not cited
    state: OriginState | None  # the origin's, whose tdmrep.json copy the usage answer read
    statements: list[Statement]  # every opt-out statement read (only when the rules allow)
    answer: dict[str, Statement]  # their combined answer
    refused: list[Statement]  # those refusing a use of REP_CONTENT_USES: the request is forbidden for its use

    @property
    def allowed(self) -> bool:
        return self.by_rules and not self.refused


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

    def judge(self, request: Request, entry: Entry, rules: AgentRules | None, *, cite: bool = True) -> Judgement:
        """What ``entry`` says of ``request``, nothing recorded. ``rules``: the origin's form for the crawl's tokens,
        replaced by the request's own User-Agent token's form when it has one (agents.py). ``cite``: the deciding
        rule too (``explain``, what ``decide`` records); without it only whether it is allowed (``decide``, the
        matcher's fast path, and the opt-outs only when REP_CONTENT_USES can refuse one: ``allowed`` is all it
        answers)."""
        tokens, rules = self.agents.decision_form(request, entry, rules)
        url = url_to_decide(request)
        verdict = None
        preferences: Mapping[str, Preference] = {}
        if rules is None:
            by_rules = True
        elif cite:
            verdict = rules.explain(url)  # the rule too: the basis names it when allowed
            by_rules, preferences = verdict.allowed, verdict.usage
        else:
            by_rules, preferences = rules.decide(url)
        state = self.origins.get(entry.origin)
        if not by_rules or not (cite or self.usage.uses):
            return Judgement(url, tokens, by_rules, verdict, state, [], {}, [])
        statements, answer, refused = self.usage.answer(preferences, state, url)
        return Judgement(url, tokens, by_rules, verdict, state, statements, answer, refused)

    def decide(self, request: Request, entry: Entry, rules: AgentRules | None) -> IgnoreRequest | None:
        """Allow (None), or forbid: the ``IgnoreRequest`` to raise (None in a dry run, which sends it); either way
        the request's basis goes in its meta (basis.py) and to the decision log."""
        j = self.judge(request, entry, rules)
        self.agents.count(j.tokens)
        verdict, spider = j.verdict, self.crawler.spider
        if j.by_rules:
            self.usage.record(request, {} if verdict is None else verdict.usage, j.state, j.statements, j.answer,
                              spider)
        if j.allowed:
            reason = no_rules_reason(entry) if verdict is None else verdict.reason
            self._record(decided(request, j.url, entry, j.tokens, verdict, ALLOWED, reason, [], self.dry_run.enforce,
                                 self.clock.seconds(), j.state))
            self.dry_run.allowed(entry)
            self.report.allowed(entry.origin, request)
            return None
        # verdict is None only for an entry without rules, where nothing but an opt-out refuses
        where = refusal_words(j.refused) if j.refused else verdict.reason  # type: ignore[union-attr]
        basis = decided(request, j.url, entry, j.tokens, verdict, FORBIDDEN, where,
                        [statement.use for statement in j.refused], self.dry_run.enforce, self.clock.seconds(),
                        j.state)
        self._record(basis)
        self.report.forbidden(entry, request, where)
        # the DEBUG line, the IgnoreRequest (None in a dry run)
        return self.dry_run.forbid(request, entry, where, j.tokens, spider, basis, usage=bool(j.refused))

    def _record(self, basis: dict[str, Any]) -> None:
        if self.log is not None:
            self.log.decided(basis)
