"""Properties of the opt-out parsers and of ``combine`` on arbitrary and shuffled input.

The tables in tests/matcher/test_tdmrep.py and test_opt_outs.py give the expected readings; these state invariants
that need none: the parsers never raise and stay within their bounds, ``combine`` does not depend on the order of the
statements, and adding a statement never turns a refusal into a permission.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_rep.matcher import (
    ROBOTS_TXT,
    TDM,
    TRAIN_AI,
    Statement,
    TdmRep,
    TdmRule,
    combine,
    header_statements,
    noai_statements,
    parse_tdmrep,
    tdm_meta,
    tdm_statements,
    tdm_value,
)
from scrapy_rep.matcher._opt_outs import _SOURCES, MAX_HEADER_VALUES
from scrapy_rep.matcher._tdmrep import MAX_PROBLEMS, MAX_RULES

LOCATION_PIECES = st.sampled_from(["/", "a", "b/", "*", "$", ".pdf", "%24", "%2a", "é", "?", "=", "images/"])
LOCATIONS = st.lists(LOCATION_PIECES, max_size=5).map("".join)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 3) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8)
ENTRIES = st.one_of(
    st.fixed_dictionaries({"location": LOCATIONS}, optional={
        "tdm-reservation": st.sampled_from([0, 1, "0", "1", True, 2, None, 1.0, "x"]),
        "tdm-policy": st.sampled_from(["https://p/x", "/rel", 5, None, "mailto:a@b"]),
        "other": JSON_VALUES}),
    JSON_VALUES,
)
PATHS = st.lists(st.sampled_from(["/", "a", "b", ".pdf", "$", "*", "%24", "?q=1", "images/", "%C3%A9"]),
                 max_size=6).map(lambda parts: "/" + "".join(parts))
USES = st.sampled_from([TRAIN_AI, TDM, "search", "ai-input"])
STATEMENTS = st.builds(
    Statement, USES, st.booleans(), st.sampled_from([*_SOURCES, "elsewhere"]), st.sampled_from(["a", "b", "line 3"]),
    st.sampled_from([None, "https://p/1", "https://p/2"]), st.sampled_from([None, "bots", "tdm"]))
HEADER_BYTES = st.lists(st.binary(max_size=40) | st.sampled_from(
    [b"train-ai=n", b"search=y, train-ai=y", b"train-genai=n", b"tdm=n", b"ai-train=no, search=yes", b"1", b"0"]),
    max_size=MAX_HEADER_VALUES + 3)


@settings(max_examples=300, deadline=None)
@given(body=st.binary(max_size=300))
def test_tdmrep_never_raises_on_bytes(body: bytes) -> None:
    repo = parse_tdmrep(body)
    assert isinstance(repo, TdmRep) and len(repo.problems) <= MAX_PROBLEMS + 1
    assert repo.lookup("/") is None or isinstance(repo.lookup("/"), TdmRule)


@settings(max_examples=300, deadline=None)
@given(entries=st.lists(ENTRIES, max_size=8), path=PATHS, bom=st.booleans())
def test_tdmrep_reads_as_far_as_valid(entries: list[Any], path: str, bom: bool) -> None:
    """Every object with a non-empty string location is a rule, in order; lookup gives the first that matches."""
    body = (b"\xef\xbb\xbf" if bom else b"") + json.dumps(entries).encode()
    repo = parse_tdmrep(body)
    expected = [index for index, entry in enumerate(entries)
                if isinstance(entry, dict) and isinstance(entry.get("location"), str) and entry["location"]]
    assert [rule.index for rule in repo.rules] == expected
    assert all(rule.reservation in (0, 1, None) for rule in repo.rules)
    found = repo.lookup(path)
    if found is not None:
        assert all(TdmRep((rule,)).lookup(path) is None for rule in repo.rules if rule.index < found.index)


@settings(max_examples=200, deadline=None)
@given(body=st.text(max_size=200), depth=st.integers(0, 3000))
def test_tdmrep_never_raises_on_text_or_nesting(body: str, depth: int) -> None:
    assert isinstance(parse_tdmrep(body.encode("utf-8", "surrogatepass")), TdmRep)
    assert parse_tdmrep(b"[" * depth + body.encode("utf-8", "replace") + b"]" * depth).rules == ()


@settings(max_examples=300, deadline=None)
@given(value=st.one_of(st.none(), st.text(max_size=10), st.binary(max_size=10)))
def test_tdm_value_is_0_1_or_unset(value: str | bytes | None) -> None:
    assert tdm_value(value) in (0, 1, None)


@settings(max_examples=300, deadline=None)
@given(usage=HEADER_BYTES, signal=HEADER_BYTES, legacy=st.booleans())
def test_header_statements_never_raise(usage: list[bytes], signal: list[bytes], legacy: bool) -> None:
    statements = header_statements(usage, signal, legacy_labels=legacy)
    assert all(isinstance(s, Statement) and s.where for s in statements)
    assert legacy or all(s.legacy is None for s in statements)


@settings(max_examples=300, deadline=None)
@given(reservation=st.sampled_from([0, 1, None]), header=HEADER_BYTES, header_policy=HEADER_BYTES,
       meta=st.lists(st.text(max_size=4) | st.sampled_from(["0", "1"]), max_size=4),
       meta_policy=st.lists(st.text(max_size=12), max_size=3))
def test_tdm_statements_give_both_uses_or_none(reservation: int | None, header: list[bytes],
                                                header_policy: list[bytes], meta: list[str],
                                                meta_policy: list[str]) -> None:
    rule = TdmRule(0, "/", reservation)
    statements = tdm_statements(rule, "https://h/.well-known/tdmrep.json", header, header_policy, meta, meta_policy)
    assert statements == [] or ([s.use for s in statements] == [TDM, TRAIN_AI]
                                and statements[0].allowed == statements[1].allowed)
    assert statements or (reservation is None and not any(tdm_value(v) is not None for v in meta))
    assert all(s.policy is None for s in statements if s.allowed)  # no policy with a 0


@settings(max_examples=300, deadline=None)
@given(body=st.binary(max_size=300) | st.text(max_size=200).map(
    lambda text: f'<head><meta name="tdm-reservation" content="{text}">'.encode("utf-8", "replace")))
def test_tdm_meta_never_raises(body: bytes) -> None:
    reservations, policies = tdm_meta(body)
    assert all(isinstance(v, str) for v in reservations + policies)


@settings(max_examples=200, deadline=None)
@given(meta=st.frozensets(st.sampled_from(["noai", "noimageai", "noindex"])),
       header=st.frozensets(st.sampled_from(["noai", "noimageai", "nofollow"])), image=st.booleans())
def test_noai_statements_only_refuse_training(meta: frozenset[str], header: frozenset[str], image: bool) -> None:
    statements = noai_statements(meta, header, image=image)
    assert all(s.use == TRAIN_AI and not s.allowed for s in statements)
    assert bool(statements) == bool({"noai"} & (meta | header) or (image and {"noimageai"} & (meta | header)))


@settings(max_examples=300, deadline=None)
@given(statements=st.lists(STATEMENTS, max_size=10), data=st.data())
def test_combine_does_not_depend_on_order(statements: list[Statement], data: st.DataObject) -> None:
    shuffled = data.draw(st.permutations(statements))
    combined = combine(statements)
    assert combine(shuffled) == combined and list(combine(shuffled)) == list(combined)
    assert combine(reversed(statements)) == combined
    for use, kept in combined.items():
        same = [s for s in statements if s.use == use]
        assert kept in same and kept.allowed == all(s.allowed for s in same)  # any n wins


@settings(max_examples=300, deadline=None)
@given(statements=st.lists(STATEMENTS, max_size=10), extra=STATEMENTS)
def test_adding_a_statement_never_turns_n_into_y(statements: list[Statement], extra: Statement) -> None:
    before, after = combine(statements), combine([*statements, extra])
    assert set(before) <= set(after)
    for use, kept in before.items():
        if not kept.allowed:
            assert not after[use].allowed
    assert combine([*statements, extra, extra]) == after
    assert combine([Statement(TRAIN_AI, False, ROBOTS_TXT, "x"), *statements])[TRAIN_AI].allowed is False


def test_many_rules_stay_bounded() -> None:
    body = json.dumps([{"location": "/*a*a*a*a*b", "tdm-reservation": 1}] * (MAX_RULES * 2)).encode()
    repo = parse_tdmrep(body)
    assert len(repo.rules) == MAX_RULES
    assert repo.lookup("/" + "a" * 2000) is None
