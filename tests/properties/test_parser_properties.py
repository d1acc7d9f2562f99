"""Properties of the parser and matcher on hostile input (SPEC 4.3-4.5, 5.4, 6.2, 7.3-7.4; issue 6).

Hypothesis writes arbitrary bytes, arbitrary URLs and small rule sets; every property below must hold for all of
them. The differential tests in tests/matcher compare decisions with Google's library; these state invariants that
need no oracle.
"""

from __future__ import annotations

import re

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from scrapy_rep.matcher import Robots, parse, report

AGENTS = ("foobot", "googlebot", "x")
_ESCAPE = re.compile(r"%[0-9a-fA-F]{2}")
#: Pattern pieces that exercise wildcards, anchors, escapes, non-ASCII and the index.htm extension.
_PRINTABLE = st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters="#$")
PIECES = ["/", "a", "b", "fish", "*", "$", ".php", "%61", "%2f", "é", "?", ";", "=", "index.html", "~"]
patterns = st.lists(st.sampled_from(PIECES), min_size=1, max_size=5).map(lambda parts: "/" + "".join(parts))
paths = st.one_of(
    patterns.map(lambda p: p.replace("*", "xy").replace("$", "").replace("é", "%C3%A9")),
    st.text(alphabet=_PRINTABLE, max_size=30).map(lambda t: "/" + t),
).map(lambda path: _ESCAPE.sub(lambda m: m.group().upper(), "/" + path.lstrip("/")))
"""Paths as Scrapy sends them: printable ASCII (percent-encoded; no controls or spaces, which would end or split
a pattern's line), no fragment, never ``//`` (that starts an authority).

Escapes are upper-case: like Google's matcher, ours upper-cases the escapes of patterns but compares the URL as
given, so ``/%2f`` is not matched by ``Allow: /%2f`` (SPEC 7.2 reads "%aa equals %AA"; Google decides)."""
rule_lists = st.lists(st.tuples(st.booleans(), patterns), max_size=6)
non_empty_rule_lists = st.lists(st.tuples(st.booleans(), patterns), min_size=1, max_size=6)
urls = st.one_of(
    st.text(max_size=60),
    st.builds(lambda host, path: f"http://{host}{path}", st.text(max_size=15), paths),
    paths,
)


def group(rules: list[tuple[bool, str]], agent: str = "foobot") -> str:
    """One robots.txt group for ``agent`` holding ``rules`` (allow flag, pattern) in order."""
    lines = [f"user-agent: {agent}"] + [f"{'allow' if allow else 'disallow'}: {pattern}" for allow, pattern in rules]
    return "\n".join(lines) + "\n"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=st.binary(max_size=4000), url=urls, agent=st.sampled_from(AGENTS))
def test_any_bytes_parse_and_decide_without_raising_spec_4_5(body: bytes, url: str, agent: str) -> None:
    """SPEC 4.3/4.5: arbitrary bytes never raise; decisions are bools and agree with ``explain``."""
    robots = parse(body)
    assert isinstance(robots, Robots)
    allowed = robots.allowed(url, agent)
    verdict = robots.explain(url, agent)
    assert type(allowed) is bool
    assert verdict.allowed is allowed
    assert verdict.rule is None or verdict.rule.allow is allowed
    assert all(isinstance(sitemap, str) for sitemap in robots.sitemaps)
    assert isinstance(str(verdict), str)
    assert report(body).last_line_seen >= 1


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=2000), url=urls)
def test_str_bodies_equal_their_utf8_bytes_spec_4_1(text: str, url: str) -> None:
    """SPEC 4.1: a str body is read as its UTF-8 encoding."""
    assert parse(text).allowed(url, "foobot") is parse(text.encode("utf-8", "surrogatepass")).allowed(url, "foobot")


@settings(max_examples=200, deadline=None)
@given(body=st.binary(max_size=3000), cap=st.integers(0, 3000), url=paths)
def test_size_cap_is_a_prefix_spec_4_4(body: bytes, cap: int, url: str) -> None:
    """SPEC 4.4: with a cap, only the first ``cap`` bytes count: the same as parsing that prefix."""
    assert parse(body, max_bytes=cap).allowed(url, "foobot") is parse(body[:cap], max_bytes=None).allowed(url, "foobot")


