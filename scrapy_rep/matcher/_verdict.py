"""The answer to "may this agent fetch this URL, and why" (SPEC 7.4), as ``Robots`` and ``AgentRules`` explain it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ._rules import Rule
from ._usage import Preference

UserAgent = str | Sequence[str]
"""A crawler's product token, or an ordered list of them (SPEC 6.3)."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """The decision for one URL and agent, the rule that made it (None: no rule matched, so allowed), and the usage
    preferences stated for it (only for an allowed URL; ``Robots.usage``)."""

    allowed: bool
    rule: Rule | None
    path: str
    user_agent: UserAgent
    usage: Mapping[str, Preference] = field(default_factory=dict)

    def __str__(self) -> str:
        agent = self.user_agent if isinstance(self.user_agent, str) else "/".join(self.user_agent)
        if self.rule is None:
            verdict = f"allowed: no rule for {agent!r} matches {self.path!r}"
        else:
            kind = "Allow" if self.rule.allow else "Disallow"
            verdict = (f"{'allowed' if self.allowed else 'disallowed'} by line {self.rule.line} ({kind}: "
                       f"{self.rule.written}), the longest rule for {agent!r} matching {self.path!r}")
        if self.usage:
            verdict += "; usage: " + ", ".join(str(preference) for preference in self.usage.values())
        return verdict

    def __repr__(self) -> str:
        return f"<Verdict {self}>"
