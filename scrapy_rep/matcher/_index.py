"""Finding the deciding rule of a group for a path (SPEC 7.4) without scanning every rule.

Every rule gets a rank: its position when the rules are sorted by how strongly they decide (priority, then allow
over disallow, then earliest line, then first given), so "the deciding rule" is "the matching rule of highest
rank" and comparing two rules is comparing two ints. The rules are then split by the shape of their pattern
(see :class:`~._pattern.Shape`):

* plain prefixes (no ``*`` before literal text, no ``$``): a :class:`PrefixTable` whose value for a key is the
  best rank among that key and every shorter key that is a prefix of it, so one longest-prefix query answers
  for all of them: O(log n) whatever their number;
* exact patterns (``$`` and no ``*``): a dict from the anchored text to its best rank;
* wildcard patterns: each is filed under one literal that any path it matches must contain, the most selective
  of: its first piece (a :class:`PrefixTable` of buckets), its last piece when ``$``-anchored (a table of reversed
  keys, queried with the reversed path), or a trigram of one of its pieces (a dict, queried with the path's
  trigrams). Only the buckets whose literal the path contains are read, each sorted by rank and read only while
  its ranks beat the best found so far; a candidate is then checked with ``Shape.matches``.

Worst case of one decision: O(log n) for the plain and exact rules, plus the wildcard candidates, each at most
O(len(pattern) * len(path)).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ._index_prefix import PrefixTable
from ._pattern import Shape, shape_of
from ._rules import Rule

_GRAM = 3  # trigram keys: long enough to be selective, short enough that most wildcard pieces have one
_Bucket = list[tuple[int, Shape]]  # wildcard shapes with their rank, highest rank first


class RuleIndex:
    """The rules of one (merged) group, ready to decide paths.

    Contract: ``best(path)`` returns the rule that decides ``path`` per SPEC 7.4, or None when no rule matches:
    the matching rule with the highest priority (longest pattern); on equal priority an allow beats a disallow;
    among equals of the same kind the earliest line wins (as Google's matcher, which keeps the first it sees).
    """

    __slots__ = ("_by_grams", "_by_prefix", "_by_rank", "_by_suffix", "_exact", "_plain", "_wild_top")

    def __init__(self, rules: Iterable[Rule]) -> None:
        given = list(rules)
        order = sorted(range(len(given)), key=lambda i: (given[i].priority, given[i].allow, -given[i].line, -i))
        self._by_rank = [given[i] for i in order]
        plain: dict[str, int] = {}
        exact: dict[str, int] = {}
        wild: dict[Shape, int] = {}
        for rank, rule in enumerate(self._by_rank):  # ascending rank: a later write is a better rule
            shape = shape_of(rule.pattern)
            if shape.rest:
                wild[shape] = rank
            elif shape.anchored:
                exact[shape.first] = rank
            else:
                plain[shape.first] = rank
        self._plain = _best_of_chains(PrefixTable(plain))
        self._exact = exact
        self._wild_top = max(wild.values(), default=-1)
        prefix, suffix, grams = _file_wildcards(wild)
        self._by_prefix = PrefixTable(prefix)
        self._by_suffix = PrefixTable(suffix)
        self._by_grams = grams

    def best(self, path: str) -> Rule | None:
        """The rule deciding ``path`` (SPEC 7.4), None when no rule matches it."""
        i = self._plain.longest(path)
        rank = self._plain.values[i] if i >= 0 else -1
        rank = max(rank, self._exact.get(path, -1))
        if self._wild_top > rank:
            rank = self._best_wildcard(path, rank)
        return self._by_rank[rank] if rank >= 0 else None

    def _best_wildcard(self, path: str, rank: int) -> int:
        """The best rank among ``rank`` and the wildcard rules matching ``path``."""
        for bucket in self._by_prefix.chain(path):
            rank = _scan(bucket, path, rank)
        for bucket in self._by_suffix.chain(path[::-1]):
            rank = _scan(bucket, path, rank)
        for bucket in self._gram_buckets(path):
            rank = _scan(bucket, path, rank)
        return rank

    def _gram_buckets(self, path: str) -> Iterator[_Bucket]:
        """The trigram buckets whose trigram occurs in ``path``.

        Testing each indexed trigram against the path is cheaper than listing the path's trigrams while there
        are fewer of them than path characters; either way the cost is O(min(trigrams, len(path))) lookups.
        """
        grams = self._by_grams
        if len(grams) <= len(path):
            return (bucket for gram, bucket in grams.items() if gram in path)
        found = {path[i : i + _GRAM] for i in range(len(path) - _GRAM + 1)}
        return (grams[gram] for gram in found & grams.keys())


def _scan(bucket: _Bucket, path: str, rank: int) -> int:
    """The best rank among ``rank`` and the shapes of ``bucket`` matching ``path``; stops at the first match."""
    for candidate, shape in bucket:
        if candidate <= rank:
            break
        if shape.matches(path):
            return candidate
    return rank


def _best_of_chains(table: PrefixTable[int]) -> PrefixTable[int]:
    """Replace each key's rank with the best rank among the key and all its prefix keys (parents come first)."""
    values = table.values
    for i in range(len(values)):
        parent = table.parent(i)
        if parent >= 0 and values[parent] > values[i]:
            values[i] = values[parent]
    return table


def _file_wildcards(
    wild: dict[Shape, int],
) -> tuple[dict[str, _Bucket], dict[str, _Bucket], dict[str, _Bucket]]:
    """File each wildcard shape under its most selective literal: by first piece, by reversed anchored last piece,
    or by its rarest trigram (the one fewest shapes contain), favouring the longer literal.

    A shape with no literal of 3 characters or more stays under its (short, possibly empty) first piece; such
    patterns are short, hence of low priority, and skipped as soon as a longer rule matched.
    """
    prefix: dict[str, _Bucket] = {}
    suffix: dict[str, _Bucket] = {}
    grams: dict[str, _Bucket] = {}
    gram_counts: dict[str, int] = {}
    shape_grams = {shape: _trigrams(shape) for shape in wild}
    for found in shape_grams.values():
        for gram in found:
            gram_counts[gram] = gram_counts.get(gram, 0) + 1
    for shape, rank in wild.items():
        tail = len(shape.rest[-1]) if shape.anchored else 0
        found = shape_grams[shape]
        if max(len(shape.first), tail) < _GRAM and found:
            key = min(sorted(found), key=gram_counts.__getitem__)
            grams.setdefault(key, []).append((rank, shape))
        elif tail > len(shape.first):
            suffix.setdefault(shape.rest[-1][::-1], []).append((rank, shape))
        else:
            prefix.setdefault(shape.first, []).append((rank, shape))
    for buckets in (prefix, suffix, grams):
        for bucket in buckets.values():
            bucket.sort(reverse=True, key=lambda entry: entry[0])
    return prefix, suffix, grams


def _trigrams(shape: Shape) -> set[str]:
    """Every trigram of every literal piece of ``shape``: each occurs in any path the shape matches."""
    return {piece[i : i + _GRAM] for piece in (shape.first, *shape.rest) for i in range(len(piece) - _GRAM + 1)}
