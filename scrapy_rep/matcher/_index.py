"""Finding the deciding rule of a group for a path (SPEC 7.4)."""

from __future__ import annotations

from collections.abc import Iterable

from ._pattern import matches
from ._rules import Rule


class RuleIndex:
    """The rules of one (merged) group, ready to decide paths.

    Contract: ``best(path)`` returns the rule that decides ``path`` per SPEC 7.4, or None when no rule matches:
    the matching rule with the highest priority (longest pattern); on equal priority an allow beats a disallow;
    among equals of the same kind the earliest line wins (as Google's matcher, which keeps the first it sees).
    """

    def __init__(self, rules: Iterable[Rule]) -> None:
        self._rules = sorted(rules, key=lambda r: (-r.priority, not r.allow, r.line))

    def best(self, path: str) -> Rule | None:
        for rule in self._rules:
            if matches(rule.pattern, path):
                return rule
        return None
