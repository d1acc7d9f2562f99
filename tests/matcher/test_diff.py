"""What changed between two versions of a robots.txt, as rules (``diff_robots`` per group, ``diff_rules`` per crawler,
``AgentRules.rules``): small pairs of files, and properties over arbitrary bytes."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_rep.matcher import AgentRules, DirectiveLine, GroupDiff, Rule, diff_robots, diff_rules, parse
from scrapy_rep.matcher import _compact as compact

BASE = b"""User-agent: examplebot
Allow: /public/
Disallow: /private/

User-agent: *
Disallow: /tmp/
Sitemap: https://example.com/a.xml
"""


def shown(diffs: list[GroupDiff]) -> list[tuple[tuple[str, ...], bool, bool, list[str], list[str]]]:
    """Each group's (tokens, in_old, in_new, added, removed), lines as ``Disallow: /x@7``."""
    return [(group.tokens, group.in_old, group.in_new, [f"{line.directive}: {line.written}@{line.line}"
                                                        for line in group.added],
             [f"{line.directive}: {line.written}@{line.line}" for line in group.removed]) for group in diffs]


@pytest.mark.parametrize(("new", "expected"), [
    pytest.param(BASE.replace(b"Disallow: /private/\n", b"Disallow: /private/\nDisallow: /x\n"),
                 [(("examplebot",), True, True, ["Disallow: /x@4"], [])], id="rule added"),
    pytest.param(BASE.replace(b"Allow: /public/\n", b""),
                 [(("examplebot",), True, True, [], ["Allow: /public/@2"])], id="rule removed"),
    pytest.param(BASE.replace(b"Allow: /public/\nDisallow: /private/\n", b"Disallow: /private/\n# moved\n\n"
                              b"Allow: /public/\n"), [], id="rules moved only"),
    pytest.param(BASE.replace(b"Disallow: /private/", b"Allow: /private/"),
                 [(("examplebot",), True, True, ["Allow: /private/@3"], ["Disallow: /private/@3"])],
                 id="disallow became allow"),
    pytest.param(BASE + b"\nUser-agent: Otherbot/2.1\nDisallow: /\n",
                 [(("otherbot",), False, True, ["Disallow: /@10"], [])], id="group added"),
    pytest.param(BASE + b"\nUser-agent: otherbot\n",
                 [(("otherbot",), False, True, [], [])], id="group added without rules"),
    pytest.param(BASE.replace(b"User-agent: *\nDisallow: /tmp/\n", b""),
                 [(("*",), True, False, [], ["Disallow: /tmp/@6"])], id="group removed"),
    pytest.param(BASE.replace(b"User-agent: examplebot\n", b"User-agent: examplebot\nUser-agent: newsbot\n"),
                 [(("examplebot", "newsbot"), False, True, ["Allow: /public/@3", "Disallow: /private/@4"], []),
                  (("examplebot",), True, False, [], ["Allow: /public/@2", "Disallow: /private/@3"])],
                 id="tokens of a group changed"),
    pytest.param(BASE.replace(b"User-agent: examplebot\n", b"user-agent: EXAMPLEBOT/2.0 (+https://x)\n"), [],
                 id="same token written otherwise"),
    pytest.param(BASE.replace(b"a.xml", b"b.xml"),
                 [((), True, True, ["Sitemap: https://example.com/b.xml@7"],
                   ["Sitemap: https://example.com/a.xml@7"])], id="sitemap changed"),
    pytest.param(BASE.replace(b"Disallow: /tmp/\n", b"Disallow: /tmp/\nCrawl-delay: 5\nContent-Signal: ai-train=no\n"),
                 [(("*",), True, True, ["Crawl-delay: 5@7", "Content-Signal: ai-train=no@8"], [])],
                 id="crawl-delay and usage lines"),
    pytest.param(b"", [(("examplebot",), True, False, [], ["Allow: /public/@2", "Disallow: /private/@3"]),
                       (("*",), True, False, [], ["Disallow: /tmp/@6"]),
                       ((), True, True, [], ["Sitemap: https://example.com/a.xml@7"])], id="file to allow-all"),
    pytest.param(BASE.replace(b"Disallow: /private/\n", b"Disallow: /private/\nDisallow: /private/\n"), [],
                 id="a rule written twice"),
    pytest.param(BASE.replace(b"User-agent: *\n", b"User-agent: examplebot\n"),
                 [(("examplebot",), True, True, ["Disallow: /tmp/@6"], []),
                  (("*",), True, False, [], ["Disallow: /tmp/@6"])], id="groups naming the same token merged"),
])
def test_diff_robots_per_group(new: bytes, expected: list[tuple[tuple[str, ...], bool, bool, list[str], list[str]]],
                               ) -> None:
    assert shown(diff_robots(BASE, new)) == expected