@settings(max_examples=300, deadline=None)
@given(rules=rule_lists, new=patterns, path=paths)
def test_adding_an_allow_rule_never_disallows_spec_7_4(rules: list[tuple[bool, str]], new: str, path: str) -> None:
    """SPEC 7.4: an extra allow rule can only win with allow; what was allowed stays allowed."""
    before = parse(group(rules)).allowed(path, "foobot")
    after = parse(group([*rules, (True, new)])).allowed(path, "foobot")
    assert not before or after


@settings(max_examples=300, deadline=None)
@given(rules=rule_lists, path=paths, extra=st.sampled_from(["", "*", "$", "*$"]))
def test_a_longer_matching_allow_rule_allows_spec_7_4(rules: list[tuple[bool, str]], path: str, extra: str) -> None:
    """SPEC 7.4: an allow rule matching the path and at least as long as every other rule decides: allowed."""
    longest = max((len(pattern.encode()) for _, pattern in rules), default=0)
    pattern = path + "*" * max(0, longest * 3 - len(path)) + extra  # longer in bytes even after %-encoding
    assert parse(group([*rules, (True, pattern)])).allowed(path, "foobot")


@settings(max_examples=300, deadline=None)
@given(rules=rule_lists, new=patterns, path=paths)
def test_adding_a_disallow_rule_never_allows_spec_7_4(rules: list[tuple[bool, str]], new: str, path: str) -> None:
    """SPEC 7.4: an extra disallow rule can only win with disallow; what was disallowed stays disallowed."""
    before = parse(group(rules)).allowed(path, "foobot")
    after = parse(group([*rules, (False, new)])).allowed(path, "foobot")
    assert before or not after


@settings(max_examples=300, deadline=None)
@given(allow=st.booleans(), pattern=patterns, path=paths)
def test_trailing_star_changes_nothing_spec_7_3(allow: bool, pattern: str, path: str) -> None:
    """SPEC 7.3: ``/fish*`` equals ``/fish``, and ``/fish*$`` too (a lone rule, so priority plays no part)."""
    assume(not pattern.endswith("$"))
    expected = parse(group([(allow, pattern)])).allowed(path, "foobot")
    assert parse(group([(allow, pattern + "*")])).allowed(path, "foobot") is expected
    assert parse(group([(allow, pattern + "*$")])).allowed(path, "foobot") is expected


@settings(max_examples=200, deadline=None)
@given(groups=st.lists(st.tuples(st.sampled_from(["foobot", "*", "other"]), non_empty_rule_lists), min_size=1,
                       max_size=4),
       path=paths, order=st.randoms(use_true_random=False))
def test_group_order_does_not_matter_spec_6_2(groups: list[tuple[str, list[tuple[bool, str]]]], path: str,
                                              order: object) -> None:
    """SPEC 6.2: which groups apply, and so the decision, does not depend on the order of groups in the file.

    Every group has a rule: a group without one would merge with the next (SPEC 6.1), which is not reordering."""
    shuffled = list(groups)
    order.shuffle(shuffled)  # type: ignore[attr-defined]
    body = "".join(group(rules, agent) for agent, rules in groups)
    body_shuffled = "".join(group(rules, agent) for agent, rules in shuffled)
    for agent in AGENTS:
        assert parse(body).allowed(path, agent) is parse(body_shuffled).allowed(path, agent)


@settings(max_examples=200, deadline=None)
@given(rules=rule_lists, path=paths, agent=st.sampled_from(AGENTS))
def test_empty_rule_values_are_ignored_spec_5_4(rules: list[tuple[bool, str]], path: str, agent: str) -> None:
    """SPEC 5.4: ``Disallow:`` and ``Allow:`` with no value add nothing."""
    body = group(rules)
    padded = body + "disallow:\nallow:\ndisallow:   # comment\n"
    assert parse(padded).allowed(path, agent) is parse(body).allowed(path, agent)
