"""Usage preferences (``Robots.usage``): AIPREF Content-Usage and Cloudflare Content-Signal lines (see ``_usage``).

Tables from draft-ietf-aipref-attach-05 ("Example"), draft-ietf-aipref-vocab ("Processing Algorithm", "Multiple
Preferences") and contentsignals.org's example file; then the decisions where the drafts are silent.
"""

from __future__ import annotations

import collections
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_rep.matcher import (
    IMPLIES_TRAINING,
    LEGACY_LABELS,
    VOCABULARY,
    Preference,
    aipref_use,
    legacy_uses,
    parse,
    usage_problems,
)
from scrapy_rep.matcher._sfdict import parse_dictionary

from ..properties.test_parser_properties import AGENTS, patterns, rule_lists, urls
from ._shared import CORPUS, require

ATTACH_EXAMPLE = """\
User-Agent: *
Allow: /
Disallow: /never/
Content-Usage: / train-ai=n
Content-Usage: /ai-ok/ train-ai=y

User-Agent: ExampleBot
Allow: /
Content-Usage: / train-ai=y
"""


def answers(body: str, url: str, agent: str | list[str] = "otherbot") -> dict[str, str]:
    """{use: "y"/"n" and the deciding line} for ``url``: compact expectations."""
    return {use: f"{'y' if p.allowed else 'n'}@{p.line}" for use, p in parse(body).usage(url, agent).items()}


@pytest.mark.parametrize(("path", "agent", "expected"), [
    ("/test", "otherbot", {"train-ai": "n@4"}),
    ("/never/test", "otherbot", {}),  # disallowed: no preference applies
    ("/ai-ok/test", "otherbot", {"train-ai": "y@5"}),  # the longest path wins
    ("/never/test", "ExampleBot", {"train-ai": "y@9"}),  # its own group: allowed there
    ("/ai-ok/test", "examplebot", {"train-ai": "y@9"}),
])
def test_attach_draft_example_table(path: str, agent: str, expected: dict[str, str]) -> None:
    assert answers(ATTACH_EXAMPLE, path, agent) == expected


def test_preference_fields_and_log_text() -> None:
    pref = parse(ATTACH_EXAMPLE).usage("https://example.com/ai-ok/x?q", "bot")["train-ai"]
    assert pref == Preference("train-ai", True, 5, "Content-Usage", "/ai-ok/ train-ai=y")
    assert pref.where == "line 5 (Content-Usage: /ai-ok/ train-ai=y) of the '*' group (line 1)"  # cited as rules are
    assert str(pref) == "train-ai=y by line 5 (Content-Usage: /ai-ok/ train-ai=y) of the '*' group (line 1)"
    assert parse(ATTACH_EXAMPLE).compact("bot").decide("/ai-ok/x")[1]["train-ai"].where == pref.where
    own = parse(ATTACH_EXAMPLE).compact("ExampleBot").decide("/x")[1]["train-ai"]
    assert str(own) == "train-ai=y by line 9 (Content-Usage: / train-ai=y) of the 'examplebot' group (line 7)"


