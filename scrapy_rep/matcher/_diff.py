"""What changed between two versions of a robots.txt, as rules rather than text (``scrapy-rep cache diff``, the crawl
log's line about a refresh that changed the rules).

A rule is compared by its directive and its value as written (``Disallow: /private/``), never by its line: a rule
that only moved is no change. ``diff_rules`` compares the rules that apply to one crawler's tokens (two
``AgentRules``: what the crawl obeys, whichever group they came from); ``diff_robots`` compares two files group by
group, a group known by its user-agent tokens (the product tokens Google reads, lower-cased, ``*`` for the global
group; not their order), the groups of a file naming the same tokens taken together as Google merges them (SPEC 6.2).
Beside the allow/disallow rules it compares each group's ``Crawl-delay``, ``Content-Usage`` and ``Content-Signal``
lines and the file's ``Sitemap`` lines, by value as written too. Lines are grouped as Google's parser groups them
(``_robots._Builder``: rules end the user-agent lines of a group, other lines do not; lines before the first
user-agent line belong to no group). Pure: no I/O; never raises on any bytes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple, TypeVar

from ._agents import extract_user_agent
from ._compact import AgentRules
from ._escape import escape_bytes
from ._parser import MAX_BYTES, parse_directives
from ._rules import Rule


class DirectiveLine(NamedTuple):
    """A line ``diff_robots`` compares beside the rules: a group's ``Crawl-delay``, ``Content-Usage`` or
    ``Content-Signal``, or a file-wide ``Sitemap``; ``written``: its value as in the file; ``line``: 1-based. It
    names its key as ``Rule.directive`` does, so that a change is shown the same way whatever it is."""

    directive: str
    written: str
    line: int


_Change = TypeVar("_Change", bound=Rule | DirectiveLine)


@dataclass(frozen=True, slots=True)
class RuleDiff:
    """The allow/disallow rules one version has and the other has not (by directive and value as written), each
    with its line in the version that has it, in line order."""

    added: tuple[Rule, ...] = ()
    removed: tuple[Rule, ...] = ()

    @property
    def changed(self) -> bool:
        """Whether any rule was added or removed."""
        return bool(self.added or self.removed)


@dataclass(frozen=True, slots=True)
class GroupDiff:
    """What changed in one group between two versions of a file: the lines (``Rule``s and ``DirectiveLine``s) the
    new version has and the old one has not (``added``) and the reverse (``removed``), each in line order.

    ``tokens``: the group's user-agent tokens, lower-cased, in the order the newer file names them (the older's for a
    removed group); ``()`` for the file-wide lines (``Sitemap``). ``in_old``/``in_new``: whether each version has the
    group (a group in one version only has all its lines added, or removed)."""

    tokens: tuple[str, ...]
    in_old: bool
    in_new: bool
    added: tuple[Rule | DirectiveLine, ...] = ()
    removed: tuple[Rule | DirectiveLine, ...] = ()

    @property
    def rules(self) -> RuleDiff:
        """The allow/disallow part of the change."""
        return RuleDiff(_only_rules(self.added), _only_rules(self.removed))


def diff_rules(old: AgentRules | None, new: AgentRules | None) -> RuleDiff:
    """The rules that apply to a crawler in ``new`` and not in ``old`` (added) and the reverse (removed); None: no
    rules (an allow-all outcome). The forms should decide for the same tokens; the groups they come from may differ
    (rules that moved from the ``*`` group to the crawler's own are no change)."""
    before = _first_of_each(old.rules() if old is not None else ())
    after = _first_of_each(new.rules() if new is not None else ())
    return RuleDiff(_missing(after, before), _missing(before, after))


def diff_robots(old: bytes, new: bytes, *, max_bytes: int | None = MAX_BYTES) -> list[GroupDiff]:
    """The groups that changed from ``old`` to ``new`` (robots.txt bodies; each cut at ``max_bytes`` as ``parse``
    cuts it, None: no limit): those of ``new`` in its order, then those only ``old`` has, then the file-wide lines
    (tokens ``()``), each only if something changed. A group added or removed is a change even with no lines (a group
    naming a crawler hides the ``*`` group from it, SPEC 6.3). [] when nothing changed. Never raises."""
    before, after = _read(old, max_bytes), _read(new, max_bytes)
    diffs = []
    for key in [*after.groups, *(key for key in before.groups if key not in after.groups)]:
        old_group, new_group = before.groups.get(key), after.groups.get(key)
        old_lines = _first_of_each(old_group.lines if old_group else ())
        new_lines = _first_of_each(new_group.lines if new_group else ())
        added, removed = _missing(new_lines, old_lines), _missing(old_lines, new_lines)
        if added or removed or old_group is None or new_group is None:
            tokens = tuple((new_group or before.groups[key]).tokens)
            diffs.append(GroupDiff(tokens, old_group is not None, new_group is not None, added, removed))
    old_maps, new_maps = _first_of_each(before.sitemaps), _first_of_each(after.sitemaps)
    maps_added, maps_removed = _missing(new_maps, old_maps), _missing(old_maps, new_maps)
    if maps_added or maps_removed:
        diffs.append(GroupDiff((), True, True, maps_added, maps_removed))
    return diffs


def _first_of_each(lines: Iterable[_Change]) -> dict[tuple[str, str], _Change]:
    """(directive, value as written) -> its first line of ``lines`` (by line number): a rule written twice, or the
    ``/index.html`` extension's second rule, counts once."""
    first: dict[tuple[str, str], _Change] = {}
    for line in sorted(lines, key=lambda line: line.line):
        first.setdefault((line.directive, line.written), line)
    return first


def _missing(these: dict[tuple[str, str], _Change],
             others: dict[tuple[str, str], _Change]) -> tuple[_Change, ...]:
    """The lines of ``these`` whose (directive, value) ``others`` has not, in line order."""
    return tuple(line for key, line in these.items() if key not in others)


def _only_rules(lines: tuple[Rule | DirectiveLine, ...]) -> tuple[Rule, ...]:
    return tuple(line for line in lines if isinstance(line, Rule))


_OTHER_KEYS = {b"crawl-delay": "Crawl-delay", b"content-usage": "Content-Usage", b"content-signal": "Content-Signal"}


@dataclass(slots=True)
class _Group:
    tokens: list[str] = field(default_factory=list)  # lower-cased, first-seen order
    lines: list[Rule | DirectiveLine] = field(default_factory=list)


class _Reader:
    """The ``DirectiveHandler`` that groups a file's lines for ``diff_robots`` as ``_robots._Builder`` groups them,
    the groups naming the same tokens merged (under the set of their tokens)."""

    def __init__(self) -> None:
        self.groups: dict[frozenset[str], _Group] = {}
        self.sitemaps: list[DirectiveLine] = []
        self._open: _Group | None = None  # the group being read (its user-agent lines, then its other lines)
        self._in_rules = False  # a rule was read since the open group's user-agent lines (_Builder's)
        self._read: list[_Group] = []  # the groups of the file in order, before merging

    def user_agent(self, line: int, value: bytes) -> None:
        if self._open is None or self._in_rules:
            self._open = _Group()
            self._read.append(self._open)
            self._in_rules = False
        if value[:1] == b"*" and (len(value) == 1 or value[1:2].isspace()):
            token = "*"
        else:  # latin-1 maps each byte to a character: the product token is its leading ASCII run
            token = extract_user_agent(value.decode("latin-1")).lower()
        if token not in self._open.tokens:
            self._open.tokens.append(token)

    def allow(self, line: int, value: bytes) -> None:
        self._rule(True, line, value)

    def disallow(self, line: int, value: bytes) -> None:
        self._rule(False, line, value)

    def sitemap(self, line: int, value: bytes) -> None:
        if value:
            self.sitemaps.append(DirectiveLine("Sitemap", value.decode("utf-8", "replace"), line))

    def unknown(self, line: int, key: bytes, value: bytes) -> None:
        name = _OTHER_KEYS.get(key.lower())
        if name is not None and self._open is not None:
            self._open.lines.append(DirectiveLine(name, value.decode("utf-8", "replace"), line))

    def _rule(self, allow: bool, line: int, value: bytes) -> None:
        if self._open is None:
            return  # SPEC 6.1: rules before the first user-agent line are ignored
        self._in_rules = True  # even an empty rule ends the user-agent lines
        if value:  # SPEC 5.4
            self._open.lines.append(Rule(allow, escape_bytes(value), line, value.decode("utf-8", "replace")))

    def merged(self) -> _Reader:
        """The groups read, those naming the same tokens merged into the first of them."""
        for group in self._read:
            kept = self.groups.setdefault(frozenset(group.tokens), group)
            if kept is not group:
                kept.lines.extend(group.lines)
        return self


def _read(body: bytes, max_bytes: int | None) -> _Reader:
    data = bytes(body) if max_bytes is None else bytes(body[:max_bytes])
    reader = _Reader()
    parse_directives(data, reader)
    return reader.merged()
