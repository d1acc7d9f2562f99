"""The compact decision form (``Robots.compact`` -> ``AgentRules``, SPEC 6-7): it decides, explains and gives usage
preferences exactly as the full ``Robots`` does for the same tokens, with its index built or let go."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_rep.matcher import AgentRules, Robots, UserAgent, _compact, parse

from ._google import google_allowed
from .test_corpus import corpus_files, derived_urls
from .test_differential import QUERY_AGENTS, documents, urls_for

AGENTS: list[UserAgent] = ["googlebot", "FooBot", ("googlebot-news", "googlebot"), ()]


@pytest.fixture
def small_hot(monkeypatch: pytest.MonkeyPatch) -> Iterator[_compact._Hot]:
    """A hot set of 10 rules, so that forms let their index go as soon as others are made."""
    hot = _compact._Hot(10)
    monkeypatch.setattr(_compact, "_HOT", hot)
    yield hot


@pytest.fixture
def never_cold(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forms build their index at their first decision (no scan of the packed patterns)."""
    monkeypatch.setattr(_compact, "COLD_DECISIONS", 0)


@pytest.fixture(params=["scans", "indexed"])
def how(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every decision of a form by a scan of its packed patterns (never built), or by its index (built at once)."""
    monkeypatch.setattr(_compact, "COLD_DECISIONS", 10**9 if request.param == "scans" else 0)
    return str(request.param)


def assert_same(robots: Robots, form: AgentRules, agent: UserAgent, url: str) -> None:
    verdict = robots.explain(url, agent)
    assert form.explain(url) == verdict, (agent, url)
    assert form.allowed(url) is verdict.allowed is robots.allowed(url, agent), (agent, url)
    assert form.decide(url) == (verdict.allowed, robots.usage(url, agent)), (agent, url)


def test_the_whole_corpus_decides_as_the_full_parse(how: str) -> None:
    """Every corpus file, four token lists (a ``*``-only crawler among them), URLs derived from the file's rules:
    decision, deciding rule (line, written value) and usage preferences all equal, whether the form scans its packed
    patterns (its first decisions) or decides from its index."""
    for path in corpus_files():
        body = path.read_bytes()
        robots = parse(body)
        rng = random.Random(path.name)
        urls = derived_urls(body, rng)
        for agent in [*AGENTS, *robots.agents[:2]]:
            form = robots.compact(agent)
            assert form.crawl_delay == robots.crawl_delay(agent)
            for url in urls:
                assert_same(robots, form, agent, url)
            assert form._index is None or how == "indexed"  # scanning, it never built one


def test_a_form_decides_its_first_few_urls_by_a_scan_then_builds_its_index() -> None:
    """Most origins of a broad crawl see a request or two: no index is built for them (issue 21)."""
    form = parse("User-agent: *\nDisallow: /a\nAllow: /a/b\nDisallow: /*.pdf$\n").compact("x")
    answers = [form.allowed(url) for url in ["/a/x", "/a/b", "/x.pdf", "/y"]]
    assert form._index is None and answers == [False, True, False, True]
    assert form.explain("/a/b/c").rule is not None and form._index is not None  # the fifth decision builds it
    assert form.allowed("/a/x") is False and form.allowed("/x.pdfs") is True


def test_a_form_that_let_its_index_go_decides_the_same(small_hot: _compact._Hot) -> None:
    """With a hot set smaller than one file, every form but the newest decides from its packed rules again."""
    for path in corpus_files()[:300]:
        body = path.read_bytes()
        robots = parse(body)
        forms = [robots.compact(agent) for agent in AGENTS]
        urls = derived_urls(body, random.Random(path.name))
        for agent, form in zip(AGENTS, forms, strict=True):
            for url in urls:
                form._index = None  # as the hot set lets it go
                assert_same(robots, form, agent, url)


def test_the_hot_set_keeps_the_newest_forms_within_its_budget(small_hot: _compact._Hot, never_cold: None) -> None:
    four = parse("User-agent: *\nDisallow: /a\nDisallow: /b\nAllow: /a/b\nDisallow: /*.pdf$\n")
    first, second, third = four.compact("x"), four.compact("x"), four.compact("x")
    assert len(small_hot) == 0  # nothing built before a decision
    for form in (first, second, third):
        form.allowed("/")
    assert small_hot.rules == 8 and len(small_hot) == 2  # the first let its index go when the third came
    assert first._index is None and second._index is not None and third._index is not None
    assert first.allowed("/a/x") is False  # built again: now the newest; the oldest goes
    assert second._index is None and small_hot.rules == 8
    big = parse("User-agent: *\n" + "".join(f"Disallow: /{i}\n" for i in range(20))).compact("x")
    big.allowed("/")
    assert len(small_hot) == 1 and small_hot.rules == 20  # over the budget alone: kept, the others let go
    assert big.allowed("/19/") is False and third.allowed("/b") is False


def test_long_patterns_are_held_compressed_and_come_back_whole(small_hot: _compact._Hot, how: str) -> None:
    """Packed patterns from COMPRESS_PATTERNS_FROM characters on are held zlib-compressed (a broad crawl keeps a form
    per origin); a cold form decompresses them to scan them or build its index again, non-ASCII escapes included."""
    rules = "".join(f"Disallow: /section-{i}/caf\u00e9/*.pdf$\n" for i in range(12))
    robots = parse("User-agent: *\n" + rules)
    long, short = robots.compact("x"), parse("User-agent: *\nDisallow: /a\n").compact("x")
    assert isinstance(long._patterns, bytes) and isinstance(short._patterns, str)
    assert len(long._patterns) < len(rules) / 4
    long._index = None  # as the hot set lets it go
    assert long.allowed("/section-11/caf%C3%A9/x.pdf") is False and long.allowed("/section-11/caf%C3%A9/x.pdfs")
    assert long.explain("/section-3/caf\u00e9/a.pdf").rule == robots.explain("/section-3/caf\u00e9/a.pdf", "x").rule


def test_no_rules_no_index() -> None:
    form = parse("User-agent: other\nDisallow: /\n").compact("mybot")
    assert form.allowed("/") is True and form.explain("/x").rule is None and form.decide("/") == (True, {})


def test_written_values_and_lines_come_back_for_explanations() -> None:
    robots = parse("User-agent: *\nDisallow: /caf\u00e9\nAllow: /dir/index.html\nDisallow: /dir/\n".encode())
    form = robots.compact("bot")
    rule = form.explain("/caf%C3%A9").rule
    assert rule is not None and (rule.line, rule.pattern, rule.written) == (2, "/caf%C3%A9", "/caf\u00e9")
    rule = form.explain("/dir/").rule  # Google extension: allow: /dir/index.html also allows /dir/
    assert rule is not None and (rule.allow, rule.line, rule.pattern, rule.written) == (
        True, 3, "/dir/$", "/dir/index.html")


def test_line_numbers_past_65535_come_back_for_explanations(how: str) -> None:
    """Line numbers are held in 2 bytes each when they all fit, else in 4."""
    robots = parse("\n" * 70_000 + "User-agent: *\nDisallow: /far\nAllow: /far/ok\n")
    form = robots.compact("bot")
    rules = [form.explain(path).rule for path in ("/far/x", "/far/ok")]
    assert [(rule.line, rule.allow) for rule in rules if rule is not None] == [(70_002, False), (70_003, True)]
    assert parse("User-agent: *\nDisallow: /near\n").compact("bot").explain("/near").rule.line == 2  # type: ignore[union-attr]


def test_usage_preferences_only_for_allowed_urls() -> None:
    robots = parse("User-agent: *\nDisallow: /private\nContent-Usage: train-ai=n\n")
    form = robots.compact("bot")
    allowed, preferences = form.decide("/page")
    assert allowed is True and {use: p.allowed for use, p in preferences.items()} == {"train-ai": False}
    assert form.decide("/private/x") == (False, {})


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), document=documents(), agent=st.sampled_from(QUERY_AGENTS))
def test_decisions_agree_with_google_and_the_full_parse(data: st.DataObject, document: tuple[str, list[str]],
                                                         agent: str) -> None:
    """The differential grammar (test_differential): the form decides as Google's library and explains as the full
    parse, hot or cold."""
    body, rules = document
    robots = parse(body)
    form = robots.compact(agent)
    for url in data.draw(st.lists(urls_for(rules), min_size=1, max_size=8)):
        if data.draw(st.booleans()):
            form._index = None
        assert form.allowed(url) is google_allowed(body, agent, url), (body, agent, url)
        assert_same(robots, form, agent, url)
