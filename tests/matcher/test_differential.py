"""Differential tests: our matcher against Google's own C++ library (SPEC 4-7; Google is the arbiter).

Hypothesis writes robots.txt files from a grammar of realistic and tricky lines (typos, missing colons,
wildcards, ``$``, percent-escapes, non-ASCII, control characters, comments, CR/LF mixes, unknown keys,
over-long lines) plus URLs derived from the file's own patterns, and every decision and every parse
callback must agree with Google's.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_rep.matcher import parse

from ._google import google_allowed, google_events, our_directive_events, our_events

KEYS = ["user-agent", "User-Agent", "USER-AGENT", "useragent", "user agent", "user-agents", "allow", "Allow",
        "ALLOWED", "disallow", "Disallow", "dissallow", "disalow", "diasllow", "disallaw", "dissalow",
        "sitemap", "site-map", "Sitemap", "crawl-delay", "noindex", "clean-param", "host", "unicorn", "",
        "user", "dis allow", "-allow"]
SEPARATORS = [":", ": ", " : ", " ", "\t", "::", " \t", "", ":\t"]
AGENTS = ["FooBot", "foobot", "FOOBOT", "*", "* foo", "*foo", "Foo Bar", "foobot/1.2", "googlebot",
          "googlebot-news", "", "bar_baz", "Foo-Bot", "fóobot", "K", "\u212a", "foobot*", "*\tx", "*\x0bx"]
FRAGMENTS = ["/", "a", "b", "*", "$", "%61", "%2f", "%2F", "%zz", "%", "é", "ü", "?", ";", "=", "&", ".html",
             "index.html", "/index.htm", "#c", " ", "\t", "\x00", "\x01", "\x0b", "\x0c", "\x7f", "\u00a0",
             "\u2028", "x y", ":", "~", "+", "\ufeff"]
ENDINGS = ["\n", "\r\n", "\r", "\n\n", "\r\r\n"]
QUERY_AGENTS = ["FooBot", "foobot", "googlebot", "googlebot-news", "Foo", "bar_baz", "", "Foo Bar", "k", "x"]
RULE_KEYS = ["allow", "disallow", "Disallow", "ALLOW", "disalow", "dissallow", "allowed", "Disallow"]
URL_PREFIXES = ["", "", "/", "http://example.com", "https://example.com:8080/", "//example.com", "?", ";", "ftp:",
                "http://a.b/c://d", "a#b/"]

patterns = st.lists(st.sampled_from(FRAGMENTS), max_size=6).map("".join)


@st.composite
def noise(draw: st.DrawFn) -> str:
    """Any line of the grammar: junk, an over-long rule, or any key with any separator and value."""
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return draw(st.sampled_from(["", "#comment", "  # x", "junk line here", "<html>", "\ufeffallow: /a"]))
    if kind == 1:
        return "disallow: /" + "a" * draw(st.sampled_from([16650, 16651, 16652, 16653, 16660])) + "$"
    key = draw(st.sampled_from(KEYS))
    value = draw(st.sampled_from(AGENTS)) if "user" in key.lower() else draw(patterns)
    indent = draw(st.sampled_from(["", " ", "\t", "\x0b"]))
    comment = draw(st.sampled_from(["", "", " # note", "#"]))
    return f"{indent}{key}{draw(st.sampled_from(SEPARATORS))}{value}{comment}"


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A robots.txt made of groups (user-agent lines, then rules) with noise between, and its patterns."""
    lines: list[str] = [draw(st.sampled_from(["", "", "\ufeff", "\ufeff\ufeff"]))]
    rules: list[str] = []
    for _ in range(draw(st.integers(0, 4))):
        for _ in range(draw(st.integers(0, 3))):
            key = draw(st.sampled_from(["user-agent", "User-agent", "useragent"]))
            lines.append(f"{key}{draw(st.sampled_from([': ', ':', ' ', ' : ']))}{draw(st.sampled_from(AGENTS))}")
            if draw(st.integers(0, 4)) == 0:
                lines.append(draw(noise()))
        for _ in range(draw(st.integers(0, 4))):
            pattern = draw(patterns)
            rules.append(pattern)
            lines.append(f"{draw(st.sampled_from(RULE_KEYS))}{draw(st.sampled_from([': ', ':', ' ']))}{pattern}")
            if draw(st.integers(0, 4)) == 0:
                lines.append(draw(noise()))
    body = "".join(line + draw(st.sampled_from(ENDINGS)) for line in lines)
    return body[: draw(st.sampled_from([None, None, None, -1, -3]))], rules


@st.composite
def urls_for(draw: st.DrawFn, rules: list[str]) -> str:
    """A URL: random, or derived from one of the file's patterns (wildcards filled, with or without ``$``)."""
    if draw(st.booleans()) and rules:
        body = draw(st.sampled_from(rules)).replace("*", draw(st.sampled_from(["", "x", "/a/b", "%61"])))
        if body.endswith("$") and draw(st.booleans()):
            body = body[:-1]
    else:
        body = draw(patterns)
    suffix = draw(st.sampled_from(["", "", "#frag", "?q=1", "/", "$", "x", "\x00x"]))
    return draw(st.sampled_from(URL_PREFIXES)) + body + suffix


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), document=documents(), agent=st.sampled_from(QUERY_AGENTS))
def test_decisions_agree_with_google(data: st.DataObject, document: tuple[str, list[str]], agent: str) -> None:
    """SPEC 5-7: every decision equals Google's RobotsMatcher::OneAgentAllowedByRobots."""
    body, rules = document
    robots = parse(body)
    for url in data.draw(st.lists(urls_for(rules), min_size=1, max_size=8)):
        assert robots.allowed(url, agent) is google_allowed(body, agent, url), (body, agent, url)


@st.composite
def bodies(draw: st.DrawFn) -> str:
    """Any mix of grammar lines and line endings."""
    parts = [draw(st.sampled_from(["\ufeff", "\ufeff\ufeff", "", ""]))]
    for _ in range(draw(st.integers(0, 12))):
        parts += [draw(noise()), draw(st.sampled_from(ENDINGS))]
    return "".join(parts)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=bodies())
def test_parse_callbacks_agree_with_google(body: str) -> None:
    """SPEC 4-5: the same directives, values, line numbers and per-line metadata as Google's parser."""
    assert our_events(body) == google_events(body)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=bodies())
def test_directive_callbacks_agree_with_google(body: str) -> None:
    """SPEC 4-5: the metadata-free parser that ``parse`` uses finds the same directives, values and line numbers
    as Google's parser."""
    expected = [event for event in google_events(body) if event[0] != "meta"]
    assert our_directive_events(body.encode("utf-8")) == expected


@settings(max_examples=300, deadline=None)
@given(
    raw=st.binary(max_size=300),
    lines=st.lists(st.sampled_from([b"user-agent: foobot", b"user-agent: *", b"disallow: /a", b"allow: /a/b",
                                    b"disallow: /\xff", b"allow: /\xc3\xa9", b"\xef\xbb\xbf", b"\xef\xbb"]),
                   max_size=5),
    url=st.sampled_from(["/a", "/a/b", "/\xff", "/%FF", "/é", "/%C3%A9", "/b"]),
)
def test_decisions_on_arbitrary_bytes_agree_with_google(raw: bytes, lines: list[bytes], url: str) -> None:
    """SPEC 4.3: invalid UTF-8 and control bytes are read as Google reads them (bytes go to both sides)."""
    body = b"\n".join([*lines, raw])
    for agent in ("foobot", "other"):
        assert parse(body).allowed(url, agent) is google_allowed(body, agent, url), (body, agent, url)
