"""The public surface of scrapy_rep.matcher that other modules and the conformance runner rely on."""

from __future__ import annotations

from pathlib import Path

import scrapy_rep.matcher as matcher
from scrapy_rep.matcher import Robots, Rule, Verdict, parse

EXAMPLE = Path(__file__).resolve().parents[2] / "example_project" / "robots.txt"


def test_exports() -> None:
    """Everything in __all__ exists; the names the brief fixes are there."""
    assert all(hasattr(matcher, name) for name in matcher.__all__)
    assert {"parse", "Robots", "Verdict", "Rule", "report", "ParseReport", "is_valid_user_agent",
            "extract_user_agent", "path_params_query", "escape_pattern"} <= set(matcher.__all__)


def test_body_may_be_bytes_str_or_bytes_like() -> None:
    """SPEC 4: bytes are used as they are, str as UTF-8; bytearray and memoryview work too."""
    body = "user-agent: *\ndisallow: /é\n"
    for given in (body, body.encode(), bytearray(body.encode()), memoryview(body.encode())):
        robots = parse(given)
        assert isinstance(robots, Robots)
        assert not robots.allowed("/%C3%A9", "bot")


def test_agents_lists_the_named_tokens() -> None:
    """The tokens named by user-agent lines, lower-cased, in first-seen order ('*' is not a token)."""
    assert parse("user-agent: B\nuser-agent: *\nuser-agent: a/1\nuser-agent: b\n").agents == ["b", "a"]


def test_example_robots_txt_explains_itself() -> None:
    """The shipped example (README's first command) gives a readable verdict naming line and rule."""
    robots = parse(EXAMPLE.read_bytes())
    verdict = robots.explain("/private/x", "MyBot")
    assert isinstance(verdict, Verdict) and verdict.allowed is False
    assert verdict.rule == Rule(False, "/private/x", verdict.rule.line if verdict.rule else 0, "/private/x")
    assert "disallowed by line" in str(verdict) and "Disallow: /private/x" in str(verdict)
    assert repr(verdict) == f"<Verdict {verdict}>"
    assert robots.allowed("/private/y", "MyBot") and not robots.allowed("/private/y", "AnyBot")
    assert robots.allowed("/private/public/a", "AnyBot") and not robots.allowed("/a.pdf", "AnyBot")
    assert robots.allowed("/anything", "FriendlyBot")
    assert robots.sitemaps == ["https://example.com/sitemap.xml"]
