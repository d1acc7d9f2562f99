"""Yandex's Clean-param: reading the rules file-wide and dropping the parameters they list (SPEC 5.3, 6.5;
scrapy_rep/matcher/_clean_param.py). The first table is Yandex's documentation's examples."""

from __future__ import annotations

import re

import pytest

from scrapy_rep.matcher import MAX_BYTES, CleanParam, LineMetadata, clean_url, parse, parse_lines
from scrapy_rep.matcher._clean_param import MAX_RULE_CHARS, clean_param

from ._shared import CORPUS, require

YANDEX = ("user-agent: Yandex\ndisallow: /private/\n"
          "Clean-param: ref /some_dir/get_book.pl\n"
          "Clean-param: s /forum/showthread.php\n"
          "Clean-param: sid&sort /forum/*.php\n"
          "Clean-param: someTrash&otherTrash\n"
          "Clean-param: sid /index.php\n")


def cleaned(body: str, url: str) -> str | None:
    """The URL as the file's clean-param rules leave it; None when they drop nothing."""
    result = clean_url(url, parse(body).clean_params)
    return None if result is None else result[0]


@pytest.mark.parametrize(("url", "expected"), [
    ("www.example.com/some_dir/get_book.pl?ref=site_1&book_id=123", "www.example.com/some_dir/get_book.pl?book_id=123"),
    ("http://www.example.com/some_dir/get_book.pl?ref=site_2&book_id=123",
     "http://www.example.com/some_dir/get_book.pl?book_id=123"),
    ("http://www.example.com/some_dir/get_book.pl?book_id=123", None),
    ("http://x.ru/forum/showthread.php?s=681498b9648949605&t=8243", "http://x.ru/forum/showthread.php?t=8243"),
    ("http://x.ru/forum/showthread.php?t=8243&s=1e71c4427317a117a", "http://x.ru/forum/showthread.php?t=8243"),
    ("http://x.ru/forum/index.php?sid=1&sort=up&page=2", "http://x.ru/forum/index.php?page=2"),
    ("http://x.ru/forum/sub/list.php5?sort=1", "http://x.ru/forum/sub/list.php5"),  # "*" appended: a prefix
    ("http://x.ru/forum/showthread.php?sid=1", "http://x.ru/forum/showthread.php"),  # two rules' prefixes match
    ("http://x.ru/forum/index.html?sid=1", None),  # "/forum/*.php" does not match
    ("http://x.ru/any/path?someTrash=1&x=2&otherTrash=3", "http://x.ru/any/path?x=2"),  # no prefix: every path
    ("http://x.ru/?someTrash", "http://x.ru/"),
    ("http://x.ru/index.php?sid=2&sort=3", "http://x.ru/index.php?sort=3"),  # sort: only under /forum/*.php
    ("http://x.ru/index.php5/a?sid=2", "http://x.ru/index.php5/a"),  # a prefix match
    ("http://x.ru/catalog/index.php?sid=2", None),
])
def test_yandex_examples(url: str, expected: str | None) -> None:
    assert cleaned(YANDEX, url) == expected


