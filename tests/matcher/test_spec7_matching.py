"""SPEC 7: what a rule is compared with (7.1), encoding (7.2), wildcards (7.3), precedence (7.4, 7.5),
and explanations (which rule decided, on which line)."""

from __future__ import annotations

import pytest

from scrapy_rep.matcher import Rule, parse, path_params_query


@pytest.mark.parametrize(
    ("url", "path"),
    [("https://example.com:8080/a;p?q=1#frag", "/a;p?q=1"), ("https://example.com", "/"), ("", "/"),
     ("https://example.com?x=1", "/?x=1"), ("https://example.com;p", "/;p"), ("//example.com/a/b", "/a/b"),
     ("/a/b?c#d", "/a/b?c"), ("https://example.com/#/a", "/"), ("https://xn--bcher-kva.example/a", "/a"),
     ("https://example.com/a%2Fb", "/a%2Fb"), ("example.com/a", "/a")],
)
def test_7_1_path_params_and_query(url: str, path: str) -> None:
    """SPEC 7.1: path plus ;params and ?query; no scheme, host, port or fragment; empty path is '/'."""
    assert path_params_query(url) == path
    assert parse("").explain(url, "bot").path == path


def test_7_2_non_ascii_patterns_are_utf8_percent_encoded() -> None:
    """SPEC 7.2: "/ツ" in a pattern matches the encoded URL, not the raw one (URLs come encoded)."""
    robots = parse("user-agent: *\ndisallow: /\nallow: /foo/ツ\nallow: /SanJoséSellers\n")
    assert robots.allowed("https://example.com/foo/%E3%83%84", "bot")
    assert not robots.allowed("https://example.com/foo/ツ", "bot")
    assert robots.allowed("/SanJos%C3%A9Sellers", "bot")


def test_7_2_idn_hosts_do_not_matter() -> None:
    """SPEC 7.1-7.2: only the path is matched, whatever the (IDN or punycode) host."""
    robots = parse("user-agent: *\ndisallow: /bücher\n")
    for host in ("https://xn--bcher-kva.example", "https://bücher.example", ""):
        assert not robots.allowed(f"{host}/b%C3%BCcher/1", "bot")
        assert robots.allowed(f"{host}/buecher", "bot")


def test_7_2_escapes_compare_case_insensitively_in_patterns() -> None:
    """SPEC 7.2: a pattern's %aa is %AA. Google extension: the URL is taken as the caller encoded it,
    so its own lower-case escapes are not upper-cased."""
    robots = parse("user-agent: *\ndisallow: /a%3cb\n")
    assert not robots.allowed("/a%3Cb", "bot")
    assert robots.allowed("/a%3cb", "bot")


def test_7_2_escapes_are_never_decoded() -> None:
    """Google extension: %61 is not 'a', in patterns or URLs; %2F is not '/'."""
    robots = parse("user-agent: *\ndisallow: /%62%61%7A\ndisallow: /x%2Fy\n")
    assert robots.allowed("/baz", "bot")
    assert not robots.allowed("/%62%61%7A", "bot")
    assert robots.allowed("/x/y", "bot")
    assert parse("user-agent: *\ndisallow: /baz\n").allowed("/%62%61%7A", "bot")


PATTERN_TABLE = [
    ("/", ["/", "/a", "/a/b?c"], []),
    ("/*", ["/", "/a", "/a/b?c"], []),
    ("/$", ["/"], ["/a", "/?x"]),
    ("/fish", ["/fish", "/fish.html", "/fish/salmon.html", "/fishheads", "/fishheads/yummy.html",
               "/fish.php?id=anything"], ["/Fish.asp", "/catfish", "/?id=fish", "/desert/fish"]),
    ("/fish*", ["/fish", "/fish.html", "/fish/salmon.html", "/fishheads", "/fishheads/yummy.html",
                "/fish.php?id=anything"], ["/Fish.asp", "/catfish", "/?id=fish", "/desert/fish"]),
    ("/fish/", ["/fish/", "/fish/?id=anything", "/fish/salmon.htm"],
     ["/fish", "/fish.html", "/animals/fish/", "/Fish/Salmon.asp"]),
    ("/*.php", ["/index.php", "/filename.php", "/folder/filename.php", "/folder/filename.php?parameters",
                "/folder/any.php.file.html", "/filename.php/"], ["/", "/windows.PHP"]),
    ("/*.php$", ["/filename.php", "/folder/filename.php"],
     ["/filename.php?parameters", "/filename.php/", "/filename.php5", "/windows.PHP"]),
    ("/fish*.php", ["/fish.php", "/fishheads/catfish.php?parameters"], ["/Fish.PHP"]),
    ("/example*$", ["/example"], []),
    ("/a$b", ["/a$b"], ["/a"]),  # '$' is literal except at the end
]


@pytest.mark.parametrize(("pattern", "matching", "not_matching"), PATTERN_TABLE, ids=[p for p, _, _ in PATTERN_TABLE])
def test_7_3_pattern_table(pattern: str, matching: list[str], not_matching: list[str]) -> None:
    """SPEC 7.3: '*' matches any run, '$' anchors at the end, otherwise a prefix match."""
    robots = parse(f"user-agent: *\ndisallow: {pattern}\n")
    assert [path for path in matching if robots.allowed(path, "bot")] == []
    assert [path for path in not_matching if not robots.allowed(path, "bot")] == []


PRECEDENCE_TABLE = [
    ("https://example.com/page", ["allow: /p", "disallow: /"], True),
    ("https://example.com/folder/page", ["allow: /folder", "disallow: /folder"], True),
    ("https://example.com/page.htm", ["allow: /page", "disallow: /*.htm"], False),
    ("https://example.com/page.php5", ["allow: /page", "disallow: /*.ph"], True),
    ("https://example.com/", ["allow: /$", "disallow: /"], True),
    ("https://example.com/page.htm", ["allow: /$", "disallow: /"], False),
]


