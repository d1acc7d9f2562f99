"""SPEC 4: file format and limits (line endings, BOM, size cap, junk, invalid UTF-8, never raising)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_rep.matcher import MAX_BYTES, MAX_LINE_BYTES, parse, report

RULES = ["user-agent: *", "disallow: /a", "allow: /a/b", "disallow: /c$"]


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
def test_4_1_each_line_ending(ending: str) -> None:
    """SPEC 4.1: lines end with CR, CR LF or LF; the line numbers are the same either way."""
    robots = parse(ending.join(RULES))
    assert not robots.allowed("/a/x", "bot")
    assert robots.allowed("/a/b", "bot")
    assert robots.explain("/c", "bot").rule is not None
    assert robots.explain("/c", "bot").rule.line == 4  # type: ignore[union-attr]


def test_4_1_mixed_line_endings_count_lines_like_google() -> None:
    """SPEC 4.1: CR LF is one break, LF CR two, CR CR LF two."""
    body = "user-agent: *\r\ndisallow: /a\n\rdisallow: /b\r\r\ndisallow: /c\rdisallow: /d"
    robots = parse(body)
    lines = {path: robots.explain(path, "bot").rule.line for path in ("/a", "/b", "/c", "/d")}  # type: ignore[union-attr]
    assert lines == {"/a": 2, "/b": 4, "/c": 6, "/d": 7}
    assert report(body).last_line_seen == 7


@pytest.mark.parametrize("bom", [b"\xef\xbb\xbf", b"\xef\xbb", b"\xef"], ids=["full", "two-bytes", "one-byte"])
def test_4_2_byte_order_mark_or_its_prefix_is_skipped(bom: bytes) -> None:
    """SPEC 4.2: a leading UTF-8 BOM is ignored; Google also skips a leading prefix of it."""
    robots = parse(bom + b"user-agent: *\ndisallow: /")
    assert not robots.allowed("/x", "bot")


def test_4_2_byte_order_mark_elsewhere_is_part_of_the_line() -> None:
    """SPEC 4.2: only a BOM at the very start is skipped; on a later line it spoils that line's key."""
    robots = parse("user-agent: *\n\ufeffdisallow: /\ndisallow: /b")
    assert robots.allowed("/x", "bot")
    assert not robots.allowed("/b", "bot")
    assert report("user-agent: *\n\ufeffdisallow: /").lines[1].metadata.has_directive  # an unknown key


def test_4_2_html_body_uses_only_its_valid_lines() -> None:
    """SPEC 4.2: an HTML error page has no directives (so everything is allowed) unless a line is valid."""
    html = "<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head>\n<body><h1>Not Found</h1>\n</body></html>"
    assert parse(html).allowed("/anything", "bot")
    assert parse(html + "\nuser-agent: *\ndisallow: /private\n").allowed("/x", "bot")
    assert not parse(html + "\nuser-agent: *\ndisallow: /private\n").allowed("/private/x", "bot")
    assert parse("<p>user-agent: *</p>\n<p>disallow: /</p>").allowed("/x", "bot")  # keys "<p>user-agent" etc.


def test_4_3_invalid_utf8_never_raises_and_its_bytes_are_escaped() -> None:
    """SPEC 4.3, 7.2: invalid bytes are kept and percent-encoded one by one, as Google does."""
    robots = parse(b"user-agent: *\ndisallow: /caf\xe9\ndisallow: /\xff\xfe/x\n")
    assert not robots.allowed("/caf%E9", "bot")
    assert robots.allowed("/caf%e9", "bot")  # the URL's escapes are not normalised (Google's contract)
    assert robots.allowed("/caf%C3%A9", "bot")
    assert not robots.allowed("/%FF%FE/x", "bot")
    assert report(b"user-agent: *\ndisallow: /caf\xe9\n").lines[1].metadata.has_invalid_utf8


def test_4_4_only_the_first_512000_bytes_are_used() -> None:
    """SPEC 4.4: content past 512,000 bytes is ignored."""
    head = b"user-agent: *\ndisallow: /a\n"
    filler = b"#" * (MAX_BYTES - len(head) - 1) + b"\n"
    body = head + filler + b"disallow: /b\n"
    assert len(head + filler) == MAX_BYTES
    robots = parse(body)
    assert not robots.allowed("/a", "bot")
    assert robots.allowed("/b", "bot")
    assert report(body).ignored_bytes == len(b"disallow: /b\n")


def test_4_4_the_cap_cuts_even_mid_line() -> None:
    """SPEC 4.4: a rule that straddles the limit keeps only its bytes before the limit."""
    head = b"user-agent: *\n" + b"#" * 100 + b"\n"
    body = head + b"disallow: /abcdef\n"
    cap = len(head) + len(b"disallow: /abc")
    robots = parse(body, max_bytes=cap)
    assert not robots.allowed("/abcX", "bot")  # the rule became "/abc"
    assert parse(body, max_bytes=None).allowed("/abcX", "bot")


def test_4_4_the_cap_counts_utf8_bytes_of_text_bodies() -> None:
    """SPEC 4.4: a str body is measured in its UTF-8 bytes."""
    body = "user-agent: *\n#" + "é" * 100 + "\ndisallow: /\n"
    cap = len(body.encode()) - len("disallow: /\n")
    assert parse(body, max_bytes=cap).allowed("/x", "bot")
    assert not parse(body, max_bytes=cap + len("disallow: /")).allowed("/x", "bot")


def test_long_lines_are_truncated_like_google() -> None:
    """Google extension: a line keeps its first 16,663 bytes; the rest is dropped and the line flagged."""
    exact = "disallow: /" + "a" * (MAX_LINE_BYTES - len("disallow: /"))
    longer = exact + "bcd"
    robots = parse(f"user-agent: *\n{longer}$\n")
    assert not robots.allowed("/" + "a" * (MAX_LINE_BYTES - 11) + "zzz", "bot")  # "$" and "bcd" were cut off
    parsed = report(f"user-agent: *\n{exact}\n{longer}\n")
    assert [line.metadata.is_line_too_long for line in parsed.lines] == [False, False, True, False]


def test_nul_byte_ends_the_line_and_the_path() -> None:
    """Google extension (checked against its library): Google reads lines and paths as C strings."""
    robots = parse("user-agent: *\ndisallow: /x\0yz\n")
    assert not robots.allowed("/xa", "bot")
    assert parse("user-agent: *\ndisallow: /xy\n").allowed("/x\0y", "bot")


@settings(max_examples=300, deadline=None)
@given(body=st.binary(max_size=2000), url=st.text(max_size=200), agent=st.text(max_size=20))
def test_4_5_arbitrary_bytes_and_urls_never_raise(body: bytes, url: str, agent: str) -> None:
    """SPEC 4.5: any bytes parse; any URL and agent give a bool, an explanation and a report."""
    robots = parse(body)
    assert type(robots.allowed(url, agent)) is bool
    assert type(robots.allowed(url, [agent, "googlebot"])) is bool
    assert str(robots.explain(url, agent))
    assert report(body).last_line_seen >= 1


@settings(max_examples=300, deadline=None)
@given(body=st.text(max_size=2000), url=st.text(max_size=200))
def test_4_5_arbitrary_text_never_raises(body: str, url: str) -> None:
    """SPEC 4.5: any str (lone surrogates included) parses; any URL gives a bool."""
    assert type(parse(body).allowed(url, "bot")) is bool
