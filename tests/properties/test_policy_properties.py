"""Properties of the policy's header parsers and schedules on arbitrary values (SPEC 2.2-2.6, 3.1; issue 6).

Header values reach the policy as the middleware decodes them: bytes as Latin-1 (scrapy_rep/robots/fetch.py), so every
character U+0000..U+00FF can arrive.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_rep.config import Config
from scrapy_rep.robots.policy import FetchResult, cache_lifetime, next_entry, retry_after_seconds, retry_delay
from scrapy_rep.stores import Entry, Outcome

CONFIG = Config(user_agents=("testbot",), cache_min_ttl=60.0, cache_max_ttl=7 * 86400.0)
header_values = st.one_of(
    st.binary(max_size=60).map(lambda raw: raw.decode("latin-1")),
    st.text(max_size=60),
    st.builds(lambda pre, n, post: f"{pre}max-age={n}{post}", st.text(max_size=8), st.integers(-5, 10**30),
              st.text(max_size=8)),
    st.integers(-(10**6), 10**40).map(str),
    st.datetimes().map(lambda when: when.strftime("%a, %d %b %Y %H:%M:%S GMT")),
    st.text(alphabet="0123456789\xb2\xb3\xb9\u0660\u00bd", min_size=1, max_size=4),
)
statuses = st.one_of(st.none(), st.integers(100, 599), st.sampled_from([429, 503]))
errors = st.sampled_from([None, "TimeoutError", "DNSLookupError", "ConnectionRefusedError", "TooManyRedirects",
                          "RedirectLoop", "BadRedirect", "ResponseFailed"])
nows = st.floats(0, 4e9, allow_nan=False)


@st.composite
def results(draw: st.DrawFn) -> FetchResult:
    status = draw(statuses)
    return FetchResult(status=status, error=None if status is not None else draw(errors) or "TimeoutError",
                       body=draw(st.binary(max_size=40)), cache_control=draw(st.one_of(st.none(), header_values)),
                       retry_after=draw(st.one_of(st.none(), header_values)))


@settings(max_examples=1000, deadline=None)
@given(value=header_values)
def test_cache_lifetime_is_within_bounds_spec_3_1(value: str) -> None:
    """SPEC 3.1: any Cache-Control value gives REP_CACHE_TTL or a max-age within [min, max]."""
    lifetime = cache_lifetime(CONFIG, value)
    assert lifetime == CONFIG.cache_ttl or CONFIG.cache_min_ttl <= lifetime <= CONFIG.cache_max_ttl


@settings(max_examples=1000, deadline=None)
@given(value=st.one_of(st.none(), header_values), now=nows)
def test_retry_after_never_raises_spec_2_5(value: str | None, now: float) -> None:
    """SPEC 2.5: a Retry-After header is seconds >= 0 or None (unreadable), whatever its characters."""
    seconds = retry_after_seconds(value, now)
    assert seconds is None or (isinstance(seconds, float) and seconds >= 0)


@settings(max_examples=1000, deadline=None)
@given(result=results(), failures=st.integers(1, 10_000), now=nows)
def test_retry_delay_is_within_configured_bounds_spec_2_5(result: FetchResult, failures: int, now: float) -> None:
    """SPEC 2.5: the next attempt is between the first delay and the largest configured ceiling, never NaN."""
    delay = retry_delay(CONFIG, failures, result, now)
    floor = min(CONFIG.unavailable_retry_delay, CONFIG.error_retry_delay, 1.0)
    ceiling = max(CONFIG.retry_after_max, CONFIG.error_retry_max_delay, CONFIG.unavailable_retry_max_delay)
    assert not math.isnan(delay)
    assert floor <= delay <= ceiling


@st.composite
def previous_entries(draw: st.DrawFn, now: float) -> Entry | None:
    if draw(st.booleans()):
        return None
    fetched = draw(st.floats(0, now))
    failing = draw(st.booleans())
    return Entry(origin="https://example.com", outcome=draw(st.sampled_from(Outcome)), fetched_at=fetched,
                 expires_at=fetched + 10, body=b"user-agent: *\ndisallow: /x\n",
                 first_failure_at=draw(st.floats(fetched, now)) if failing else None,
                 failures=draw(st.integers(1, 50)) if failing else 0)


@settings(max_examples=1000, deadline=None)
@given(data=st.data(), result=results(), now=nows)
def test_next_entry_expiry_is_within_bounds_spec_2_2_3_1(data: st.DataObject, result: FetchResult, now: float) -> None:
    """SPEC 2.2-2.6, 3.1: whatever the previous state and fetch result, the new entry expires in the future, no later
    than the longest configured lifetime or retry delay, and a failure keeps the first-failure time."""
    previous = data.draw(previous_entries(now))
    entry = next_entry("https://example.com", previous, result, now, CONFIG)
    lifetime = entry.expires_at - now
    assert 0 < lifetime <= max(CONFIG.cache_max_ttl, CONFIG.cache_ttl, CONFIG.retry_after_max,
                               CONFIG.error_retry_max_delay)
    if entry.first_failure_at is not None:
        assert entry.first_failure_at <= now
        assert entry.failures >= 1
    if entry.outcome is Outcome.DISALLOW_ALL:
        assert entry.first_failure_at is not None  # SPEC 2.3: only a failure holds requests


@pytest.mark.parametrize("value", ["\xb2", "\xb9\xb2", "1\xb3"])
def test_retry_after_superscript_digits_are_unreadable_spec_2_5(value: str) -> None:
    """A Retry-After of bytes 0xB2/0xB3/0xB9 (decoded as Latin-1, like every header) is unreadable: None. (Found by
    these tests: ``str.isdigit`` accepts superscript digits, ``float`` refuses them.)"""
    assert retry_after_seconds(value, 0.0) is None
