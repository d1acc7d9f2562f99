"""Finding the deciding rule of a group for a path (SPEC 7.4) without scanning every rule.

Every rule gets a rank: its position when the rules are sorted by how strongly they decide (priority, then allow
over disallow, then earliest line, then first given), so "the deciding rule" is "the matching rule of highest
rank" and comparing two rules is comparing two ints. A group of distinct plain prefixes only (most groups) is not
sorted: the longest of them that matches decides, so its rules keep the order given as ranks and are never compared.

The rules are then split by the canonical shape of their pattern (see :class:`~._pattern.Shape`):

* plain prefixes (``/shop``, also ``/shop*``): keys of a :class:`PrefixTable`, each with the best rank among that
  key and every shorter key that is a prefix of it, so one longest-prefix query answers for all of them, in
  O(log n) whatever their number;
* exact patterns (``/shop$``): a dict from the anchored text to its best rank;
* wildcard patterns: a :class:`WildcardIndex`, consulted only when it holds a rank above the best plain or exact
  match. Those it files by their first piece (``/shop/*.pdf``) are keys of the same prefix table, each key
  linked to the nearest key on its chain of prefixes that has such a bucket: the same ``bisect`` finds them.

Worst case of one decision: O(log n) for the plain and exact rules, plus the wildcard candidates, each at most
O(len(pattern) * len(path)).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from itertools import compress, repeat
from operator import ge, gt, itemgetter

from ._index_prefix import prefix_parents
from ._index_wild import WildcardIndex
from ._pattern import Shape, matches, shape_of
from ._rules import Rule


class RuleIndex:
    """The rules of one (merged) group, ready to decide paths.

    Contract: ``best(path)`` returns the rule that decides ``path`` per SPEC 7.4, or None when no rule matches:
    the matching rule with the highest priority (longest pattern); on equal priority an allow beats a disallow;
    among equals of the same kind the earliest line wins (as Google's matcher, which keeps the first it sees).
    """

    __slots__ = (
        "_buckets",
        "_by_rank",
        "_exact",
        "_first_bucket",
        "_keys",
        "_next_bucket",
        "_parents",
        "_plain",
        "_wild",
        "_wild_top",
        "allows",
        "patterns",
    )

    def __init__(self, rules: Iterable[Rule]) -> None:
        self._by_rank: list[Rule] | None = ranked(rules)
        allows: list[bool] = list(map(_allow_of, self._by_rank))
        allows.append(True)
        self._build(list(map(_pattern_of, self._by_rank)), allows)

    @classmethod
    def of_ranked(cls, patterns: Sequence[str], allows: list[bool]) -> RuleIndex:
        """The index of patterns already in rank order (``ranked``), with their ``allows`` (see the attribute).
        ``best`` is then unavailable: the caller, which keeps its rules packed, maps ranks to rules itself."""
        index = cls.__new__(cls)
        index._by_rank = None
        index._build(patterns, allows)
        return index

    def _build(self, patterns: Sequence[str], allows: list[bool]) -> None:
        self.patterns = patterns
        """Per rank, the rule's pattern."""
        self.allows = allows
        """Per rank, whether that rule allows; one more entry, True, at the end: ``allows[rank(path)]`` decides."""
        plain: dict[str, int] = {}
        exact: dict[str, int] = {}
        wild: dict[Shape, int] = {}
        if plain_only := _plain_only(patterns):
            plain = dict(zip(patterns, range(len(patterns)), strict=True))  # C-level; a later rank is a better rule
        else:
            for rank, pattern in enumerate(patterns):  # ascending rank: a later write is a better rule
                if "*" in pattern:
                    shape = shape_of(pattern)
                    if shape.rest:
                        wild[shape] = rank
                    elif shape.anchored:
                        exact[shape.first] = rank
                    else:
                        plain[shape.first] = rank
                elif pattern[-1] == "$":
                    exact[pattern[:-1]] = rank
                else:
                    plain[pattern] = rank
        self._exact = exact
        self._wild = WildcardIndex(wild) if wild else _NO_WILDCARDS
        by_first = self._wild.by_first
        # The keys of a prefix table (sorted, each with its parent, as in PrefixTable), with, per key (lists parallel
        # to the keys), the best plain rank on its chain of prefixes and the nearest key on that chain (itself
        # included) with a wildcard bucket; -1 for none. A parent comes before its children: its values are final.
        self._keys = keys = sorted(plain.keys() | by_first.keys() if by_first else plain)
        self._parents = parents = prefix_parents(keys)
        self._first_bucket = first_bucket = [-1] * len(keys)
        if not by_first:
            self._plain = best_plain = list(map(plain.__getitem__, keys))  # every key is a plain one
            self._buckets, self._next_bucket, self._wild_top = {}, {}, self._wild.top
        else:
            self._plain = best_plain = list(map(plain.get, keys, repeat(-1)))
            self._buckets = {bisect_left(keys, key): bucket for key, bucket in by_first.items()}
            for i in self._buckets:
                first_bucket[i] = i
        # Nested keys: each takes what its parent (already final) has. Not when the keys are plain prefixes only: the
        # longest matching key decides (its pattern is longer than its parent's), whatever their ranks.
        if not plain_only and max(parents, default=-1) >= 0:
            for i in compress(range(len(keys)), map(ge, parents, repeat(0))):
                parent = parents[i]
                if best_plain[parent] > best_plain[i]:
                    best_plain[i] = best_plain[parent]
                if first_bucket[i] < 0:
                    first_bucket[i] = first_bucket[parent]
        if by_first:
            self._next_bucket = {i: first_bucket[parents[i]] if parents[i] >= 0 else -1 for i in self._buckets}
            self._wild_top = max(self._wild.top, max(bucket[0][0] for bucket in by_first.values()))

    def best(self, path: str) -> Rule | None:
        """The rule deciding ``path`` (SPEC 7.4), None when no rule matches it. Only for an index of rules."""
        assert self._by_rank is not None, "an index of_ranked patterns has no rules"
        rank = self.rank(path)
        return self._by_rank[rank] if rank >= 0 else None

    def rank(self, path: str) -> int:
        """The rank of the rule deciding ``path``, -1 when no rule matches it.

        On every decision's path, so ``PrefixTable.longest`` is inlined: one ``bisect``, then up the parents.
        """
        keys = self._keys
        i = bisect_right(keys, path) - 1
        if i >= 0 and not path.startswith(keys[i]):
            parents = self._parents
            i = parents[i]
            while i >= 0 and not path.startswith(keys[i]):
                i = parents[i]
        if i >= 0:
            rank = self._plain[i]
            bucket = self._first_bucket[i]
        else:
            rank = bucket = -1
        if self._exact:
            exact = self._exact.get(path, -1)
            if exact > rank:
                rank = exact
        if self._wild_top > rank:
            while bucket >= 0:  # scan() inlined: the buckets of the keys that are prefixes of the path
                for candidate, piece, shape in self._buckets[bucket]:
                    if candidate <= rank:
                        break
                    if piece in path and shape.matches(path):
                        rank = candidate
                        break
                bucket = self._next_bucket[bucket]
            if self._wild.top > rank:
                rank = self._wild.best(path, rank)
        return rank


_NO_WILDCARDS = WildcardIndex({})  # shared by the many groups without wildcard rules; never changes


def _plain_only(patterns: Sequence[str]) -> bool:
    """Whether every pattern is a plain prefix (no ``*``, no ``$``): one C-level step."""
    joined = "".join(patterns)
    return "*" not in joined and "$" not in joined


def scan_rank(patterns: Sequence[str], path: str) -> int:
    """``RuleIndex.of_ranked(patterns, ...).rank(path)`` without building the index: every pattern tried once
    (``_pattern.matches``), so O(len(path)) per plain pattern and the shape bound per wildcard one. Cheaper than a
    build when a group decides only a few paths (``_compact.COLD_DECISIONS``)."""
    if _plain_only(patterns):  # in ``ranked``'s order: the longest matching prefix decides (equal ones: the later)
        best = size = -1
        for rank, pattern in enumerate(patterns):
            if len(pattern) >= size and path.startswith(pattern):
                best, size = rank, len(pattern)
        return best
    for rank in range(len(patterns) - 1, -1, -1):  # ascending strength: the first match from the top decides
        if matches(patterns[rank], path):
            return rank
    return -1


def ranked(rules: Iterable[Rule]) -> list[Rule]:
    """``rules`` in an order whose positions are their ranks: as given when they are distinct plain prefixes (see
    the module docstring), else by ascending strength (SPEC 7.4), the last one deciding over all.

    Put in file order first (a group's rules come in it; rules given otherwise are sorted by line), then sorted by
    descending priority and allow bit, then reversed: the sort is stable, so among equals the earliest line (and on
    one line the first given) ends up with the higher rank."""
    by_rank = list(rules)
    patterns = list(map(_pattern_of, by_rank))
    if _plain_only(patterns) and len(set(patterns)) == len(patterns):
        return by_rank
    lines = list(map(_line_of, by_rank))
    if any(map(gt, lines, lines[1:])):
        by_rank.sort(key=_line_of)
    by_rank.sort(key=_strength, reverse=True)
    by_rank.reverse()
    return by_rank


def _strength(rule: Rule) -> int:
    """SPEC 7.4 but for the line: longer pattern, then allow over disallow, as one int (ints sort faster than
    tuples; tuple indexes are read faster than a named tuple's fields)."""
    return (len(rule[1]) << 1) + rule[0]


_allow_of, _pattern_of, _line_of = itemgetter(0), itemgetter(1), itemgetter(2)  # Rule's fields, as C-level getters
