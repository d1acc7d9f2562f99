"""Opt-out statements from every source and their combination (``_opt_outs``).

Tables from draft-ietf-aipref-attach-05 ("Examples": the Content-Usage header and robots.txt),
draft-ietf-aipref-vocab-08 ("Exemplary Serialization Format", "Multiple Preferences", "Preference Parameters",
"Combining Preferences" §7.1), contentsignals.org (``Content-Signal: ai-train=no, search=yes, ai-input=no``) and the
W3C TDMRep report 2024-05-10 (its header and HTML examples, "Processing priority"); then the decisions where they are
silent.
"""

from __future__ import annotations

import itertools

import pytest

from scrapy_rep.matcher import (
    CONTENT_SIGNAL_HEADER,
    CONTENT_USAGE_HEADER,
    ROBOTS_META,
    ROBOTS_TXT,
    TDM,
    TDM_HEADER,
    TDM_META,
    TDMREP_FILE,
    TRAIN_AI,
    X_ROBOTS_TAG,
    Preference,
    Statement,
    TdmRule,
    combine,
    from_preference,
    header_statements,
    noai_statements,
    parse,
    parse_tdmrep,
    robots_tags,
    tdm_meta,
    tdm_statements,
)
from scrapy_rep.matcher._opt_outs import MAX_HEADER_BYTES, MAX_HEADER_VALUES

POLICY = "https://provider.com/policies/policy.json"
FILE_URL = "https://provider.com/.well-known/tdmrep.json"


def short(statements: list[Statement] | dict[str, Statement]) -> list[str]:
    """``use=y|n@source`` for each statement, in order: compact expectations."""
    values = statements.values() if isinstance(statements, dict) else statements
    return [f"{s.use}={'y' if s.allowed else 'n'}@{s.source}" + (f"<{s.legacy}" if s.legacy else "") for s in values]


def usage_header(*values: str, legacy: bool = True) -> list[str]:
    return short(header_statements([value.encode() for value in values], [], legacy_labels=legacy))


# --- the Content-Usage header (attach-05 section 2, vocab-08 processing) ---

@pytest.mark.parametrize(("values", "expected"), [
    (["train-ai=n"], ["train-ai=n"]),  # attach-05 "Examples": the response's header
    (["train-ai=y, search=n"], ["train-ai=y", "search=n"]),  # vocab-08 "Exemplary Serialization Format"
    (["train-ai=y, train-ai, search=n, search=\"n\""], []),  # vocab-08 "Multiple Preferences": all unknown
    (["train-ai;allow=n, train-ai=y"], ["train-ai=y"]),  # vocab-08 "Preference Parameters"
    (["train-ai;has;parameters=\"?\""], []),  # parameters on an unknown preference
    (["Train-AI=n"], []),  # "keys include uppercase characters": parsing fails
    (["train-ai=n,"], []), (["train-ai=n search=y"], []), ([""], []), ([], []),
    (["future-use=n, train-ai=n"], ["train-ai=n"]),  # unknown labels MUST be ignored
    (["train-ai=yes, search=N, train-ai=?0"], []),  # only the Tokens y and n
    # several field lines are one field (RFC 9110 5.3): the last of a repeated key wins, one bad line spoils all
    (["train-ai=n", "train-ai=y"], ["train-ai=y"]),
    (["train-ai=y", "search=n"], ["train-ai=y", "search=n"]),
    (["train-ai=n", "", " "], ["train-ai=n"]),  # empty lines add nothing
    (["train-ai=n", "not a dictionary"], []),
])
def test_content_usage_header(values: list[str], expected: list[str]) -> None:
    assert usage_header(*values) == [f"{use}@{CONTENT_USAGE_HEADER}" for use in expected]


