"""What the opt-outs known before download say of an allowed request: robots.txt's Content-Usage and Content-Signal
lines (matcher/_usage.py) and, with REP_TDMREP, the origin's tdmrep.json (robots/tdmrep.py); docs/opt-outs.md.

Every allowed request gets, in ``meta`` (response_usage.py completes them from the response and the page):

- ``rep_usage``: use -> ``"y"`` or ``"n"`` (e.g. ``{"train-ai": "n", "search": "y"}``; ``{}`` when nothing is said);
- ``rep_usage_sources``: use -> the statement that decided it (``Statement.as_dict``: source, where, policy...);
- ``rep_usage_statements``: every statement read, as dicts (what the response's own signals are combined with).

A sent request counts under ``rep/usage/<use>/<y|n>``. Enforcement is opt-in: ``REP_CONTENT_USES`` names the uses
this crawl makes of what it downloads; a request one of them is refused for is forbidden (``IgnoreRequest``, counted in
``rep/requests/forbidden`` and ``rep/requests/forbidden/usage``, ``rep/usage/refused/<use>``), its log line naming the
refusing source, unless REP_USAGE_DISCOVERY downloads it for its links only (``rep/usage/discovery``; its items are
dropped). A robots.txt label of an earlier AIPREF draft is said once per origin (WARNING,
``rep/usage/legacy_labels/<label>``) and, with REP_USAGE_LEGACY_LABELS, an ``n`` of one that implies AI training
refuses ``train-ai``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..matcher import LEGACY_LABELS, Statement, combine, from_preference
from ..robots import tdmrep

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scrapy import Request
    from scrapy.statscollectors import StatsCollector

    from ..config import Config
    from ..matcher import Preference
    from ..robots.state import OriginState

#: The documented logger of every middleware line (docs/stats.md).
logger = logging.getLogger("scrapy_rep.middleware")

#: The request meta keys (docs/meta-and-signals.md): the answer, the deciding statements, every statement.
META_KEY = "rep_usage"
SOURCES_KEY = "rep_usage_sources"
STATEMENTS_KEY = "rep_usage_statements"
#: Set on a request an opt-out refused and REP_USAGE_DISCOVERY downloads for its links: the refusal, in words.
DISCOVERY_KEY = "rep_usage_discovery"


def put_answer(meta: dict[str, Any], statements: list[Statement],
               answer: dict[str, Statement] | None = None) -> dict[str, Statement]:
    """Combine ``statements`` (vocab-08 7.1: any n wins; ``answer``: already combined) into ``meta``'s three keys;
    the combined answer."""
    if not statements:  # the common case: nothing said
        meta[META_KEY], meta[SOURCES_KEY], meta[STATEMENTS_KEY] = {}, {}, []
        return {}
    if answer is None:
        answer = combine(statements)
    meta[META_KEY] = {use: "y" if statement.allowed else "n" for use, statement in answer.items()}
    meta[SOURCES_KEY] = {use: statement.as_dict() for use, statement in answer.items()}
    meta[STATEMENTS_KEY] = [statement.as_dict() for statement in statements]
    return answer


def statement_of(fields: dict[str, str]) -> Statement:
    """A statement back from ``Statement.as_dict`` (what ``meta`` holds)."""
    return Statement(fields["use"], fields["value"] == "y", fields["source"], fields["where"],
                     fields.get("policy"), fields.get("legacy"))


def refusals(uses: tuple[str, ...], answer: dict[str, Statement]) -> list[Statement]:
    """The statements of ``answer`` that refuse one of ``uses`` (REP_CONTENT_USES), in the order of ``uses``."""
    return [answer[use] for use in uses if use in answer and not answer[use].allowed]


def refusal_words(refused: list[Statement]) -> str:
    """``train-ai refused by robots.txt line 4 (Content-Usage: train-ai=n) of the '*' group (line 1)``; a TDMRep
    statement's policy follows it (``; policy https://...``)."""
    return "; ".join(f"{statement.use} refused by {statement.source} {statement.where}"
                     + (f"; policy {statement.policy}" if statement.policy else "") for statement in refused)


class Usage:
    def __init__(self, config: Config, stats: StatsCollector) -> None:
        self.uses = config.content_uses  # REP_CONTENT_USES (config/uses.py)
        self.legacy = config.usage_legacy_labels
        self.discovery = config.usage_discovery
        self.stats = stats
        self._legacy_said: set[str] = set()  # origins whose legacy labels were said (once each)

    def answer(self, preferences: Mapping[str, Preference], state: OriginState | None,
               url: str) -> tuple[list[Statement], dict[str, Statement], list[Statement]]:
        """What ``url``'s opt-outs known before download say, without a side effect: (every statement, the combined
        answer, the statements refusing a use of REP_CONTENT_USES that forbid the request: ``[]`` when none refuses,
        or REP_USAGE_DISCOVERY downloads it for its links)."""
        statements = [statement for preference in preferences.values()
                      for statement in from_preference(preference, legacy_labels=self.legacy)]
        if state is not None and state.tdm is not None:
            statements += tdmrep.statements(state, url)
        answer = combine(statements) if statements else {}
        refused = refusals(self.uses, answer) if answer else []
        return statements, answer, [] if self.discovery else refused

    def record(self, request: Request, preferences: Mapping[str, Preference], state: OriginState | None,
               statements: list[Statement], answer: dict[str, Statement], spider: Any) -> None:
        """Put ``answer`` (``answer``'s reading) in ``request``'s meta and count it: its refusals, and, for a request
        that is sent, each use's answer (REP_USAGE_DISCOVERY: a refused one is sent for its links only)."""
        if state is not None:
            self._say_legacy(state.origin, preferences, spider)
        put_answer(request.meta, statements, answer)
        refused = refusals(self.uses, answer) if answer else []
        for statement in refused:
            self.stats.inc_value(f"rep/usage/refused/{statement.use}")
        if refused and not self.discovery:
            return
        if refused:
            request.meta[DISCOVERY_KEY] = refusal_words(refused)
            self.stats.inc_value("rep/usage/discovery")
        for use, statement in answer.items():
            self.stats.inc_value(f"rep/usage/{use}/{'y' if statement.allowed else 'n'}")

    def _say_legacy(self, origin: str, preferences: Mapping[str, Preference], spider: Any) -> None:
        """Once per origin: the labels of earlier AIPREF drafts its robots.txt states, and how they are read."""
        legacy = [preference for use, preference in preferences.items() if use in LEGACY_LABELS]
        if not legacy or origin in self._legacy_said:
            return
        self._legacy_said.add(origin)
        for preference in legacy:
            self.stats.inc_value(f"rep/usage/legacy_labels/{preference.use}")
        how = ("an n of one that implies AI training is read as train-ai=n (REP_USAGE_LEGACY_LABELS)" if self.legacy
               else "not read as any current use (REP_USAGE_LEGACY_LABELS = False)")
        logger.warning("%s/robots.txt states usage labels draft-ietf-aipref-vocab-08 dropped: %s; %s", origin,
                       "; ".join(str(preference) for preference in legacy), how, extra={"spider": spider})
