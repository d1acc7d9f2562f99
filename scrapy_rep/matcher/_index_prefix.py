"""Which of a fixed set of strings are prefixes of a text, found with ``bisect`` instead of a scan."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar

V = TypeVar("V")


class PrefixTable(Generic[V]):
    """Strings (keys) with a value each, queried for the keys that are prefixes of a text.

    The keys are kept sorted, each with the index of its parent: the longest other key that is a prefix of it.
    The longest key that is a prefix of a text is the text's sorted predecessor or one of that predecessor's
    ancestors (any key between a prefix K of the text and the text itself starts with K), so a query is one
    C-level ``bisect`` and, when the predecessor is not a prefix, a walk up its parents: O(log n + d) ``startswith``
    calls, d being the nesting depth of the keys (at most the text's length, usually 0 or 1).
    """

    __slots__ = ("_keys", "_parents", "values")

    def __init__(self, entries: Mapping[str, V]) -> None:
        self._keys = sorted(entries)
        self.values = [entries[key] for key in self._keys]
        self._parents = _parents(self._keys)

    def longest(self, text: str) -> int:
        """The index (into ``values``) of the longest key that is a prefix of ``text``; -1 if there is none."""
        keys, parents = self._keys, self._parents
        i = bisect_right(keys, text) - 1
        while i >= 0 and not text.startswith(keys[i]):
            i = parents[i]
        return i

    def parent(self, index: int) -> int:
        """The index of the longest key that is a proper prefix of key ``index``; -1 if there is none."""
        return self._parents[index]

    def chain(self, text: str) -> Iterator[V]:
        """The values of every key that is a prefix of ``text``, longest key first."""
        parents, values = self._parents, self.values
        i = self.longest(text)
        while i >= 0:
            yield values[i]
            i = parents[i]


def _parents(keys: list[str]) -> list[int]:
    """For sorted ``keys``, the index of each key's longest proper-prefix key (-1 if none).

    In sorted order the keys starting with a key K directly follow K, so a stack of the current chain of nested
    keys gives every parent in one pass.
    """
    parents: list[int] = []
    stack: list[int] = []
    for i, key in enumerate(keys):
        while stack and not key.startswith(keys[stack[-1]]):
            stack.pop()
        parents.append(stack[-1] if stack else -1)
        stack.append(i)
    return parents
