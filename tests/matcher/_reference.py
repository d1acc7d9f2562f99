"""The reference matcher the fast ones are checked against (test-only)."""

from __future__ import annotations


def reference_matches(pattern: str, path: str) -> bool:
    """Google's ``Matches`` (robots.cc): the set of path positions reachable after each pattern character."""
    end = len(path)
    positions = [0]
    last = len(pattern) - 1
    for i, char in enumerate(pattern):
        if char == "$" and i == last:
            return positions[-1] == end
        if char == "*":
            positions = list(range(positions[0], end + 1))
            continue
        positions = [p + 1 for p in positions if p < end and path[p] == char]
        if not positions:
            return False
    return True
