"""Matching one rule pattern against one path (SPEC 7.3), in O(len(pattern) * len(path)) at worst.

A pattern is read once into its canonical :class:`Shape`: the literal pieces between ``*`` and whether a final
``$`` anchors it. Matching a shape is a greedy left-to-right search of its pieces with ``str.find`` (C-level, no
backtracking): placing every piece at its leftmost possible position leaves the most room for the pieces after
it, so greedy placement finds a match whenever one exists. With an anchor, the last piece can only sit at the end
of the path, which ``endswith`` checks after the other pieces were placed. Each ``find`` costs at most
len(piece) * len(path), hence the bound; adversarial patterns such as ``/*a*a*a*a*b`` stay cheap.
"""

from __future__ import annotations

from typing import NamedTuple


class Shape(NamedTuple):
    """The canonical form of a pattern: equal shapes match exactly the same paths (SPEC 7.3).

    A named tuple (not a frozen dataclass) because indexes create one per wildcard rule and tuples are built
    several times faster; equality and hashing are the tuple's.

    ``first`` is the literal text before the first ``*`` (every matched path starts with it); ``rest`` are the
    non-empty literal pieces after it, in order, each preceded by a ``*``; ``anchored`` means the last piece must end
    the path. Trailing ``*`` and empty pieces are dropped (``/fish*`` is ``/fish``, ``/example*$`` is ``/example``,
    ``/a**b`` is ``/a*b``), so ``rest == ()`` means "starts with ``first``" (or "equals ``first``" when anchored).
    """

    first: str
    rest: tuple[str, ...]
    anchored: bool

    def matches(self, path: str) -> bool:
        """Whether this shape matches ``path`` (a prefix of it, or all of it when anchored)."""
        if not path.startswith(self.first):
            return False
        rest = self.rest
        if not rest:
            return not self.anchored or len(path) == len(self.first)
        pos = len(self.first)
        floating = rest[:-1] if self.anchored else rest
        for piece in floating:
            pos = path.find(piece, pos)
            if pos < 0:
                return False
            pos += len(piece)
        if self.anchored:
            last = rest[-1]
            return len(path) - len(last) >= pos and path.endswith(last)
        return True


def shape_of(pattern: str) -> Shape:
    """The canonical shape of ``pattern``: ``$`` anchors only as the last character, elsewhere it is literal.

    Made for every wildcard rule when an index is built, so the tuple is made by ``tuple.__new__`` (C) rather than
    the named tuple's Python-level ``__new__``.
    """
    anchored = pattern[-1:] == "$"
    pieces = (pattern[:-1] if anchored else pattern).split("*")
    if anchored and len(pieces) > 1 and not pieces[-1]:
        anchored = False  # `X*$` matches whatever starts with X, as `X` does (SPEC 7.3)
    rest = pieces[1:]
    return _new_shape(Shape, (pieces[0], tuple(filter(None, rest)) if "" in rest else tuple(rest), anchored))


_new_shape = tuple.__new__


def matches(pattern: str, path: str) -> bool:
    """Whether ``pattern`` matches a prefix of ``path`` (the whole of it when the pattern ends in ``$``)."""
    if "*" not in pattern:
        if pattern.endswith("$"):
            return path == pattern[:-1]
        return path.startswith(pattern)
    return shape_of(pattern).matches(path)
