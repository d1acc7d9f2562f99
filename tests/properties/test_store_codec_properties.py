"""Properties of the stored-entry format against corrupt data (issue 4: "corrupt entries are ignored and re-fetched";
SPEC 3.3). Whatever bytes a store hands back, decoding yields an ``Entry`` or ``CorruptEntry``, nothing else."""

from __future__ import annotations

import json
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_rep.stores import CorruptEntry, Entry, Outcome
from scrapy_rep.stores._codec import decode, encode

json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20)),
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(st.text(max_size=10), children,
                                                                                 max_size=4)),
    max_leaves=12,
)
record_fields = st.fixed_dictionaries(
    {},
    optional={"v": st.one_of(st.just(1), json_values), "origin": json_values,
              "outcome": st.one_of(st.sampled_from([o.value for o in Outcome]), json_values),
              "fetched_at": json_values, "expires_at": json_values, "body": st.one_of(st.just(""), json_values),
              "status": json_values, "error": json_values, "first_failure_at": json_values, "failures": json_values},
)
entries = st.builds(
    Entry,
    origin=st.text(max_size=40),
    outcome=st.sampled_from(Outcome),
    fetched_at=st.floats(0, 4e9),
    expires_at=st.floats(0, 4e9),
    body=st.binary(max_size=200),
    status=st.one_of(st.none(), st.integers(100, 599)),
    error=st.one_of(st.none(), st.text(max_size=20)),
    first_failure_at=st.one_of(st.none(), st.floats(0, 4e9)),
    failures=st.integers(0, 1000),
)


def decodes_or_corrupt(data: object) -> Entry | None:
    try:
        return decode(data)
    except CorruptEntry:
        return None


@settings(max_examples=500, deadline=None)
@given(entry=entries)
def test_entries_round_trip(entry: Entry) -> None:
    assert decode(encode(entry)) == entry


@settings(max_examples=500, deadline=None)
@given(data=st.one_of(st.binary(max_size=300), st.binary(max_size=300).map(zlib.compress),
                      st.text(max_size=50), st.integers()))
def test_arbitrary_stored_values_decode_or_are_corrupt(data: object) -> None:
    result = decodes_or_corrupt(data)
    assert result is None or isinstance(result, Entry)


@settings(max_examples=300, deadline=None)
@given(record=st.one_of(record_fields, json_values))
def test_arbitrary_json_records_decode_or_are_corrupt(record: object) -> None:
    result = decodes_or_corrupt(zlib.compress(json.dumps(record).encode()))
    assert result is None or isinstance(result, Entry)


def test_deeply_nested_json_is_corrupt_not_a_crash() -> None:
    """A corrupt record of nested brackets must read as corrupt (re-fetched), not raise RecursionError."""
    with pytest.raises(CorruptEntry):
        decode(zlib.compress(b"[" * 100_000))
