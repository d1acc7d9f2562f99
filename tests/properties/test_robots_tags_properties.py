"""Properties of ``robots_tags`` (robots meta tags and X-Robots-Tag headers) on arbitrary and shuffled input.

Hypothesis writes arbitrary bytes and text, and well-formed heads and header values built from directive pieces;
the tables in tests/matcher/test_robots_tags.py give the expected readings, these state invariants that need none.
"""

from __future__ import annotations

from datetime import datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_rep.matcher import NO_TAGS, RobotsTags, is_unavailable, robots_tags
from scrapy_rep.matcher._meta_tags import MAX_HEAD_BYTES
from scrapy_rep.matcher._robots_tags import MAX_HEADER_VALUES, MAX_NAME_CHARS

TOKENS = ("mybot",)
DIRECTIVES = st.sampled_from([
    "noindex", "nofollow", "none", "all", "noarchive", "nocache", "nosnippet", "notranslate", "noimageindex",
    "indexifembedded", "noai", "NoImageAI", "index", "max-snippet:50", "max-snippet:-1", "max-snippet: 0",
    "max-image-preview:large", "max-image-preview:standard", "max-image-preview:none", "max-video-preview:-1",
    "max-video-preview:10", "unavailable_after: 2030-01-01", "unavailable_after: Friday, 25-Jun-10 15:00:00 GMT",
    "unavailable_after: 25 Jun 2010 15:00:00 PST", "unavailable_after: 2030-01-01T00:00:00+01:00", "max-snippet:x",
])
CONTENTS = st.lists(DIRECTIVES, min_size=1, max_size=4).map(", ".join)
HEADERS = st.tuples(st.sampled_from(["", "mybot: ", "googlebot: ", "robots: "]), CONTENTS).map("".join)
META_TAGS = st.builds(
    lambda name, content, quote, name_first: (
        f"<meta name={quote}{name}{quote} content={quote}{content}{quote}>" if name_first
        else f"<meta content={quote}{content}{quote}\n name={quote}{name}{quote} />"),
    st.sampled_from(["robots", "ROBOTS", "mybot", "googlebot", "description"]),
    CONTENTS, st.sampled_from(['"', "'"]), st.booleans())
HEAD_PIECES = st.one_of(
    META_TAGS,
    st.sampled_from(["<title>t</title>", "<!-- <meta name=robots content=nofollow> -->", '<meta charset="utf-8">',
                     "<script>var a = '</head>';</script>", "<style>p{}</style>", '<link rel="x" href="/y">']),
    st.text(alphabet=st.characters(exclude_characters="<&", exclude_categories=("Cs",)), max_size=20),
)


def check_consistent(tags: RobotsTags) -> None:
    """The fields agree with ``directives`` and with each other."""
    assert isinstance(tags, RobotsTags)
    directives = tags.directives
    assert directives == tags.from_meta | tags.from_header
    for flag in ("noindex", "nofollow", "nosnippet", "noimageindex", "notranslate", "indexifembedded"):
        assert getattr(tags, flag) == (flag in directives)
    assert tags.noarchive == ("noarchive" in directives)
    assert "none" not in directives or {"noindex", "nofollow"} <= directives
    assert "nocache" not in directives or "noarchive" in directives
    assert all(name and name == name.strip() and len(name) <= MAX_NAME_CHARS for name in directives)
    assert tags.max_snippet is None or (tags.max_snippet >= -1 and "max-snippet" in directives)
    assert tags.max_video_preview is None or (tags.max_video_preview >= -1 and "max-video-preview" in directives)
    assert tags.max_image_preview in (None, "none", "standard", "large")
    assert tags.max_image_preview is None or "max-image-preview" in directives
    if tags.unavailable_after is not None:
        assert "unavailable_after" in directives and tags.unavailable_after.utcoffset() is not None
        assert is_unavailable(tags, tags.unavailable_after)
    assert (tags is NO_TAGS) == (not directives)
    for name in directives:
        assert tags.source(name) in ("meta tag", "X-Robots-Tag header", "meta tag and X-Robots-Tag header")


