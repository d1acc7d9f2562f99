"""The TDMRep well-known file (``parse_tdmrep``, ``TdmRep.lookup``) and header/meta values (``tdm_value``).

Tables from the W3C TDMRep Final Community Group Report 2024-05-10 ("TDM File on the Origin Server": its two
tdmrep.json examples and its pattern examples ``/this/path/exactly$``, ``/this/*/then``, ``/path/foo-%24``), then the
decisions of ``_tdmrep`` where the report is silent, and malformed files: read as far as valid, never raising.
"""

from __future__ import annotations

import json

import pytest

from scrapy_rep.matcher import TDMREP_PATH, TdmRep, TdmRule, parse_tdmrep, tdm_value
from scrapy_rep.matcher._tdmrep import MAX_PROBLEMS, MAX_RULES, MAX_TEXT_CHARS

EVERYTHING = b'[\n  {\n  "location": "/",\n  "tdm-reservation": 1\n  }\n]'
"""The report's first example: "a rightsholder wants to 'opt-out' for every file present on a Web server"."""

THREE_GROUPS = b"""[
  {
  "location": "/directory-a/",
  "tdm-reservation": 1
  },
  {
  "location": "/directory-b/html/",
  "tdm-reservation": 1,
  "tdm-policy":"https://provider.com/policies/policy.json"
  },
  {
  "location": "/directory-b/images/*.jpg",
  "tdm-reservation": 0
  }
]"""
"""The report's second example: PDF documents reserved, HTML pages reserved with a policy, JPEG images not."""

POLICY = "https://provider.com/policies/policy.json"


def found(body: bytes | str, path: str) -> tuple[int, int | None, str | None] | None:
    """(1-based entry, reservation, policy) of the rule ``path`` gets, or None: compact expectations."""
    rule = parse_tdmrep(body.encode() if isinstance(body, str) else body).lookup(path)
    return None if rule is None else (rule.index + 1, rule.reservation, rule.policy)


def test_the_well_known_path() -> None:
    assert TDMREP_PATH == "/.well-known/tdmrep.json"


@pytest.mark.parametrize("path", ["/", "/index.html", "/a/b/c.pdf?x=1", "/%C3%A9t%C3%A9"])
def test_report_example_every_file(path: str) -> None:
    repo = parse_tdmrep(EVERYTHING)
    assert repo.problems == ()
    assert repo.rules == (TdmRule(0, "/", 1, None),)
    assert found(EVERYTHING, path) == (1, 1, None)


@pytest.mark.parametrize(("path", "expected"), [
    ("/directory-a/report.pdf", (1, 1, None)),
    ("/directory-a/", (1, 1, None)),
    ("/directory-b/html/page.html", (2, 1, POLICY)),
    ("/directory-b/images/photo.jpg", (3, 0, None)),
    ("/directory-b/images/2024/photo.jpg", (3, 0, None)),  # "*" matches any sequence, "/" included
    ("/directory-b/images/photo.png", None),  # no match: unset
    ("/directory-b/", None),
    ("/directory-a", None),  # a prefix of the location is not matched by it
    ("/Directory-A/report.pdf", None),  # "The matching SHOULD be case sensitive"
    ("/", None),
])
def test_report_example_three_groups(path: str, expected: tuple[int, int | None, str | None] | None) -> None:
    assert parse_tdmrep(THREE_GROUPS).problems == ()
    assert found(THREE_GROUPS, path) == expected


def rules(*locations: str) -> str:
    return json.dumps([{"location": location, "tdm-reservation": 1} for location in locations])


@pytest.mark.parametrize(("locations", "path", "entry"), [
    # the report's pattern examples: "$" ends the match, "*" is 0 or more characters, %24 is a literal "$"
    (["/this/path/exactly$"], "/this/path/exactly", 1),
    (["/this/path/exactly$"], "/this/path/exactly/not", None),
    (["/this/path/exactly$"], "/this/path/exactly?q", None),
    (["/this/*/then"], "/this/a/b/then", 1),
    (["/this/*/then"], "/this//then", 1),
    (["/this/*/then"], "/this/then", None),
    (["/path/foo-%24"], "/path/foo-$", 1),
    (["/path/foo-%24"], "/path/foo-%24", 1),
    (["/path/foo-$"], "/path/foo-", 1),  # a final "$" anchors
    (["/path/$foo"], "/path/$foo", 1),  # elsewhere it is literal
    (["/a-%2A"], "/a-*", 1),
    (["/a-*"], "/a-*", 1),
    # Decision: no "*" nor "$": a prefix, as in robots.txt ("the end of the path from the rule is reached")
    (["/papers"], "/papers/2024/x.pdf", 1),
    (["/papers"], "/papersweight", 1),
    # the forms of the brief: "/*", "/images/*", "*.pdf$"
    (["/*"], "/anything", 1),
    (["/images/*"], "/images/a.png", 1),
    (["/images/*"], "/image.png", None),
    (["*.pdf$"], "/a/b.pdf", 1),
    (["*.pdf$"], "/a/b.pdf?download=1", None),
    (["/*.pdf$"], "/a/b.PDF", None),
    # the first in sequence wins, not the longest ("The most specific match is the first in sequence")
    (["/", "/papers/"], "/papers/x", 1),
    (["/papers/", "/"], "/papers/x", 1),
    (["/papers/", "/"], "/other", 2),
    # escaping as robots.txt patterns: UTF-8 escaped, escapes upper-cased, never decoded (Google's reading)
    (["/café/"], "/caf%C3%A9/menu", 1),
    (["/%7euser/"], "/%7Euser/x", 1),
    (["/%7Euser/"], "/~user/x", None),
    # a location that is no path pattern matches no path (kept, and said)
    (["papers/"], "/papers/x", None),
    (["https://example.com/papers/"], "/papers/x", None),
])
def test_location_matching(locations: list[str], path: str, entry: int | None) -> None:
    rule = parse_tdmrep(rules(*locations).encode()).lookup(path)
    assert (None if rule is None else rule.index + 1) == entry