@pytest.mark.parametrize(("rule", "url", "expected"), [
    ("ref", "http://a.b/p", None),  # no query
    ("ref", "http://a.b/p?", None),  # an empty query
    ("ref", "http://a.b/p?ref=1#top", "http://a.b/p#top"),  # the fragment is kept
    ("ref", "http://a.b/p?x=1&ref=1#f?ref=2", "http://a.b/p?x=1#f?ref=2"),
    ("ref", "http://a.b/p#f?ref=1", None),  # "?" in the fragment: no query
    ("ref", "http://a.b/p?ref=1&x=1&ref=2&y&ref", "http://a.b/p?x=1&y"),  # every occurrence
    ("ref", "http://a.b/p?ref&x", "http://a.b/p?x"),  # no "=": the piece is all name
    ("ref", "http://a.b/p?ref=", "http://a.b/p"),
    ("ref", "http://a.b/p?x=ref&refx=1&xref=2", None),  # names compared whole, values not at all
    ("ref", "http://a.b/p?Ref=1&REF=2", None),  # case-sensitive
    ("Ref", "http://a.b/p?Ref=1&ref=2", "http://a.b/p?ref=2"),
    ("ref", "http://a.b/p?b=%2F%2f&ref=1&a=+x+&c=%zz", "http://a.b/p?b=%2F%2f&a=+x+&c=%zz"),  # kept byte for byte
    ("ref", "http://a.b/p?z=1&ref=1&a=1&m", "http://a.b/p?z=1&a=1&m"),  # order kept
    ("ref", "http://a.b/p?&ref=1", "http://a.b/p"),  # a query left empty loses its "?"
    ("ref", "http://a.b/p?x&&ref=1&", "http://a.b/p?x&&"),  # empty pieces kept
    ("ref", "http://a.b?ref=1", "http://a.b"),  # no path: "/"
    ("ref", "/p?ref=1&x=2", "/p?x=2"),  # a path alone
    ("ref", "http://a.b/p;v=1?ref=1", "http://a.b/p;v=1"),
    ("ref", "http://a.b/p?%72ef=1&x=2", "http://a.b/p?x=2"),  # names compared percent-decoded
    ("r%65f", "http://a.b/p?ref=1", "http://a.b/p"),
    ("сессия", "http://a.b/p?%D1%81%D0%B5%D1%81%D1%81%D0%B8%D1%8F=1&x", "http://a.b/p?x"),
    ("сессия", "http://a.b/p?%d1%81%d0%b5%d1%81%d1%81%d0%b8%d1%8f=1", "http://a.b/p"),  # either hex case
    ("сессия", "http://a.b/p?сессия=1", "http://a.b/p"),
    ("ref /p", "http://a.b/p/q?ref=1", "http://a.b/p/q"),
    ("ref /p", "http://a.b/q/p?ref=1", None),  # a prefix, anchored at the path's start
    ("ref /*/q", "http://a.b/x/y/q.html?ref=1", "http://a.b/x/y/q.html"),
    ("ref /*.php", "http://a.b/x?y=a.php&ref=1", None),  # the prefix sees the path, not the query
    ("ref *", "http://a.b/x?ref=1", "http://a.b/x"),
    ("a&&b&", "http://a.b/x?a=1&b=2&c=3", "http://a.b/x?c=3"),  # empty names skipped
])
def test_clean_url_edges(rule: str, url: str, expected: str | None) -> None:
    assert cleaned(f"clean-param: {rule}\n", url) == expected


@pytest.mark.parametrize("value", [
    b"", b"&", b"&&", b"ref /p extra", b"ref /p?x", b"ref /p%20", b"ref /p$", b"ref /\xd1\x81",
    b"r" * (MAX_RULE_CHARS + 1), b"ref /" + b"a" * (MAX_RULE_CHARS - 4),
])
def test_unusable_values_give_no_rule(value: bytes) -> None:
    assert clean_param(1, value) is None


def test_usable_values() -> None:
    longest = b"ref /" + b"a" * (MAX_RULE_CHARS - 5)
    assert clean_param(3, longest) == CleanParam(frozenset({"ref"}), "/" + "a" * (MAX_RULE_CHARS - 5), 3,
                                                 longest.decode())
    rule = clean_param(7, b"sid&sort\t/forum/*.php")
    assert rule == CleanParam(frozenset({"sid", "sort"}), "/forum/*.php", 7, "sid&sort\t/forum/*.php")
    assert clean_param(1, b"a-b.c_d /A-z_0.9/*") is not None  # every character Yandex allows