def test_content_usage_header_statement_fields() -> None:
    (statement,) = header_statements([b"train-ai=n"], [], legacy_labels=False)
    assert statement == Statement(TRAIN_AI, False, CONTENT_USAGE_HEADER, "Content-Usage: train-ai=n")
    assert str(statement) == "train-ai=n by Content-Usage header (Content-Usage: train-ai=n)"
    assert statement.as_dict() == {"use": "train-ai", "value": "n", "source": "Content-Usage header",
                                   "where": "Content-Usage: train-ai=n"}


H = CONTENT_USAGE_HEADER


@pytest.mark.parametrize(("value", "legacy", "expected"), [
    ("train-genai=n", True, [f"train-ai=n@{H}<train-genai"]),
    ("train-genai=n", False, []),
    ("train-genai=y", True, []),  # Decision: only refusals carry over
    ("tdm=n", True, [f"tdm=n@{H}<tdm", f"train-ai=n@{H}<tdm"]),
    ("bots=n, search=y", True, [f"train-ai=n@{H}<bots", f"search=y@{H}"]),
    ("all=n, ai=n, genai=n", True, [f"train-ai=n@{H}<all", f"train-ai=n@{H}<ai", f"train-ai=n@{H}<genai"]),
    ("ai-use=n, ai-output=n, inference=n", True, []),  # AI input/output is not training
])
def test_legacy_labels_in_the_header(value: str, legacy: bool, expected: list[str]) -> None:
    assert usage_header(value, legacy=legacy) == expected


def test_legacy_statement_names_its_label() -> None:
    (statement,) = header_statements([b"train-genai=n"], [], legacy_labels=True)
    assert statement.where == "Content-Usage: train-genai=n" and statement.legacy == "train-genai"
    assert statement.as_dict()["legacy"] == "train-genai"


