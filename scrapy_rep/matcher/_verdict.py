"""The answer to "may this agent fetch this URL, and why" (SPEC 7.4), as ``Robots`` and ``AgentRules`` explain it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ._rules import AgentGroup, Rule, cite
from ._usage import Preference

UserAgent = str | Sequence[str]
"""A crawler's product token, or an ordered list of them (SPEC 6.3)."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """The decision for one URL and agent, the rule that made it (None: no rule matched, so allowed), the usage
    preferences stated for it (only for an allowed URL; ``Robots.usage``) and the group the agent obeys (SPEC 6.2/6.3;
    None: no group names its tokens and there is no ``*`` group, so nothing is disallowed)."""

    allowed: bool
    rule: Rule | None
    path: str
    user_agent: UserAgent
    usage: Mapping[str, Preference] = field(default_factory=dict)
    group: AgentGroup | None = None

    @property
    def reason(self) -> str:
        """Why, in the words every message uses (``cite``): ``line 6 (Disallow: /private/) of the 'newbiebot' group
        (line 5)``; ``no rule of the 'newbiebot' group (line 5) matches``; ``no group names 'NewbieBot' or '*'``."""
        if self.rule is not None:
            return cite(self.rule.line, self.rule.directive, self.rule.written, self.group)
        if self.group is not None:
            return f"no rule of {self.group} matches"
        tokens = [self.user_agent] if isinstance(self.user_agent, str) else list(self.user_agent)
        names = [*map(repr, tokens), "'*'"]
        return f"no group names {' or '.join([', '.join(names[:-1]), names[-1]] if tokens else names)}"

    def __str__(self) -> str:
        agent = self.user_agent if isinstance(self.user_agent, str) else "/".join(self.user_agent)
        if self.rule is not None:
            verdict = (f"{'allowed' if self.allowed else 'disallowed'} by {self.reason}, the longest rule for "
                       f"{agent!r} matching {self.path!r}")
        elif self.group is not None:
            verdict = f"allowed: {self.reason} {self.path!r}"
        else:
            verdict = f"allowed: {self.reason}, so no rule applies to {self.path!r}"
        if self.usage:
            verdict += "; usage: " + ", ".join(str(preference) for preference in self.usage.values())
        return verdict

    def __repr__(self) -> str:
        return f"<Verdict {self}>"
