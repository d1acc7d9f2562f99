"""The unit the parser hands to the matcher: one allow/disallow rule of a group."""

from __future__ import annotations

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
