"""Properties of Yandex's Clean-param rewriting on arbitrary input (SPEC 5.3, 6.5; matcher/_clean_param.py).

``clean_param`` and ``clean_url`` never raise; cleaning is idempotent; what is left of the query holds no listed
parameter of a rule whose prefix matches the path, and every other piece, in order, byte for byte. The reference
below decides which rules apply with a regex of the prefix (``*``: any sequence, a prefix match), independently of
the matcher's greedy search.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_rep.matcher import CleanParam, clean_url
from scrapy_rep.matcher._clean_param import clean_param

NAMES = ["a", "b", "ref", "Ref", "%72ef", "sid", "", "%D1%81", "с", "%zz"]
PREFIXES = ["", "/a", "/a*b", "*", "/b/", "/*.php", "/a/b.php"]
SEGMENTS = ["/a", "/b", "/", ".php", "x", "b", "/a/b.php", ";p=1"]

values = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="&#"), max_size=6)
pieces = st.one_of(st.sampled_from(NAMES), st.builds(lambda name, value: f"{name}={value}", st.sampled_from(NAMES),
                                                     values))
queries = st.lists(pieces, max_size=6).map("&".join)
paths = st.lists(st.sampled_from(SEGMENTS), max_size=4).map(lambda parts: "/" + "".join(parts).lstrip("/"))
fragments = st.sampled_from(["", "#", "#f?ref=1&a", "#x"])
urls = st.one_of(st.builds(lambda path, query, fragment: f"http://h.test{path}?{query}{fragment}",
                           paths, queries, fragments),
                 st.builds(lambda path, query: f"{path}?{query}", paths, queries),
                 st.text(max_size=40))
rule_values = st.builds(lambda names, prefix: ("&".join(names) + " " + prefix).encode(),
                        st.lists(st.sampled_from(NAMES), min_size=1, max_size=3), st.sampled_from(PREFIXES))
rule_lists = st.lists(rule_values, max_size=4).map(
    lambda found: [rule for line, value in enumerate(found, 1) if (rule := clean_param(line, value)) is not None])


def _applies(rule: CleanParam, path: str) -> bool:
    pattern = ".*".join(re.escape(piece) for piece in rule.prefix.split("*"))
    return re.match(pattern, path, re.DOTALL) is not None


def _name(piece: str) -> str:
    name = piece.partition("=")[0]
    return unquote(name, errors="surrogateescape") if "%" in name else name


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=60), urls), st.binary(max_size=40), st.integers(1, 10**6))
def test_never_raises(url: str, value: bytes, line: int) -> None:
    rule = clean_param(line, value)
    assert rule is None or (rule.params and rule.line == line)
    result = clean_url(url, [] if rule is None else [rule])
    assert result is None or (rule is not None and result[1] == (rule,) and len(result[0]) < len(url))


@settings(max_examples=300, deadline=None)
@given(urls, rule_lists)
def test_cleaning_is_idempotent(url: str, rules: list[CleanParam]) -> None:
    result = clean_url(url, rules)
    if result is not None:
        assert result[0] != url and set(result[1]) <= set(rules)
        assert clean_url(result[0], rules) is None


@settings(max_examples=300, deadline=None)
@given(st.builds(lambda path, query, fragment: (path, query, fragment), paths, queries, fragments), rule_lists)
def test_listed_parameters_go_and_the_others_stay_in_order(parts: tuple[str, str, str],
                                                          rules: list[CleanParam]) -> None:
    path, query, fragment = parts
    url = f"http://h.test{path}?{query}{fragment}"
    listed = {name for rule in rules if _applies(rule, path) for name in rule.params}
    kept = [piece for piece in query.split("&") if _name(piece) not in listed]
    result = clean_url(url, rules)
    if result is None:
        assert kept == query.split("&")  # nothing listed was there
        return
    rest = "&".join(kept)
    assert result[0] == f"http://h.test{path}{'?' + rest if rest else ''}{fragment}"
    query_left = result[0][: len(result[0]) - len(fragment)].partition("?")[2]
    assert all(_name(piece) not in listed for piece in query_left.split("&"))
