"""Which of a fixed set of strings are prefixes of a text, found with ``bisect`` instead of a scan."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable


class PrefixTable:
    """Strings (keys), queried for the longest one that is a prefix of a text.

    ``keys`` are sorted; ``parents[i]`` is the index of the longest other key that is a prefix of ``keys[i]``
    (-1 if none), so the keys that are prefixes of a text are the longest one and its chain of parents. Callers
    keep their values in lists parallel to ``keys``. The longest key that is a prefix of a text is the text's
    sorted predecessor or one of that predecessor's ancestors (any key between a prefix K of the text and the
    text itself starts with K), so a query is one C-level ``bisect`` and, when the predecessor is not a prefix,
    a walk up its parents: O(log n + d) ``startswith`` calls, d being the nesting depth of the keys (at most the
    text's length; usually 0 or 1).
    """

    __slots__ = ("keys", "parents")

    def __init__(self, keys: Iterable[str]) -> None:
        self.keys = sorted(set(keys))
        self.parents = prefix_parents(self.keys)

    def longest(self, text: str) -> int:
        """The index of the longest key that is a prefix of ``text``; -1 if there is none."""
        keys, parents = self.keys, self.parents
        i = bisect_right(keys, text) - 1
        while i >= 0 and not text.startswith(keys[i]):
            i = parents[i]
        return i


def prefix_parents(keys: list[str]) -> list[int]:
    """For sorted distinct ``keys``, the index of each key's longest proper-prefix key (-1 if none).

    In sorted order the keys starting with a key K directly follow K, so a key's parent is the key before it (when
    it starts with that key: no longer prefix can sort between them) or one of that key's ancestors; and when no
    key starts with the one before it, no key is a prefix of another (the common case, one C-level pass).
    """
    parents = [-1] * len(keys)
    follows = list(map(str.startswith, keys[1:], keys))  # follows[i - 1]: keys[i] starts with keys[i - 1]
    if not any(follows):
        return parents
    for i, starts in enumerate(follows, 1):
        if starts:
            parents[i] = i - 1
        elif (j := parents[i - 1]) >= 0:
            key = keys[i]
            while j >= 0 and not key.startswith(keys[j]):
                j = parents[j]
            parents[i] = j
    return parents
