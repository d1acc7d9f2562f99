"""Why a spider yields nothing: what robots.txt stopped, said at spider close (logger ``scrapy_rep.middleware``).

- WARNING, once per origin (at most ``WARNED_ORIGINS`` lines, then one line for the others) when robots.txt forbade
  or dropped *every* request of that origin, at least one forbidden (requests all dropped waiting for robots.txt are
  the waiting log's ``robots.txt unavailable`` WARNING), naming its robots.txt status and the deciding rules;
- WARNING when every *start request* of the crawl was forbidden or dropped, at least one forbidden (a request is a
  start request when its ``meta["depth"]`` is 0 or unset: the spider's start requests, and what they redirect
  to), per origin;
- INFO, the forbidden requests per origin with their top rules (``SUMMARY_ORIGINS`` origins, ``TOP_RULES`` rules each).

In a dry run (REP_ENFORCE = False) the same lines say "would have been". Memory is bounded: at most
``MAX_TRACKED_ORIGINS`` origins are tracked (counts for those with a forbidden or dropped request, a counter per
(origin, rule) for those; an origin whose requests were all allowed is only a set member); later origins are summed
only, and the summary says how many requests were not detailed.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .outcome_log import plural

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scrapy import Request
    from scrapy.statscollectors import StatsCollector

    from ..robots.state import OriginState
    from ..stores import Entry

#: The documented logger of every middleware line (docs/stats.md), whichever module writes it.
logger = logging.getLogger("scrapy_rep.middleware")

MAX_TRACKED_ORIGINS = 10_000
SUMMARY_ORIGINS = 10
TOP_RULES = 3
WARNED_ORIGINS = 10


@dataclass(slots=True)
class _Counts:
    """One origin's decided requests (allowed, forbidden or dropped after a hold) and its robots.txt status."""

    decided: int = 0
    forbidden: int = 0
    dropped: int = 0
    forbidden_by: str = ""  # robots.txt status when it last forbade
    dropped_by: str = ""  # robots.txt status (or "no answer yet") when it last dropped

    @property
    def blocked(self) -> int:
        return self.forbidden + self.dropped


