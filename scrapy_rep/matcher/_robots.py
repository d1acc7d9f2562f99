"""A parsed robots.txt and its decisions (SPEC 5-7), with Google's semantics."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from . import _urls
from ._agents import ascii_lower
from ._clean_param import CleanParam, clean_param
from ._compact import AgentRules
from ._escape import Body, encode_text, escape_bytes
from ._index import RuleIndex, ranked
from ._parser import MAX_BYTES, parse_directives
from ._rules import AgentGroup, Rule
from ._urls import decision_path
from ._usage import Preference, UsageIndex, UsageLine, content_signal, content_usage
from ._verdict import UserAgent, Verdict

_PRODUCT_TOKEN = re.compile(rb"[A-Za-z_-]*")
_Index = TypeVar("_Index")
_Value = TypeVar("_Value")


@dataclass(slots=True)
class _Group:
    """Consecutive user-agent lines and the lines that follow them up to the next group (SPEC 6.1)."""

    agents: dict[str, int] = field(default_factory=dict)  # lower-cased product token -> its first user-agent line
    global_line: int = 0  # its first "*" user-agent line; 0: not a global group
    rules: list[Rule] = field(default_factory=list)
    crawl_delay: float | None = None
    usage: list[UsageLine] = field(default_factory=list)  # Content-Usage / Content-Signal lines, file order


class Robots:
    """The groups and sitemaps of one robots.txt; decides URLs for any agent.

    The rules that apply to an agent are chosen once and indexed (``RuleIndex``); the index is cached per
    agent, so a repeated decision costs a dict lookup, the URL's path, and the index's lookup.
    """

    __slots__ = ("_agent_groups", "_by_selection", "_groups", "_has_usage", "_indexes", "_usage", "_usage_by_selection",
                 "clean_params", "read_lines", "sitemaps")

    def __init__(self, groups: list[_Group], sitemaps: list[str], clean_params: tuple[CleanParam, ...] = (),
                 read_lines: int = 0) -> None:
        self._groups = groups
        self.sitemaps = sitemaps
        """SPEC 5.5: the sitemap URLs, in file order, whatever group they stand in."""
        self.clean_params = clean_params
        """SPEC 5.3, 6.5: the usable ``clean-param`` rules, in file order. Yandex extension: the directive is read
        wherever it stands, before any user-agent line or in any group, and applies to every agent."""
        self.read_lines = read_lines
        """How many lines were read as a directive Google uses (user-agent, allow, disallow, sitemap), wherever they
        stand: what ``ignored_lines`` subtracts from the lines holding text (a soft 404's count, without a second
        parse)."""
        self._indexes: dict[UserAgent, RuleIndex | None] = {}
        self._by_selection: dict[_Selection, RuleIndex | None] = {}
        self._has_usage = any(group.usage for group in groups)
        self._usage: dict[UserAgent, UsageIndex | None] = {}
        self._usage_by_selection: dict[_Selection, UsageIndex | None] = {}
        self._agent_groups: dict[UserAgent, AgentGroup | None] = {}

    def allowed(self, url: str, user_agent: UserAgent) -> bool:
        """Whether ``user_agent`` may fetch ``url`` (a full URL or a path; SPEC 7).

        ``url`` must be percent-encoded already, as Google's matcher expects of its caller: it is compared as given
        (the rules' patterns are encoded when parsed), so a raw ``/wiki/Käyttäjä:`` does not match
        ``Disallow: /wiki/Käyttäjä:``. Scrapy's ``Request.url`` is encoded; for any other URL use
        ``scrapy_rep.RobotParser``, which encodes it as ``Request`` does.
        """
        try:
            index = self._indexes[user_agent]
        except (KeyError, TypeError):  # TypeError: an unhashable sequence of tokens
            index = self._index_for(user_agent)
        if index is None:
            return True
        origin = _urls.recent_origin  # decision_path's fast path, inlined (see there): a call less per decision
        if url.startswith(origin) and "#" not in url and "\0" not in url:
            return index.allows[index.rank(url[len(origin) - 1 :])]
        return index.allows[index.rank(decision_path(url))]

    def explain(self, url: str, user_agent: UserAgent) -> Verdict:
        """The decision for ``url``, the rule behind it (SPEC 7.4) and, when allowed, its usage preferences."""
        try:
            index = self._indexes[user_agent]
        except (KeyError, TypeError):
            index = self._index_for(user_agent)
        path = decision_path(url)
        rule = None if index is None else index.best(path)
        allowed = rule is None or rule.allow
        usage = self.usage(url, user_agent) if allowed else {}
        return Verdict(allowed, rule, path, user_agent, usage, self._group_for(user_agent))

    def usage(self, url: str, user_agent: UserAgent) -> dict[str, Preference]:
        """The usage preferences stated for ``url`` to ``user_agent``'s groups (SPEC 6.2): {use: Preference}.

        {} when the file has no usage line (checked first: O(1)), when the URL is disallowed (preferences apply only
        to what may be crawled) or when nothing is stated for it. See ``_usage`` for the rules. A new dict each call.
        """
        if not self._has_usage:
            return {}
        try:
            index = self._usage[user_agent]
        except (KeyError, TypeError):
            index = self._usage_for(user_agent)
        if index is None or not self.allowed(url, user_agent):
            return {}
        return index.lookup(decision_path(url))

    def crawl_delay(self, user_agent: UserAgent) -> float | None:
        """The first valid ``crawl-delay`` of the groups that apply to ``user_agent`` (SPEC 5.3, 6.5)."""
        return _crawl_delay(self._select(user_agent)[0])

    def compact(self, user_agent: UserAgent) -> AgentRules:
        """The compact decision form for ``user_agent`` (``AgentRules``, what a crawler keeps per origin): it
        decides, explains and gives usage preferences exactly as this ``Robots`` does for ``user_agent``, and keeps
        only the rules, crawl-delay and usage lines of the groups selected for it (SPEC 6.2/6.3), its index built,
        and the file's ``clean_params``."""
        groups, token = self._select(user_agent)
        obeyed = _agent_group(groups, token)
        rules = ranked(rule for group in groups for rule in group.rules)
        return AgentRules(rules, _usage_index(groups, obeyed), _crawl_delay(groups), user_agent, obeyed,
                          clean_params=self.clean_params)

    @property
    def agents(self) -> list[str]:
        """The product tokens named by the file's user-agent lines (lower-cased, first-seen order)."""
        return list(dict.fromkeys(agent for group in self._groups for agent in group.agents))

    def _select(self, user_agent: UserAgent) -> tuple[list[_Group], str]:
        """SPEC 6.2/6.3: the groups naming the first token that any group names, and that token (lower-cased); else
        the ``*`` groups and ``"*"`` (no group at all: an empty list).

        A group naming both ``*`` and the token counts as specific. Google extension: a group that
        names the token but has no rules still hides the ``*`` groups.
        """
        tokens = [user_agent] if isinstance(user_agent, str) else user_agent
        for token in tokens:
            wanted = ascii_lower(token)
            specific = [group for group in self._groups if wanted in group.agents]
            if specific:
                return specific, wanted
        return [group for group in self._groups if group.global_line], "*"

    def _group_for(self, user_agent: UserAgent) -> AgentGroup | None:
        """The group ``user_agent`` obeys (``AgentGroup``), made once per agent (of the last ``_AGENTS_KEPT``)."""
        key = user_agent if isinstance(user_agent, str) else tuple(user_agent)
        try:
            return self._agent_groups[key]
        except KeyError:
            group = _agent_group(*self._select(user_agent))
            _keep(self._agent_groups, key, group)
            return group

    def _index_for(self, user_agent: UserAgent) -> RuleIndex | None:
        """The index of the rules that apply to ``user_agent``; None when there are none."""
        return self._per_selection(user_agent, self._indexes, self._by_selection, _rule_index)

    def _usage_for(self, user_agent: UserAgent) -> UsageIndex | None:
        """The index of the usage lines of ``user_agent``'s groups; None when they have none."""
        return self._per_selection(user_agent, self._usage, self._usage_by_selection, _usage_index)

    def _per_selection(self, user_agent: UserAgent, per_agent: dict[Any, _Index | None],
                       per_selection: dict[_Selection, _Index | None],
                       build: Callable[[list[_Group], AgentGroup | None], _Index | None]) -> _Index | None:
        """What ``build`` makes of ``user_agent``'s groups (SPEC 6.2): built once per selection of groups and the token
        selecting them (agents selecting the same groups by the same token share it: at most one per token the file
        names, plus ``*``) and cached per agent, for the last ``_AGENTS_KEPT`` agents (a sequence of tokens under
        its tuple)."""
        key = user_agent if isinstance(user_agent, str) else tuple(user_agent)
        cached = per_agent.get(key, _UNSET)  # a sequence of tokens is cached under its tuple
        if cached is not _UNSET:
            return cached
        groups, token = self._select(user_agent)
        selection: _Selection = (token, *map(id, groups))
        if selection in per_selection:
            index = per_selection[selection]
        else:
            index = per_selection[selection] = build(groups, _agent_group(groups, token))
        _keep(per_agent, key, index)
        return index


#: The agents a ``Robots`` keeps its per-agent lookups for (each a dict entry pointing at what is built per
#: selection of groups, which is bounded by the file). A file asked for more agents than this, as a service deciding
#: for arbitrary User-Agent strings may ask it, starts its per-agent caches again rather than grow without limit.
_AGENTS_KEPT = 64
_UNSET: Any = object()  # what a per-agent cache gives for an agent it does not hold


def _keep(per_agent: dict[Any, _Value], key: Any, value: _Value) -> None:
    """``per_agent[key] = value``, emptying ``per_agent`` first when it holds ``_AGENTS_KEPT`` agents. A reader in
    another thread that misses an entry emptied meanwhile selects its groups again and finds what was built for
    them (dict operations are atomic: nothing is torn)."""
    if len(per_agent) >= _AGENTS_KEPT:
        per_agent.clear()
    per_agent[key] = value


_Selection = tuple[str | int, ...]  # the selecting token, then the ids of the selected groups


def _agent_group(groups: list[_Group], token: str) -> AgentGroup | None:
    """The ``AgentGroup`` of the groups ``_select`` chose by ``token``; None when it chose none."""
    if not groups:
        return None
    return _shared(token, tuple(group.global_line if token == "*" else group.agents[token] for group in groups))


# A crawl obeys one token and most files start their group on one of a few lines: the origins' forms share their
# AgentGroup (immutable) instead of holding one each. Bounded: a cache, not a registry of every origin.
_shared = functools.lru_cache(maxsize=1024)(AgentGroup)


def _crawl_delay(groups: list[_Group]) -> float | None:
    return next((group.crawl_delay for group in groups if group.crawl_delay is not None), None)


def _rule_index(groups: list[_Group], _: AgentGroup | None) -> RuleIndex | None:
    rules = groups[0].rules if len(groups) == 1 else [rule for group in groups for rule in group.rules]
    return RuleIndex(rules) if rules else None  # RuleIndex copies the rules it ranks


def _usage_index(groups: list[_Group], group: AgentGroup | None) -> UsageIndex | None:
    lines = [line for selected in groups for line in selected.usage]
    return UsageIndex(lines, group) if lines else None


class _Builder:
    """The ``DirectiveHandler`` that collects groups, rules, sitemaps and clean-param rules for ``Robots``."""

    def __init__(self) -> None:
        self.groups: list[_Group] = []
        self.sitemaps: list[str] = []
        self.clean_params: list[CleanParam] = []
        self._group: _Group | None = None
        self.read = 0  # user-agent, allow, disallow and sitemap lines (Robots.read_lines)
        # An allow/disallow line was seen since the group's user-agent lines. Google extension: only rules
        # end the user-agent lines; sitemap and unknown lines (crawl-delay...) between them do not.
        self._in_rules = False

    def user_agent(self, line: int, value: bytes) -> None:
        self.read += 1
        if self._group is None or self._in_rules:  # SPEC 6.1: a user-agent line after rules starts a group
            self._group = _Group()
            self.groups.append(self._group)
            self._in_rules = False
        if value[:1] == b"*" and (len(value) == 1 or value[1:2].isspace()):
            if not self._group.global_line:  # Google extension: "* foo" is still the global group
                self._group.global_line = line
        else:
            # SPEC 5.6, Google extension: the value is reduced to its product token ("bot/1.0 (x)" names
            # "bot"; "/bot" names the empty token), compared whole with the crawler's token.
            token = _PRODUCT_TOKEN.match(value)
            self._group.agents.setdefault(token.group().decode("ascii").lower() if token else "", line)

    def allow(self, line: int, value: bytes) -> None:
        self.read += 1
        group = self._group
        if group is None:
            return  # SPEC 6.1: rules before the first user-agent line are ignored
        self._in_rules = True  # even an empty rule ends the user-agent lines of its group
        if value:  # SPEC 5.4
            rule = _rule(True, line, value)
            group.rules.append(rule)
            # Google extension: "allow: /dir/index.htm[l]" also allows "/dir/" itself.
            pattern = rule.pattern
            slash = pattern.rfind("/")
            if slash >= 0 and pattern.startswith("/index.htm", slash):
                group.rules.append(Rule(True, pattern[: slash + 1] + "$", line, rule.written))

    def disallow(self, line: int, value: bytes) -> None:
        self.read += 1
        group = self._group
        if group is None:
            return  # SPEC 6.1
        self._in_rules = True
        if value:  # SPEC 5.4
            group.rules.append(_rule(False, line, value))

    def sitemap(self, line: int, value: bytes) -> None:
        self.read += 1
        if value:
            self.sitemaps.append(value.decode("utf-8", "replace"))

    def unknown(self, line: int, key: bytes, value: bytes) -> None:
        name = key.lower()
        if name == b"clean-param":  # Yandex extension: read wherever it stands, for every agent
            rule = clean_param(line, value)
            if rule is not None:
                self.clean_params.append(rule)
            return
        if self._group is None:
            return
        if name == b"crawl-delay" and self._group.crawl_delay is None:
            self._group.crawl_delay = _delay(value)
        elif name == b"content-usage" or name == b"content-signal":
            # Google's grouping is kept: this line does not end the user-agent lines (see _usage).
            usage = content_usage(line, value) if name == b"content-usage" else content_signal(line, value)
            if usage is not None:
                self._group.usage.append(usage)


def _rule(allow: bool, line: int, value: bytes) -> Rule:
    """The rule of an allow/disallow line with a non-empty ``value``. Made for every rule line of every parse, so
    the tuple is made by ``tuple.__new__`` (C) rather than the named tuple's Python-level ``__new__``."""
    if value.isascii() and b"%" not in value:  # most values: nothing to escape, the pattern is as written
        pattern = value.decode("ascii")
        return _new_rule(Rule, (allow, pattern, line, pattern))
    pattern = escape_bytes(value)
    written = value.decode("utf-8", "replace")
    return _new_rule(Rule, (allow, pattern, line, pattern if written == pattern else written))  # equal: one string


_new_rule = tuple.__new__


def _delay(value: bytes) -> float | None:
    """A crawl-delay in seconds, or None when it is not a finite non-negative number."""
    try:
        delay = float(value)
    except ValueError:
        return None
    return delay if math.isfinite(delay) and delay >= 0 else None


def parse(body: Body, *, max_bytes: int | None = MAX_BYTES) -> Robots:
    """Parse a robots.txt body. Never raises (SPEC 4.5).

    ``bytes`` are used as they are (Google reads bytes; SPEC 4); a ``str`` is taken as its UTF-8 encoding.
    Only the first ``max_bytes`` bytes are used (SPEC 4.4), even if that cuts a line; None means no limit.
    """
    data = encode_text(body) if isinstance(body, str) else bytes(body)
    if max_bytes is not None:
        data = data[:max_bytes]
    builder = _Builder()
    parse_directives(data, builder)
    return Robots(builder.groups, builder.sitemaps, tuple(builder.clean_params), builder.read)
