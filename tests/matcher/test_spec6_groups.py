"""SPEC 6: groups and user-agent precedence, including Google's extensions."""

from __future__ import annotations

import pytest

from scrapy_rep.matcher import AgentGroup, Verdict, parse

BLOCKS = """user-agent: a          # group for "a"
disallow: /c

user-agent: b          # group for "b"
disallow: /d

user-agent: e          # one group for "e" and "f"
user-agent: f
disallow: /g

user-agent: h          # group for "h" (no rules: h may crawl everything)
"""


@pytest.mark.parametrize(
    ("agent", "path", "allowed"),
    [("a", "/c", False), ("a", "/d", True), ("b", "/d", False), ("b", "/c", True), ("e", "/g", False),
     ("f", "/g", False), ("e", "/c", True), ("h", "/c", True), ("h", "/g", True), ("z", "/g", True)],
)
def test_6_1_the_groups_example(agent: str, path: str, allowed: bool) -> None:
    """SPEC 6.1: consecutive user-agent lines share the rules that follow them."""
    assert parse(BLOCKS).allowed(path, agent) is allowed


@pytest.mark.parametrize("between", ["sitemap: https://example.com/sitemap.xml", "crawl-delay: 5", "unicorn: x",
                                     "# comment", "", "junk without colon here"])
def test_6_1_other_lines_do_not_end_the_user_agent_lines(between: str) -> None:
    """SPEC 6.1, Google extension: sitemap and unknown lines between user-agent lines keep one group."""
    robots = parse(f"user-agent: a\n{between}\nuser-agent: b\ndisallow: /\n")
    assert not robots.allowed("/x", "a")
    assert not robots.allowed("/x", "b")


def test_6_1_a_user_agent_after_rules_starts_a_new_group() -> None:
    """SPEC 6.1: even an empty rule ends the user-agent lines of its group."""
    robots = parse("user-agent: a\ndisallow:\nuser-agent: b\ndisallow: /\n")
    assert robots.allowed("/x", "a")
    assert not robots.allowed("/x", "b")


def test_6_1_rules_before_the_first_user_agent_are_ignored() -> None:
    """SPEC 6.1."""
    robots = parse("disallow: /\nallow: /x\nuser-agent: *\ndisallow: /y\n")
    assert robots.allowed("/z", "bot")
    assert not robots.allowed("/y", "bot")


TABLE = ("user-agent: googlebot-news\ndisallow: /1\n\nuser-agent: *\ndisallow: /2\n\n"
         "user-agent: googlebot\ndisallow: /3\n")


@pytest.mark.parametrize(("agent", "group"), [("googlebot-news", 1), ("googlebot", 3), ("storebot-google", 2)])
def test_6_2_the_precedence_table(agent: str, group: int) -> None:
    """SPEC 6.2: a crawler follows the group naming its token, else the global group."""
    robots = parse(TABLE)
    assert [robots.allowed(f"/{n}", agent) for n in (1, 2, 3)] == [n != group for n in (1, 2, 3)]


def test_6_2_groups_naming_the_token_are_merged_in_any_order() -> None:
    """SPEC 6.2: several groups for one token are merged; the longest match across them wins."""
    robots = parse("user-agent: bot\ndisallow: /a\nuser-agent: *\ndisallow: /\nuser-agent: BOT\nallow: /a/b\n")
    assert not robots.allowed("/a/x", "bot")
    assert robots.allowed("/a/b", "bot")
    assert robots.allowed("/z", "bot")  # the global group is not merged in


def test_6_2_global_groups_are_merged() -> None:
    """SPEC 6.2: without a specific group, all the '*' groups apply together."""
    robots = parse("user-agent: *\ndisallow: /a\nuser-agent: x\ndisallow: /\nuser-agent: *\ndisallow: /b\n")
    assert not robots.allowed("/a", "bot") and not robots.allowed("/b", "bot") and robots.allowed("/c", "bot")


def test_6_2_no_groups_means_everything_allowed() -> None:
    """SPEC 6.2: no specific and no global group: allowed."""
    assert parse("user-agent: other\ndisallow: /\n").allowed("/x", "bot")


def test_6_2_a_named_group_without_rules_hides_the_global_group() -> None:
    """Google extension: naming the crawler anywhere, even in a group with no rules, hides '*'."""
    robots = parse("user-agent: *\ndisallow: /\n\nuser-agent: bot\n")
    assert robots.allowed("/x", "bot")
    assert not robots.allowed("/x", "other")


def test_6_2_a_group_naming_star_and_the_token_is_specific() -> None:
    """Google extension: a group naming both '*' and the crawler counts as the crawler's own group."""
    robots = parse("user-agent: *\nuser-agent: bot\ndisallow: /a\nuser-agent: *\ndisallow: /b\n")
    assert not robots.allowed("/a", "bot") and robots.allowed("/b", "bot")
    assert not robots.allowed("/a", "other") and not robots.allowed("/b", "other")


