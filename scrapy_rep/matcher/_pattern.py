"""Matching one rule pattern against one path (SPEC 7.3), in O(len(pattern) * len(path)) at worst."""

from __future__ import annotations


def matches(pattern: str, path: str) -> bool:
    """Whether ``pattern`` matches a prefix of ``path`` (the whole of it when the pattern ends in ``$``).

    ``*`` matches any run of characters; ``$`` anchors only as the last character, elsewhere it is literal.
    The set of path positions reachable so far is tracked instead of backtracking, so adversarial patterns
    such as ``/*a*a*a*a*b`` cost at most len(pattern) * len(path) steps (SPEC 7.3).
    """
    end = len(path)
    positions = [0]  # sorted, distinct path offsets reachable after the pattern consumed so far
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