def test_rules_are_read_file_wide_in_file_order() -> None:
    """Yandex extension: before the first user-agent line, in any group; every usable line applies to every agent."""
    body = ("clean-param: a\n"
            "user-agent: googlebot\ndisallow: /g\nclean-param: b /x\n"
            "user-agent: yandex\nclean-param: c /x/*.php\nclean-param: bad /x?\n"
            f"clean-param: {'d' * MAX_RULE_CHARS}&e\n")
    robots = parse(body)
    assert [(rule.line, sorted(rule.params)) for rule in robots.clean_params] == [(1, ["a"]), (4, ["b"]), (6, ["c"])]
    url = "http://h/x/y.php?a=1&b=2&c=3&d=4&e=5"
    assert clean_url(url, robots.clean_params) == ("http://h/x/y.php?d=4&e=5", robots.clean_params)
    for agent in ("googlebot", "yandex", "other"):
        assert robots.compact(agent).clean(url) == clean_url(url, robots.clean_params)
    assert robots.allowed("/x?a=1", "googlebot")  # decides nothing (SPEC 5.3)


def test_the_rules_that_dropped_something_are_given_in_file_order() -> None:
    robots = parse("clean-param: b\nclean-param: zz\nclean-param: a&b\n")
    first, _, third = robots.clean_params
    assert clean_url("/p?a=1&b=2", robots.clean_params) == ("/p", (first, third))
    assert clean_url("/p?a=1", robots.clean_params) == ("/p", (third,))


def test_agent_rules_clean_agrees_with_clean_url() -> None:
    robots = parse(YANDEX)
    urls = ["/forum/a.php?sid=1", "/x", "/x?y=1", "/index.php?sid=1#f", "http://h/some_dir/get_book.pl?ref=1"]
    for agent in ("yandex", "googlebot"):
        form = robots.compact(agent)
        assert form.clean_params == robots.clean_params
        assert [form.clean(url) for url in urls] == [clean_url(url, robots.clean_params) for url in urls]
    assert parse("user-agent: *\ndisallow: /\n").compact("bot").clean("/p?ref=1") is None


def test_files_without_rules_share_one_empty_tuple() -> None:
    first = parse("user-agent: *\ndisallow: /a\n").compact("bot")
    second = parse("clean-param: a /p?\n").compact("bot")  # an unusable line: no rule either
    assert first.clean_params == () and first.clean_params is second.clean_params


class _CleanParamLines:
    """A ``ParseHandler`` keeping the (line, value) of every clean-param directive, as the parser reads them."""

    def __init__(self) -> None:
        self.values: list[tuple[int, bytes]] = []

    def unknown(self, line: int, key: bytes, value: bytes) -> None:
        if key.lower() == b"clean-param":
            self.values.append((line, value))

    def user_agent(self, line: int, value: bytes) -> None: ...
    def allow(self, line: int, value: bytes) -> None: ...
    def disallow(self, line: int, value: bytes) -> None: ...
    def sitemap(self, line: int, value: bytes) -> None: ...
    def line_metadata(self, line: int, metadata: LineMetadata) -> None: ...


_SIMPLE_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def test_corpus_clean_param_lines_give_rules_or_are_ignored() -> None:
    """Every corpus file parses; its rules are exactly its usable clean-param lines, and they clean its URLs."""
    files = sorted(require(CORPUS).glob("*.txt"))
    seen = 0
    for path in files:
        body = path.read_bytes()[:MAX_BYTES]
        robots = parse(body)
        lines = _CleanParamLines()
        parse_lines(body, lines)
        seen += len(lines.values)
        expected = [rule for rule in (clean_param(line, value) for line, value in lines.values) if rule is not None]
        assert list(robots.clean_params) == expected, path
        form = robots.compact("yandex")
        for rule in robots.clean_params:
            names = sorted(name for name in rule.params if _SIMPLE_NAME.fullmatch(name))
            if not names:
                continue
            start = rule.prefix.replace("*", "x") or "/"
            url = f"http://h{start}?{names[0]}=1&keep_zz9=2"
            result = form.clean(url)
            assert result is not None and result[0] == f"http://h{start}?keep_zz9=2" and rule in result[1], path
    assert seen > 0 or not files