@pytest.mark.parametrize(("lines", "path", "expected"), [
    # no path: the whole site, shorter than any path
    (["Content-Usage: train-ai=n", "Content-Usage: /ai-ok/ train-ai=y"], "/x", {"train-ai": "n@3"}),
    (["Content-Usage: train-ai=n", "Content-Usage: /ai-ok/ train-ai=y"], "/ai-ok/", {"train-ai": "y@4"}),
    (["Content-Usage: train-ai=n", "Content-Usage: / train-ai=y"], "/x", {"train-ai": "y@4"}),
    # pattern syntax of Allow/Disallow: *, $, escaping (SPEC 7.2, 7.3)
    (["Content-Usage: /*.pdf$ train-ai=n"], "/a/b.pdf", {"train-ai": "n@3"}),
    (["Content-Usage: /*.pdf$ train-ai=n"], "/a/b.pdf?x", {}),
    (["Content-Usage: /caf\u00e9/ search=n"], "/caf%C3%A9/menu", {"search": "n@3"}),
    (["Content-Usage: /%7euser/ search=n"], "/%7Euser/x", {"search": "n@3"}),
    # the longest rule applies whole: its silence on train-ai is not filled in by a shorter rule
    (["Content-Usage: / train-ai=n, search=y", "Content-Usage: /news/ search=n"], "/news/1", {"search": "n@4"}),
    # identical paths combine: n beats y, whatever the order
    (["Content-Usage: /a/ train-ai=y", "Content-Usage: /a/ train-ai=n, search=y"], "/a/x",
     {"train-ai": "n@4", "search": "y@4"}),
    (["Content-Usage: /a/ train-ai=n", "Content-Usage: /a/ train-ai=y"], "/a/x", {"train-ai": "n@3"}),
    (["Content-Usage: /a/ train-ai=y", "Content-Usage: /a/ train-ai=y"], "/a/x", {"train-ai": "y@3"}),  # earliest
    # equal-length different patterns that both match combine too
    (["Content-Usage: /a* train-ai=y", "Content-Usage: /ab train-ai=n"], "/abc", {"train-ai": "n@4"}),
    # vocab "Processing Algorithm": unknown keys and non-y/n values state nothing; the last of a repeated key wins
    (["Content-Usage: future-use=n, train-ai=y"], "/", {"train-ai": "y@3"}),
    (["Content-Usage: train-ai=n, train-ai=y"], "/", {"train-ai": "y@3"}),
    (['Content-Usage: train-ai=y, train-ai, search=n, search="n"'], "/", {}),
    (["Content-Usage: train-ai;allow=n, train-ai=y"], "/", {"train-ai": "y@3"}),
    (["Content-Usage: train-ai=yes, search=N, bots=?0"], "/", {}),
    # legacy labels (earlier vocab drafts) are kept under their own name, so that reports can name them
    (["Content-Usage: train-genai=n, ai-use=y, bots=n"], "/", {"train-genai": "n@3", "ai-use": "y@3", "bots": "n@3"}),
    (["Content-Usage: tdm=n, ai=y, genai=n, all=y, ai-output=n, inference=y"], "/",
     {"tdm": "n@3", "ai": "y@3", "genai": "n@3", "all": "y@3", "ai-output": "n@3", "inference": "y@3"}),
    (["Content-Usage: train-genai=yes, bots"], "/", {}),
    # malformed dictionaries (vocab: parsing fails, nothing is known): the line is dropped, the shorter rule applies
    (["Content-Usage: train-ai=n", "Content-Usage: /a/ Train-AI=y"], "/a/", {"train-ai": "n@3"}),
    (["Content-Usage: train-ai=n", "Content-Usage: /a/ train-ai=y,"], "/a/", {"train-ai": "n@3"}),
    (["Content-Usage: train-ai=n", "Content-Usage: /a/ train-ai=y search=y"], "/a/", {"train-ai": "n@3"}),
    (["Content-Usage: train-ai=n", "Content-Usage: /a/"], "/a/", {"train-ai": "n@3"}),
    (["Content-Usage:"], "/", {}),
    # Content-Signal: yes/no, any case; mapped labels; unknown keys and values ignored; last of a key wins
    (["Content-Signal: search=yes, ai-train=no, ai-input=no"], "/x",
     {"search": "y@3", "train-ai": "n@3", "ai-input": "n@3"}),
    (["Content-Signal: AI-Train=No , search = YES"], "/x", {"train-ai": "n@3", "search": "y@3"}),
    (["Content-Signal: ai-train=maybe, foo=no, search, ai-input=yes, ai-input=no"], "/x", {"ai-input": "n@3"}),
    (["Content-Signal: search=yes", "Content-Signal: search=no"], "/x", {"search": "n@4"}),
    # both sources: the most restrictive wins, Content-Signal applying to every path
    (["Content-Usage: /ok/ train-ai=y", "Content-Signal: ai-train=no"], "/ok/1", {"train-ai": "n@4"}),
    (["Content-Usage: /ok/ train-ai=n", "Content-Signal: ai-train=yes, search=yes"], "/ok/1",
     {"train-ai": "n@3", "search": "y@4"}),
    (["Content-Usage: search=y", "Content-Signal: search=yes"], "/", {"search": "y@3"}),
])
def test_spec_table(lines: list[str], path: str, expected: dict[str, str]) -> None:
    body = "User-agent: *\nAllow: /\n" + "\n".join(lines) + "\n"
    assert answers(body, path) == expected


def test_group_selection_is_spec_6() -> None:
    """SPEC 6.2/6.3: a specific group hides ``*`` (even one with no usage line); groups of one agent merge."""
    body = ("User-agent: *\nAllow: /\nContent-Usage: train-ai=n\n\n"
            "User-agent: foobot\nDisallow: /private\n\n"
            "User-agent: barbot\nContent-Signal: search=no\n"
            "User-agent: barbot-news\nAllow: /\nContent-Usage: /news/ train-ai=y\n\n"
            "User-agent: barbot\nAllow: /\nContent-Usage: train-ai=n\n")
    assert answers(body, "/x", "otherbot") == {"train-ai": "n@3"}
    assert answers(body, "/x", "foobot") == {}
    assert answers(body, "/private/x", "foobot") == {}
    assert answers(body, "/x", "barbot") == {"search": "n@9", "train-ai": "n@16"}
    assert answers(body, "/news/1", "barbot") == {"search": "n@9", "train-ai": "y@12"}
    # Google's grouping: the usage line between the two user-agent lines does not end them (one group)
    assert answers(body, "/x", "barbot-news") == {"search": "n@9"}
    assert answers(body, "/news/1", ["nonebot", "barbot-news", "barbot"]) == {"search": "n@9", "train-ai": "y@12"}


