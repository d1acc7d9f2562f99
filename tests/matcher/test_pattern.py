"""SPEC 7.3: matching one pattern against one path; the fast matcher equals Google's position-set algorithm."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrapy_rep.matcher._pattern import Shape, matches, shape_of

from ._reference import reference_matches

# SPEC 7.3 table: pattern, paths it matches, paths it does not match.
SPEC_7_3 = [
    ("/", ["/", "/a", "/fish/salmon.html"], []),
    ("/*", ["/", "/a", "/fish/salmon.html"], []),
    ("/$", ["/"], ["/a", "/fish/"]),
    (
        "/fish",
        ["/fish", "/fish.html", "/fish/salmon.html", "/fishheads", "/fishheads/yummy.html", "/fish.php?id=anything"],
        ["/Fish.asp", "/catfish", "/?id=fish", "/desert/fish"],
    ),
    (
        "/fish*",
        ["/fish", "/fish.html", "/fish/salmon.html", "/fishheads", "/fishheads/yummy.html", "/fish.php?id=anything"],
        ["/Fish.asp", "/catfish", "/?id=fish", "/desert/fish"],
    ),
    (
        "/fish/",
        ["/fish/", "/fish/?id=anything", "/fish/salmon.htm"],
        ["/fish", "/fish.html", "/animals/fish/", "/Fish/Salmon.asp"],
    ),
    (
        "/*.php",
        [
            "/index.php",
            "/filename.php",
            "/folder/filename.php",
            "/folder/filename.php?parameters",
            "/folder/any.php.file.html",
            "/filename.php/",
        ],
        ["/", "/windows.PHP"],
    ),
    (
        "/*.php$",
        ["/filename.php", "/folder/filename.php"],
        ["/filename.php?parameters", "/filename.php/", "/filename.php5", "/windows.PHP"],
    ),
    ("/fish*.php", ["/fish.php", "/fishheads/catfish.php?parameters"], ["/Fish.PHP"]),
    ("/example*$", ["/example", "/example.html"], ["/exampl", "/Example"]),
]

CASES = [(pattern, path, True) for pattern, yes, _ in SPEC_7_3 for path in yes] + [
    (pattern, path, False) for pattern, _, no in SPEC_7_3 for path in no
]


@pytest.mark.parametrize(("pattern", "path", "expected"), CASES)
def test_spec_7_3_table(pattern: str, path: str, expected: bool) -> None:
    """SPEC 7.3: every row of the table, with the fast matcher and the reference."""
    assert matches(pattern, path) is expected
    assert reference_matches(pattern, path) is expected


@pytest.mark.parametrize(
    ("pattern", "shape"),
    [
        ("/fish", Shape("/fish", (), False)),
        ("/fish*", Shape("/fish", (), False)),
        ("/fish**", Shape("/fish", (), False)),
        ("/example*$", Shape("/example", (), False)),
        ("/a$", Shape("/a", (), True)),
        ("/a$b", Shape("/a$b", (), False)),
        ("/a$$", Shape("/a$", (), True)),
        ("/a**b*c$", Shape("/a", ("b", "c"), True)),
        ("*", Shape("", (), False)),
        ("$", Shape("", (), True)),
        ("*$", Shape("", (), False)),
    ],
)
def test_shape_is_canonical(pattern: str, shape: Shape) -> None:
    """SPEC 7.3: trailing `*` changes nothing, `$` anchors only at the end; equal shapes mean equal matching."""
    assert shape_of(pattern) == shape


def test_adversarial_pattern_is_decided() -> None:
    """SPEC 7.3: the classic backtracking trap gives the reference's answer (its speed is benchmarked)."""
    path = "/" + "a" * 5000
    assert matches("/*a*a*a*a*a*a*a*a*a*a*b", path) is False
    assert matches("/*a*a*a*a*a*a*a*a*a*a*a", path) is True
    assert matches("/*a*a*a*a*a*a*a*a*a*a$", path) is True
    assert matches("/*a*a*a*a*a*a*a*a*a*ab$", path) is False


# Small alphabets make overlaps, repeats and near misses frequent.
_PATH_CHARS = "/ab.?$*"
_PATTERN_CHARS = "/ab.?$**"
paths = st.text(alphabet=_PATH_CHARS, max_size=14)
patterns = st.text(alphabet=_PATTERN_CHARS, min_size=1, max_size=10)


@given(patterns, paths)
def test_fast_matcher_equals_position_sets(pattern: str, path: str) -> None:
    """SPEC 7.3: greedy piece placement decides exactly as the position-set algorithm."""
    assert matches(pattern, path) is reference_matches(pattern, path)


@given(patterns, paths)
def test_shape_matches_equals_position_sets(pattern: str, path: str) -> None:
    """The canonical shape the index stores decides exactly as the pattern it came from."""
    assert shape_of(pattern).matches(path) is reference_matches(pattern, path)


@given(patterns, paths)
def test_equal_shapes_match_alike(pattern: str, path: str) -> None:
    """SPEC 7.3: doubled and trailing `*` change nothing; the index keeps one entry per shape, so it relies on it."""
    body, anchor = (pattern[:-1], "$") if pattern.endswith("$") else (pattern, "")
    variants = [body.replace("*", "**") + anchor] + ([] if anchor else [pattern + "*"])
    for variant in variants:
        assert shape_of(variant) == shape_of(pattern)
        assert reference_matches(variant, path) is reference_matches(pattern, path)
