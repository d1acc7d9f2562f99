"""The crawl log's line about a refresh that brought a new robots.txt body (``say_rule_changes``): INFO naming the
rules added and removed for the crawl's tokens when they changed, DEBUG when only the body did; a stat each. Real
parsed forms (``Robots.compact``), real entries and Scrapy's stats collector."""

from __future__ import annotations

import logging

import pytest
from scrapy.spiders import Spider
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from scrapy_rep.matcher import AgentRules, parse
from scrapy_rep.reporting.rule_changes import NAMED, RULES_CHANGED, RULES_SAME, say_rule_changes
from scrapy_rep.stores import Entry, Outcome, Version

ORIGIN = "https://example.com"
TOKENS = ("examplebot",)
FETCHED = 1_795_000_000.5  # 2026-11-18T11:06:40.500Z
OLD = b"User-agent: *\nAllow: /y\nDisallow: /z\n"


def entry(body: bytes, at: float, outcome: Outcome = Outcome.RULES, status: int = 200) -> Entry:
    return Entry(ORIGIN, outcome, at, at + 86_400, body=body, status=status,
                 version=Version.of(body, at, status, f"{ORIGIN}/robots.txt"))


def form(body: bytes) -> AgentRules:
    return parse(body).compact(TOKENS)


def said(caplog: pytest.LogCaptureFixture, old: bytes, new: bytes, *, old_form: AgentRules | None = None,
         new_form: AgentRules | None = None, allow_all: bool = False) -> tuple[MemoryStatsCollector, list[str]]:
    """Call ``say_rule_changes`` for a refresh from ``old`` to ``new``; the stats and the lines logged."""
    stats = MemoryStatsCollector(get_crawler())
    previous, current = entry(old, FETCHED - 3600), entry(new, FETCHED)
    with caplog.at_level(logging.DEBUG, logger="scrapy_rep.middleware"):
        say_rule_changes(ORIGIN, previous, current, old_form if old_form or allow_all else form(old),
                         new_form or form(new), TOKENS, stats, Spider("s"))
    return stats, [f"{record.levelname} {record.getMessage()}" for record in caplog.records
                   if record.name == "scrapy_rep.middleware"]


def test_rules_changed_is_one_info_line_naming_them(caplog: pytest.LogCaptureFixture) -> None:
    new = b"User-agent: *\nDisallow: /z\n\nDisallow: /x\n"
    stats, lines = said(caplog, OLD, new)
    old_id, new_id = Version.of(OLD, 0, None, None).id[:12], Version.of(new, 0, None, None).id[:12]
    assert lines == [f"INFO {ORIGIN} robots.txt changed (version {old_id} -> {new_id}, fetched "
                     "2026-11-18T11:06:40.500Z): for ['examplebot'], rules added: Disallow: /x (line 4); "
                     "removed: Allow: /y (line 2)"]
    assert stats.get_value(RULES_CHANGED) == 1 and stats.get_value(RULES_SAME) is None


def test_only_added_or_only_removed(caplog: pytest.LogCaptureFixture) -> None:
    _, added = said(caplog, OLD, OLD + b"Disallow: /w\n")
    assert added[0].endswith("for ['examplebot'], rules added: Disallow: /w (line 4)")
    caplog.clear()
    _, removed = said(caplog, OLD, b"User-agent: *\nDisallow: /z\n")
    assert removed[0].endswith("for ['examplebot'], rules removed: Allow: /y (line 2)")


def test_same_rules_in_a_new_body_is_one_debug_line(caplog: pytest.LogCaptureFixture) -> None:
    """Moved rules, a comment, another group's change: the crawl's rules are the same."""
    new = b"# new\nUser-agent: other\nDisallow: /\n\nUser-agent: *\nDisallow: /z\nAllow: /y\n"
    stats, lines = said(caplog, OLD, new)
    assert len(lines) == 1 and lines[0].startswith(f"DEBUG {ORIGIN} robots.txt changed (version ")
    assert lines[0].endswith(": the rules for ['examplebot'] are the same")
    assert stats.get_value(RULES_SAME) == 1 and stats.get_value(RULES_CHANGED) is None


def test_from_allow_all(caplog: pytest.LogCaptureFixture) -> None:
    """A 404 before (no form: no rules) to a file: every rule of the crawl's group is added."""
    stats = MemoryStatsCollector(get_crawler())
    previous = entry(b"", FETCHED - 60, Outcome.ALLOW_ALL, 404)
    with caplog.at_level(logging.INFO, logger="scrapy_rep.middleware"):
        say_rule_changes(ORIGIN, previous, entry(OLD, FETCHED), None, form(OLD), TOKENS, stats, Spider("s"))
    assert caplog.records[-1].getMessage().endswith("rules added: Allow: /y (line 2), Disallow: /z (line 3)")
    assert stats.get_value(RULES_CHANGED) == 1


@pytest.mark.parametrize(("added", "removed", "named_added", "named_removed"), [
    (15, 0, NAMED, 0), (15, 3, 7, 3), (15, 15, 5, 5), (2, 15, 2, 8)])
def test_at_most_ten_rules_are_named(caplog: pytest.LogCaptureFixture, added: int, removed: int, named_added: int,
                                     named_removed: int) -> None:
    old = b"User-agent: *\n" + b"".join(b"Disallow: /old/%d\n" % n for n in range(removed))
    new = b"User-agent: *\n" + b"".join(b"Disallow: /new/%d\n" % n for n in range(added))
    _, lines = said(caplog, old, new)
    text = lines[0]
    assert text.count("/new/") == named_added and text.count("/old/") == named_removed
    if added > named_added:
        assert f"and {added - named_added} more" in text
    if removed > named_removed:
        assert f"and {removed - named_removed} more" in text
    assert text.count("(line ") == min(NAMED, added + removed)