def test_header_bounds() -> None:
    """At most MAX_HEADER_VALUES values; a value over MAX_HEADER_BYTES loses its last, partial member."""
    many = [b"search=y"] * MAX_HEADER_VALUES + [b"train-ai=n"]
    assert usage_header(*(v.decode() for v in many)) == [f"search=y@{CONTENT_USAGE_HEADER}"]
    long = b"train-ai=n, " + b"x=y, " * (MAX_HEADER_BYTES // 5) + b"search=n"
    assert short(header_statements([long], [], legacy_labels=True)) == [f"train-ai=n@{CONTENT_USAGE_HEADER}"]
    assert short(header_statements([long], [long], legacy_labels=True)) == [f"train-ai=n@{CONTENT_USAGE_HEADER}"]


def test_header_inputs_of_other_shapes_never_raise() -> None:
    assert header_statements(b"train-ai=n", "ai-train=no", legacy_labels=True) == [  # type: ignore[arg-type]
        Statement(TRAIN_AI, False, CONTENT_USAGE_HEADER, "Content-Usage: train-ai=n"),
        Statement(TRAIN_AI, False, CONTENT_SIGNAL_HEADER, "Content-Signal: ai-train=no")]
    assert header_statements(None, [None, 5, "search=y"], legacy_labels=True) == []  # type: ignore[arg-type,list-item]


# --- the Content-Signal header (contentsignals.org's line, as a response header) ---

@pytest.mark.parametrize(("values", "expected"), [
    (["ai-train=no, search=yes, ai-input=no"], ["train-ai=n", "search=y", "ai-input=n"]),  # contentsignals.org
    (["ai-train=yes, search=yes, ai-input=yes"], ["train-ai=y", "search=y", "ai-input=y"]),  # Cloudflare's default
    (["AI-Train=No , search = YES"], ["train-ai=n", "search=y"]),
    (["ai-train=maybe, foo=no, search, ai-input=yes, ai-input=no"], ["ai-input=n"]),  # last of a key wins
    (["search=yes", "search=no"], ["search=y", "search=n"]),  # Decision: lines combine (n over y in ``combine``)
    ([""], []), (["nonsense"], []),
])
def test_content_signal_header(values: list[str], expected: list[str]) -> None:
    got = header_statements([], [value.encode() for value in values], legacy_labels=True)
    assert short(got) == [f"{use}@{CONTENT_SIGNAL_HEADER}" for use in expected]


def test_content_signal_statement_cites_the_signal_as_written() -> None:
    got = header_statements([], [b"ai-train=no, search=yes"], legacy_labels=True)
    assert [str(s) for s in got] == ["train-ai=n by Content-Signal header (Content-Signal: ai-train=no)",
                                     "search=y by Content-Signal header (Content-Signal: search=yes)"]


# --- robots.txt preferences (attach-05 section 3) ---

ATTACH_ROBOTS = "User-Agent: *\nAllow: /\nContent-Usage: train-ai=n\n"


def test_robots_txt_preferences_become_statements() -> None:
    (pref,) = parse(ATTACH_ROBOTS).usage("/any", "bot").values()
    assert from_preference(pref, legacy_labels=True) == [
        Statement(TRAIN_AI, False, ROBOTS_TXT, "line 3 (Content-Usage: train-ai=n) of the '*' group (line 1)")]
    body = "User-agent: *\nContent-Usage: / train-genai=n, tdm=n, ai-use=n, search=y\nContent-Signal: ai-input=no\n"
    statements = [s for p in parse(body).usage("/x", "bot").values() for s in from_preference(p, legacy_labels=True)]
    assert sorted(short(statements)) == sorted([
        "train-ai=n@robots.txt<train-genai", "tdm=n@robots.txt<tdm", "train-ai=n@robots.txt<tdm",
        "search=y@robots.txt", "ai-input=n@robots.txt"])


@pytest.mark.parametrize(("preference", "legacy", "expected"), [
    (Preference("train-ai", True, 3, "Content-Usage", "train-ai=y"), False, ["train-ai=y@robots.txt"]),
    (Preference("bots", False, 3, "Content-Usage", "bots=n"), True, ["train-ai=n@robots.txt<bots"]),
    (Preference("bots", False, 3, "Content-Usage", "bots=n"), False, []),
    (Preference("bots", True, 3, "Content-Usage", "bots=y"), True, []),
    (Preference("ai-output", False, 3, "Content-Usage", "ai-output=n"), True, []),
    (Preference("ai-input", False, 4, "Content-Signal", "ai-input=no"), True, ["ai-input=n@robots.txt"]),
    (Preference("train-ai", False, 4, "Content-Signal", "ai-train=no"), False, ["train-ai=n@robots.txt"]),
])
def test_from_preference(preference: Preference, legacy: bool, expected: list[str]) -> None:
    assert short(from_preference(preference, legacy_labels=legacy)) == expected


# --- TDMRep: meta tag over header over file ---

FILE_RULE = TdmRule(1, "/directory-b/html/", 1, POLICY)


def tdm(rule: TdmRule | None = None, header: list[bytes] | None = None, header_policy: list[bytes] | None = None,
        meta: list[str] | None = None, meta_policy: list[str] | None = None) -> list[Statement]:
    return tdm_statements(rule, FILE_URL, header or [], header_policy or [], meta or [], meta_policy or [])


def test_tdm_report_examples() -> None:
    """The report's header example (``tdm-reservation: 1``, ``tdm-policy: ...``), and its HTML example."""
    assert tdm(header=[b"1"]) == [Statement(TDM, False, TDM_HEADER, "tdm-reservation: 1"),
                                  Statement(TRAIN_AI, False, TDM_HEADER, "tdm-reservation: 1")]
    assert tdm(header=[b"1"], header_policy=[POLICY.encode()])[0].policy == POLICY
    html = (b'<!DOCTYPE html>\n<html lang="en">\n  <head>\n    <meta charset="utf-8">\n'
            b'    <meta name="tdm-reservation" content="1">\n'
            b'    <meta name="tdm-policy" content="https://provider.com/policies/policy.json">\n'
            b"    <title>Document title</title>\n  </head>\n  <body>\n    ...\n  </body>\n</html>\n")
    reservations, policies = tdm_meta(html)
    assert (reservations, policies) == (["1"], [POLICY])
    statement = Statement(TRAIN_AI, False, TDM_META, '<meta name="tdm-reservation" content="1">', POLICY)
    assert tdm(meta=reservations, meta_policy=policies)[1] == statement
    assert str(statement) == ('train-ai=n by tdm-reservation meta tag (<meta name="tdm-reservation" content="1">), '
                              f"tdm-policy {POLICY}")


def test_tdm_file_statement() -> None:
    assert tdm(FILE_RULE) == [
        Statement(use, False, TDMREP_FILE, f'entry 2 (location "/directory-b/html/") of {FILE_URL}', POLICY)
        for use in (TDM, TRAIN_AI)]
    assert short(tdm(TdmRule(0, "/", 0))) == [f"tdm=y@{TDMREP_FILE}", f"train-ai=y@{TDMREP_FILE}"]
    assert tdm(TdmRule(0, "/", None, POLICY)) == []  # a protocol error: unset
    assert tdm(parse_tdmrep(b'[{"location": "/", "tdm-reservation": 1}]').lookup("/x"))[0].source == TDMREP_FILE


@pytest.mark.parametrize(("rule", "header", "meta", "expected"), [
    # "Processing priority": the header supersedes the file, the meta tag supersedes both
    (FILE_RULE, [b"0"], [], "y@" + TDM_HEADER),
    (FILE_RULE, [b"0"], ["1"], "n@" + TDM_META),
    (TdmRule(0, "/", 0), [b"1"], ["0"], "y@" + TDM_META),
    (None, [], ["0"], "y@" + TDM_META),
    # an invalid value is unset, so a lower technique applies
    (FILE_RULE, [b"yes"], [], "n@" + TDMREP_FILE),
    (TdmRule(0, "/", 0), [b"2"], ["true"], "y@" + TDMREP_FILE),
    (FILE_RULE, [b"0"], ["", "1.0"], "y@" + TDM_HEADER),
    (TdmRule(0, "/", None), [b" 0 "], [" nope "], "y@" + TDM_HEADER),
    # several valid values in one technique: a 1 wins; a header line combined by a proxy is split on commas
    (None, [b"0", b"1"], [], "n@" + TDM_HEADER),
    (None, [b"0, 1"], [], "n@" + TDM_HEADER),
    (None, [b"0, x"], [], "y@" + TDM_HEADER),
    (None, [], ["0", "1", "0"], "n@" + TDM_META),
    # none at all
    (None, [], [], None),
    (None, [b""], ["x"], None),
])
def test_tdm_precedence(rule: TdmRule | None, header: list[bytes], meta: list[str], expected: str | None) -> None:
    got = short(tdm(rule, header=header, meta=meta))
    assert got == ([] if expected is None else [f"tdm={expected}", f"train-ai={expected}"])


@pytest.mark.parametrize(("rule", "header", "header_policy", "meta", "meta_policy", "policy"), [
    (FILE_RULE, [], [], [], [], POLICY),
    (FILE_RULE, [b"1"], [], [], [], POLICY),  # "the absence of ... tdm-policy MUST not reset current values"
    (FILE_RULE, [b"1"], [b"https://h/p"], [], [], "https://h/p"),  # the header's supersedes the file's
    (None, [b"1"], [b"https://h/p"], [], ["https://m/p"], "https://m/p"),  # the meta tag's supersedes both
    (None, [b"1"], [b"https://h/p"], ["1"], ["not a url", " https://m/p "], "https://m/p"),  # first valid, stripped
    (None, [b"1"], [b"/relative", b"https://h/2"], [], [], "https://h/2"),
    (FILE_RULE, [b"0"], [b"https://h/p"], [], [], None),  # with 0: "SHOULD NOT process tdm-policy"
    (None, [b"1"], [], [], [], None),
])
def test_tdm_policy(rule: TdmRule | None, header: list[bytes], header_policy: list[bytes], meta: list[str],
                    meta_policy: list[str], policy: str | None) -> None:
    statements = tdm(rule, header, header_policy, meta, meta_policy)
    assert [s.policy for s in statements] == [policy, policy]


@pytest.mark.parametrize(("body", "expected"), [
    (b"<head><META NAME='TDM-Reservation' CONTENT=0><meta name=tdm-policy content=https://p/x></head>",
     (["0"], ["https://p/x"])),
    (b'<head><meta content="1" name="tdm-reservation"><meta name="tdm-reservation" content="0">',
     (["1", "0"], [])),
    (b'<head></head><body><meta name="tdm-reservation" content="1">', ([], [])),  # the head only
    (b'<head><!-- <meta name="tdm-reservation" content="1"> --></head>', ([], [])),
    (b'<head><meta name="robots" content="noai"></head>', ([], [])),
    (b"", ([], [])), (b"\xff\xfe", ([], [])),
])
def test_tdm_meta(body: bytes, expected: tuple[list[str], list[str]]) -> None:
    assert tdm_meta(body) == expected


# --- noai / noimageai ---

@pytest.mark.parametrize(("meta", "header", "image", "expected"), [
    ({"noai"}, set(), False, [f"train-ai=n@{ROBOTS_META}"]),
    (set(), {"noai"}, False, [f"train-ai=n@{X_ROBOTS_TAG}"]),
    ({"noimageai"}, set(), False, []),  # Decision: about images, not the page's text
    (set(), {"noimageai"}, True, [f"train-ai=n@{X_ROBOTS_TAG}"]),
    ({"noai", "noimageai"}, {"noai", "noindex"}, True,
     [f"train-ai=n@{ROBOTS_META}", f"train-ai=n@{ROBOTS_META}", f"train-ai=n@{X_ROBOTS_TAG}"]),
    ({"noindex", "nofollow"}, set(), True, []),
])
def test_noai(meta: set[str], header: set[str], image: bool, expected: list[str]) -> None:
    assert short(noai_statements(frozenset(meta), frozenset(header), image=image)) == expected


def test_noai_from_robots_tags() -> None:
    """``RobotsTags.from_meta`` / ``from_header`` are what the caller passes."""
    tags = robots_tags([b"noimageai"], b'<head><meta name="robots" content="noai, noindex">', ["mybot"])
    statements = noai_statements(tags.from_meta, tags.from_header, image=True)
    assert [str(s) for s in statements] == ['train-ai=n by robots meta tag (<meta content="noai">)',
                                            "train-ai=n by X-Robots-Tag header (X-Robots-Tag: noimageai)"]
    assert noai_statements(tags.from_meta, tags.from_header, image=False) == statements[:1]
    assert noai_statements("noai", None, image=False) == statements[:1]  # type: ignore[arg-type]


# --- combination (vocab-08 §7.1) ---

def test_combine_any_n_wins_then_y_then_unknown() -> None:
    """"If any statement of preference indicates that the usage is disallowed, the result is that the usage is
    disallowed. Otherwise, if any statement of preference allows the usage, the result is that the usage is allowed.
    Otherwise, the preference for that category is unknown.\""""
    robots = parse("User-Agent: *\nAllow: /\nContent-Usage: train-ai=y, search=y\n").usage("/", "bot")
    statements = [s for p in robots.values() for s in from_preference(p, legacy_labels=True)]
    statements += header_statements([b"train-ai=n"], [b"search=yes, ai-input=yes"], legacy_labels=True)
    statements += tdm(header=[b"0"])
    combined = combine(statements)
    assert short(combined) == [f"ai-input=y@{CONTENT_SIGNAL_HEADER}", "search=y@robots.txt", f"tdm=y@{TDM_HEADER}",
                               f"train-ai=n@{CONTENT_USAGE_HEADER}"]
    assert list(combined) == sorted(combined)
    assert combine([]) == {}
    assert combine([None, "x"]) == {}  # type: ignore[list-item]


def test_combine_keeps_one_statement_by_a_total_order_whatever_the_input_order() -> None:
    statements = [
        Statement(TRAIN_AI, False, X_ROBOTS_TAG, "X-Robots-Tag: noai"),
        Statement(TRAIN_AI, False, ROBOTS_TXT, "line 4 (Content-Usage: train-ai=n)"),
        Statement(TRAIN_AI, False, ROBOTS_TXT, "line 3 (Content-Usage: bots=n)", legacy="bots"),
        Statement(TRAIN_AI, True, ROBOTS_TXT, "line 2 (Content-Usage: train-ai=y)"),
        Statement(TRAIN_AI, False, ROBOTS_TXT, "line 3 (Content-Usage: bots=n)"),
        Statement(TDM, False, TDMREP_FILE, "entry 1", POLICY),
        Statement(TDM, False, TDMREP_FILE, "entry 1"),
        Statement(TDM, False, "some other source", "a"),
    ]
    results = {tuple(combine(order).items()) for order in itertools.permutations(statements)}
    assert len(results) == 1
    (result,) = results
    assert dict(result) == {TDM: statements[5], TRAIN_AI: statements[4]}  # policy set first; legacy unset first


# -- a response's own statements, and TDMRep's precedence over what was known before its download --------------------

def test_page_statements_read_every_source_of_a_response() -> None:
    from scrapy_rep.matcher import page_statements

    html = b'<html><head><meta name="tdm-reservation" content="1"></head></html>'
    statements = page_statements([b"search=y"], [b"ai-input=no"], [b"0"], [], html, frozenset(), {"noai"},
                                 image=False, legacy_labels=True)
    assert {(s.use, s.allowed, s.source) for s in statements} == {
        ("search", True, CONTENT_USAGE_HEADER), ("ai-input", False, CONTENT_SIGNAL_HEADER),
        (TDM, False, TDM_META), (TRAIN_AI, False, TDM_META),  # the meta tag over the header's 0
        (TRAIN_AI, False, X_ROBOTS_TAG)}
    assert page_statements([], [], [], [], None, frozenset(), frozenset(), image=False, legacy_labels=True) == []


@pytest.mark.parametrize(("page_sources", "file_kept"), [
    ((TDM_HEADER,), False), ((TDM_META,), False), ((CONTENT_USAGE_HEADER,), True), ((), True)])
def test_with_page_drops_the_files_statements_only_for_the_pages_own_reservation(
        page_sources: tuple[str, ...], file_kept: bool) -> None:
    from scrapy_rep.matcher import with_page

    robots = Statement(TRAIN_AI, True, ROBOTS_TXT, "line 3")
    from_file = Statement(TDM, False, TDMREP_FILE, "entry 1")
    page = [Statement(TDM, True, source, "here") for source in page_sources]
    assert with_page([robots, from_file], page) == [robots, *([from_file] if file_kept else []), *page]


def test_an_unknown_reservation_refuses_both_tdm_uses() -> None:
    from scrapy_rep.matcher import unknown_reservation

    assert {(s.use, s.allowed, s.source) for s in unknown_reservation("why")} == {
        (TDM, False, TDMREP_FILE), (TRAIN_AI, False, TDMREP_FILE)}


@pytest.mark.parametrize("html", [
    b'<html><head><META NAME="TDM-Reservation" CONTENT="1"></HEAD><body>x</body></html>',  # upper case throughout
    b'<html><head><title>t</title><meta name="Tdm-reservation" content="1"><body>no closing head',
    b'<meta name="tdm-reservation" content="1">',  # no head, no body: the first bytes are read
])
def test_the_quick_look_for_tdm_never_misses_a_meta_tag_the_full_scan_reads(html: bytes) -> None:
    assert tdm_meta(html) == (["1"], [])


def test_a_head_without_tdm_is_not_scanned_for_it() -> None:
    from scrapy_rep.matcher._opt_outs import _mentions_tdm

    assert not _mentions_tdm(b'<html><head><meta name="robots" content="noai"></head><body>tdm-reservation</body>')
    assert _mentions_tdm(b'<html><head><meta name="tdm-policy" content="https://x/p"></head>')