def test_where_names_the_entry_for_people() -> None:
    assert TdmRule(0, "/papers/*", 1).where == 'entry 1 (location "/papers/*")'
    assert TdmRule(4, 'a"b\n', None).where == 'entry 5 (location "a\\"b\\n")'
    assert TdmRule(1, "/café", 0).where == 'entry 2 (location "/café")'


@pytest.mark.parametrize(("entry", "reservation", "policy", "problem"), [
    ({"location": "/", "tdm-reservation": 1}, 1, None, None),
    ({"location": "/", "tdm-reservation": 0, "tdm-policy": POLICY}, 0, POLICY, None),  # kept: the caller decides
    ({"location": "/", "tdm-reservation": 1, "x-other": [1, {"a": 2}]}, 1, None, None),  # unknown keys ignored
    ({"location": "/", "tdm-reservation": 1, "tdm-policy": None}, 1, None, None),
    ({"location": "/", "tdm-reservation": 1, "tdm-policy": " http://p.example/x "}, 1, "http://p.example/x", None),
    ({"location": "/", "tdm-reservation": 1, "tdm-policy": "urn:isbn:123"}, 1, "urn:isbn:123", None),
    # Decision: the strings "0" and "1" are read as the numbers, and said
    ({"location": "/", "tdm-reservation": "1"}, 1, None, "tdm-reservation is the string '1': read as the number 1"),
    ({"location": "/", "tdm-reservation": "0"}, 0, None, "tdm-reservation is the string '0': read as the number 0"),
    # protocol errors: unset, and said; the rule is kept (it still matches first)
    ({"location": "/"}, None, None, "has no tdm-reservation: unset"),
    ({"location": "/", "tdm-reservation": True}, None, None, "must be 0 or 1, not true"),
    ({"location": "/", "tdm-reservation": False}, None, None, "must be 0 or 1, not false"),
    ({"location": "/", "tdm-reservation": 2}, None, None, "must be 0 or 1, not 2"),
    ({"location": "/", "tdm-reservation": 1.0}, None, None, "must be 0 or 1, not 1.0"),
    ({"location": "/", "tdm-reservation": " 1"}, None, None, 'must be 0 or 1, not " 1"'),
    ({"location": "/", "tdm-reservation": "yes"}, None, None, 'must be 0 or 1, not "yes"'),
    ({"location": "/", "tdm-reservation": None}, None, None, "must be 0 or 1, not null"),
    ({"location": "/", "tdm-reservation": [1]}, None, None, "must be 0 or 1, not [1]"),
    ({"location": "/", "tdm-reservation": 1, "tdm-policy": "/policy.json"}, 1, None,
     'tdm-policy must be an absolute URL, not "/policy.json": ignored'),
    ({"location": "/", "tdm-reservation": 1, "tdm-policy": 5}, 1, None, "tdm-policy must be an absolute URL, not 5"),
    ({"location": "/", "tdm-reservation": 1, "tdm-policy": "https://p/" + "x" * MAX_TEXT_CHARS}, 1, None,
     "tdm-policy must be an absolute URL"),
])
def test_entry_values(entry: dict[str, object], reservation: int | None, policy: str | None,
                      problem: str | None) -> None:
    repo = parse_tdmrep(json.dumps([entry]).encode())
    assert repo.rules == (TdmRule(0, "/", reservation, policy),)
    assert repo.lookup("/x") == repo.rules[0]
    if problem is None:
        assert repo.problems == ()
    else:
        (message,) = repo.problems
        assert message.startswith('entry 1 (location "/")') and problem in message


