"""The real corpus (../shared/corpus/robots, 2000 robots.txt files): robustness (SPEC 4.5) and total
agreement with Google's library on URLs derived from each file's own rules (SPEC 5-7)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_rep.matcher import MAX_BYTES, LineKind, LineMetadata, ParseReport, ignored_lines, parse, parse_lines, report
from scrapy_rep.matcher._parser import _CHUNK_BYTES, _chunked_lines, parse_directives

from ._shared import CORPUS, require

_RULE_VALUE = re.compile(rb"^[ \t]*(?:dis)?allow[ \t]*:[ \t]*([^#\r\n]*)", re.IGNORECASE | re.MULTILINE)
URLS_PER_FILE = 20
URLS_PER_NAMED_AGENT = 3


def corpus_files() -> list[Path]:
    return sorted(require(CORPUS).glob("*.txt"))


def derived_urls(body: bytes, rng: random.Random) -> list[str]:
    """URLs built from the file's rule values: wildcards filled with sample text, with and without ``$``,
    with suffixes; plus random paths. At most ``URLS_PER_FILE``, chosen with ``rng``."""
    urls = ["/", "/index.html", "https://example.com/a/b?c=d#e"]
    for raw in _RULE_VALUE.findall(body):
        pattern = raw.strip().decode("utf-8", "replace")
        filled = pattern.replace("*", rng.choice(["", "x", "a/b.html", "?q=1"]))
        bare = filled.removesuffix("$")
        urls += [filled, bare, bare + "z", bare + "/q?x=1", "http://example.com" + bare]
    chosen = rng.sample(urls, min(len(urls), URLS_PER_FILE - 2))
    return chosen + ["/" + "".join(rng.choice("ab/?=.%-_") for _ in range(rng.randint(0, 10))) for _ in range(2)]


def test_every_corpus_file_parses_and_answers() -> None:
    """SPEC 4.5: no file raises; every decision is a bool; the per-line report covers every line."""
    for path in corpus_files():
        body = path.read_bytes()
        robots = parse(body)
        for url in ("/", "/private/x?y=1", "https://example.com/a%20b", ""):
            for agent in ("googlebot", "FooBot", ["googlebot-news", "googlebot"]):
                assert type(robots.allowed(url, agent)) is bool
                assert str(robots.explain(url, agent))
        parsed = report(body)
        assert [line.line_num for line in parsed.lines] == list(range(1, len(parsed.lines) + 1))


class _Directives:
    """Records every directive callback with its raw bytes; ignores the per-line metadata."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int, bytes, bytes]] = []

    def user_agent(self, line: int, value: bytes) -> None:
        self.calls.append(("user-agent", line, b"", value))

    def allow(self, line: int, value: bytes) -> None:
        self.calls.append(("allow", line, b"", value))

    def disallow(self, line: int, value: bytes) -> None:
        self.calls.append(("disallow", line, b"", value))

    def sitemap(self, line: int, value: bytes) -> None:
        self.calls.append(("sitemap", line, b"", value))

    def unknown(self, line: int, key: bytes, value: bytes) -> None:
        self.calls.append(("unknown", line, key, value))

    def line_metadata(self, line: int, metadata: LineMetadata) -> None:
        pass


def test_corpus_directives_of_the_fast_parser_equal_parse_lines() -> None:
    """SPEC 4-5: on every corpus file (raw bytes, invalid UTF-8 included), the metadata-free parser that ``parse``
    uses makes exactly the directive calls of ``parse_lines`` (whose callbacks the differential tests check
    against Google's)."""
    for path in corpus_files():
        body = path.read_bytes()
        fast, full = _Directives(), _Directives()
        parse_directives(body, fast)
        parse_lines(body, full)
        assert fast.calls == full.calls, path.name


@pytest.mark.parametrize("breaks", [b"\n", b"\r\n", b"\r", b"\n\n", b"\r\r\n", b"\n\r"])
@pytest.mark.parametrize("shift", range(-3, 4))
def test_chunked_lines_equal_splitlines_at_every_cut(breaks: bytes, shift: int) -> None:
    """Issue 21: a body longer than ``_CHUNK_BYTES`` is split a chunk at a time, with exactly ``splitlines``'s lines
    (none lost, split or added), whichever line break falls at or near a chunk's end, with or without a last
    break."""
    line = b"Disallow: /" + b"x" * (_CHUNK_BYTES - 11 + shift)
    for tail in (b"", breaks, breaks + b"Allow: /a"):
        body = line + breaks + line + breaks + b"x" * shift + line + tail
        assert list(_chunked_lines(body)) == body.splitlines()
        assert list(_chunked_lines(b"a\n" * 40_000 + tail)) == (b"a\n" * 40_000 + tail).splitlines()


_PIECES = [b"user-agent", b"Disallow", b"allow", b"sitemap", b"crawl-delay", b"useragent", b"disalow", b"x", b":",
           b" ", b"\t", b"\x0b", b"\x0c", b"\x1c", b"\x85", b"#", b"\0", b"\r", b"\n", b"\r\n", b"/a*", b"$",
           b"\xef\xbb\xbf", b"\xef", b"\xff", b"\xc3\xa9", b"a" * 16660]


