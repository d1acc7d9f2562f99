"""SPEC 6.3-6.4: the product token a crawl obeys robots.txt as, read from a User-Agent the way a site owner reads it."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy.settings import Settings

from scrapy_rep.config.tokens import InvalidToken, Tokens, product_token, tokens_from_settings
from scrapy_rep.matcher import parse

CHROME = ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 "
          "Safari/537.36")


@pytest.mark.parametrize(
    ("user_agent", "token"),
    [
        # a crawler's own product first
        ("examplebot/1.0 (+https://example.com/bot)", "examplebot"),
        ("Scrapy/2.19.0 (+https://scrapy.org)", "Scrapy"),  # Scrapy's default USER_AGENT
        ("RoboBot/2.0", "RoboBot"),
        ("RoboBot", "RoboBot"),
        ("googlebot*", "googlebot"),  # Google's ExtractUserAgent: the leading [A-Za-z_-] run
        ("MJ12bot/v1.4.8 (http://mj12bot.com/)", "MJ"),  # ... so digits end the token, as Google reads it
        ("DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)", "DuckDuckBot"),
        # inside (compatible; ...) behind browser products
        ("Mozilla/5.0 (compatible; newbiebot/1.0; +https://example.com/bot)", "newbiebot"),
        ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; "
         "+http://www.google.com/bot.html) Chrome/W.X.Y.Z Safari/537.36", "Googlebot"),
        ("Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) "
         "Chrome/W.X.Y.Z Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
         "Googlebot"),  # not "Build" (a word of a platform comment)
        ("Mozilla/5.0 (compatible; Bytespider; spider-feedback@bytedance.com)", "Bytespider"),  # no version
        ("Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)", "YandexBot"),
        # a Name/version product in a comment without "compatible"
        ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) "
         "Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)", "Applebot"),
        # browsers: no token of their own
        (CHROME, None),
        (CHROME + " Edg/120.0.0.0", None),
        (CHROME + " OPR/106.0.0.0", None),
        ("Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0", None),
        ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
         "Version/17.0 Mobile/15E148 Safari/604.1", None),
        ("Mozilla/5.0 (Windows NT 6.3; Trident/7.0; rv:11.0) like Gecko", None),
        ("Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)", None),
        ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 "
         "Safari/537.36", None),
        ("Mozilla/5.0", None),
        ("/1.0", None),
        ("", None),
    ],
)
def test_product_token(user_agent: str, token: str | None) -> None:
    assert product_token(user_agent) == token


def tokens(**settings: Any) -> Tokens:
    return tokens_from_settings(Settings(settings))


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"REP_USER_AGENT": "MyBot"}, Tokens(("MyBot",), "REP_USER_AGENT")),
        ({"REP_USER_AGENT": ["googlebot-news", "googlebot"], "USER_AGENT": "x"},
         Tokens(("googlebot-news", "googlebot"), "REP_USER_AGENT")),
        ({"ROBOTSTXT_USER_AGENT": "RoboBot/2.0", "USER_AGENT": "other/1"},
         Tokens(("RoboBot",), "ROBOTSTXT_USER_AGENT 'RoboBot/2.0'")),
        ({"ROBOTSTXT_USER_AGENT": "Mozilla/5.0 (compatible; robo/1.0)"},
         Tokens(("robo",), "ROBOTSTXT_USER_AGENT 'Mozilla/5.0 (compatible; robo/1.0)'")),
        ({"ROBOTSTXT_USER_AGENT": CHROME, "USER_AGENT": "other/1"},
         Tokens((), f"no token of its own in ROBOTSTXT_USER_AGENT {CHROME!r}")),
        ({"USER_AGENT": "Mozilla/5.0 (compatible; newbiebot/1.0)"},
         Tokens(("newbiebot",), "USER_AGENT 'Mozilla/5.0 (compatible; newbiebot/1.0)'")),
        ({"USER_AGENT": CHROME}, Tokens((), f"no token of its own in USER_AGENT {CHROME!r}")),
        ({"USER_AGENT": ""}, Tokens((), "no token of its own in USER_AGENT ''")),
    ],
)
def test_tokens_from_settings_say_where_they_came_from(settings: dict[str, Any], expected: Tokens) -> None:
    assert tokens(**settings) == expected


def test_an_invalid_rep_user_agent_names_the_entry() -> None:
    with pytest.raises(InvalidToken) as raised:
        tokens(REP_USER_AGENT=["ok", "not/ok"])
    assert (raised.value.setting, raised.value.value) == ("REP_USER_AGENT", ["ok", "not/ok"])
    assert raised.value.why == "'not/ok' is not a valid product token (only letters, '-' and '_')"


@pytest.mark.parametrize(
    ("found", "line"),
    [
        (Tokens(("a", "b"), "REP_USER_AGENT"), "obeying robots.txt as ['a', 'b'] (set by REP_USER_AGENT)"),
        (Tokens(("newbiebot",), "USER_AGENT 'Mozilla/5.0 (compatible; newbiebot/1.0)'"),
         "obeying robots.txt as ['newbiebot'] (the product token of USER_AGENT "
         "'Mozilla/5.0 (compatible; newbiebot/1.0)')"),
        (Tokens((), "no token of its own in USER_AGENT 'Mozilla/5.0'"),
         "obeying robots.txt as [] (only the * groups): no token of its own in USER_AGENT 'Mozilla/5.0'; set "
         "REP_USER_AGENT to the crawler's product token (or an ordered list of tokens) to obey the groups that name "
         "it"),
    ],
)
def test_summary(found: Tokens, line: str) -> None:
    assert found.summary() == line


def test_no_tokens_obey_only_the_star_groups() -> None:
    """The matcher takes ``()`` as "no token of its own": only the ``*`` groups apply (SPEC 6.2)."""
    robots = parse("User-agent: newbiebot\nDisallow: /n\n\nUser-agent: *\nDisallow: /star\n")
    assert not robots.allowed("https://example.com/star", ())
    assert robots.allowed("https://example.com/n", ())
    verdict = robots.explain("https://example.com/star", ())
    assert verdict.rule is not None and verdict.rule.written == "/star" and not verdict.allowed
    only_named = parse("User-agent: newbiebot\nDisallow: /\n")
    assert only_named.allowed("https://example.com/x", ())  # no * group: everything allowed
