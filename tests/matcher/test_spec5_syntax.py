"""SPEC 5: line syntax (fields, comments, whitespace, typos, missing colons, empty values, sitemaps,
crawl-delay and clean-param), and what the per-line report says about each line."""

from __future__ import annotations

import pytest

from scrapy_rep.matcher import LineKind, parse, report


def test_5_1_comments_and_surrounding_whitespace() -> None:
    """SPEC 5.1: whitespace around field and value is ignored; '#' starts a comment anywhere."""
    robots = parse("  User-agent  :  *  # everyone\n\tDisallow\t:\t/a#b\n# disallow: /c\n")
    assert not robots.allowed("/a", "bot")
    assert robots.allowed("/c", "bot")
    assert not robots.allowed("/a#b", "bot")  # the fragment is not part of the path; /a matches


@pytest.mark.parametrize("space", ["\u00a0", "\u2028", "\u3000"])
def test_5_1_only_ascii_whitespace_is_trimmed(space: str) -> None:
    """Google extension: only ASCII whitespace is trimmed; other spaces stay in keys and values."""
    assert parse(f"user-agent: *\n{space}disallow: /a\n").allowed("/a", "bot")  # key is "<space>disallow"
    robots = parse(f"user-agent: *\ndisallow: /a{space}\n")
    assert robots.allowed("/a", "bot")
    assert not robots.allowed("/a" + "".join(f"%{b:02X}" for b in space.encode()), "bot")


@pytest.mark.parametrize("key", ["USER-AGENT", "User-Agent", "user-agent", "uSeR-aGeNt"])
def test_5_2_field_names_are_case_insensitive(key: str) -> None:
    """SPEC 5.2: field names are case-insensitive."""
    assert not parse(f"{key}: *\nDISALLOW: /\n").allowed("/x", "bot")


@pytest.mark.parametrize(
    ("line", "effective"),
    [("useragent: bot", "user-agent"), ("user agent: bot", "user-agent"), ("dissallow: /", "disallow"),
     ("dissalow: /", "disallow"), ("disalow: /", "disallow"), ("diasllow: /", "disallow"),
     ("disallaw: /", "disallow"), ("site-map: https://e/s.xml", "sitemap")],
)
def test_5_2_accepted_typos(line: str, effective: str) -> None:
    """SPEC 5.2: Google accepts these misspellings, and reports them as typos."""
    parsed = report(line).lines[0]
    assert parsed.kind is {"user-agent": LineKind.USER_AGENT, "disallow": LineKind.DISALLOW,
                           "sitemap": LineKind.SITEMAP}[effective]
    assert parsed.is_typo


def test_5_2_keys_are_recognised_by_their_start() -> None:
    """Google extension: a key that starts with a field name counts as that field ("disallowed", "allowance")."""
    robots = parse("user-agents: *\ndisallowed: /a\nallowance: /a/b\n")
    assert not robots.allowed("/a", "bot")
    assert robots.allowed("/a/b", "bot")
    assert parse("user-agent: *\ndis-allow: /\n").allowed("/x", "bot")  # not a typo Google knows


def test_5_2_missing_colon_between_exactly_two_tokens() -> None:
    """Google extension: "disallow /a" works; with three tokens the line is ignored."""
    assert not parse("user-agent *\ndisallow /a\n").allowed("/a", "bot")
    assert parse("user-agent: *\ndisallow /a /b\n").allowed("/a", "bot")
    assert parse("user-agent: *\ndisallow\t\t/a\n").allowed("/a", "bot") is False
    line = report("disallow /a").lines[0]
    assert line.metadata.is_missing_colon_separator and line.kind is LineKind.DISALLOW