def test_allow_all_to_a_file_adds_every_group() -> None:
    diffs = diff_robots(b"", BASE)
    assert [(group.tokens, group.in_old, group.in_new) for group in diffs] == [
        (("examplebot",), False, True), (("*",), False, True), ((), True, True)]
    assert diffs[0].rules.added == (Rule(True, "/public/", 2, "/public/"), Rule(False, "/private/", 3, "/private/"))
    assert diffs[-1].added == (DirectiveLine("Sitemap", "https://example.com/a.xml", 7),)


def test_lines_are_grouped_as_google_groups_them() -> None:
    """Rules before any user-agent line belong to no group; a crawl-delay between user-agent lines does not end
    them (one group of two tokens), a rule does, even an empty one (which is no rule, SPEC 5.4)."""
    old = b"Disallow: /nowhere\nUser-agent: a\nCrawl-delay: 1\nUser-agent: b\nDisallow: /x\nUser-agent: c\n"
    new = b"User-agent: b\nUser-agent: a\nDisallow: /x\nCrawl-delay: 1\nUser-agent: c\nDisallow:\nUser-agent: d\n"
    assert shown(diff_robots(old, new)) == [(("d",), False, True, [], [])]


def test_the_body_is_cut_at_max_bytes() -> None:
    longer = BASE + b"User-agent: late\nDisallow: /\n"
    assert diff_robots(BASE, longer, max_bytes=len(BASE)) == []
    assert [group.tokens for group in diff_robots(BASE, longer, max_bytes=None)] == [("late",)]


def test_diff_rules_compares_what_applies_to_the_crawler() -> None:
    """Rules that moved from the ``*`` group to the crawler's own are no change; the rules of other groups are not
    the crawler's; None is no rules."""
    old = parse(b"User-agent: *\nDisallow: /a\nAllow: /b/index.html\n\nUser-agent: other\nDisallow: /\n")
    new = parse(b"User-agent: examplebot\nAllow: /b/index.html\nDisallow: /a\n")
    assert diff_rules(old.compact("examplebot"), new.compact("examplebot")) == diff_rules(None, None)
    assert not diff_rules(old.compact("examplebot"), new.compact("examplebot")).changed
    changed = diff_rules(old.compact("other"), new.compact("other"))
    assert changed.added == () and changed.removed == (Rule(False, "/", 6, "/"),)
    to_none = diff_rules(new.compact("examplebot"), None)
    assert to_none.changed and [rule.written for rule in to_none.removed] == ["/b/index.html", "/a"]
    assert [rule.line for rule in diff_rules(None, new.compact("examplebot")).added] == [2, 3]


def test_diff_rules_compares_values_as_written() -> None:
    """``/café`` and ``/caf%C3%A9`` are the same pattern written otherwise: a change to the file's text as rules."""
    old = parse("User-agent: *\nDisallow: /café\n").compact("bot")
    new = parse(b"User-agent: *\nDisallow: /caf%C3%A9\n").compact("bot")
    diff = diff_rules(old, new)
    assert [rule.written for rule in diff.added] == ["/caf%C3%A9"] and [r.written for r in diff.removed] == ["/café"]


