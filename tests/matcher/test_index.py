"""SPEC 7.4: the rule index returns exactly the rule a naive scan of every rule returns."""

from __future__ import annotations

from itertools import islice, product
from string import ascii_lowercase

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_rep.matcher._index import RuleIndex, scan_rank
from scrapy_rep.matcher._index_prefix import PrefixTable
from scrapy_rep.matcher._index_wild import _SCAN_AT_LEAST
from scrapy_rep.matcher._rules import Rule

from ._reference import reference_matches


def reference_best(rules: list[Rule], path: str) -> Rule | None:
    """SPEC 7.4 by brute force: longest pattern, then allow, then earliest line, then first given."""
    ordered = sorted(rules, key=lambda rule: (-rule.priority, not rule.allow, rule.line))  # stable: first given
    return next((rule for rule in ordered if reference_matches(rule.pattern, path)), None)


def rule(allow: bool, pattern: str, line: int) -> Rule:
    return Rule(allow=allow, pattern=pattern, line=line, written=pattern)


@pytest.mark.parametrize(
    ("path", "rules", "winner"),
    [
        ("/page", [rule(True, "/p", 1), rule(False, "/", 2)], 1),
        ("/folder/page", [rule(True, "/folder", 1), rule(False, "/folder", 2)], 1),
        ("/folder/page", [rule(False, "/folder", 1), rule(True, "/folder", 2)], 2),
        ("/page.htm", [rule(True, "/page", 1), rule(False, "/*.htm", 2)], 2),
        ("/page.php5", [rule(True, "/page", 1), rule(False, "/*.ph", 2)], 1),
        ("/", [rule(True, "/$", 1), rule(False, "/", 2)], 1),
        ("/page.htm", [rule(True, "/$", 1), rule(False, "/", 2)], 2),
    ],
)
def test_spec_7_4_table(path: str, rules: list[Rule], winner: int) -> None:
    """SPEC 7.4: longest pattern wins; allow wins a tie (the winner is given by line)."""
    found = RuleIndex(rules).best(path)
    assert found is not None
    assert found.line == winner


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        ("/obsolete/private/a.html", True),
        ("/a/private/b", False),
        ("/x.php", False),
        ("/x.php?a=1", True),
        ("/a/old/b.zip", False),
    ],
)
def test_spec_7_5_yandex_wildcards(path: str, allowed: bool) -> None:
    """SPEC 7.5: the Yandex example mixing anchored, suffix and infix wildcards."""
    rules = [
        rule(True, "/obsolete/private/*.html$", 1),
        rule(False, "/*.php$", 2),
        rule(False, "/*/private/", 3),
        rule(False, "/*/old/*.zip$", 4),
    ]
    found = RuleIndex(rules).best(path)
    assert (found is None or found.allow) is allowed


def test_earliest_line_wins_among_equals() -> None:
    """SPEC 7.4 (Google keeps the first it sees): equal patterns of one kind, given out of order."""
    rules = [rule(False, "/*b", 7), rule(False, "/a*", 3), rule(False, "/ab", 5), rule(False, "/a", 1)]
    assert RuleIndex(rules).best("/ab") is rules[1]
    rules = [rule(False, "/ab", 7), rule(False, "/ab", 3), rule(False, "/*b", 5)]
    assert RuleIndex(rules).best("/ab") is rules[1]


def test_longer_equivalent_pattern_beats_longest_literal() -> None:
    """SPEC 7.4: priority is the pattern's length, so `/a***` (4) beats `/ab` (3) although both are prefixes."""
    rules = [rule(True, "/ab", 1), rule(False, "/a***", 2)]
    assert RuleIndex(rules).best("/abc") is rules[1]


def test_no_match_and_no_rules() -> None:
    """SPEC 7.4: no matching rule decides nothing."""
    assert RuleIndex([rule(False, "/private", 1), rule(False, "/*.pdf$", 2)]).best("/public") is None
    assert RuleIndex([]).best("/") is None