@settings(max_examples=1000, deadline=None)
@given(body=st.lists(st.sampled_from(_PIECES), max_size=20).map(b"".join))
def test_fast_parser_directives_equal_parse_lines_on_any_bytes(body: bytes) -> None:
    """SPEC 4-5: on bytes mixing keys, separators, control bytes (only CR and LF end lines), comments, NULs,
    BOM pieces and over-long lines, ``parse_directives`` makes exactly ``parse_lines``'s directive calls."""
    fast, full = _Directives(), _Directives()
    parse_directives(body, fast)
    parse_lines(body, full)
    assert fast.calls == full.calls


def _ignored_in(capped: ParseReport) -> int:
    """The oracle of ``ignored_lines``: the report's lines with text that are no directive Google reads."""
    return sum(1 for line in capped.lines
               if not (line.metadata.is_empty or line.metadata.is_comment)
               and (not line.metadata.has_directive or line.kind in (LineKind.UNKNOWN, LineKind.UNUSED)))


def test_corpus_ignored_lines_equal_the_reports() -> None:
    """``ignored_lines`` (the count lint and the crawl's soft-404 warning give) equals the per-line report's count
    on every corpus file, whole and cut at a small cap."""
    for path in corpus_files():
        body = path.read_bytes()
        for cap in (MAX_BYTES, 700):
            capped = report(body, max_bytes=cap)
            assert ignored_lines(body, max_bytes=cap) == capped.ignored_lines == _ignored_in(capped), (path.name, cap)
            parsed = parse(body, max_bytes=cap)  # the crawl's way: the count of lines read from its own parse
            assert ignored_lines(body, max_bytes=cap, robots=parsed) == capped.ignored_lines, (path.name, cap)


@settings(max_examples=1000, deadline=None)
@given(body=st.lists(st.sampled_from(_PIECES), max_size=20).map(b"".join))
def test_ignored_lines_equal_the_reports_on_any_bytes(body: bytes) -> None:
    """The same on bytes mixing keys, separators, control bytes, comments, NULs, BOM pieces and over-long lines."""
    whole = report(body, max_bytes=None)
    assert ignored_lines(body, max_bytes=None) == whole.ignored_lines == _ignored_in(whole)
    assert ignored_lines(body, max_bytes=None, robots=parse(body, max_bytes=None)) == whole.ignored_lines


@pytest.mark.parametrize(("body", "ignored"), [
    (b"", 0),
    (b"<html>\n<body>\n  <p>Not found</p>\n</body></html>\n", 4),
    (b"User-agent: *\nDisallow: /a\nCrawl-delay: 5\n# a comment\n\nfoo bar baz\nSitemap: /s.xml\n", 2),
    (b"useragent *\ndisalow: /x  # typos Google accepts\nnoindex: /y\n", 1),
    (b"\xef\xbb\xbfuser-agent: a\r\nallow: /\rjunk\0 # after a NUL\n", 1),
])
def test_ignored_lines_table(body: bytes, ignored: int) -> None:
    assert ignored_lines(body) == ignored
    assert ignored_lines(body, robots=parse(body)) == ignored


def test_corpus_decisions_agree_with_google() -> None:
    """SPEC 5-7: for each file, googlebot and a ``*``-only agent on its derived URLs, and every agent the file
    names on a few of them."""
    from ._google import google_allowed

    mismatches = []
    for path in corpus_files():
        text = path.read_bytes().decode("utf-8", "replace")  # the bindings take text; both sides get the same
        rng = random.Random(path.name)
        robots = parse(text, max_bytes=None)  # Google's library has no size cap (SPEC 4.4 is ours)
        urls = derived_urls(text.encode("utf-8"), rng)
        checks = [(agent, url) for agent in ("googlebot", "FooBot") for url in urls]
        checks += [(agent, url) for agent in robots.agents for url in rng.sample(urls, URLS_PER_NAMED_AGENT)]
        mismatches += [(path.name, agent, url) for agent, url in checks
                       if robots.allowed(url, agent) is not google_allowed(text, agent, url)]
    assert mismatches == []


def test_corpus_parse_callbacks_agree_with_google() -> None:
    """SPEC 4-5: each file gives Google's directives, values, line numbers and line metadata."""
    from ._google import google_events, our_events

    for path in corpus_files():
        text = path.read_bytes().decode("utf-8", "replace")
        assert our_events(text) == google_events(text), path.name


@pytest.mark.parametrize("agent", ["googlebot", "FooBot"])
def test_corpus_bytes_decisions_agree_with_google(agent: str) -> None:
    """SPEC 4.3: the raw bytes (invalid UTF-8 included) decide as Google decides them, on files that are not
    valid UTF-8."""
    from ._google import google_allowed

    for path in corpus_files():
        body = path.read_bytes()
        try:
            body.decode("utf-8")
            continue
        except UnicodeDecodeError:
            pass
        robots = parse(body, max_bytes=None)
        for url in derived_urls(body, random.Random(path.name)):
            assert robots.allowed(url, agent) is google_allowed(body, agent, url), (path.name, url)


def test_corpus_files_past_the_cap_decide_as_google_on_their_first_512000_bytes() -> None:
    """SPEC 4.4: for files past the cap, our default parse equals Google's answer on the truncated body."""
    from ._google import google_allowed

    big = [path for path in corpus_files() if path.stat().st_size > MAX_BYTES]
    assert big, "the corpus holds files past the cap"
    for path in big:
        body = path.read_bytes()
        robots = parse(body)
        truncated = body[:MAX_BYTES]
        for url in derived_urls(body, random.Random(path.name)):
            for agent in ("googlebot", "FooBot"):
                assert robots.allowed(url, agent) is google_allowed(truncated, agent, url), (path.name, url)
