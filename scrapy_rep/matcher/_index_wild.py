"""The wildcard rules of a group, indexed by a literal that every path they match must contain (SPEC 7.3, 7.4).

Each wildcard shape is filed under the most selective literal it has:

* its first piece (``/shop/*.pdf``: the path starts with ``/shop/``): buckets keyed by it, of which a query reads
  only those whose key is a prefix of the path (``RuleIndex`` keeps them in its prefix table);
* its last piece when ``$``-anchored (``/*.pdf$``: the path ends with ``.pdf``): the same with reversed keys,
  queried with the reversed path;
* otherwise one of its pieces (``/*/private/``: the path contains ``/private/``), looked up either by testing the
  piece against the path, one candidate at a time in rank order (when few candidates could beat the best match
  so far), or through rare trigrams of the piece, with the path's own trigrams (when many could): the cost is
  O(min(candidates, len(path))) lookups, a third of len(path) for pieces of 5 characters or more, which are found
  from the trigrams at every third position of the path (see ``_by_rarest_trigrams``).

A shape with no literal of 3 characters or more stays under its (short, possibly empty) first piece: such a
pattern is short, hence of low priority, and is skipped as soon as a longer rule matched. Every bucket is sorted
by rank and read only while its ranks beat the best match so far; a candidate is confirmed by ``Shape.matches``.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Iterator
from itertools import chain
from operator import itemgetter

from ._index_prefix import PrefixTable
from ._pattern import Shape

_GRAM = 3  # trigram keys: long enough to be selective, short enough that most wildcard pieces have one
_STEP = 3  # a path is probed for the long pieces at every third position (see _by_rarest_trigrams; = _GRAM)
# Candidates tested one by one even against a shorter path (at worst 64 C-level `in` tests, a few µs): over the
# corpus, 64 rather than 16 made decisions 5% faster from the first one (fewer files build their trigram buckets) and
# 2% in steady state.
_SCAN_AT_LEAST = 64
Trigram = tuple[str, str, str]  # three characters: ``zip(...)`` lists a text's trigrams in C (``_trigrams``)
# Shapes with their rank and a piece of theirs that a path they match must contain (their longest piece; for the infix
# shapes, the piece they are filed by), highest rank first: ``scan`` tests the piece (C-level ``in``) before the shape.
Bucket = list[tuple[int, str, Shape]]
_rank_of_item = itemgetter(1)  # of a (shape, rank) item


class WildcardIndex:
    """Wildcard shapes with their ranks (higher decides), queried for the best one matching a path.

    The shapes filed by first piece are handed out as ``by_first`` rather than searched here: the caller merges
    them into its own prefix table, so that one ``bisect`` serves plain rules and these buckets alike (see
    ``RuleIndex``). ``best`` searches the others (anchored last piece, infix piece).
    """

    __slots__ = ("_grams", "_infix", "_infix_above", "_suffix", "_suffix_buckets", "_suffix_ends", "_tops", "by_first",
                 "top")

    def __init__(self, shapes: dict[Shape, int]) -> None:
        self.by_first: dict[str, Bucket] = {}
        suffix: dict[str, Bucket] = {}
        infix: Bucket = []
        suffix_top = -1
        # Highest rank first, so that every bucket and the infix list come out in rank order without sorting each.
        for shape, rank in sorted(shapes.items(), key=_rank_of_item, reverse=True):
            first, rest, anchored = shape
            tail = len(rest[-1]) if anchored else 0
            piece = rest[0] if len(rest) == 1 else max(rest, key=len)
            if len(first) < _GRAM <= len(piece) and tail < _GRAM:
                infix.append((rank, piece, shape))
            elif tail > len(first):
                if suffix_top < 0:
                    suffix_top = rank
                key = rest[-1][::-1]
                if key in suffix:
                    suffix[key].append((rank, piece, shape))
                else:
                    suffix[key] = [(rank, piece, shape)]
            elif first in self.by_first:
                self.by_first[first].append((rank, piece, shape))
            else:
                self.by_first[first] = [(rank, piece, shape)]
        self._suffix = PrefixTable(suffix) if suffix else _NO_SUFFIXES  # reversed keys
        self._suffix_buckets = [suffix[key] for key in self._suffix.keys]
        self._suffix_ends = frozenset(key[0] for key in suffix)  # the last characters of the (non-empty) suffixes
        self._infix = infix
        self._infix_above = [-entry[0] for entry in infix]  # ascending: bisect counts the ranks above a rank
        # built on first need: most groups never need it
        self._grams: tuple[dict[Trigram, Bucket], Bucket | dict[Trigram, Bucket]] | None = None
        # The best rank of each structure: a structure is skipped when a better rule already matched.
        self._tops = (suffix_top, infix[0][0] if infix else -1)
        self.top = max(self._tops)

    def best(self, path: str, rank: int) -> int:
        """The best rank among ``rank`` and the shapes not in ``by_first`` that match ``path``."""
        suffix_top, infix_top = self._tops
        if suffix_top > rank and path[-1:] in self._suffix_ends:  # a path can end with a suffix only if its last
            table = self._suffix  # character is one of theirs: one set lookup spares most paths the reversed search
            i = table.longest(path[::-1])
            while i >= 0:
                rank = scan(self._suffix_buckets[i], path, rank)
                i = table.parents[i]
        if infix_top > rank:
            infix = self._infix
            if len(infix) <= _SCAN_AT_LEAST or bisect_left(self._infix_above, -rank) <= max(len(path), _SCAN_AT_LEAST):
                return scan(infix, path, rank)  # few candidates: each piece tested against the path
            grams = self._grams
            if grams is None:
                grams = self._grams = _by_rarest_trigrams(infix)
            # many: those filed under a trigram of the path (dict_keys & iterable probes the dict per trigram
            # instead of building the path's trigram set first). The long pieces are found from the trigrams at
            # every _STEP-th position of the path (see _by_rarest_trigrams), the short ones from all of them.
            sampled, short = grams
            chars = iter(path)  # zip(chars, chars, chars): the trigrams at positions 0, 3, 6..., no slice copied
            for gram in sampled.keys() & zip(chars, chars, chars, strict=False):
                rank = scan(sampled[gram], path, rank)
            if isinstance(short, list):  # few short pieces: each tested against the path
                return scan(short, path, rank)
            for gram in short.keys() & _trigrams(path):
                rank = scan(short[gram], path, rank)
        return rank


_NO_SUFFIXES = PrefixTable(())  # shared by the many indexes without anchored suffixes; never changes


def scan(bucket: Bucket, path: str, rank: int) -> int:
    """The best rank among ``rank`` and the shapes of ``bucket`` matching ``path``, each one's piece first tested with
    ``in`` (C-level) before the whole shape; stops at the first match."""
    for candidate, piece, shape in bucket:
        if candidate <= rank:
            break
        if piece in path and shape.matches(path):
            return candidate
    return rank


def _trigrams(text: str) -> Iterator[Trigram]:
    """The trigrams of ``text``, in order (repeats included)."""
    return zip(text, text[1:], text[2:], strict=False)  # the shorter slices end it


def _by_rarest_trigrams(infix: Bucket) -> tuple[dict[Trigram, Bucket], Bucket | dict[Trigram, Bucket]]:
    """The infix shapes (in rank order) filed under rare trigrams of their piece: (long, short).

    A path is probed at every ``_STEP``-th position only (positions 0, 3, 6...), so a piece of ``_GRAM + _STEP - 1``
    characters or more is filed once per residue class of offsets in the piece: wherever the piece stands in a
    path, one class of its offsets falls on probed positions, and its rarest trigram in that class is probed.
    Shorter pieces are kept as a list, tested one by one, when there are at most ``_SCAN_AT_LEAST`` of them, else
    filed once, under their rarest trigram, and probed at every position. The rarest trigram is the one that occurs
    least often in all the pieces (the first such in the piece, so the buckets do not depend on hashing). Counted and
    chosen by C-level steps (``Counter``, slices, ``min``, ``index``): this is built during a decision, the first one
    that needs it.
    """
    grams_of = [list(_trigrams(piece)) for _, piece, _ in infix]
    rarity = Counter(chain.from_iterable(grams_of)).__getitem__  # occurrences in all the pieces
    long: dict[Trigram, Bucket] = {}
    short_grams: dict[Trigram, Bucket] = {}
    short = [entry for entry in infix if len(entry[1]) < _GRAM + _STEP - 1]
    for entry, grams in zip(infix, grams_of, strict=True):
        counts = list(map(rarity, grams))
        if len(grams) < _STEP:  # a short piece: fewer offsets than classes
            if len(short) <= _SCAN_AT_LEAST:
                continue
            keys, buckets = {grams[counts.index(min(counts))]}, short_grams
        else:  # the rarest of the offsets start, start + _STEP... for each start
            keys, buckets = set(), long
            for start in range(_STEP):
                of_class = counts[start::_STEP]
                keys.add(grams[start + _STEP * of_class.index(min(of_class))])
        for key in keys:
            if key in buckets:
                buckets[key].append(entry)
            else:
                buckets[key] = [entry]
    return long, short if len(short) <= _SCAN_AT_LEAST else short_grams