@pytest.mark.parametrize(("entry", "problem"), [
    (3, "entry 2 is a JSON number, not an object: skipped"),
    ("/x", "entry 2 is a JSON string, not an object: skipped"),
    ([{"location": "/x"}], "entry 2 is a JSON array, not an object: skipped"),
    (None, "entry 2 is a JSON literal, not an object: skipped"),
    ({"tdm-reservation": 1}, "entry 2 has no location: skipped"),
    ({"location": "", "tdm-reservation": 1}, "entry 2 has an empty location: skipped"),
    ({"location": ["/x"], "tdm-reservation": 1}, "entry 2 has a location that is a JSON array, not a string: skipped"),
    ({"location": "/" + "x" * MAX_TEXT_CHARS, "tdm-reservation": 1},
     f"entry 2 has a location over {MAX_TEXT_CHARS} characters: skipped"),
])
def test_invalid_entries_are_skipped_and_said(entry: object, problem: str) -> None:
    """Read as far as valid: the entries around a bad one keep their place (and their 0-based index)."""
    body = json.dumps([{"location": "/a", "tdm-reservation": 1}, entry, {"location": "/", "tdm-reservation": 0}])
    repo = parse_tdmrep(body.encode())
    assert repo.rules == (TdmRule(0, "/a", 1), TdmRule(2, "/", 0))
    assert repo.problems == (problem,)
    assert found(body, "/b") == (3, 0, None)


@pytest.mark.parametrize(("body", "problem"), [
    (b"", "the file is not JSON"),
    (b"<html>Not found</html>", "the file is not JSON"),
    (b'[{"location": "/", "tdm-reservation": 1},]', "the file is not JSON"),
    (b'[{"location": "/", "tdm-reservation": 1}', "the file is not JSON"),
    (b'{"location": "/", "tdm-reservation": 1}', "the file is a JSON object, not an array of rules"),
    (b'"/"', "the file is a JSON string, not an array of rules"),
    (b"null", "the file is a JSON literal, not an array of rules"),
    (b"1" * 5000, "the file is not JSON"),  # over Python's limit on an integer's digits
    (b"[" * 100_000 + b"]" * 100_000, "the file nests arrays or objects too deeply to be read"),
    (b'{"a":' * 100_000, "the file nests arrays or objects too deeply to be read"),
    (b'[{"location": "/caf\xe9", "tdm-reservation": 1}]', "the file is not UTF-8"),
    (b"\xff\xfe[\x00]\x00", "the file is not UTF-8"),  # UTF-16
])
def test_unreadable_files_give_no_rule_and_say_why(body: bytes, problem: str) -> None:
    repo = parse_tdmrep(body)
    assert repo.rules == ()
    (message,) = repo.problems
    assert message.startswith(problem) and message.endswith("no rule is read")
    assert repo.lookup("/") is None


def test_a_byte_order_mark_and_whitespace_are_allowed() -> None:
    assert parse_tdmrep(b"\xef\xbb\xbf \n" + EVERYTHING + b"\n").rules == (TdmRule(0, "/", 1),)
    assert parse_tdmrep(b"[]") == TdmRep()


def test_at_most_max_rules_are_read_and_problems_are_bounded() -> None:
    body = json.dumps([{"location": f"/{n}/", "tdm-reservation": "1"} for n in range(MAX_RULES + 5)])
    repo = parse_tdmrep(body.encode())
    assert len(repo.rules) == MAX_RULES and repo.rules[-1].index == MAX_RULES - 1
    assert repo.problems[0] == f"{MAX_RULES + 5} entries: only the first {MAX_RULES} are read"
    assert len(repo.problems) == MAX_PROBLEMS + 1
    assert repo.problems[-1] == f"... and {MAX_RULES - MAX_PROBLEMS + 1} more problems"
    assert repo.lookup(f"/{MAX_RULES - 1}/x") == repo.rules[-1]
    assert repo.lookup(f"/{MAX_RULES}/x") is None


def test_a_tdmrep_built_by_hand_matches_too() -> None:
    repo = TdmRep((TdmRule(0, "/a/*.pdf$", 1, POLICY),))
    assert repo.lookup("/a/b/c.pdf") == repo.rules[0]
    assert repo.lookup("/b/c.pdf") is None
    assert repo == TdmRep((TdmRule(0, "/a/*.pdf$", 1, POLICY),))
    assert repo.lookup(None) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(("value", "expected"), [
    ("1", 1), ("0", 0), (b"1", 1), (b"0", 0), (" 1 ", 1), ("\t0\r\n", 0), (b" 1", 1),
    ("", None), (None, None), ("2", None), ("01", None), ("1.0", None), ("yes", None), ("true", None), ("-0", None),
    ("1, 0", None), (b"\xff", None), ("１", None), (b"1" * 100, None), ("1" + " " * 100, None), (1, None),
])
def test_tdm_value(value: str | bytes | None, expected: int | None) -> None:
    """A header or meta value: 0 or 1, else a protocol error, read as unset."""
    assert tdm_value(value) == expected
