"""The compact decision form of a robots.txt for one crawler: what a broad crawl keeps per origin (SPEC 6-7).

A crawl obeys robots.txt as one agent (its product tokens, SPEC 6.3), so of a parsed file it needs only the rules
of the groups SPEC 6 selects for those tokens, plus the crawl-delay and usage lines of those groups and which groups
they are (``group``, for messages), and the file's ``clean-param`` rules (Yandex's: they apply to every agent; SPEC
5.3, 6.5). ``AgentRules`` keeps exactly that, packed:

* the rules in rank order (``_index.ranked``: positions that order them as SPEC 7.4 decides) as one string of their
  patterns separated by ``"\\n"`` (a pattern never holds a line break: the parser splits lines there; held
  zlib-compressed from ``COMPRESS_PATTERNS_FROM`` characters on, about a third of the size), one byte per
  rule saying whether it allows, and their line numbers as an ``array``'s bytes (2 each when they fit; bytes are no
  object the garbage collector walks, and a broad crawl holds a form per origin); the few values written otherwise
  than their pattern (percent-escaped, ``/index.html`` rules) in a dict;
* the index that decides (``RuleIndex``), built from those patterns at the form's first decision past its first
  ``COLD_DECISIONS`` (which scan the packed patterns: most origins of a broad crawl see a request or two, and a scan
  costs a few microseconds where a build costs ~60) and kept for the most recently built forms, ``HOT_RULES``
  rules in all: a form whose index was let go builds it again at its next decision, from the packed patterns (no
  parsing, no selection);
* the clean-param rules as the ``Robots`` holds them (one shared empty tuple for the many files without any).

Contract: for any URL, ``allowed``, ``explain`` and ``decide`` answer exactly as the ``Robots`` it was made from
answers for the same tokens (``Robots.compact``; asserted over the corpus and the differential tests), hot or cold.
The form holds no sitemaps, other groups, comments or line table: ``Robots`` (a full parse of the body) has those.
"""

from __future__ import annotations

import threading
import zlib
from array import array
from collections import OrderedDict
from collections.abc import Sequence

from . import _urls
from ._clean_param import CleanParam, clean_url
from ._index import RuleIndex, scan_rank
from ._rules import AgentGroup, Rule
from ._urls import decision_path
from ._usage import Preference, UsageIndex
from ._verdict import UserAgent, Verdict

#: The rules held in built indexes by all forms together (about 0.2 KiB each: ~1.8 MiB); past it, the forms built
#: longest ago let theirs go. It holds ~200 of the corpus's forms (48 rules on average), more than a crawl decides for
#: at once; a form over the budget alone stays built. A form let go builds again in ~60 µs (corpus mean), a few
#: percent of a page's processing, so a crawl that keeps coming back to thousands of origins loses little, and a
#: broad crawl's memory per origin does not carry a large fixed cost (50,000 rules, 9 MiB, before issue 21).
HOT_RULES = 10_000
#: Packed patterns this long or longer are held zlib-compressed, level 1: on the corpus a form's 926 bytes of
#: patterns become 319 (a broad crawl keeps a form per origin, its index let go), for ~25 µs once per form; a form
#: that builds its index again decompresses them in ~9 µs.
COMPRESS_PATTERNS_FROM = 128
#: A form's first decisions scan its packed patterns (``_index.scan_rank``); the next builds its index. A broad crawl
#: decides a request or two per origin: on the corpus a scan costs ~4 µs (plus ~9 µs to decompress long patterns),
#: a build ~60 µs (issue 21: building every form's index was 1.2% of a broad crawl's CPU, and its objects GC work).
COLD_DECISIONS = 4

_ALLOW, _DISALLOW = 1, 0
_NO_CLEAN_PARAMS: tuple[CleanParam, ...] = ()  # shared by the forms of files without clean-param rules


