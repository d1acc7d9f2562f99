"""Pure decisions about one origin's robots.txt: what a fetch result means, how long it lasts, when to retry.

Functions are named for the question they answer. Nothing here knows Scrapy, Twisted, I/O or the clock: ``now`` is
always an argument (epoch seconds from the middleware's injected clock).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any

from ..config import Config
from ..stores import Entry, Outcome, Version

#: ``FetchResult.error`` values for redirect chains that end without a robots.txt: SPEC 2.2 treats them as 404.
TOO_MANY_REDIRECTS = "TooManyRedirects"
REDIRECT_LOOP = "RedirectLoop"
BAD_REDIRECT = "BadRedirect"
REDIRECT_ERRORS = frozenset({TOO_MANY_REDIRECTS, REDIRECT_LOOP, BAD_REDIRECT})

_MAX_AGE = re.compile(r"""(?:^|,)\s*max-age\s*=\s*"?(\d+)"?\s*(?:,|$)""", re.IGNORECASE)
_NOT_FOUND = re.compile(rb"\b404\b|not\s+found", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class FetchResult:
    """How one robots.txt download ended: a final HTTP status (after redirects) or an error name.

    ``error`` is the exception's class name for network errors (``DNSLookupError``, ``TimeoutError``...), or one of
    ``REDIRECT_ERRORS``. ``cache_control`` and ``retry_after`` are the raw header values of the final response.
    ``url`` is the last URL downloaded (the final response's, or the one whose download failed); ``refused`` says
    which redirect target the chain stopped at and why (``redirect to ftp://h/robots.txt refused: not http(s)``),
    for the log only. ``response``: the final Scrapy response, for the ``robots_version_adopted`` signal's handlers
    (its headers and request; None when the chain ended without one), never stored.
    """

    status: int | None = None
    body: bytes = b""
    error: str | None = None
    cache_control: str | None = None
    retry_after: str | None = None
    redirects: int = 0
    url: str | None = None
    refused: str | None = None
    response: Any = field(default=None, compare=False, repr=False)

    @property
    def label(self) -> str:
        """The status or error, as used in stats keys and log lines."""
        return str(self.status) if self.status is not None else str(self.error)


def outcome_of(result: FetchResult, *, not_found_heuristic: bool = False) -> Outcome:
    """SPEC 2.2: RULES for 2xx, ALLOW_ALL for 4xx (not 429) and dead-end redirects, DISALLOW_ALL (temporary) for
    429, 5xx and network errors. With ``not_found_heuristic`` (SPEC 2.7, off by default) a 5xx whose body says
    "not found" or "404" counts as 404."""
    status = result.status
    if status is None:
        return Outcome.ALLOW_ALL if result.error in REDIRECT_ERRORS else Outcome.DISALLOW_ALL
    if 200 <= status < 300:
        return Outcome.RULES
    if 300 <= status < 400:  # a 3xx that could not be followed (no Location): like too many redirects
        return Outcome.ALLOW_ALL
    if 400 <= status < 500 and status != 429:
        return Outcome.ALLOW_ALL
    if not_found_heuristic and 500 <= status < 600 and looks_like_not_found(result.body):
        return Outcome.ALLOW_ALL
    return Outcome.DISALLOW_ALL


def looks_like_not_found(body: bytes) -> bool:
    """SPEC 2.7's optional heuristic: the page (its first 4 KiB) says "not found" or "404"."""
    return _NOT_FOUND.search(body[:4096]) is not None


def is_unavailable_status(status: int | None) -> bool:
    """SPEC 2.5: 503 and 429 are retried on the shorter schedule."""
    return status in (429, 503)


def cache_lifetime(config: Config, cache_control: str | None) -> float:
    """SPEC 3.1: REP_CACHE_TTL, or the response's ``max-age`` bounded by REP_CACHE_MIN_TTL..REP_CACHE_MAX_TTL."""
    match = _MAX_AGE.search(cache_control or "")
    if match is None:
        return config.cache_ttl
    return min(max(float(match.group(1)), config.cache_min_ttl), config.cache_max_ttl)


def retry_after_seconds(value: str | None, now: float) -> float | None:
    """A ``Retry-After`` header as seconds from ``now`` (delta-seconds or HTTP-date); None when absent/unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(when.timestamp() - now, 0.0)


def retry_delay(config: Config, failures: int, result: FetchResult, now: float) -> float:
    """SPEC 2.5: seconds until the next robots.txt attempt after the ``failures``-th failure in a row.

    Exponential back-off from REP_ERROR_RETRY_DELAY up to REP_ERROR_RETRY_MAX_DELAY; 503/429 use the shorter
    REP_UNAVAILABLE_RETRY_* schedule, and their ``Retry-After`` wins when present, bounded to 1 s ..
    REP_RETRY_AFTER_MAX.
    """
    if is_unavailable_status(result.status):
        retry_after = retry_after_seconds(result.retry_after, now)
        if retry_after is not None:
            return min(max(retry_after, 1.0), config.retry_after_max)
        base, ceiling = config.unavailable_retry_delay, config.unavailable_retry_max_delay
    else:
        base, ceiling = config.error_retry_delay, config.error_retry_max_delay
    return float(min(base * 2 ** min(failures - 1, 60), ceiling))


def has_copy(entry: Entry) -> bool:
    """The entry carries a successfully fetched robots.txt outcome (possibly stale), not a synthetic one.

    Failure entries without a copy set ``fetched_at = first_failure_at``; a real copy predates the failures.
    """
    return entry.first_failure_at is None or entry.fetched_at < entry.first_failure_at


def is_fresh(entry: Entry, now: float) -> bool:
    """The entry may be used without fetching robots.txt again."""
    return entry.is_fresh(now)


def should_hold(entry: Entry) -> bool:
    """SPEC 2.3: the origin is temporarily fully disallowed: its requests wait rather than download."""
    return entry.outcome is Outcome.DISALLOW_ALL


def next_entry(origin: str, previous: Entry | None, result: FetchResult, now: float, config: Config) -> Entry:
    """The origin's entry after a fetch ending in ``result`` (SPEC 2.2-2.6, 3.1)."""
    outcome = outcome_of(result, not_found_heuristic=config.not_found_heuristic)
    if outcome is not Outcome.DISALLOW_ALL:
        return Entry(
            origin=origin,
            outcome=outcome,
            fetched_at=now,
            expires_at=now + cache_lifetime(config, result.cache_control),
            body=(body := result.body if outcome is Outcome.RULES else b""),
            status=result.status,
            error=result.error,
            version=Version.of(body, now, result.status, result.url),
        )
    first_failure_at = previous.first_failure_at if previous and previous.first_failure_at is not None else now
    failures = previous.failures + 1 if previous and previous.first_failure_at is not None else 1
    expires_at = now + retry_delay(config, failures, result, now)
    if previous is not None and has_copy(previous):
        # SPEC 2.4 stale-on-error; past the 30-day limit SPEC 2.2's last row also says: the last copy.
        return Entry(
            origin=origin,
            outcome=previous.outcome,
            fetched_at=previous.fetched_at,
            expires_at=expires_at,
            body=previous.body,
            status=result.status,
            error=result.error,
            first_failure_at=first_failure_at,
            failures=failures,
            version=previous.version,
        )
    unreachable_too_long = now - first_failure_at >= config.unreachable_allow_after
    return Entry(
        origin=origin,
        # SPEC 2.2 last row / 2.6: no copy and unreachable past the limit: full allow (still re-fetched).
        outcome=Outcome.ALLOW_ALL if unreachable_too_long else Outcome.DISALLOW_ALL,
        fetched_at=first_failure_at,
        expires_at=expires_at,
        status=result.status,
        error=result.error,
        first_failure_at=first_failure_at,
        failures=failures,
    )
