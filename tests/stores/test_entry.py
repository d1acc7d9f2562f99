"""An entry holds its robots.txt body compressed (a broad crawl holds one per origin) and reads it back whole."""

from __future__ import annotations

from scrapy_rep.stores import Entry, Outcome

BODY = b"User-agent: *\n" + b"".join(b"Disallow: /private/section-%d/\n" % i for i in range(100))


def entry(body: bytes) -> Entry:
    return Entry("https://example.com", Outcome.RULES, 1.0, 2.0, body=body, status=200)


def test_the_body_comes_back_whole_and_is_held_compressed() -> None:
    held = entry(BODY)
    assert held.body == BODY
    assert len(held._packed) < len(BODY) / 5
    assert entry(b"").body == b"" and entry(b"")._packed == b""


def test_equal_bodies_are_the_same_body_without_reading_them() -> None:
    assert entry(BODY).same_body(entry(BODY))
    assert not entry(BODY).same_body(entry(BODY + b"\n"))
    assert entry(BODY) == entry(BODY) and entry(BODY) != entry(b"")


def test_records_round_trip_and_repr_hides_the_packed_body() -> None:
    held = entry(BODY)
    assert Entry.loads(held.dumps(), held.packed_body) == held
    assert "_packed" not in repr(held) and "status=200" in repr(held)