class AgentRules:
    """The decisions of one robots.txt for one crawler's tokens; see the module docstring. Made by
    ``Robots.compact(user_agent)``; immutable but for its built index."""

    __slots__ = ("_allows", "_cold", "_index", "_lines", "_patterns", "_usage", "_written", "clean_params",
                 "crawl_delay", "group", "user_agent")

    _patterns: str | bytes  # the patterns joined by "\n"; bytes: zlib-compressed (COMPRESS_PATTERNS_FROM)
    _allows: bytes  # per rank, _ALLOW or _DISALLOW; then _ALLOW for rank -1 (no rule matches), as RuleIndex.allows
    _lines: bytes | None  # per rank, its line (an array's bytes: not an object the GC walks); None: no rule applies
    _written: dict[int, str] | None  # rank -> value as written, where it differs from the pattern
    _index: RuleIndex | None  # built (hot) or not
    _cold: int  # decisions left to scan before the index is built (COLD_DECISIONS)

    def __init__(self, rules: Sequence[Rule], usage: UsageIndex | None, crawl_delay: float | None,
                 user_agent: UserAgent, group: AgentGroup | None, *,
                 clean_params: tuple[CleanParam, ...] = ()) -> None:
        """``rules`` in rank order (``_index.ranked``); ``usage`` of the selected groups, if they have usage lines;
        ``group``: the selected groups (None: none, so nothing is disallowed); ``clean_params``: the file's."""
        self.user_agent = user_agent
        """The tokens the form decides for, as given to ``Robots.compact``."""
        self.group = group
        """The group these tokens obey (SPEC 6.2/6.3), which every ``explain`` names; None when no group applies."""
        self.crawl_delay = crawl_delay
        """The first valid crawl-delay of the selected groups (SPEC 5.3, 6.5), as ``Robots.crawl_delay`` gives it."""
        self.clean_params = clean_params or _NO_CLEAN_PARAMS
        """The file's clean-param rules, as ``Robots.clean_params`` (SPEC 5.3, 6.5); see ``clean``."""
        self._usage = usage
        self._index = None
        self._cold = COLD_DECISIONS
        if not rules:
            self._patterns, self._allows, self._lines, self._written = "", b"", None, None
            return
        patterns = [rule.pattern for rule in rules]
        text = "\n".join(patterns)  # escaped patterns are ASCII; surrogatepass keeps any str round-tripping
        long = len(text) >= COMPRESS_PATTERNS_FROM
        self._patterns = zlib.compress(text.encode("utf-8", "surrogatepass"), 1) if long else text
        self._allows = bytes([*(_ALLOW if rule.allow else _DISALLOW for rule in rules), _ALLOW])
        lines = [rule.line for rule in rules]
        self._lines = array("H" if max(lines) < 1 << 16 else "I", lines).tobytes()  # 2 bytes per line when they fit
        self._written = {rank: rule.written for rank, rule in enumerate(rules) if rule.written != rule.pattern} or None

    def allowed(self, url: str) -> bool:
        """Whether the crawler may fetch ``url`` (a full URL or a path; SPEC 7), as ``Robots.allowed``."""
        index = self._index
        if index is None and self._lines is None:
            return True  # no rule for these tokens
        origin = _urls.recent_origin  # decision_path's fast path, inlined (see there): a call less per decision
        if url.startswith(origin) and "#" not in url and "\0" not in url:
            path = url[len(origin) - 1 :]
        else:
            path = decision_path(url)
        if index is not None:
            return index.allows[index.rank(path)]
        return self._allows[self._rank(path)] == _ALLOW

    def decide(self, url: str) -> tuple[bool, dict[str, Preference]]:
        """(allowed, usage preferences): ``allowed(url)`` and, when allowed, ``Robots.usage``'s preferences for it
        ({} when the groups have no usage line, the common case), from one reading of the URL."""
        if self._usage is None:
            return self.allowed(url), {}
        path = decision_path(url)
        if self._lines is not None and self._allows[self._rank(path)] != _ALLOW:
            return False, {}
        return True, self._usage.lookup(path)

    def explain(self, url: str) -> Verdict:
        """The decision for ``url`` with the rule behind it and, when allowed, its usage preferences: as
        ``Robots.explain`` (the rule's line and written value, and the group, included)."""
        path = decision_path(url)
        rule = None
        if self._lines is not None:
            rank = self._rank(path)
            if rank >= 0:
                rule = self._rule(rank)
        allowed = rule is None or rule.allow
        usage = self._usage.lookup(path) if allowed and self._usage is not None else {}
        return Verdict(allowed, rule, path, self.user_agent, usage, self.group)

    def clean(self, url: str) -> tuple[str, tuple[CleanParam, ...]] | None:
        """``clean_url(url, self.clean_params)``: (``url`` without the query parameters the clean-param rules drop,
        the rules that dropped some); None when nothing is dropped, at once when the file has no such rule."""
        rules = self.clean_params
        if not rules or "?" not in url:
            return None
        return clean_url(url, rules)

    def rules(self) -> list[Rule]:
        """The rules that apply to these tokens, in rank order (``_index.ranked``), each as ``explain`` cites it (the
        ``/index.html`` extension's ``/dir/$`` rule included); [] when none applies. Rebuilt from the packed
        patterns, once each: no index is built and no decision counted (``COLD_DECISIONS``, ``HOT_RULES``)."""
        if self._lines is None:
            return []
        patterns = self._index.patterns if self._index is not None else self._unpacked()
        lines = memoryview(self._lines)
        numbers = lines.cast("H" if len(lines) == 2 * len(patterns) else "I")
        written = self._written or {}
        allows = self._allows
        return [Rule(allows[rank] == _ALLOW, pattern, numbers[rank], written.get(rank, pattern))
                for rank, pattern in enumerate(patterns)]

    def _rank(self, path: str) -> int:
        """The rank of the rule deciding ``path`` (-1: none) for a form with rules: from its index, or by a scan of
        its packed patterns for its first COLD_DECISIONS decisions; the next one builds the index."""
        index = self._index
        if index is not None:
            return index.rank(path)
        if self._cold > 0:
            self._cold -= 1
            return scan_rank(self._unpacked(), path)
        return self._build().rank(path)

    def _rule(self, rank: int) -> Rule:
        assert self._lines is not None
        pattern = self._index.patterns[rank] if self._index is not None else self._unpacked()[rank]
        written = self._written.get(rank, pattern) if self._written is not None else pattern
        lines = memoryview(self._lines)
        line = lines.cast("H" if len(lines) == 2 * (len(self._allows) - 1) else "I")[rank]
        return Rule(self._allows[rank] == _ALLOW, pattern, line, written)

    def _unpacked(self) -> list[str]:
        """The patterns in rank order, from their packed form."""
        packed = self._patterns
        text = zlib.decompress(packed).decode("utf-8", "surrogatepass") if isinstance(packed, bytes) else packed
        return text.split("\n")

    def _build(self) -> RuleIndex:
        """Build the index from the packed patterns and count it among the hot ones."""
        patterns = self._unpacked()
        allows = [allow == _ALLOW for allow in self._allows]
        index = self._index = RuleIndex.of_ranked(patterns, allows)
        _HOT.add(self, len(patterns))
        return index


class _Hot:
    """The forms whose index is built, oldest built first, and their rules in all: at most ``budget`` (but for the
    newest form). A form built again moves to the back. Adding takes a lock: forms may be used from several threads
    (the worst a race can do without one is build an index twice)."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.rules = 0
        self._forms: OrderedDict[AgentRules, int] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, form: AgentRules, rules: int) -> None:
        with self._lock:
            self.rules += rules - self._forms.pop(form, 0)
            self._forms[form] = rules
            while self.rules > self.budget and len(self._forms) > 1:
                oldest, count = self._forms.popitem(last=False)
                self.rules -= count
                oldest._index = None

    def __len__(self) -> int:
        return len(self._forms)


_HOT = _Hot(HOT_RULES)
