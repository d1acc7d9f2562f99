"""Pure policy decisions: SPEC 2.2 outcomes, 2.4 stale-on-error, 2.5 back-off and Retry-After, 2.6 the 30-day
rule, 2.7 the optional heuristic, 3.1 cache lifetime."""

from __future__ import annotations

import pytest

from scrapy_rep.config import DAY, Config
from scrapy_rep.robots.policy import (
    REDIRECT_LOOP,
    TOO_MANY_REDIRECTS,
    FetchResult,
    cache_lifetime,
    has_copy,
    next_entry,
    outcome_of,
    retry_after_seconds,
    retry_delay,
    should_hold,
)
from scrapy_rep.stores import Outcome

CONFIG = Config(user_agents=("testbot",))
ORIGIN = "https://example.com"


@pytest.mark.parametrize(
    ("result", "outcome"),
    [
        (FetchResult(status=200, body=b"x"), Outcome.RULES),
        (FetchResult(status=204), Outcome.RULES),
        (FetchResult(status=304), Outcome.ALLOW_ALL),  # an unfollowable 3xx: like too many redirects
        (FetchResult(error=TOO_MANY_REDIRECTS), Outcome.ALLOW_ALL),  # SPEC 2.2: past the maximum, 404
        (FetchResult(error=REDIRECT_LOOP), Outcome.ALLOW_ALL),
        (FetchResult(status=400), Outcome.ALLOW_ALL),
        (FetchResult(status=401), Outcome.ALLOW_ALL),  # SPEC 2.2: 401/403 are 4xx: allow
        (FetchResult(status=403), Outcome.ALLOW_ALL),
        (FetchResult(status=404), Outcome.ALLOW_ALL),
        (FetchResult(status=410), Outcome.ALLOW_ALL),
        (FetchResult(status=429), Outcome.DISALLOW_ALL),  # SPEC 9.1
        (FetchResult(status=500), Outcome.DISALLOW_ALL),
        (FetchResult(status=503), Outcome.DISALLOW_ALL),
        (FetchResult(status=599), Outcome.DISALLOW_ALL),
        (FetchResult(error="DNSLookupError"), Outcome.DISALLOW_ALL),
        (FetchResult(error="TimeoutError"), Outcome.DISALLOW_ALL),
        (FetchResult(error="ConnectionRefusedError"), Outcome.DISALLOW_ALL),
        (FetchResult(error="ResponseFailed"), Outcome.DISALLOW_ALL),
    ],
)
def test_outcome_of_spec_2_2(result: FetchResult, outcome: Outcome) -> None:
    assert outcome_of(result) is outcome


@pytest.mark.parametrize(
    ("body", "heuristic", "outcome"),
    [
        (b"<h1>Page not found</h1>", False, Outcome.DISALLOW_ALL),  # SPEC 2.7: off by default
        (b"<h1>Page not found</h1>", True, Outcome.ALLOW_ALL),
        (b"Error 404", True, Outcome.ALLOW_ALL),
        (b"Internal error", True, Outcome.DISALLOW_ALL),
    ],
)
def test_not_found_heuristic_spec_2_7(body: bytes, heuristic: bool, outcome: Outcome) -> None:
    assert outcome_of(FetchResult(status=500, body=body), not_found_heuristic=heuristic) is outcome


@pytest.mark.parametrize(
    ("header", "lifetime"),
    [
        (None, DAY),
        ("public", DAY),
        ("max-age=3600", 3600.0),  # SPEC 3.1 shortening
        ("public, max-age=172800", 172800.0),  # lengthening
        ('max-age="600"', 600.0),
        ("max-age=1", 60.0),  # bounded below by REP_CACHE_MIN_TTL
        ("max-age=99999999", 7 * DAY),  # bounded above by REP_CACHE_MAX_TTL
        ("s-maxage=5", DAY),
        ("max-age=abc", DAY),
    ],
)
def test_cache_lifetime_spec_3_1(header: str | None, lifetime: float) -> None:
    assert cache_lifetime(CONFIG, header) == lifetime


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("120", 120.0),
        ("Thu, 01 Jan 1970 00:02:00 GMT", 20.0),  # now = 100
        ("Thu, 01 Jan 1970 00:00:10 GMT", 0.0),  # in the past
        ("soon", None),
        ("\u00b9\u00b2", None),  # superscript digits are not delta-seconds

        (None, None),
        ("", None),
    ],
)
def test_retry_after_spec_2_5(value: str | None, seconds: float | None) -> None:
    assert retry_after_seconds(value, 100.0) == seconds


