"""Page-level robots directives (``robots_tags``): robots meta tags and X-Robots-Tag headers (see ``_robots_tags``).

Tables: first the examples of Google's "Robots meta tag, data-nosnippet, and X-Robots-Tag specifications"
(developers.google.com/search/docs/crawling-indexing/robots-meta-tag), then the HTML reading, the combining, the
values, the dates and the decisions where the document is silent.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from scrapy_rep.matcher import NO_TAGS, RobotsTags, is_unavailable, robots_tags
from scrapy_rep.matcher._meta_tags import MAX_HEAD_BYTES
from scrapy_rep.matcher._robots_tags import MAX_HEADER_CHARS, MAX_NAME_CHARS, MAX_UNKNOWN
from scrapy_rep.matcher._tag_dates import parse_date

UTC = timezone.utc


def page(head: str) -> bytes:
    """An HTML page with ``head`` as its head."""
    return f"<!DOCTYPE html>\n<html><head>\n{head}\n</head>\n<body>(…)</body>\n</html>".encode()


def names(headers: list[str] | tuple[str, ...] = (), body: bytes | None = None,
          tokens: tuple[str, ...] = ("mybot",)) -> str:
    """The directives that applied, sorted and comma-joined: compact expectations."""
    return ",".join(sorted(robots_tags(headers, body, tokens).directives))


# Google's examples: meta tags ("Using the robots meta tag", "Handling combined indexing and serving rules")
@pytest.mark.parametrize(("head", "tokens", "expected"), [
    ('<meta name="robots" content="noindex">', ("mybot",), "noindex"),
    ('<meta name="googlebot" content="noindex">', ("googlebot",), "noindex"),
    ('<meta name="googlebot" content="noindex">', ("mybot",), ""),  # another crawler's tag
    ('<meta name="googlebot-news" content="noindex">', ("googlebot",), ""),
    ('<meta name="googlebot-news" content="nosnippet">', ("googlebot-news",), "nosnippet"),
    ('<meta name="AdsBot-Google" content="noindex">', ("AdsBot-Google",), "noindex"),
    ('<meta name="googlebot" content="notranslate">\n<meta name="googlebot-news" content="nosnippet">',
     ("googlebot", "googlebot-news"), "nosnippet,notranslate"),
    ('<meta name="googlebot" content="noindex">\n<meta name="googlebot-news" content="nosnippet">',
     ("googlebot",), "noindex"),
    ('<meta name="robots" content="noindex, nofollow">', ("mybot",), "nofollow,noindex"),
    ('<meta name="robots" content="noindex">\n<meta name="robots" content="nofollow">', ("mybot",), "nofollow,noindex"),
    ('<meta name="robots" content="none">', ("mybot",), "nofollow,noindex,none"),
    ('<meta name="robots" content="all">', ("mybot",), "all"),
    ('<meta name="googlebot" content="noindex">\n<meta name="googlebot" content="indexifembedded">', ("googlebot",),
     "indexifembedded,noindex"),
    ('<meta name="googlebot" content="noindex,indexifembedded">', ("googlebot",), "indexifembedded,noindex"),
    ('<meta name="robots" content="noimageindex">', ("mybot",), "noimageindex"),
])
def test_google_meta_examples(head: str, tokens: tuple[str, ...], expected: str) -> None:
    assert names(body=page(head), tokens=tokens) == expected


# Google's examples: X-Robots-Tag ("Using the X-Robots-Tag HTTP header")
@pytest.mark.parametrize(("headers", "tokens", "expected"), [
    (["noindex"], ("mybot",), "noindex"),
    (["noindex, nofollow"], ("mybot",), "nofollow,noindex"),
    (["noimageindex", "unavailable_after: 25 Jun 2010 15:00:00 PST"], ("mybot",), "noimageindex,unavailable_after"),
    (["googlebot: nofollow", "otherbot: noindex, nofollow"], ("googlebot",), "nofollow"),
    (["googlebot: nofollow", "otherbot: noindex, nofollow"], ("otherbot",), "nofollow,noindex"),
    (["googlebot: nofollow", "otherbot: noindex, nofollow"], ("mybot",), ""),
    (["googlebot: noindex", "googlebot: indexifembedded"], ("googlebot",), "indexifembedded,noindex"),
    (["googlebot: noindex,indexifembedded"], ("Googlebot",), "indexifembedded,noindex"),
    (["GoogleBot: NoIndex"], ("googlebot",), "noindex"),  # header values and agents are case-insensitive
])
def test_google_header_examples(headers: list[str], tokens: tuple[str, ...], expected: str) -> None:
    assert names(headers, tokens=tokens) == expected


def test_google_header_date_example() -> None:
    tags = robots_tags([b"noimageindex", b"unavailable_after: 25 Jun 2010 15:00:00 PST"], None, ("mybot",))
    assert tags.noimageindex and tags.unavailable_after == datetime(2010, 6, 25, 23, 0, tzinfo=UTC)
    assert tags.from_header == tags.directives and tags.from_meta == frozenset()


def test_the_more_restrictive_rule_applies() -> None:
    """Google: with both max-snippet:50 and nosnippet, nosnippet applies; both are reported."""
    tags = robots_tags([], page('<meta name="robots" content="max-snippet:50, nosnippet">'), ("mybot",))
    assert tags.nosnippet and tags.max_snippet == 50


# The HTML reading: attributes in any order, any quoting and case, whitespace; only the head; skipped text.
@pytest.mark.parametrize(("body", "expected"), [
    (page("<META NAME=ROBOTS CONTENT=NOINDEX>"), "noindex"),
    (page("<meta content='noindex' name='robots'>"), "noindex"),
    (page('<meta\n  name = "robots"\n\tcontent =\n"noindex,\n nofollow" />'), "nofollow,noindex"),
    (page('<meta name="robots" content="noindex"/>'), "noindex"),
    (page("<meta name=robots content=noindex/>"), "noindex"),  # Decision: the trailing "/" is dropped
    (page('<meta name=" Robots " content=" NoIndex ">'), "noindex"),
    (page('<meta name="MyBot" content="nofollow">'), "nofollow"),  # the crawler's own token
    (page('<meta content="a>b, noindex" name="robots">'), "a>b,noindex"),  # ">" inside a quoted value
    (page('<meta name="robots" content="noindex&#44;nofollow">'), "nofollow,noindex"),  # entities unescaped
    (page('<meta name="robots" content="noindex" name="other">'), "noindex"),  # the first of a repeated attribute
    (page('<meta name="robots">'), ""),
    (page('<meta name="description" content="noindex">'), ""),
    (page('<meta property="robots" content="noindex">'), ""),
    (page('<meta name="robots" content="">'), ""),
    (page('<!-- <meta name="robots" content="noindex"> -->'), ""),
    (page('<!-- </head> --><meta name="robots" content="noindex">'), "noindex"),
    (page('<script>document.write("<meta name=robots content=noindex>")</script>'), ""),
    (page('<script>"</head>"</script><meta name="robots" content="noindex">'), "noindex"),
    (page('<style>/* <meta name=robots content=noindex> */</style>'), ""),
    (page('<title><meta name=robots content=noindex></title>'), ""),
    (page('<noscript><meta name="robots" content="noindex"></noscript>'), "noindex"),  # Decision: counts
    (b'<head><meta name="robots" content="noindex"', ""),  # the tag does not end
    (page('<meta name="robots" content="noindex"'), "noindex"),  # it ends at "</head>": HTML reads "</head" as a name
    (page("") + b'<meta name="robots" content="noindex">', ""),  # after </head>
    (b'<html><head><title>t</title><BODY><meta name="robots" content="noindex">', ""),  # stops at <body
    (b'<html><head></HEAD ><meta name="robots" content="noindex">', ""),
    (b'<meta name="robots" content="noindex">', "noindex"),  # no head element: still read
    (b'<metadata name="robots" content="noindex">', ""),
    (page('<meta name="robots" content="noindex>'), ""),  # a quote left open: nothing after it counts
    (page('<meta name="robots" content=\'noindex\' foo="<meta name=robots content=nofollow>">'), "noindex"),
    (page('<meta a="x>y" b=\'"\' name=robots content=noarchive>'), "noarchive"),
    (page('<meta name=robots content="noindex"\n>'), "noindex"),
    ("<head><meta name='robots' content='noindex, é-unknown'></head>".encode("latin-1"), "noindex,\ufffd-unknown"),
])
def test_meta_tag_reading(body: bytes, expected: str) -> None:
    assert names(body=body) == expected


def test_the_scan_is_bounded() -> None:
    """Nothing past ``MAX_HEAD_BYTES`` is read, even without a ``</head>``."""
    filler = b"<html><head>" + b"x" * (MAX_HEAD_BYTES - 60)
    tag = b'<meta name="robots" content="noindex">'
    assert names(body=filler + tag) == "noindex"  # ends within the bound
    assert names(body=filler + b"y" * 60 + tag) == ""
    assert names(body=filler[:-40] + tag + b"y" * 10_000_000) == "noindex"


# Combining and values
@pytest.mark.parametrize(("headers", "head", "field", "expected"), [
    ([], "max-snippet:50", "max_snippet", 50),
    ([], "max-snippet: 50", "max_snippet", 50),
    ([], "max-snippet:0", "max_snippet", 0),
    ([], "max-snippet:-1", "max_snippet", -1),
    (["max-snippet:-1"], "max-snippet:20", "max_snippet", 20),  # a number beats no limit
    (["max-snippet:20"], "max-snippet:-1", "max_snippet", 20),
    (["max-snippet:30", "max-snippet:10"], "max-snippet:20", "max_snippet", 10),
    ([], "max-snippet:abc", "max_snippet", None),  # invalid: ignored
    ([], "max-snippet:-5", "max_snippet", None),
    ([], "max-snippet:1.5", "max_snippet", None),
    ([], "max-snippet", "max_snippet", None),
    ([], "max-snippet:0", "nosnippet", False),  # kept apart from nosnippet
    ([], "max-image-preview:large", "max_image_preview", "large"),
    ([], "max-image-preview:LARGE, max-image-preview:standard", "max_image_preview", "standard"),
    (["max-image-preview:none"], "max-image-preview:large", "max_image_preview", "none"),
    ([], "max-image-preview:huge", "max_image_preview", None),
    ([], "max-video-preview:-1", "max_video_preview", -1),
    (["max-video-preview:0"], "max-video-preview:-1", "max_video_preview", 0),
    ([], "nocache", "noarchive", True),
    ([], "noarchive", "noarchive", True),
    ([], "none", "noindex", True),
    (["noindex"], "all", "noindex", True),  # all does not cancel a noindex from elsewhere
    ([], "all", "noindex", False),
])
def test_values_combine_most_restrictive(headers: list[str], head: str, field: str, expected: object) -> None:
    tags = robots_tags(headers, page(f'<meta name="robots" content="{head}">'), ("mybot",))
    assert getattr(tags, field) == expected


def test_sources() -> None:
    tags = robots_tags([b"noindex, noai"], page('<meta name="robots" content="noindex, nocache">'), ("mybot",))
    assert tags.directives == {"noindex", "noai", "nocache", "noarchive"}
    assert tags.from_meta == {"noindex", "nocache", "noarchive"} and tags.from_header == {"noindex", "noai"}
    assert tags.source("noindex") == tags.source("NOINDEX") == "meta tag and X-Robots-Tag header"
    assert tags.source("noarchive") == "meta tag"
    assert tags.source("noai") == "X-Robots-Tag header"
    assert tags.source("nofollow") == ""
    assert tags == RobotsTags(noindex=True, noarchive=True, directives=tags.directives, from_meta=tags.from_meta,
                              from_header=tags.from_header)


# Headers: crawler prefixes, valued directives, separators, dates with commas
@pytest.mark.parametrize(("header", "expected"), [
    ("noindex, googlebot: nofollow", "noindex"),  # Decision: a prefix switches the addressee for what follows
    ("googlebot: nofollow, noindex", ""),
    ("googlebot: nofollow, mybot: noindex, noarchive", "noarchive,noindex"),
    ("mybot: googlebot: noindex", ""),
    ("robots: noindex", "noindex"),  # Decision: robots addresses everyone
    ("MYBOT: noindex", "noindex"),
    ("mybot:", ""),
    ("max-snippet: 20", "max-snippet"),  # never a crawler named max-snippet
    ("unavailable_after: 2030-01-01", "unavailable_after"),
    ("max-foo: 5, noindex", "max-foo,noindex"),  # Decision: a value, not a crawler
    ("noindex nofollow", "nofollow,noindex"),  # Decision: whitespace separates too
    ("noindex: yes", "noindex"),  # Decision: the value of a directive that takes none is ignored
    (" , ,noindex,, ", "noindex"),
    ("NoAI, NoImageAI", "noai,noimageai"),
    ("index, follow", "follow,index"),  # not documented by Google: kept by name
    ("", ""),
    (":", ""),
    ("x" * (MAX_NAME_CHARS + 1) + ", noindex", "noindex"),
])
def test_header_reading(header: str, expected: str) -> None:
    assert names([header]) == expected
    assert names([header.encode()]) == expected


@pytest.mark.parametrize(("header", "expected"), [
    ("unavailable_after: Friday, 25-Jun-10 15:00:00 GMT", datetime(2010, 6, 25, 15, tzinfo=UTC)),
    ("noindex, unavailable_after: Fri, 25 Jun 2010 15:00:00 GMT, nofollow", datetime(2010, 6, 25, 15, tzinfo=UTC)),
    ("mybot: unavailable_after: Friday, 25-Jun-10 15:00:00 GMT", datetime(2010, 6, 25, 15, tzinfo=UTC)),
    ("unavailable_after: 2030-01-01, unavailable_after: 2029-06-01T12:00:00Z", datetime(2029, 6, 1, 12, tzinfo=UTC)),
    ("unavailable_after: someday", None),
])
def test_header_dates(header: str, expected: datetime | None) -> None:
    tags = robots_tags([header], None, ("mybot",))
    assert "unavailable_after" in tags.directives
    assert tags.unavailable_after == expected
    if expected is not None:
        assert tags.unavailable_after is not None and tags.unavailable_after.utcoffset() is not None


@pytest.mark.parametrize(("text", "expected"), [
    ("2030-01-01", datetime(2030, 1, 1, tzinfo=UTC)),
    ("2030-01-01T15:00:00Z", datetime(2030, 1, 1, 15, tzinfo=UTC)),
    ("2030-01-01t15:00:00z", datetime(2030, 1, 1, 15, tzinfo=UTC)),
    ("2030-01-01T15:00:00+01:00", datetime(2030, 1, 1, 14, tzinfo=UTC)),
    ("2030-01-01 15:00-0500", datetime(2030, 1, 1, 20, tzinfo=UTC)),
    ("2030-01-01T15:00:00.5", datetime(2030, 1, 1, 15, 0, 0, 500000, tzinfo=UTC)),
    ("20300101T150000Z", datetime(2030, 1, 1, 15, tzinfo=UTC)),
    ("25 Jun 2010 15:00:00 PST", datetime(2010, 6, 25, 23, tzinfo=UTC)),
    ("Fri, 25 Jun 2010 15:00:00 GMT", datetime(2010, 6, 25, 15, tzinfo=UTC)),
    ("Friday, 25-Jun-10 15:00:00 GMT", datetime(2010, 6, 25, 15, tzinfo=UTC)),
    ("25-Aug-2007 15:00:00 EST", datetime(2007, 8, 25, 20, tzinfo=UTC)),
    ("Fri, 25 Jun 2010 15:00:00 +0200", datetime(2010, 6, 25, 13, tzinfo=UTC)),
    ("25 Jun 2010 15:00:00", datetime(2010, 6, 25, 15, tzinfo=UTC)),  # Decision: no zone is UTC
    ("25 Jun 2010 15:00:00 CET", datetime(2010, 6, 25, 15, tzinfo=UTC)),  # Decision: an unknown zone is UTC
    ("2030-02-30", None),
    ("2030-01-01T25:00", None),
    ("tomorrow", None),
    ("", None),
    ("2030-01-01" + " " * 100, datetime(2030, 1, 1, tzinfo=UTC)),
    ("9999-12-31T23:59:59-23:59", datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone(timedelta(minutes=-1439)))),
    ("1 Jan 2030 00:00:00 " + "x" * 100, None),
])
def test_dates(text: str, expected: datetime | None) -> None:
    assert parse_date(text) == expected


def test_is_unavailable() -> None:
    tags = robots_tags(["unavailable_after: 2030-01-01T00:00:00Z"], None, ())
    assert not is_unavailable(tags, datetime(2029, 12, 31, 23, 59, tzinfo=UTC))
    assert is_unavailable(tags, datetime(2030, 1, 1, tzinfo=UTC))  # at the instant
    assert is_unavailable(tags, datetime(2030, 1, 1, 1, tzinfo=timezone(timedelta(hours=1))))
    assert not is_unavailable(tags, datetime(2030, 1, 1, 0, 30, tzinfo=timezone(timedelta(hours=1))))
    assert is_unavailable(tags, datetime(2030, 1, 2))  # Decision: naive is UTC
    assert not is_unavailable(NO_TAGS, datetime(2100, 1, 1, tzinfo=UTC))
    assert not is_unavailable(robots_tags(["unavailable_after: never"], None, ()), datetime(2100, 1, 1, tzinfo=UTC))


def test_nothing_applied_is_no_tags() -> None:
    """The same object: the common case allocates nothing."""
    assert robots_tags([], None, ("mybot",)) is NO_TAGS
    assert robots_tags([b"googlebot: noindex"], page('<meta charset="utf-8">'), ("mybot",)) is NO_TAGS
    assert robots_tags(iter([b"", b" , "]), b"", ("mybot",)) is NO_TAGS
    assert RobotsTags() == NO_TAGS and not NO_TAGS.directives and NO_TAGS.source("noindex") == ""


def test_tokens() -> None:
    body = page('<meta name="mybot" content="noindex">')
    assert names(body=body, tokens=("MyBot",)) == names(body=body, tokens=(" mybot ",)) == "noindex"
    assert names(body=body, tokens="mybot") == "noindex"  # type: ignore[arg-type]  # a bare str is one token
    assert names(body=body, tokens=()) == names(body=body, tokens=("", "other")) == ""
    assert names(["mybot: noindex"], tokens=("other", "MYBOT")) == "noindex"


def test_hostile_bounds() -> None:
    unknown = ", ".join(f"no{i:03d}" for i in range(200))
    tags = robots_tags([unknown, "noindex"], None, ())
    assert tags.noindex and len(tags.directives) == MAX_UNKNOWN + 1
    assert sorted(tags.directives)[:3] == ["no000", "no001", "no002"]  # the alphabetically first are kept
    long_value = "noindex, " + "a" * MAX_HEADER_CHARS + ", nofollow"
    assert names([long_value]) == "noindex"  # cut at the bound, the partial directive dropped
    assert names([b"\xff\xfe\x00noindex", "nofollow\x00"]) == "nofollow\x00,\ufffd\ufffd\x00noindex"
    assert names([b"noindex"] * 1000) == "noindex"
    fillers = ["x," * (MAX_HEADER_CHARS // 2 - 100)] * 3  # reach the bound of all values together
    assert names(["noindex", *fillers, "nofollow"]) == "noindex,x"
    assert names(["noindex", *fillers[:1], "nofollow"]) == "nofollow,noindex,x"
