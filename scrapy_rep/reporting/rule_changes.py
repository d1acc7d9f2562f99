"""What the crawl log says when a refresh of an origin's robots.txt brought a new body: whether the rules the crawl
obeys changed, and which (``matcher.diff_rules``: rules compared by directive and value as written, a rule that only
moved is no change).

Rules changed: one INFO line, ``https://example.com robots.txt changed (version 1a2b3c4d5e6f -> 9f8e7d6c5b4a, fetched
2026-11-28T13:41:33.123Z): for ['examplebot'], rules added: Disallow: /x (line 4); removed: Allow: /y (line 2)``
(at most ``NAMED`` rules named, then ``and N more``), and ``rep/robots/rules_changed``. A new body with the same rules
for the crawl (another group changed, a comment, a rule moved): one DEBUG line and
``rep/robots/body_changed_rules_same``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..matcher import AgentRules, Rule, diff_rules
from ..stores import Entry, iso
from .outcome_log import logger

if TYPE_CHECKING:
    from scrapy.statscollectors import StatsCollector

#: The most rules one line names; the rest are counted (``and 3 more``).
NAMED = 10
RULES_CHANGED = "rep/robots/rules_changed"
RULES_SAME = "rep/robots/body_changed_rules_same"


def say_rule_changes(origin: str, previous: Entry, entry: Entry, old: AgentRules | None, new: AgentRules | None,
                     tokens: tuple[str, ...], stats: StatsCollector, spider: Any) -> None:
    """Log and count what the new body of ``origin``'s robots.txt (``entry``, replacing ``previous``) changed in the
    rules that apply to the crawl's ``tokens``: ``old``/``new``, the two copies' forms for those tokens (None: no
    rules, an allow-all outcome). See the module docstring."""
    diff = diff_rules(old, new)
    what = f"{origin} robots.txt changed ({_versions(previous, entry)})"
    if not diff.changed:
        logger.debug("%s: the rules for %s are the same", what, list(tokens), extra={"spider": spider})
        stats.inc_value(RULES_SAME)
        return
    shown_added = min(len(diff.added), NAMED - min(len(diff.removed), NAMED // 2))
    parts = []
    if diff.added:
        parts.append(f"rules added: {_named(diff.added, shown_added)}")
    if diff.removed:
        removed = _named(diff.removed, NAMED - shown_added)
        parts.append(f"removed: {removed}" if diff.added else f"rules removed: {removed}")
    logger.info("%s: for %s, %s", what, list(tokens), "; ".join(parts), extra={"spider": spider})
    stats.inc_value(RULES_CHANGED)


def _versions(previous: Entry, entry: Entry) -> str:
    """``version 1a2b3c4d5e6f -> 9f8e7d6c5b4a, fetched 2026-11-28T13:41:33.123Z`` (``none``: an entry without a
    version, a failure with no copy)."""
    old = previous.version.id[:12] if previous.version is not None else "none"
    new = entry.version.id[:12] if entry.version is not None else "none"
    fetched = entry.version.fetched_at if entry.version is not None else entry.fetched_at
    return f"version {old} -> {new}, fetched {iso(fetched)}"


def _named(rules: tuple[Rule, ...], count: int) -> str:
    """The first ``count`` rules as ``Disallow: /x (line 4)``, then ``and N more`` for the others."""
    text = ", ".join(f"{rule.directive}: {rule.written} (line {rule.line})" for rule in rules[:count])
    rest = len(rules) - count
    return f"{text} and {rest} more" if rest > 0 else text