@pytest.mark.parametrize(
    ("failures", "result", "delay"),
    [
        (1, FetchResult(status=500), 60.0),
        (2, FetchResult(status=500), 120.0),
        (3, FetchResult(error="TimeoutError"), 240.0),
        (10, FetchResult(status=500), 3600.0),  # REP_ERROR_RETRY_MAX_DELAY
        (1, FetchResult(status=503), 15.0),  # SPEC 2.5: 503 sooner
        (1, FetchResult(status=429), 15.0),
        (10, FetchResult(status=503), 600.0),
        (1, FetchResult(status=503, retry_after="300"), 300.0),
        (1, FetchResult(status=429, retry_after="99999"), 3600.0),  # bounded by REP_RETRY_AFTER_MAX
        (1, FetchResult(status=503, retry_after="0"), 1.0),
        (1, FetchResult(status=500, retry_after="300"), 60.0),  # Retry-After only counts on 503/429
        (200, FetchResult(status=500), 3600.0),
    ],
)
def test_retry_delay_spec_2_5(failures: int, result: FetchResult, delay: float) -> None:
    assert retry_delay(CONFIG, failures, result, 0.0) == delay


def test_success_entry_spec_2_2_and_3_1() -> None:
    entry = next_entry(ORIGIN, None, FetchResult(status=200, body=b"Disallow: /", cache_control="max-age=600"), 10.0,
                       CONFIG)
    assert (entry.outcome, entry.body, entry.fetched_at, entry.expires_at) == (Outcome.RULES, b"Disallow: /", 10, 610)
    assert has_copy(entry) and not should_hold(entry)


def test_failure_without_copy_holds_then_allows_after_30_days_spec_2_2_2_6() -> None:
    first = next_entry(ORIGIN, None, FetchResult(status=503), 0.0, CONFIG)
    assert first.outcome is Outcome.DISALLOW_ALL and should_hold(first) and not has_copy(first)
    assert (first.failures, first.first_failure_at, first.expires_at) == (1, 0.0, 15.0)
    second = next_entry(ORIGIN, first, FetchResult(error="TimeoutError"), 15.0, CONFIG)
    assert (second.outcome, second.failures, second.first_failure_at) == (Outcome.DISALLOW_ALL, 2, 0.0)
    late = next_entry(ORIGIN, second, FetchResult(status=500), 30 * DAY, CONFIG)
    assert late.outcome is Outcome.ALLOW_ALL and not should_hold(late) and not has_copy(late)
    assert late.expires_at == 30 * DAY + 240  # third failure: still re-fetched on the back-off schedule
    recovered = next_entry(ORIGIN, late, FetchResult(status=200, body=b"x"), 31 * DAY, CONFIG)
    assert (recovered.outcome, recovered.failures, recovered.first_failure_at) == (Outcome.RULES, 0, None)


def test_twelve_hours_reproduces_googles_newer_docs_spec_2_6() -> None:
    config = Config(user_agents=("testbot",), unreachable_allow_after=12 * 3600)
    first = next_entry(ORIGIN, None, FetchResult(status=500), 0.0, config)
    assert next_entry(ORIGIN, first, FetchResult(status=500), 11 * 3600, config).outcome is Outcome.DISALLOW_ALL
    assert next_entry(ORIGIN, first, FetchResult(status=500), 12 * 3600, config).outcome is Outcome.ALLOW_ALL


@pytest.mark.parametrize("copy_status", [200, 404])
def test_stale_on_error_keeps_the_copy_spec_2_4(copy_status: int) -> None:
    good = next_entry(ORIGIN, None, FetchResult(status=copy_status, body=b"Disallow: /x"), 0.0, CONFIG)
    stale = next_entry(ORIGIN, good, FetchResult(status=500), DAY, CONFIG)
    assert (stale.outcome, stale.body, stale.fetched_at) == (good.outcome, good.body, 0.0)
    assert (stale.status, stale.failures, stale.first_failure_at, stale.expires_at) == (500, 1, DAY, DAY + 60)
    assert has_copy(stale) and not should_hold(stale)
    # SPEC 2.2 last row: past 30 days of failures the last copy is still used.
    later = next_entry(ORIGIN, stale, FetchResult(error="DNSLookupError"), 40 * DAY, CONFIG)
    assert (later.outcome, later.body, later.first_failure_at, later.failures) == (good.outcome, good.body, DAY, 2)
