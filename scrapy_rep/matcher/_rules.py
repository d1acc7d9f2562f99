"""The units the parser hands to the matcher (one allow/disallow rule of a group), the group a crawler obeys, and
THE way every message cites a line of robots.txt (``cite``)."""

from __future__ import annotations

from bisect import bisect_right
from typing import NamedTuple


class Rule(NamedTuple):
    """An ``allow`` or ``disallow`` line with a non-empty pattern (SPEC 5.4).

    A named tuple (immutable, as a frozen dataclass would be) because a parse creates one per rule line and
    tuples are built several times faster.

    ``pattern`` is what is compared: the value with non-ASCII octets percent-encoded and existing escapes
    upper-cased (SPEC 7.2), so it is pure ASCII and its length is its priority in bytes (SPEC 7.4).
    ``written`` is the value as it stands in the file, for explanations; ``line`` is 1-based.
    """

    allow: bool
    pattern: str
    line: int
    written: str

    @property
    def priority(self) -> int:
        """SPEC 7.4: the longest matching pattern wins."""
        return len(self.pattern)

    @property
    def directive(self) -> str:
        """``Allow`` or ``Disallow``: the directive as messages name it."""
        return "Allow" if self.allow else "Disallow"


class AgentGroup(NamedTuple):
    """The group a crawler obeys for one robots.txt (SPEC 6.2/6.3): exactly one per crawler and file, or none.

    ``token``: the user-agent token it was chosen by, lower-cased as groups are matched (``"*"``: the global groups,
    used only when no group names any of the crawler's tokens). ``lines``: for each group of that token in file order
    (several are merged into one, SPEC 6.2), the line of its first user-agent line naming the token (for ``*``: its
    first ``*`` line); never empty. Made once per crawler and file (``Robots.compact``, ``Robots.explain``), never per
    decision.
    """

    token: str
    lines: tuple[int, ...]

    def line_of(self, line: int) -> int:
        """The user-agent line (of ``lines``) of the merged group holding file line ``line`` (a rule or a usage line
        of this group): the last group starting before it, as a group's user-agent lines precede its other lines."""
        return self.lines[max(bisect_right(self.lines, line) - 1, 0)]

    def __str__(self) -> str:
        """``the 'newbiebot' group (line 5)``; merged: ``the 'newbiebot' groups (lines 5, 12)``."""
        if len(self.lines) == 1:
            return f"the {self.token!r} group (line {self.lines[0]})"
        return f"the {self.token!r} groups (lines {', '.join(map(str, self.lines))})"


def cite(line: int, key: str, written: str, group: AgentGroup | None) -> str:
    """A line of robots.txt that decided, as every message shows it (crawl log, IgnoreRequest, close report, CLI,
    ``Verdict``, ``Preference``): ``line 6 (Disallow: /private/) of the 'newbiebot' group (line 5)``.

    ``key`` is the directive as messages name it (``Disallow``, ``Allow``, ``Content-Usage``, ``Content-Signal``),
    ``written`` the value as the file has it; ``group``, the crawler's, names the (merged) group holding ``line``;
    None only where no crawler is known (the line alone is cited then).
    """
    text = f"line {line} ({key}: {written})"
    if group is None:
        return text
    return f"{text} of the {group.token!r} group (line {group.line_of(line)})"
