"""The date of an ``unavailable_after`` robots directive (meta tag or X-Robots-Tag header).

Source: Google's "Robots meta tag, data-nosnippet, and X-Robots-Tag specifications"
(developers.google.com/search/docs/crawling-indexing/robots-meta-tag): "The date/time must be specified in a widely
adopted format including, but not limited to RFC 822, RFC 850, and ISO 8601."

Contract: ``parse_date(text)`` gives an aware datetime, or None when ``text`` is not a date this module reads; it
never raises and reads at most ``MAX_DATE_CHARS`` characters. Read:

* RFC 822 / RFC 1123 / RFC 850 / asctime, through ``email.utils.parsedate_tz``: ``Fri, 25 Jun 2010 15:00:00 GMT``,
  ``25 Jun 2010 15:00:00 PST``, ``Friday, 25-Jun-10 15:00:00 GMT`` (two-digit years: 69-99 are 19xx, else 20xx).
* ISO 8601 calendar dates, extended or basic, with an optional time (``T`` or a space), fraction and zone:
  ``2030-01-01``, ``2030-01-01T15:00:00Z``, ``2030-01-01 15:00+01:00``, ``20300101T150000Z``. Parsed here rather than
  by ``datetime.fromisoformat``, whose reach differs between Python 3.10 and 3.11.

# Decision: a date that names no zone, or a zone ``parsedate_tz`` does not know (``CET``), is read as UTC.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from email.utils import parsedate_tz

MAX_DATE_CHARS = 64
"""Longer text is no date (the longest RFC 850 date is 40 characters): bounds the work on a hostile value."""
WEEKDAYS = frozenset({
    "mon", "tue", "wed", "thu", "fri", "sat", "sun",
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
})
"""Weekday names, lower-cased: the part of an RFC 822/850 date before its comma."""

_ISO = re.compile(
    r"(\d{4})-?(\d{2})-?(\d{2})"
    r"(?:[T ](\d{2}):?(\d{2})(?::?(\d{2})(?:[.,](\d{1,9}))?)?)?"
    r"\s*(?:(Z)|([+-])(\d{2}):?(\d{2})?)?",
    re.IGNORECASE,
)


def parse_date(text: str) -> datetime | None:
    """The aware datetime ``text`` (stripped) names, or None."""
    text = text.strip()
    if not text or len(text) > MAX_DATE_CHARS:
        return None
    try:
        match = _ISO.fullmatch(text)
        if match is not None:
            return _iso(match)
        return _rfc(text)
    except (ValueError, TypeError, IndexError, OverflowError):  # out-of-range fields; parsedate_tz's odd inputs
        return None


def _iso(match: re.Match[str]) -> datetime:
    year, month, day, hour, minute, second, fraction, _utc, sign, zone_hours, zone_minutes = match.groups()
    micro = int((fraction or "0")[:6].ljust(6, "0"))
    offset = timedelta(0)
    if sign is not None:
        offset = timedelta(hours=int(zone_hours), minutes=int(zone_minutes or "0"))
        if sign == "-":
            offset = -offset
    # "Z" and no zone at all both mean UTC (the Decision above)
    return datetime(int(year), int(month), int(day), int(hour or "0"), int(minute or "0"), int(second or "0"), micro,
                    tzinfo=timezone(offset))


def _rfc(text: str) -> datetime | None:
    fields = parsedate_tz(text)
    if fields is None:
        return None
    year, month, day, hour, minute, second = fields[:6]
    offset = fields[9] or 0  # None: no zone, or one parsedate_tz does not know (Decision above)
    if not -86400 < offset < 86400:
        return None
    return datetime(year, month, day, hour, minute, second, tzinfo=timezone(timedelta(seconds=offset)))