@pytest.mark.parametrize("built", [False, True])
def test_rules_of_a_form_are_its_rules_in_rank_order(built: bool) -> None:
    """``AgentRules.rules`` gives what ``explain`` cites, in rank order, whether its index is built or not, and it
    neither builds one nor counts as a decision."""
    long = "".join(f"Disallow: /long/{n}/path\n" for n in range(20))  # compressed: over COMPRESS_PATTERNS_FROM
    robots = parse(f"User-agent: bot\nAllow: /d/index.html\nDisallow: /%7euser/\n{long}Disallow: /d/\n")
    form = robots.compact("bot")
    if built:
        form._build()
    rules = form.rules()
    assert (form._index is not None) is built and form._cold == compact.COLD_DECISIONS
    assert [(len(rule.pattern), rule.allow) for rule in rules] == sorted((len(r.pattern), r.allow) for r in rules)
    assert {Rule(True, "/d/index.html", 2, "/d/index.html"), Rule(True, "/d/$", 2, "/d/index.html"),
            Rule(False, "/%7Euser/", 3, "/%7euser/"), Rule(False, "/d/", 24, "/d/")} < set(rules)
    assert len(rules) == 24
    for rule in rules:  # each is the rule explain cites for a path it decides
        if rule.pattern.endswith("/path"):
            assert form.explain(rule.pattern).rule == rule
    assert parse(b"User-agent: other\nDisallow: /\n").compact("bot").rules() == []


def test_rules_lines_past_two_bytes() -> None:
    body = "\n" * 70_000 + "User-agent: bot\nDisallow: /far\n"
    assert parse(body).compact("bot").rules() == [Rule(False, "/far", 70_002, "/far")]


LINES = st.sampled_from([b"User-agent: a", b"User-agent: *", b"user-agent: B/1", b"Disallow: /x", b"Allow: /x",
                         b"Disallow: /y/index.html", b"Allow: /y/index.html", b"Disallow:", b"Crawl-delay: 2",
                         b"Content-Usage: train-ai=n", b"Sitemap: https://s/m.xml", b"# c", b"", b"Allow /z"])
FILES = st.one_of(st.binary(max_size=400), st.lists(LINES, max_size=14).map(b"\n".join))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(old=FILES, new=FILES, cap=st.one_of(st.none(), st.integers(0, 500)))
def test_any_two_bodies_diff_without_raising(old: bytes, new: bytes, cap: int | None) -> None:
    diffs = diff_robots(old, new, max_bytes=cap)
    assert all(group.added or group.removed or group.in_old != group.in_new for group in diffs)
    back = diff_robots(new, old, max_bytes=cap)  # the reverse swaps added and removed (tokens: in the newer's order)
    assert ({(frozenset(g.tokens), g.removed, g.added) for g in back}
            == {(frozenset(g.tokens), g.added, g.removed) for g in diffs})
    assert len(back) == len(diffs)
    assert diff_robots(old, old, max_bytes=cap) == []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=FILES, agent=st.sampled_from(["a", "b", "other"]))
def test_groups_are_those_the_matcher_selects(body: bytes, agent: str) -> None:
    """``diff_robots``'s groups are Google's: the rules of those naming a crawler (else of the ``*`` ones) are the
    rules its compact form holds (``AgentRules.rules``), which ``diff_rules`` compares."""
    groups = diff_robots(b"", body)  # every group of ``body``, all added
    obeyed = [group for group in groups if agent in group.tokens] or [group for group in groups if "*" in group.tokens]
    form = parse(body).compact(agent)
    assert {(rule.directive, rule.written) for group in obeyed for rule in group.rules.added} == _keys(form)
    assert not diff_rules(form, form).changed
    assert {(rule.directive, rule.written) for rule in diff_rules(None, form).added} == _keys(form)


def _keys(form: AgentRules) -> set[tuple[str, str]]:
    return {(rule.directive, rule.written) for rule in form.rules()}
