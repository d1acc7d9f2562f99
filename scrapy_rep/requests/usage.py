"""Usage preferences of an allowed request (robots.txt's Content-Usage and Content-Signal lines; matcher/_usage.py).

Every allowed request gets ``request.meta["rep_usage"]``: a plain dict, use -> ``"y"`` or ``"n"`` (e.g.
``{"train-ai": "n", "search": "y"}``; ``{}`` when its origin's robots.txt states none), each counted under
``rep/usage/<use>/<y|n>``. Enforcement is opt-in: ``REP_CONTENT_USES`` names the uses this crawl makes of what it
downloads; a request whose preferences refuse one of them is forbidden like a disallowed one (``IgnoreRequest``,
counted as ``rep/requests/forbidden`` and ``rep/usage/refused/<use>``), its log line naming the refusing line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.statscollectors import StatsCollector

    from ..matcher import Preference

#: The request meta key holding the effective preferences (README, "Usage preferences").
META_KEY = "rep_usage"


class Usage:
    def __init__(self, uses: tuple[str, ...], stats: StatsCollector) -> None:
        self.uses = uses  # REP_CONTENT_USES, in the AIPREF vocabulary
        self.stats = stats

    def refusal(self, request: Request, preferences: dict[str, Preference]) -> str | None:
        """Put ``request``'s preferences (``AgentRules.decide``'s) in its meta and count them; the refusing line (for
        the forbidden log line and the close report, cited as rules are: ``line 4 (Content-Usage: train-ai=n) of the
        '*' group (line 1) refuses train-ai``) when they refuse a use of REP_CONTENT_USES, else None."""
        request.meta[META_KEY] = {use: "y" if p.allowed else "n" for use, p in preferences.items()}
        for use, preference in preferences.items():
            self.stats.inc_value(f"rep/usage/{use}/{'y' if preference.allowed else 'n'}")
        refused = [preferences[use] for use in self.uses if use in preferences and not preferences[use].allowed]
        if not refused:
            return None
        for preference in refused:
            self.stats.inc_value(f"rep/usage/refused/{preference.use}")
        return "; ".join(f"{preference.where} refuses {preference.use}" for preference in refused)