# More distinct 3-letter words than the index tests one by one: "abc", then "ddd", "dde"... (none in "/abcx")
_MANY_WORDS = ["abc", *map("".join, islice(product("defghijk", repeat=3), _SCAN_AT_LEAST + 8))]


@pytest.mark.parametrize("words", [["abc"], _MANY_WORDS])
def test_infix_candidates_are_confirmed(words: list[str]) -> None:
    """A rule filed under a literal is returned only if its whole pattern matches, whether the candidates are
    tested one by one (few) or found through the path's trigrams (more candidates than path characters)."""
    assert words[0] == "abc" and len(set(words)) == len(words)
    rules = [rule(False, f"/*{word}*x", line) for line, word in enumerate(words, 1)]
    index = RuleIndex(rules)
    assert index.best("/abcx") is rules[0]
    assert index.best("/abc") is None
    assert index.best("/xabc") is None
    assert (index._wild._grams is None) == (len(words) <= _SCAN_AT_LEAST)


@pytest.mark.parametrize("short", [0, 5, _SCAN_AT_LEAST + 10])
def test_infix_pieces_found_at_every_offset(short: int) -> None:
    """More infix candidates than path characters: long pieces are probed at every third position of the path (each
    filed once per offset class), short ones tested one by one (few) or probed at every position (many). Each piece,
    wherever it stands in the path, is found: the index agrees with the naive scan at offsets 0 to 6."""
    # long: 4..9 characters, most of them 5+, more of them than the index tests one by one
    words = [ascii_lowercase[i % 20 : i % 20 + 3 + i % 6] + ascii_lowercase[i // 20] for i in range(_SCAN_AT_LEAST + 4)]
    words += [f"{ascii_lowercase[i % 26]}{i}"[:4].ljust(3, "q") for i in range(short)]  # short: 3-4 characters
    rules = [rule(i % 3 == 0, f"/*{word}", line) for line, (i, word) in enumerate(enumerate(words), 1)]
    index = RuleIndex(rules)
    for word in words:
        for offset in range(7):
            path = "/" + "z" * offset + word + "z"
            assert index.best(path) is reference_best(rules, path), (word, offset)
    assert index.best("/zzzz") is None
    grams = index._wild._grams  # the decisions above went through the trigram buckets, short pieces as said
    assert grams is not None
    assert isinstance(grams[1], list) == (short <= _SCAN_AT_LEAST)


def test_wildcard_buckets_along_the_prefix_chain() -> None:
    """Wildcard rules filed under nested first pieces (and under a plain key's prefix) are all candidates."""
    rules = [rule(False, "/shop/a*x", 1), rule(False, "/*b", 2), rule(True, "/sh*p/q", 3), rule(True, "/shop/ab", 4)]
    index = RuleIndex(rules)
    assert index.best("/shop/abq") is rules[3]
    assert index.best("/shop/abx") is rules[0]  # longest key `/shop/ab` is plain; the buckets above it count
    assert index.best("/shop/ac/b") is rules[1]
    assert index.best("/shop/p/q") is rules[2]
    assert index.best("/shop/a/x") is rules[0]
    assert index.best("/other") is None


def prefixes_of(table: PrefixTable, text: str) -> list[str]:
    """The table's keys that are prefixes of ``text``, longest first, by walking up from the longest."""
    found = []
    i = table.longest(text)
    while i >= 0:
        found.append(table.keys[i])
        i = table.parents[i]
    return found


def test_prefix_table_walks_up_from_a_non_prefix_predecessor() -> None:
    """The sorted predecessor of the text is not always a prefix; its ancestors are searched next."""
    table = PrefixTable(["/search", "/search-results", "/s", "/t"])
    assert prefixes_of(table, "/search/x") == ["/search", "/s"]
    assert table.longest("/r") == -1


# Small alphabets make shared prefixes, duplicates and equal lengths frequent; the pieces `abc`/`bca` reach the
# trigram index, `.?` ends reach the suffix index, `/` and `/a` first pieces the prefix buckets; random `abc`
# pieces give many distinct trigrams (more than a short path has characters).
_PIECES = ["/", "/a", "/ab", "a", "b", ".", "?", "abc", "bca", "/abc", "*", "*", "$"]
_piece = st.one_of(st.sampled_from(_PIECES), st.text(alphabet="abc", min_size=3, max_size=4))
patterns = st.lists(_piece, min_size=1, max_size=5).map("".join)
path_text = st.text(alphabet="/ab.?c$*", max_size=16)
fillers = st.text(alphabet="/ab.?c$*", max_size=3)


@st.composite
def rule_sets(draw: st.DrawFn, max_rules: int = 12) -> list[Rule]:
    """Rules with distinct lines given in any order, duplicate patterns of both kinds included."""
    chosen = draw(st.lists(st.tuples(st.booleans(), patterns), max_size=max_rules))
    lines = draw(st.permutations(range(1, len(chosen) + 1)))
    return [rule(allow, pattern, line) for (allow, pattern), line in zip(chosen, lines, strict=True)]


@st.composite
def paths_for(draw: st.DrawFn, rules: list[Rule]) -> str:
    """A random path, or one built from a rule's pattern (stars filled in, anchor kept or broken) to hit it."""
    if not rules or draw(st.booleans()):
        return draw(path_text)
    pattern = draw(st.sampled_from(rules)).pattern
    pattern = pattern[:-1] if pattern.endswith("$") else pattern
    filled = "".join(piece + draw(fillers) for piece in pattern.split("*"))
    return filled + draw(st.sampled_from(["", "", "x", "/abc"]))


@settings(max_examples=300)
@given(st.data())
def test_index_equals_naive_scan(data: st.DataObject) -> None:
    """SPEC 7.4: for any rules and path, the index returns the very rule the brute-force scan returns."""
    rules = data.draw(rule_sets())
    index = RuleIndex(rules)
    for _ in range(5):
        path = data.draw(paths_for(rules))
        assert index.best(path) is reference_best(rules, path)
        assert scan_rank(index.patterns, path) == index.rank(path)  # a cold form's decisions (_compact)


@settings(max_examples=50)
@given(st.data())
def test_index_equals_naive_scan_many_rules(data: st.DataObject) -> None:
    """As above with many rules: nested prefix keys and more indexed trigrams than path characters."""
    rules = data.draw(rule_sets(max_rules=60))
    index = RuleIndex(rules)
    for _ in range(20):
        path = data.draw(paths_for(rules))
        assert index.best(path) is reference_best(rules, path)
        assert scan_rank(index.patterns, path) == index.rank(path)  # a cold form's decisions (_compact)


plain_patterns = st.lists(st.sampled_from(["/", "/a", "/ab", "a", "b", "."]), min_size=1, max_size=4).map("".join)


@settings(max_examples=300)
@given(st.data())
def test_plain_prefixes_only_equal_naive_scan(data: st.DataObject) -> None:
    """Groups of plain prefixes only (most groups) keep their rules in the order given when the patterns are
    distinct, and are ranked otherwise: nested prefixes of both kinds, given in any line order, with and without
    duplicates, decide as the brute-force scan."""
    chosen = data.draw(st.lists(st.tuples(st.booleans(), plain_patterns), max_size=10))
    if data.draw(st.booleans()):
        chosen = list(dict(((pattern, (allow, pattern)) for allow, pattern in chosen)).values())  # distinct
    lines = data.draw(st.permutations(range(1, len(chosen) + 1)))
    rules = [rule(allow, pattern, line) for (allow, pattern), line in zip(chosen, lines, strict=True)]
    index = RuleIndex(rules)
    for _ in range(8):
        path = data.draw(st.one_of(path_text, st.sampled_from([r.pattern for r in rules] or ["/"]), plain_patterns))
        assert index.best(path) is reference_best(rules, path)
        assert scan_rank(index.patterns, path) == index.rank(path)


@given(st.lists(path_text), path_text)
def test_prefix_table_equals_scan(keys: list[str], text: str) -> None:
    """The longest key and its parents are exactly the keys that are prefixes of the text, longest first."""
    expected = sorted({key for key in keys if text.startswith(key)}, key=len, reverse=True)
    assert prefixes_of(PrefixTable(keys), text) == expected
