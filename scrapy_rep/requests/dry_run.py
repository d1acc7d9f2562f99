"""REP_ENFORCE = False, the dry run (Heritrix's ``calculateRobotsOnly``): every request is decided, counted and
logged as when enforcing, but none is forbidden, held or dropped; ``rep/dry_run/would_<...>`` say which would have
been, and each also counts as ``rep/requests/allowed`` (sent on), so that SPEC 8.2's sum stays an identity.

- A request still waits for its origin's *first* robots.txt fetch in flight (or a refresh): its answer is needed to
  decide it. Past REP_HOLD_TIMEOUT it goes on (``would_drop``) instead of being dropped.
- A request of an origin whose robots.txt is failing (5xx, 429, network error: SPEC 2.2's temporary full disallow)
  goes on at once (``would_hold``) instead of being held; robots.txt is still retried on its schedule.
- Requests still waiting when the spider closes are dropped as when enforcing (nothing can be sent any more).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..robots.policy import should_hold
from .agents import shown
from .basis import forbidden

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.exceptions import IgnoreRequest
    from scrapy.statscollectors import StatsCollector

    from ..robots.state import OriginState
    from ..stores import Entry

#: The characters of a version id log lines show (as git shortens a commit's).
SHORT_ID = 12
#: The documented logger of every middleware line (docs/stats.md), whichever module writes it.
logger = logging.getLogger("scrapy_rep.middleware")


class DryRun:
    """What the middleware does with a request enforcing would stop: stop it, or (dry run) count it and send it."""

    def __init__(self, stats: StatsCollector, enforce: bool) -> None:
        self.stats = stats
        self.enforce = enforce
        self._not_holding: set[str] = set()  # dry run: failing origins whose requests go on (said once per failure)

    def snapshot_now(self, state: OriginState | None) -> tuple[Entry, Any] | None:
        """Dry run: the origin's robots.txt is failing (it would hold): its (entry, rules) to decide the request
        now, without waiting; None when the request waits (enforcing, or no failing entry)."""
        if self.enforce or state is None or state.entry is None or not should_hold(state.entry):
            return None
        return state.entry, state.rules

    def releases_failing(self, state: OriginState, spider: Any) -> bool:
        """An origin's robots.txt failed (SPEC 2.2): its waiters go on in a dry run (INFO once per run of
        failures), else they are held."""
        if self.enforce:
            return False
        if state.origin not in self._not_holding:
            self._not_holding.add(state.origin)
            logger.info("%s robots.txt %s: dry run (REP_ENFORCE = False): its requests would be held; they go on",
                        state.origin, state.entry.label if state.entry else "?", extra={"spider": spider})
        return True

    def recovered(self, state: OriginState) -> None:
        self._not_holding.discard(state.origin)

    def allowed(self, entry: Entry) -> None:
        """Count an allowed (sent) request; in a dry run, one of a failing origin is a would-be hold too."""
        self.stats.inc_value("rep/requests/allowed")
        if not self.enforce and should_hold(entry):
            self.stats.inc_value("rep/dry_run/would_hold")

    def forbid(self, request: Request, entry: Entry, where: str, tokens: tuple[str, ...], spider: Any,
               basis: dict[str, Any], usage: bool = False) -> IgnoreRequest | None:
        """The DEBUG line naming the rule, the tokens obeyed and the robots.txt version; the ``IgnoreRequest`` to
        raise, carrying ``basis`` (the request's ``meta["rep_basis"]``: basis.forbidden); in a dry run the line says
        so and None: it goes on.

        ``where`` is the deciding line as ``matcher.cite`` words it (``Verdict.reason``, ``Preference.where``):
        ``Forbidden by robots.txt: <url> (<origin>/robots.txt line 6 (Disallow: /private/) of the 'newbiebot' group
        (line 5); as ['newbiebot']; version 1a2b3c4d5e6f)``; the exception's message is ``Forbidden by robots.txt:
        <where>`` (the demo report reads it). ``usage``: an opt-out refused a use of REP_CONTENT_USES (``where``:
        usage.refusal_words), said ``Refused for its use``, and counted in ``rep/requests/forbidden/usage`` too.
        """
        what = "Refused for its use" if usage else "Forbidden by robots.txt"
        line = "%s: %s (%s; as %s; version %s)" if usage else "%s: %s (%s/robots.txt %s; as %s; version %s)"
        args = (request.url, where) if usage else (request.url, entry.origin, where)
        version = entry.version.id[:SHORT_ID] if entry.version is not None else "none"
        if self.enforce:
            self.stats.inc_value("rep/requests/forbidden")
            if usage:
                self.stats.inc_value("rep/requests/forbidden/usage")
            logger.debug(line, what, *args, shown(tokens), version, extra={"spider": spider})
            return forbidden(f"{what}: {where}", basis)
        self.stats.inc_value("rep/requests/allowed")
        self.stats.inc_value("rep/dry_run/would_forbid")
        logger.debug(line, f"{what} (dry run, sent anyway)", *args, shown(tokens), version,
                     extra={"spider": spider})
        return None

    def sends_after_timeout(self, request: Request, state: OriginState, spider: Any) -> bool:
        """Dry run: a request whose origin's robots.txt did not answer within REP_HOLD_TIMEOUT goes on, undecided."""
        if self.enforce:
            return False
        self.stats.inc_value("rep/requests/allowed")
        self.stats.inc_value("rep/dry_run/would_drop")
        logger.info("Dropped after waiting for %s robots.txt (timeout, state %s) (dry run, sent anyway): %s",
                    state.origin, state.state.value, request.url, extra={"spider": spider})
        return True


