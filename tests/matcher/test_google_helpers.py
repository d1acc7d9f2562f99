"""Google's helper functions and parse reporters, ported from the ``other_cases`` of the conformance data
(google/robotstxt robots_test.cc and reporting_robots_test.cc): SPEC 5.2, 5.6, 6.4, 7.1, 7.2."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_rep.matcher import (
    LineKind,
    escape_pattern,
    extract_user_agent,
    is_valid_user_agent,
    parse,
    path_params_query,
    report,
)
from scrapy_rep.matcher._urls import decision_path, google_path_params_query

from ._shared import body_of, cases

GOOGLE = "google-robotstxt.json"


@pytest.mark.parametrize("case", cases(GOOGLE, "other_cases", "IsValidUserAgentToObey"))
def test_is_valid_user_agent(case: dict[str, Any]) -> None:
    """SPEC 6.4: a token to obey is a non-empty run of [A-Za-z_-]."""
    assert is_valid_user_agent(case["input"]) is case["expected"]


@pytest.mark.parametrize("case", cases(GOOGLE, "other_cases", "GetPathParamsQuery"))
def test_path_params_query(case: dict[str, Any]) -> None:
    """SPEC 7.1: path, params and query, no scheme, authority or fragment; always starts with '/'."""
    assert path_params_query(case["input"]) == case["expected"]


@pytest.mark.parametrize("case", cases(GOOGLE, "other_cases", "MaybeEscapePattern"))
def test_escape_pattern(case: dict[str, Any]) -> None:
    """SPEC 7.2: non-ASCII octets %-encoded, existing escapes upper-cased."""
    assert escape_pattern(case["input"]) == case["expected"]


@pytest.mark.parametrize("case", cases(GOOGLE, "other_cases", "ParseRobotsTxt"))
def test_parse_reporters(case: dict[str, Any]) -> None:
    """SPEC 4.1-4.2, 5: line counting (LF, CRLF, CR, mixed), BOM skipping, sitemaps, per-line metadata."""
    parsed = report(body_of(case, "input"))
    expected = case["expected"]
    if case["handler"] == "RobotsStatsReporter":
        got = {"valid_directives": parsed.valid_directives, "unknown_directives": parsed.unknown_directives,
               "last_line_seen": parsed.last_directive_line, "sitemap": "".join(parsed.sitemaps)}
    else:
        got = {"valid_directives": parsed.valid_directives, "last_line_seen": parsed.last_line_seen,
               "parse_results_count": len(parsed.lines)}
    assert {key: got[key] for key in expected if key != "lines"} == {k: v for k, v in expected.items() if k != "lines"}
    for want in expected.get("lines", []):
        line = parsed.lines[want["line_num"] - 1]
        assert line.line_num == want["line_num"]
        assert line.kind is LineKind(want["tag_name"])
        assert line.is_typo is want["is_typo"]
        assert {flag: getattr(line.metadata, flag) for flag in want["metadata"]} == want["metadata"]


@pytest.mark.parametrize(
    ("value", "token"),
    [("googlebot/1.2", "googlebot"), ("googlebot*", "googlebot"), ("Foo Bar", "Foo"), ("foo_bar-baz", "foo_bar-baz"),
     ("*", ""), ("/x", ""), ("", ""), ("bot2", "bot"), ("fóo", "f")],
)
def test_extract_user_agent(value: str, token: str) -> None:
    """SPEC 5.6 / 6.4: the product token is the leading run of [A-Za-z_-]."""
    assert extract_user_agent(value) == token


def test_escape_pattern_keeps_invalid_utf8_bytes_and_ascii_escapes() -> None:
    """SPEC 7.2: raw bytes escape one by one; %61 stays %61 (never decoded); invalid escapes stay."""
    assert escape_pattern(b"/\xff\xc3\xa9") == "/%FF%C3%A9"
    assert escape_pattern("/\udcff") == "/%FF"  # a surrogateescape'd byte is the byte itself
    assert escape_pattern("/%61%zz%4") == "/%61%zz%4"
    assert escape_pattern("/%%2f") == "/%%2F"


URL_CHARS = st.sampled_from(["/", "?", ";", "#", ":", "//", "://", "a", "B", "1", ".", "@", "%2F", "é", "\0", "+"])


@settings(max_examples=2000, deadline=None)
@given(url=st.lists(URL_CHARS, max_size=14).map("".join))
def test_path_params_query_short_cuts_equal_google_steps(url: str) -> None:
    """SPEC 7.1: the fast paths of path_params_query give exactly GetPathParamsQuery's answer."""
    assert path_params_query(url) == google_path_params_query(url)


@settings(max_examples=1000, deadline=None)
@given(urls=st.lists(st.lists(URL_CHARS, max_size=14).map("".join), min_size=2, max_size=6))
def test_decision_path_with_its_remembered_origin_equals_google_steps(urls: list[str]) -> None:
    """SPEC 7.1: whatever origin decision_path remembers from the URL before, each path is GetPathParamsQuery's,
    cut at a NUL (Google extension). URLs of one origin and of others alternate."""
    for url in [*urls, *("http://" + url for url in urls), *("http://a" + url for url in urls)]:
        assert decision_path(url) == google_path_params_query(url).partition("\0")[0]


# Decides by how the path ends: a fragment or what follows a NUL (SPEC 7.1; NUL: Google extension) ending in "+"
# and kept in the path would turn the answer.
_CUT_BODY = "User-agent: *\nDisallow: /a\nAllow: /a?\nDisallow: /*+$\n"


@settings(max_examples=500, deadline=None)
@given(urls=st.lists(st.lists(URL_CHARS, max_size=14).map("".join), min_size=2, max_size=6))
def test_allowed_inlines_decision_paths_fast_path_exactly(urls: list[str]) -> None:
    """``Robots.allowed`` and ``AgentRules.allowed`` read the path of a URL of the remembered origin themselves (a
    call less per decision); whatever the URL holds (``#``, NUL, ``//``), they decide as ``explain``, which goes
    through ``decision_path``. URLs of one origin and of others alternate, so the fast path is taken and left."""
    robots = parse(_CUT_BODY)
    form = robots.compact("bot")
    urls = [url + end for url in urls for end in ("", "#+", "\0+")]
    for url in [*urls, *("http://a/" + url for url in urls), *("http://b" + url for url in urls)]:
        decided = robots.allowed(url, "bot")  # the URL before has made its origin the remembered one
        assert decided is robots.explain(url, "bot").allowed, url
        assert form.allowed(url) is decided, url
        assert robots.allowed(url, "bot") is decided, url  # now with this URL's own origin remembered
