"""``scrapy_rep.RobotParser`` behind Scrapy's built-in RobotsTxtMiddleware (ROBOTSTXT_PARSER)."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
import pytest_twisted
from hypothesis import given, settings
from hypothesis import strategies as st
from scrapy import Request
from scrapy.utils.test import get_crawler
from w3lib.url import safe_url_string

from scrapy_rep import RobotParser
from scrapy_rep.matcher._urls import decision_path
from scrapy_rep.robotparser import url_as_sent
from tests.crawl import crawl
from tests.servers import robots

BODY = (b"User-agent: *\nDisallow: /private\nAllow: /private/ok$\n\n"
        b"User-agent: foobot\nDisallow: /*.php$\nCrawl-delay: 2")


@pytest.mark.parametrize(
    ("url", "agent", "allowed"),
    [
        ("https://example.com/private/x", "AnyBot", False),
        ("https://example.com/private/ok", "AnyBot", True),  # SPEC 7.4: longer allow wins
        (b"https://example.com/private/ok?x", b"AnyBot", False),
        ("https://example.com/a.php", "FooBot/2.1 (+http://foo)", False),  # SPEC 6.4 product token, 5.6 case
        ("https://example.com/private/x", b"foobot", True),  # SPEC 6.2: only the specific group
    ],
)
def test_allowed(url: str | bytes, agent: str | bytes, allowed: bool) -> None:
    parser = RobotParser.from_crawler(get_crawler(), BODY)
    assert parser.allowed(url, agent) is allowed


def test_crawl_delay() -> None:
    parser = RobotParser.from_crawler(get_crawler(), BODY)
    assert (parser.crawl_delay("foobot/1"), parser.crawl_delay("other")) == (2.0, None)


@pytest_twisted.ensureDeferred
async def test_builtin_middleware_with_our_parser_in_a_real_crawl(sites: Any) -> None:
    site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /*.php$\nAllow: /$\nDisallow: /\n"))
    result = await crawl([site.url("/"), site.url("/x"), site.url("/a.php"), site.url("/a.php?q")], ADDONS={},
                         ROBOTSTXT_PARSER="scrapy_rep.RobotParser",
                         # One at a time: the built-in lets concurrent waiters through undecided (see test_hold).
                         CONCURRENT_REQUESTS=1)
    assert result.downloaded == [site.url("/")]
    assert result.stat("robotstxt/forbidden") == 3 and result.stat("robotstxt/request_count") == 1
    assert not [key for key in result.stats if key.startswith("rep/")]


# Each rule catches one thing that Scrapy's Request escapes or rewrites: a URL decided raw passes them all.
ESCAPES_BODY = (b"User-agent: *\nDisallow: /*%7C\nDisallow: /*%5E\nDisallow: /*%20\nDisallow: /*%C3%A4\n"
                b"Disallow: /*%5B\nDisallow: /*%22\nDisallow: /*%3C\nDisallow: /*%60\nDisallow: /*%7B\n"
                b"Disallow: /back/slash\nDisallow: /tab$\nDisallow: /*%25\nDisallow: /*?$\n")

TRICKY = [  # (URL, allowed once encoded as Request encodes it)
    ("https://site.example/a|b", False),
    ("https://site.example/a^b", False),
    ("https://site.example/a b", False),
    ("https://site.example/q?x=a b", False),  # the query too
    ("https://site.example?x=ä", False),  # no path: Request adds "/"
    ("https://site.example/Käyttäjä", False),
    ("https://site.example/a[b]", False),
    ('https://site.example/a"<b>`{', False),
    ("https://site.example/back\\slash", False),  # a backslash is a slash in http(s) URLs
    ("https://site.example/t\tab", False),  # tab and newline are dropped
    ("  https://site.example/a|b  ", False),  # surrounding spaces are stripped
    ("https://site.example/a%7Cb", False),  # already encoded: not encoded twice (%257C would pass)
    ("https://site.example/K%c3%a4", False),  # SPEC 7.2: escapes compare case-insensitively (upper_escapes)
    ("https://site.example/a%zz", True),  # an invalid escape stays as is (no %25)
    ("https://site.example/page#frag|ä", True),  # the fragment is never compared
    ("https://Bücher.example/ok", True),  # IDNA host, nothing in the path to encode
    ("https://[::1]:8080/ok/ä", False),
    ("https://site.example/plain/page-1.html?id=3&x=y;z", True),
    ("https://site.example/a/../b/./c", True),  # dot segments are not resolved (by Request either)
    ("https://site.example/a?", True),  # an empty query is dropped: "/a", not "/a?" (which "/*?$" forbids)
    ("https://site.example/a?#top", True),
    ("https://site.example/a?b?", False),  # a query ending in "?" is kept
]


@pytest.mark.parametrize(("url", "allowed"), TRICKY)
def test_allowed_decides_on_the_url_as_request_sends_it(url: str, allowed: bool) -> None:
    parser = RobotParser.from_crawler(get_crawler(), ESCAPES_BODY)
    assert parser.allowed(url, "AnyBot") is parser.allowed(Request(url).url, "AnyBot") is allowed
    assert parser.allowed(url.encode(), "AnyBot") is allowed


@pytest.mark.parametrize("rule", ["/wiki/Käyttäjä:", "/wiki/K%C3%A4ytt%C3%A4j%C3%A4:",
                                  "/wiki/K%c3%a4ytt%c3%a4j%c3%a4:"])
@pytest.mark.parametrize("url", ["https://site.example/wiki/Käyttäjä:Foo",
                                 "https://site.example/wiki/K%C3%A4ytt%C3%A4j%C3%A4:Foo",
                                 "https://site.example/wiki/K%c3%a4ytt%c3%a4j%c3%a4:Foo",
                                 b"https://site.example/wiki/K\xc3\xa4ytt\xc3\xa4j\xc3\xa4:Foo",
                                 "/wiki/Käyttäjä:Foo"])
def test_a_non_ascii_page_is_forbidden_whether_rule_and_url_are_raw_or_encoded(rule: str, url: str | bytes) -> None:
    """A rule is encoded when parsed (raw UTF-8 and lower-case escapes alike), the URL when decided (its escapes
    upper-cased, SPEC 7.2)."""
    parser = RobotParser.from_crawler(get_crawler(), f"User-agent: *\nDisallow: {rule}\n".encode())
    assert not parser.allowed(url, "AnyBot")
    assert parser.allowed("https://site.example/wiki/Main", "AnyBot")
    assert parser.allowed("https://site.example/wiki/Kayttaja:Foo", "AnyBot")


def test_an_invalid_utf8_byte_is_decided_as_its_escape() -> None:
    """Bytes are read as UTF-8 and an invalid byte is sent as itself, ``%E4`` (not as U+FFFD's ``%EF%BF%BD``)."""
    parser = RobotParser.from_crawler(get_crawler(), b"User-agent: *\nDisallow: /latin%E4\n")
    assert not parser.allowed(b"https://site.example/latin\xe4", "AnyBot")
    assert parser.allowed(b"https://site.example/latin\xef\xbf\xbd", "AnyBot")


@pytest.mark.parametrize("url", ["https://site.example/x\ud800", "https://site.example:99999/x", "http://[::1/x"])
def test_a_url_request_refuses_is_decided_as_given(url: str) -> None:
    """No exception escapes ``allowed``: Scrapy cannot send such a URL, the matcher decides on it as written."""
    with pytest.raises(ValueError):  # UnicodeEncodeError is a ValueError
        Request(url)
    parser = RobotParser.from_crawler(get_crawler(), b"User-agent: *\nDisallow: /x\n")
    assert not parser.allowed(url, "AnyBot")
    assert parser.allowed(url.replace("/x", "/y"), "AnyBot")


_SENT_AS_IS_CHARS = "aZ09-._~:/?#@!$&()*+,;=%"
_PATH_CHARS = [*_SENT_AS_IS_CHARS, *"|^ []'\"<>`{}\\\t\näé€\U0001f600", "%41", "%c3%a4", "%zz"]
_schemes = st.sampled_from(["http", "https", "HTTPS", "ftp", "a+b.c-d", ""])
_hosts = st.sampled_from(["site.example", "SITE.example", "Bücher.example", "site.example:8080", "site.example:080",
                          "u:p@site.example", "[::1]", "a;B", "a@b@c", ""])
# Half the time only characters the shortcut takes, so that it is often taken.
_rests = st.one_of(st.lists(st.sampled_from(_SENT_AS_IS_CHARS), max_size=30),
                   st.lists(st.sampled_from(_PATH_CHARS), max_size=30)).map("".join)
tricky_urls = st.one_of(
    st.builds(lambda scheme, host, rest: f"{scheme}://{host}/{rest}", _schemes, _hosts, _rests),
    st.builds(lambda rest: f"/{rest}", _rests),
    st.builds(lambda scheme, sep, host, rest: f"{scheme}{sep}{host}{rest}",
              _schemes, st.sampled_from(["://", ":/", ":", "//", ""]), _hosts, _rests),
)


@settings(max_examples=2000, deadline=None)
@given(url=tricky_urls)
def test_the_url_decided_on_has_the_path_and_query_request_sends(url: str) -> None:
    """The shortcut for URLs with nothing to encode never changes a decision: the URL ``allowed`` decides on has
    the path and query (all a decision reads, SPEC 7.1) of ``safe_url_string(url)``, which is ``Request(url).url``
    whenever Request accepts the URL (it also wants a scheme)."""
    try:
        sent = safe_url_string(url)
    except ValueError:  # a bad port, a lone surrogate (UnicodeEncodeError): Request refuses it too
        return
    with contextlib.suppress(ValueError):
        assert Request(url).url == sent
    assert decision_path(url_as_sent(url)) == decision_path(sent)
    assert decision_path(url_as_sent(url.encode())) == decision_path(sent)


@pytest_twisted.ensureDeferred
async def test_builtin_middleware_with_our_parser_forbids_a_non_ascii_page_in_a_real_crawl(sites: Any) -> None:
    """Raw or encoded in the rule or in the URL: the server never sees a page the file forbids. (Request encodes its
    URL before the built-in middleware asks; the verbatim test below is the one that needs the parser to encode.)"""
    site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /wiki/Käyttäjä:\nDisallow: /wiki/K%C3%A4yt%C3%B6:\n"))
    urls = [site.url("/wiki/Käyttäjä:Foo"), site.url("/wiki/K%C3%A4ytt%C3%A4j%C3%A4:Bar"), site.url("/wiki/Käytö:X"),
            site.url("/wiki/Main")]
    result = await crawl(urls, ADDONS={}, ROBOTSTXT_PARSER="scrapy_rep.RobotParser", CONCURRENT_REQUESTS=1)
    assert site.paths() == ["/robots.txt", "/wiki/Main"]
    assert result.stat("robotstxt/forbidden") == 3
    assert [kind for _, kind in result.failed] == ["IgnoreRequest"] * 3


@pytest_twisted.ensureDeferred
async def test_builtin_middleware_with_our_parser_forbids_a_verbatim_url_in_a_real_crawl(sites: Any) -> None:
    """With ``verbatim_url`` (where Scrapy has it) Request keeps the URL raw and the built-in middleware asks about
    it as written: the parser still decides on its encoded form (the resource the server serves for both)."""
    site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /wiki/Käyttäjä:\nDisallow: /a%7Cb\n"))
    result = await crawl([site.url("/wiki/Käyttäjä:Foo"), site.url("/a|b"), site.url("/wiki/Main")], ADDONS={},
                         ROBOTSTXT_PARSER="scrapy_rep.RobotParser", CONCURRENT_REQUESTS=1,
                         spider_kwargs={"meta": {"verbatim_url": True}})
    assert site.paths() == ["/robots.txt", "/wiki/Main"]
    assert result.stat("robotstxt/forbidden") == 2
    assert [kind for _, kind in result.failed] == ["IgnoreRequest"] * 2