def test_usage_lines_do_not_end_user_agent_lines() -> None:
    """Google extension kept: ``*`` and foobot share one group, so foobot gets ``*``'s preference."""
    body = "User-agent: *\nContent-Usage: train-ai=n\nUser-agent: foobot\nDisallow: /p\n"
    assert answers(body, "/x", "foobot") == answers(body, "/x", "otherbot") == {"train-ai": "n@2"}


def test_lines_before_any_user_agent_are_ignored() -> None:
    body = "Content-Usage: train-ai=n\nContent-Signal: search=no\nUser-agent: *\nDisallow: /x\n"
    assert answers(body, "/") == {}
    assert parse(body).usage("/", "bot") == {}


def test_no_usage_lines_is_empty_and_results_are_fresh() -> None:
    assert parse("User-agent: *\nDisallow: /x\n").usage("/", "bot") == {}
    robots = parse("User-agent: *\nContent-Signal: search=yes\n")
    first = robots.usage("/", "bot")
    first.clear()
    assert robots.usage("/", ("bot",)) == robots.usage("/", ["bot"]) == {"search": robots.usage("/", "bot")["search"]}


def test_aipref_use() -> None:
    assert [aipref_use(n) for n in ("ai-train", "AI-Train", "search", "ai-input", "train-ai")] == [
        "train-ai", "train-ai", "search", "ai-input", "train-ai"]


@pytest.mark.parametrize(("value", "expected"), [
    ("", {}),
    ("a=y, b=n", {"a": "y", "b": "n"}),
    ("a=y,b=?1;p=1, c, d=(x 1 \"s\");q, e=:AQ==:, f=@17, g=%\"f%c3%a9\", h=-1.5", {
        "a": "y", "b": None, "c": None, "d": None, "e": None, "f": None, "g": None, "h": None}),
    ("a=y, a", {"a": None}),
    ("A=y", None), ("a=y,", None), ("a=y b", None), ("a=\"x", None), (",a=y", None), ("a=1234567890123456", None),
])
def test_structured_fields_dictionary(value: str, expected: dict[str, str | None] | None) -> None:
    assert parse_dictionary(value.encode()) == expected


@pytest.mark.parametrize(("key", "value", "kinds"), [
    ("Content-Usage", "/ train-ai=n, search=y", []),
    ("Content-Usage", "/a/", ["usage-malformed"]),
    ("content-usage", "train-ai=no", ["usage-value"]),
    ("Content-Usage", "training=n, search=y", ["usage-unknown-key"]),
    ("Content-Usage", "/ train-genai=n, search=y", ["usage-legacy-label"]),
    ("Content-Usage", "bots=n, ai-use=y, tdm=x", ["usage-legacy-label", "usage-legacy-label", "usage-legacy-label",
                                                "usage-value"]),
    ("Content-Usage", "Train-AI=n", ["usage-malformed"]),
    ("Content-Signal", "search=yes, ai-train=no, ai-input=no", []),
    ("Content-Signal", "search=yes, ai-train, foo=no, ai-input=maybe", [
        "usage-malformed", "usage-unknown-key", "usage-value"]),
])
def test_usage_problems_for_lint(key: str, value: str, kinds: list[str]) -> None:
    assert [kind for kind, _ in usage_problems(key, value)] == kinds


def test_vocabulary_is_vocab_08_and_legacy_labels_are_the_earlier_drafts() -> None:
    """vocab-08's table has train-ai and search; the labels of -01 to -04 are legacy, none of them current."""
    assert frozenset({"train-ai", "search"}) == VOCABULARY
    assert set(LEGACY_LABELS) == {"tdm", "ai", "genai", "inference", "all", "ai-use", "train-genai", "bots",
                                  "ai-output"}
    assert not VOCABULARY & set(LEGACY_LABELS)
    assert all(note.startswith("draft-ietf-aipref-vocab-0") for note in LEGACY_LABELS.values())
    assert LEGACY_LABELS["train-genai"].startswith("draft-ietf-aipref-vocab-02 to -03")
    assert IMPLIES_TRAINING == {"all", "bots", "tdm", "ai", "genai", "train-genai"} < set(LEGACY_LABELS)