@settings(max_examples=200, deadline=None)
@given(headers=st.lists(st.one_of(st.binary(max_size=200), st.text(max_size=200), HEADERS), max_size=5),
       body=st.one_of(st.none(), st.binary(max_size=2000), st.lists(HEAD_PIECES, max_size=8).map(
           lambda pieces: "".join(pieces).encode("utf-8", "replace"))),
       tokens=st.lists(st.text(max_size=10), max_size=3))
def test_never_raises_and_is_consistent(headers: list[bytes | str], body: bytes | None, tokens: list[str]) -> None:
    check_consistent(robots_tags(headers, body, tokens))


@settings(max_examples=200, deadline=None)
@given(body=st.binary(max_size=3000), suffix=st.binary(max_size=500))
def test_arbitrary_bytes_with_meta_tags_never_raise(body: bytes, suffix: bytes) -> None:
    mixed = body[:1000] + b'<meta name="robots" content="noindex' + body[1000:] + b'">' + suffix
    check_consistent(robots_tags([suffix], mixed, TOKENS))


@settings(max_examples=200, deadline=None)
@given(headers=st.lists(HEADERS, max_size=MAX_HEADER_VALUES), tags=st.lists(META_TAGS, max_size=6),
       data=st.data())
def test_combining_is_order_independent(headers: list[str], tags: list[str], data: st.DataObject) -> None:
    shuffled_headers = data.draw(st.permutations(headers))
    shuffled_tags = data.draw(st.permutations(tags))
    first = robots_tags(headers, ("<head>" + "".join(tags) + "</head>").encode(), TOKENS)
    second = robots_tags(shuffled_headers, ("<head>" + "\n".join(shuffled_tags) + "</head>").encode(), TOKENS)
    assert first == second
    check_consistent(first)


@settings(max_examples=200, deadline=None)
@given(pieces=st.lists(HEAD_PIECES, max_size=10), tail=st.binary(max_size=2000),
       end=st.sampled_from([b"</head>", b"</HEAD >", b"<body>", b"<BODY class=x>"]))
def test_nothing_after_the_head_counts(pieces: list[str], tail: bytes, end: bytes) -> None:
    head = b"<html><head>" + "".join(pieces).encode()
    assert robots_tags([], head + end + tail, TOKENS) == robots_tags([], head + end, TOKENS)


@settings(max_examples=100, deadline=None)
@given(pieces=st.lists(HEAD_PIECES, max_size=10), tail=st.binary(max_size=2000))
def test_nothing_past_the_bound_counts(pieces: list[str], tail: bytes) -> None:
    head = (b"<html><head>" + "".join(pieces).encode()).ljust(MAX_HEAD_BYTES, b" ")
    assert robots_tags([], head + tail, TOKENS) == robots_tags([], head, TOKENS)


@settings(max_examples=200, deadline=None)
@given(header=HEADERS, extra=st.lists(HEADERS, max_size=3))
def test_more_input_never_lifts_a_restriction(header: str, extra: list[str]) -> None:
    """Adding header values only adds directives and tightens the limits (the most restrictive wins)."""
    alone, more = robots_tags([header], None, TOKENS), robots_tags([header, *extra], None, TOKENS)
    assert alone.directives <= more.directives
    for limit in ("max_snippet", "max_video_preview"):
        before, after = getattr(alone, limit), getattr(more, limit)
        assert before is None or before == -1 or (after is not None and 0 <= after <= before)
    if alone.unavailable_after is not None:
        assert more.unavailable_after is not None and more.unavailable_after <= alone.unavailable_after


def test_is_unavailable_reads_no_clock() -> None:
    tags = robots_tags(["unavailable_after: 2030-01-01"], None, TOKENS)
    assert not is_unavailable(tags, datetime(2000, 1, 1)) and is_unavailable(tags, datetime(2031, 1, 1))