@pytest.mark.parametrize(("url", "rules", "allowed"), PRECEDENCE_TABLE)
def test_7_4_precedence_table(url: str, rules: list[str], allowed: bool) -> None:
    """SPEC 7.4: the longest matching pattern wins; allow wins a tie; in either order."""
    for ordered in (rules, rules[::-1]):
        assert parse("user-agent: *\n" + "\n".join(ordered)).allowed(url, "bot") is allowed


def test_7_4_length_is_counted_after_encoding() -> None:
    """SPEC 7.4: "/é" is 7 bytes long once encoded (/%C3%A9), so it beats the 6-byte "/%C3%A"."""
    robots = parse("user-agent: *\nallow: /é\ndisallow: /%C3%A\n")
    assert robots.allowed("/%C3%A9", "bot")


YANDEX_TABLE = [
    (["Allow: /cgi-bin", "Disallow: /"], {"/cgi-bin/x": True, "/other": False}),
    (["Allow: /", "Allow: /catalog/auto", "Disallow: /catalog"], {"/catalog/x": False, "/catalog/auto/x": True,
                                                                  "/x": True}),
    (["Allow: /archive", "Disallow: /"], {"/archive/1": True, "/x": False}),
    (["Allow: /obsolete/private/*.html$", "Disallow: /*.php$", "Disallow: /*/private/", "Disallow: /*/old/*.zip$"],
     {"/obsolete/private/a.html": True, "/a/private/b": False, "/x.php": False, "/x.php?a=1": True,
      "/a/old/b.zip": False}),
    (["Disallow: /add.php?*user="], {"/add.php?x=1&user=2": False, "/add.php?x=1": True}),
    (["Disallow: /cgi-bin/*.aspx"], {"/cgi-bin/example.aspx": False, "/cgi-bin/private/test.aspx": False}),
    (["Disallow: /*private"], {"/private": False, "/cgi-bin/private": False}),
    (["Disallow: /example$"], {"/example": False, "/example.html": True}),
    (["Disallow: /example*$"], {"/example": False, "/example.html": False}),
    (["Disallow: /#"], {"/anything": False}),
    (["Allow: /", "Disallow: /"], {"/x": True}),
    (["Allow: /$", "Disallow: /"], {"/": True, "/x": False}),
    (["Disallow: /private*html"], {"/private/test.html": False, "/private/html/test.aspx": False}),
    (["Disallow: /private$"], {"/private": False, "/private/x": True}),
    (["Disallow:"], {"/x": True}),
]


@pytest.mark.parametrize(("rules", "expected"), YANDEX_TABLE, ids=[" ".join(r) for r, _ in YANDEX_TABLE])
def test_7_5_yandex_table(rules: list[str], expected: dict[str, bool]) -> None:
    """SPEC 7.5: Yandex's examples, for user-agent Yandex."""
    robots = parse("User-agent: Yandex\n" + "\n".join(rules) + "\n")
    assert {path: robots.allowed(path, "Yandex") for path in expected} == expected


def test_7_5_specific_group_beats_global() -> None:
    """SPEC 7.5, last row."""
    assert parse("User-agent: *\nDisallow: /\nUser-agent: Yandex\nAllow: /\n").allowed("/x", "Yandex")


def test_index_html_also_allows_its_directory() -> None:
    """Google extension: "allow: /d/index.html" also allows "/d/" (and only that), with the same line."""
    robots = parse("user-agent: *\ndisallow: /\nallow: /d/index.htm\nallow: /e/index.html\n")
    assert robots.allowed("/d/", "bot") and robots.allowed("/e/", "bot") and robots.allowed("/e/index.html", "bot")
    assert not robots.allowed("/d/x", "bot") and not robots.allowed("/e/?q", "bot")
    assert robots.explain("/e/", "bot").rule == Rule(True, "/e/$", 4, "/e/index.html")


def test_explain_names_the_deciding_rule_and_its_line() -> None:
    """SPEC 7.4: the verdict holds the winning rule as written (not escaped) and its 1-based line."""
    body = "# header\nuser-agent: *\ndisallow: /private/\n\nallow: /private/public/ # ok\ndisallow: /ü\n"
    robots = parse(body)
    verdict = robots.explain("https://example.com/private/x", "MyBot")
    assert (verdict.allowed, verdict.rule) == (False, Rule(False, "/private/", 3, "/private/"))
    assert robots.explain("/private/public/a", "MyBot").rule == Rule(True, "/private/public/", 5, "/private/public/")
    assert robots.explain("/%C3%BC", "MyBot").rule == Rule(False, "/%C3%BC", 6, "/ü")
    none = robots.explain("/other", "MyBot")
    assert none.allowed and none.rule is None
    assert str(verdict) == ("disallowed by line 3 (Disallow: /private/) of the '*' group (line 2), the longest rule "
                            "for 'MyBot' matching '/private/x'")
    assert str(none) == "allowed: no rule of the '*' group (line 2) matches '/other'"
    assert robots.explain("/private/x", ["a", "b"]).allowed is False


def test_explain_and_allowed_agree() -> None:
    """explain().allowed is allowed(), for every agent and URL form."""
    robots = parse("user-agent: a\ndisallow: /x\nallow: /x/y\nuser-agent: *\ndisallow: /\n")
    for agent in ("a", "b", ["b", "a"]):
        for url in ("/x", "/x/y", "/z", "http://h/x/y?q", ""):
            assert robots.explain(url, agent).allowed is robots.allowed(url, agent)