@pytest.mark.parametrize(("label", "uses"), [
    ("tdm", ("tdm", "train-ai")),
    *[(label, ("train-ai",)) for label in ("all", "bots", "ai", "genai", "train-genai")],
    *[(label, ()) for label in ("ai-use", "ai-output", "inference", "train-ai", "search", "ai-input", "", "x")],
])
def test_legacy_uses(label: str, uses: tuple[str, ...]) -> None:
    """Using content as AI input or output is not training: only the labels that include training refuse it."""
    assert legacy_uses(label) == uses


def test_legacy_label_messages_say_where_the_label_was_and_how_it_is_read() -> None:
    ((kind, message),) = usage_problems("Content-Usage", "train-genai=n")
    assert kind == "usage-legacy-label"
    assert message == ("Content-Usage: 'train-genai' was dropped from the AIPREF vocabulary "
                       "(draft-ietf-aipref-vocab-02 to -03, Generative AI Training); vocab-08 knows train-ai and "
                       "search: reported, and read as train-ai=n when it says n (REP_USAGE_LEGACY_LABELS)")
    assert "read as tdm=n and train-ai=n when it says n" in usage_problems("Content-Usage", "tdm=n")[0][1]
    assert "not read as any use" in usage_problems("Content-Usage", "ai-output=n")[0][1]
    assert "(known: search, train-ai)" in usage_problems("Content-Usage", "training=n")[0][1]


_USAGE_LINES = st.one_of(
    st.builds(lambda path, pref: f"Content-Usage: {path} {pref}", patterns,
              st.sampled_from(["train-ai=n", "search=y, train-ai=y", "junk", "x=?1"])),
    st.sampled_from(["Content-Usage: train-ai=n", "content-signal: search=yes, ai-train=no", "Content-Signal: x",
                     "Content-Usage:", "CONTENT-USAGE: /a b=c"]),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rule_lists, other=rule_lists, inserts=st.lists(st.tuples(st.integers(0, 40), _USAGE_LINES), max_size=6),
       url=urls, agent=st.sampled_from(AGENTS))
def test_usage_lines_never_change_decisions(rules: list[tuple[bool, str]], other: list[tuple[bool, str]],
                                            inserts: list[tuple[int, str]], url: str, agent: str) -> None:
    """Google ignores both keys: inserted anywhere (even between user-agent lines), no decision changes."""
    lines = ["user-agent: foobot", "user-agent: x"]
    lines += [f"{'allow' if allow else 'disallow'}: {pattern}" for allow, pattern in rules]
    lines += ["user-agent: *"] + [f"{'allow' if allow else 'disallow'}: {pattern}" for allow, pattern in other]
    with_usage = list(lines)
    for position, line in inserts:
        with_usage.insert(position % (len(with_usage) + 1), line)
    plain, mixed = parse("\n".join(lines)), parse("\n".join(with_usage))
    assert mixed.allowed(url, agent) is plain.allowed(url, agent)
    deciding = [robots.explain(url, agent).rule for robots in (plain, mixed)]
    assert len({None if rule is None else (rule.allow, rule.pattern) for rule in deciding}) == 1  # lines shift
    preferences = mixed.usage(url, agent)
    assert all(isinstance(p, Preference) and p.use == use for use, p in preferences.items())
    assert not preferences or plain.allowed(url, agent)


_USAGE_KEY = re.compile(rb"^[ \t]*(content-usage|content-signal)[ \t]*:", re.IGNORECASE | re.MULTILINE)


def test_corpus_parses_and_usage_never_raises() -> None:
    """Every corpus file: usage() answers for its own agents and ``*``; counts the files carrying each kind."""
    files = sorted(require(CORPUS).glob("*.txt"))
    counts: collections.Counter[str] = collections.Counter()
    for path in files:
        body = path.read_bytes()
        counts.update({match.lower().decode() for match in _USAGE_KEY.findall(body)})
        robots = parse(body)
        for agent in [*robots.agents[:5], "googlebot", "scrapy"]:
            for url in ("/", "/index.html", "https://example.com/a/b?c=d"):
                preferences = robots.usage(url, agent)
                assert all(isinstance(p, Preference) for p in preferences.values())
    print(f"\ncorpus: {len(files)} files; with Content-Usage: {counts['content-usage']}, "
          f"with Content-Signal: {counts['content-signal']}")


def test_explain_carries_the_preferences_of_an_allowed_url() -> None:
    robots = parse("User-agent: *\nDisallow: /private\nContent-Usage: train-ai=n\n")
    allowed = robots.explain("/a", "bot")
    assert {use: p.allowed for use, p in allowed.usage.items()} == {"train-ai": False}
    assert str(allowed) == ("allowed: no rule of the '*' group (line 1) matches '/a'; "
                            "usage: train-ai=n by line 3 (Content-Usage: train-ai=n) of the '*' group (line 1)")
    assert robots.explain("/private/x", "bot").usage == {}