def test_5_3_other_fields_do_not_change_decisions_but_are_recorded() -> None:
    """SPEC 5.3, 6.5: crawl-delay is recorded per group, clean-param file-wide (Yandex's reading); neither
    decides anything."""
    body = ("user-agent: slowbot\ncrawl-delay: 2.5\nclean-param: ref /articles/\nclean-param: sid\ndisallow: /x\n"
            "user-agent: *\ncrawl-delay: soon\ncrawl-delay: 7\nhost: example.com\n")
    robots = parse(body)
    assert robots.crawl_delay("SlowBot") == 2.5
    assert [(rule.line, rule.written) for rule in robots.clean_params] == [(3, "ref /articles/"), (4, "sid")]
    assert robots.compact("other").clean_params == robots.clean_params  # whatever the group
    assert robots.crawl_delay("other") == 7.0  # the first valid value of the group
    assert robots.allowed("/y", "slowbot") and not robots.allowed("/x", "slowbot")
    assert parse("crawl-delay: 3\nuser-agent: *\n").crawl_delay("bot") is None  # before any group


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "", "1e400"])
def test_5_3_invalid_crawl_delays_are_ignored(value: str) -> None:
    """SPEC 6.5: only finite, non-negative delays are kept."""
    assert parse(f"user-agent: *\ncrawl-delay: {value}\n").crawl_delay("bot") is None


def test_5_4_empty_rule_values_are_ignored() -> None:
    """SPEC 5.4: "Disallow:" allows everything; "Allow:" alone does nothing."""
    assert parse("user-agent: *\ndisallow:\n").allowed("/x", "bot")
    assert not parse("user-agent: *\nallow:\ndisallow: /\n").allowed("/x", "bot")


def test_5_4_patterns_are_case_sensitive() -> None:
    """SPEC 5.4: allow/disallow values are case-sensitive."""
    robots = parse("user-agent: *\ndisallow: /Private\n")
    assert not robots.allowed("/Private/x", "bot")
    assert robots.allowed("/private/x", "bot")


def test_5_5_sitemaps_anywhere_in_file_order_as_written() -> None:
    """SPEC 5.5: sitemap lines belong to no group, keep their case, and may point anywhere."""
    body = ("Sitemap: https://example.com/A.xml\nuser-agent: a\nsitemap: https://other.example/b.xml # c\n"
            "disallow: /\nSITEMAP:https://example.com/c.xml\nsitemap:\n")
    assert parse(body).sitemaps == ["https://example.com/A.xml", "https://other.example/b.xml",
                                    "https://example.com/c.xml"]


def test_5_6_user_agent_value_is_its_product_token() -> None:
    """SPEC 5.6: "googlebot/1.2" and "googlebot*" name googlebot; the crawler's own token is compared whole."""
    for value in ("googlebot/1.2", "googlebot*", "GoogleBot", "googlebot (compatible)"):
        assert not parse(f"user-agent: {value}\ndisallow: /\n").allowed("/x", "googlebot"), value
    assert parse("user-agent: googlebot\ndisallow: /\n").allowed("/x", "googlebot/1.2")  # Google's contract


def test_5_6_star_followed_by_space_is_still_global() -> None:
    """Google extension: "user-agent: * foo" is the global group; "*foo" is not."""
    assert not parse("user-agent: * foo\ndisallow: /\n").allowed("/x", "bot")
    assert parse("user-agent: *foo\ndisallow: /\n").allowed("/x", "bot")


def test_report_flags_what_google_drops_silently() -> None:
    """The lint view: rules before any user-agent, unused keys, unknown keys, invalid UTF-8, over-cap bytes."""
    parsed = report(b"disallow: /early\nuser-agent: *\ncrawl-delay: 4\nunicorn: yes\ndisallow: /\xff\n",
                    max_bytes=71)
    kinds = [line.kind for line in parsed.lines]
    assert kinds == [LineKind.DISALLOW, LineKind.USER_AGENT, LineKind.UNUSED, LineKind.UNKNOWN, LineKind.DISALLOW]
    assert parsed.lines[0].before_user_agent and not parsed.lines[4].before_user_agent
    assert parsed.lines[4].metadata.has_invalid_utf8
    assert parsed.lines[3].key == "unicorn" and parsed.lines[3].value == "yes"
    assert parsed.ignored_bytes == 1  # the final newline
    assert (parsed.valid_directives, parsed.unknown_directives) == (3, 2)