class CloseReport:
    """Counts decisions per origin and start request; ``close`` logs the lines of the module docstring."""

    def __init__(self, stats: StatsCollector, enforce: bool) -> None:
        self.stats = stats
        self.enforce = enforce
        self._origins: dict[str, _Counts] = {}  # tracked origins with a forbidden or dropped request
        self._allowed: set[str] = set()  # tracked origins whose requests were all allowed so far (no counts kept)
        # (origin, the deciding line as matcher.cite words it: "line 2 (Disallow: /) of the '*' group (line 1)")
        # -> forbidden requests
        self._rules: Counter[tuple[str, str]] = Counter()
        self._start = _Counts()  # the crawl's start requests
        self._start_origins: dict[str, _Counts] = {}  # per tracked origin, its blocked start requests only
        self._start_rules: Counter[tuple[str, str]] = Counter()  # the same, start requests only
        self._untracked = 0  # forbidden requests of origins past MAX_TRACKED_ORIGINS

    # -- what the middleware reports -----------------------------------------------------------------------------

    def allowed(self, origin: str, request: Request) -> None:
        tracked = self._origins.get(origin)
        if tracked is not None:
            tracked.decided += 1
        elif len(self._origins) + len(self._allowed) < MAX_TRACKED_ORIGINS:
            self._allowed.add(origin)  # a broad crawl's usual origin: a set member, not two counters (issue 21)
        if is_start_request(request):
            self._start.decided += 1

    def forbidden(self, entry: Entry, request: Request, where: str) -> None:
        counts = self._blocked_counts(entry.origin, request)
        for one in counts:
            one.decided += 1
            one.forbidden += 1
            one.forbidden_by = entry.label
        if entry.origin in self._origins:
            self._rules[(entry.origin, where)] += 1
            if is_start_request(request):
                self._start_rules[(entry.origin, where)] += 1
        else:
            self._untracked += 1

    def dropped(self, state: OriginState, request: Request) -> None:
        """``request`` was dropped (or, in a dry run, would have been) waiting for its origin's robots.txt."""
        entry = state.entry
        for one in self._blocked_counts(state.origin, request):
            one.decided += 1
            one.dropped += 1
            one.dropped_by = entry.label if entry is not None and entry.failing else "no answer yet"

    def _blocked_counts(self, origin: str, request: Request) -> list[_Counts]:
        """The counters a forbidden or dropped ``request`` adds to: its origin's (if tracked), and the start
        requests' if it is one."""
        counts = []
        tracked = self._origins.get(origin)
        if tracked is None:
            was_allowed = origin in self._allowed
            if was_allowed or len(self._origins) + len(self._allowed) < MAX_TRACKED_ORIGINS:
                self._allowed.discard(origin)
                # One allowed request stands for all of them: of an origin's allowed requests only whether there
                # were any is ever read (all blocked or not), never how many.
                tracked = self._origins[origin] = _Counts(decided=int(was_allowed))
        if tracked is not None:
            counts.append(tracked)
        if is_start_request(request):
            counts.append(self._start)
            if tracked is not None:
                counts.append(self._start_origins.setdefault(origin, _Counts()))
        return counts

    # -- at close ------------------------------------------------------------------------------------------------

    def close(self, spider: Any) -> None:
        blocked = [(origin, c) for origin, c in self._origins.items() if _all_blocked(c)]
        blocked.sort(key=lambda item: (-item[1].blocked, item[0]))
        for origin, counts in blocked[:WARNED_ORIGINS]:
            _log(logging.WARNING, spider, "scrapy-rep: every request of %s (%d) %s %s%s", origin, counts.decided,
                 self._verb(), self._how(origin, counts), self._dry())
        if len(blocked) > WARNED_ORIGINS:
            _log(logging.WARNING, spider, "scrapy-rep: every request of %s %s forbidden or dropped by their "
                 "robots.txt%s", plural(len(blocked) - WARNED_ORIGINS, "more origin"), self._verb(), self._dry())
        if blocked:
            self.stats.set_value("rep/report/origins_all_blocked", len(blocked))
        if _all_blocked(self._start):
            self.stats.set_value("rep/report/start_requests_all_blocked", 1)
            _log(logging.WARNING, spider, "scrapy-rep: every start request (%d) %s forbidden or dropped by robots.txt: "
                 "%s%s", self._start.decided, self._verb(), self._start_detail(), self._dry())
        self._summary(spider)

    def _summary(self, spider: Any) -> None:
        per_origin = sorted(((c.forbidden, origin) for origin, c in self._origins.items() if c.forbidden),
                            key=lambda item: (-item[0], item[1]))
        total = sum(count for count, _ in per_origin) + self._untracked
        if not total:
            return
        shown = ", ".join(f"{origin} {count} ({self._rules_of(origin, count)})" for count, origin in
                          per_origin[:SUMMARY_ORIGINS])
        more = len(per_origin) - SUMMARY_ORIGINS
        rest = f", and {plural(more, 'more origin')}" if more > 0 else ""
        if self._untracked:
            self.stats.set_value("rep/report/untracked_forbidden", self._untracked)
            rest += (f"; {self._untracked} of origins past the first {MAX_TRACKED_ORIGINS} not detailed "
                     "(bounded memory)")
        verb = "forbade" if self.enforce else "would have forbidden"
        _log(logging.INFO, spider, "robots.txt %s %s of %s at close%s: %s%s", verb, plural(total, "request"),
             plural(len(per_origin), "origin"), "" if self.enforce else " (dry run)", shown, rest)

    # -- wording -------------------------------------------------------------------------------------------------

    def _how(self, origin: str, counts: _Counts) -> str:
        """``forbidden by its robots.txt (200): line 2 (Disallow: /) of the '*' group (line 1)``, ``dropped waiting
        for its robots.txt (503)``, or both, with their counts."""
        forbidden = f"forbidden by its robots.txt ({counts.forbidden_by}): {self._rules_of(origin, counts.forbidden)}"
        dropped = f"dropped waiting for its robots.txt ({counts.dropped_by})"
        if not counts.dropped:
            return forbidden
        if not counts.forbidden:
            return dropped
        return f"forbidden or dropped: {counts.forbidden} {forbidden}; {counts.dropped} {dropped}"

    def _rules_of(self, origin: str, total: int = 0, counter: Counter[tuple[str, str]] | None = None) -> str:
        """``line 2 (Disallow: /) of the '*' group (line 1)`` when one rule forbade all ``total``; else ``8 by line 2
        (...) of ..., 4 by line 4 (...) of ...`` (the top ``TOP_RULES``, then ``and N more rules``)."""
        counter = self._rules if counter is None else counter
        rules = sorted(((count, where) for (key, where), count in counter.items() if key == origin),
                       key=lambda item: (-item[0], item[1]))
        if len(rules) == 1 and rules[0][0] == total:
            return rules[0][1]
        text = ", ".join(f"{count} by {where}" for count, where in rules[:TOP_RULES])
        return text + (f" and {plural(len(rules) - TOP_RULES, 'more rule')}" if len(rules) > TOP_RULES else "")

    def _start_detail(self) -> str:
        ranked = sorted(self._start_origins.items(), key=lambda item: (-item[1].blocked, item[0]))
        parts = []
        for origin, counts in ranked[:SUMMARY_ORIGINS]:
            rules = self._rules_of(origin, counts.forbidden, self._start_rules)
            words = [f"{counts.forbidden} forbidden ({counts.forbidden_by}: {rules})"] if counts.forbidden else []
            if counts.dropped:
                words.append(f"{counts.dropped} dropped waiting for robots.txt ({counts.dropped_by})")
            parts.append(f"{origin} {', '.join(words)}")
        more = len(ranked) - SUMMARY_ORIGINS
        return ", ".join(parts) + (f" and {plural(more, 'more origin')}" if more > 0 else "") or "origins not tracked"

    def _verb(self) -> str:
        return "was" if self.enforce else "would have been"

    def _dry(self) -> str:
        return "" if self.enforce else " (dry run, REP_ENFORCE = False: all were sent)"


def _all_blocked(counts: _Counts) -> bool:
    """Every decided request was stopped, at least one by a rule (an origin whose requests were all dropped waiting
    for robots.txt is already reported by the waiting log's ``robots.txt unavailable`` WARNING)."""
    return counts.forbidden > 0 and counts.blocked == counts.decided


def is_start_request(request: Request) -> bool:
    """A start request (or one it redirected to): no depth yet, or depth 0 (DepthMiddleware)."""
    return bool(request.meta.get("depth", 0) == 0)




def _log(level: int, spider: Any, message: str, *args: Any) -> None:
    logger.log(level, message, *args, extra={"spider": spider})


def origins_at_close(states: Iterable[OriginState], stats: StatsCollector, spider: Any) -> None:
    """The origins held at close by state: a ``rep/origins/<state>`` stat each and one INFO line."""
    counts = Counter(state.state.value for state in states)
    for name, count in counts.items():
        stats.set_value(f"rep/origins/{name}", count)
    summary = ", ".join(f"{count} {name}" for name, count in sorted(counts.items())) or "none"
    logger.info("robots.txt origins at close: %s", summary, extra={"spider": spider})