def test_6_2_tokens_compare_case_insensitively_in_ascii_only() -> None:
    """SPEC 5.6: case-insensitive, but only A-Z fold (the Kelvin sign is not k), as in Google's library."""
    robots = parse("user-agent: K\ndisallow: /\n")
    assert not robots.allowed("/x", "k")
    assert robots.allowed("/x", "\u212a")


@pytest.mark.parametrize(
    ("tokens", "path", "allowed"),
    [(["googlebot-news", "googlebot"], "/1", False), (["googlebot-news", "googlebot"], "/3", True),
     (["googlebot-image", "googlebot"], "/3", False), (["googlebot-image", "googlebot"], "/1", True),
     (["googlebot-image", "storebot"], "/2", False), (("googlebot-news", "googlebot"), "/1", False)],
)
def test_6_3_ordered_token_lists(tokens: list[str], path: str, allowed: bool) -> None:
    """SPEC 6.3: the first token with a specific group wins; '*' only when none has one."""
    assert parse(TABLE).allowed(path, tokens) is allowed


def test_6_3_token_list_decisions_are_cached_per_list() -> None:
    """SPEC 6.3: repeated decisions with the same list (list or tuple) give the same answers."""
    robots = parse(TABLE)
    for _ in range(3):
        assert not robots.allowed("/1", ["googlebot-news", "googlebot"])
        assert robots.allowed("/1", ("googlebot", "googlebot-news"))


# -- which group decided: Verdict.group / Verdict.reason, the same from Robots.explain and AgentRules.explain ---------

NEWBIE = """user-agent: *
disallow: /

# our own crawler
user-agent: NewbieBot/2.0
disallow: /private/
allow: /private/press/

user-agent: otherbot
disallow: /other/

user-agent: newbiebot
disallow: /drafts/
"""


def _verdicts(body: str, path: str, agent: str | list[str]) -> list[Verdict]:
    robots = parse(body)
    return [robots.explain(path, agent), robots.compact(agent).explain(path)]


@pytest.mark.parametrize(("agent", "path", "group", "reason"), [
    # SPEC 6.2: the token's groups (lines 5 and 12, merged); '*' is not used, though it would disallow everything
    ("NewbieBot", "/private/x", AgentGroup("newbiebot", (5, 12)),
     "line 6 (Disallow: /private/) of the 'newbiebot' group (line 5)"),
    ("newbiebot", "/drafts/x", AgentGroup("newbiebot", (5, 12)),
     "line 13 (Disallow: /drafts/) of the 'newbiebot' group (line 12)"),
    ("NewbieBot", "/private/press/a", AgentGroup("newbiebot", (5, 12)),
     "line 7 (Allow: /private/press/) of the 'newbiebot' group (line 5)"),
    ("NewbieBot", "/public", AgentGroup("newbiebot", (5, 12)),
     "no rule of the 'newbiebot' groups (lines 5, 12) matches"),
    # no group names the token: the '*' group
    ("Scrapy", "/x", AgentGroup("*", (1,)), "line 2 (Disallow: /) of the '*' group (line 1)"),
    # SPEC 6.3: the first token that has a group
    (["nobot", "OtherBot", "newbiebot"], "/other/x", AgentGroup("otherbot", (9,)),
     "line 10 (Disallow: /other/) of the 'otherbot' group (line 9)"),
])
def test_the_verdict_names_the_group_that_decided(agent: str | list[str], path: str, group: AgentGroup,
                                                  reason: str) -> None:
    """SPEC 6.2/6.3: the verdict says which group the crawler obeyed: its token and its user-agent line."""
    for verdict in _verdicts(NEWBIE, path, agent):
        assert (verdict.group, verdict.reason) == (group, reason)


def test_the_group_of_a_multi_agent_group_is_its_line_naming_the_token() -> None:
    """SPEC 6.1: a group of several user-agent lines: the line naming the obeyed token (a '*' line for '*')."""
    body = "user-agent: a\nuser-agent: b\nuser-agent: *\ndisallow: /x\n"
    assert [v.reason for v in _verdicts(body, "/x", "b")] == ["line 4 (Disallow: /x) of the 'b' group (line 2)"] * 2
    assert [v.reason for v in _verdicts(body, "/x", "c")] == ["line 4 (Disallow: /x) of the '*' group (line 3)"] * 2


def test_no_group_applies_says_so() -> None:
    """SPEC 6.2: no group for the token and no '*' group: everything is allowed, and the verdict says why."""
    for verdict in _verdicts("user-agent: a\ndisallow: /\n", "/x", "MyBot"):
        assert verdict.group is None and verdict.allowed
        assert verdict.reason == "no group names 'MyBot' or '*'"
        assert str(verdict) == "allowed: no group names 'MyBot' or '*', so no rule applies to '/x'"
    assert parse("").explain("/x", ["a", "b"]).reason == "no group names 'a', 'b' or '*'"
