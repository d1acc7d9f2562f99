"""What the middleware says in the log about an origin's robots.txt: one line each time what it means changes."""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import Any

from ..config import Clock
from ..robots.fetch import shown
from ..robots.policy import REDIRECT_ERRORS, FetchResult, has_copy
from ..robots.refresh import Source
from ..stores import Entry, Outcome

#: The documented logger of every middleware line (docs/stats.md), whichever module writes it.
logger = logging.getLogger("scrapy_rep.middleware")

#: (below this many seconds, unit size in seconds, unit name): the unit ``format_duration`` picks.
_UNITS = ((900.0, 1.0, "s"), (3 * 3600.0, 60.0, "min"), (72 * 3600.0, 3600.0, "h"), (float("inf"), 86_400.0, "d"))


def plural(count: int, word: str) -> str:
    """``1 line``, ``2 lines``."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def format_duration(seconds: float) -> str:
    """A delay as every log line shows it: ``0.2 s``, ``1.5 s``, ``15 s``, ``600 s``, ``20 min``, ``24 h``,
    ``30 d``. Seconds up to 15 min (the default REP_HOLD_TIMEOUT reads ``600 s``); below 10 units one decimal (two
    below 1), so that a sub-second delay never reads ``0 s``; negative delays (already due) read ``0 s``."""
    seconds = max(seconds, 0.0)
    _, size, unit = next(row for row in _UNITS if seconds < row[0])
    value = seconds / size
    if value >= 10:
        return f"{value:.0f} {unit}"
    text = f"{value:.{1 if value >= 1 else 2}f}".rstrip("0").rstrip(".")  # "0.00" -> "0", "2.0" -> "2"
    return f"{text} {unit}"


class OutcomeLog:
    """INFO once per origin each time what its robots.txt means changes; a first plain 2xx (the normal case) is
    logged at DEBUG so that broad crawls do not log a line per origin. When this process downloaded robots.txt, the
    line names where the chain ended (``200 (via http://b/robots.txt after 1 redirect)``) or the redirect target it
    refused and why (``(redirect to ftp://h/robots.txt refused: not http(s))``). A line about an entry this process
    did not download ends with where it came from and how long ago it was fetched: ``(from the store, fetched 2 h
    ago)`` (an earlier run's or another crawler's copy), ``(from another crawler's download, 3 s ago)`` (it held the
    fetch lease while this one waited); a line without one is about this process's own download."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._logged: dict[str, str] = {}  # origin -> last outcome logged (its key)
        self._keys: dict[str, str] = {}  # one string per distinct key (a few dozen), shared by the origins

    def outcome(self, origin: str, entry: Entry, spider: Any, source: Source | None,
                fetched: FetchResult | None = None) -> None:
        """Log ``entry`` if what it means differs from the last line logged for ``origin``; ``source`` is where it
        came from (None: an internal error's entry), ``fetched`` the download, when this process made it."""
        key = f"{entry.status}/{entry.error}/{entry.outcome.value}/{entry.first_failure_at is None}"
        key = self._keys.setdefault(key, key)
        previous = self._logged.get(origin)
        if previous == key:
            return
        self._logged[origin] = key
        label = entry.label + via(fetched)
        plain = previous is None and entry.outcome is Outcome.RULES and not entry.failures
        logger.log(logging.DEBUG if plain else logging.INFO, "%s robots.txt %s: %s%s%s", origin, label,
                   self._meaning(entry), refusal(fetched), self._came_from(entry, source), extra={"spider": spider})

    def _came_from(self, entry: Entry, source: Source | None) -> str:
        if source is None or source is Source.DOWNLOADED:
            return ""
        age = format_duration(self.clock.seconds() - entry.fetched_at)
        return f" ({source.value}, {'fetched ' if source is Source.STORE else ''}{age} ago)"

    def _meaning(self, entry: Entry) -> str:
        if entry.first_failure_at is None:
            return {Outcome.RULES: "obeying its rules", Outcome.ALLOW_ALL: "allowing everything"}[entry.outcome]
        retry = f"retry in {format_duration(entry.expires_at - self.clock.seconds())}"
        if has_copy(entry):
            fetched = datetime.fromtimestamp(entry.fetched_at, tz=timezone.utc).isoformat(timespec="seconds")
            return f"keeping the copy fetched {fetched}, {retry}"
        if entry.outcome is Outcome.ALLOW_ALL:
            return f"unreachable past REP_UNREACHABLE_ALLOW_AFTER: allowing everything, {retry}"
        return f"holding requests, {retry}"

    def forget(self, origin: str) -> None:
        self._logged.pop(origin, None)


def via(fetched: FetchResult | None) -> str:
    """`` (via URL after N redirects)`` when the download ended on another URL than the origin's /robots.txt."""
    if fetched is None or not fetched.redirects or fetched.url is None or fetched.error in REDIRECT_ERRORS:
        return ""  # a dead-end chain is described by ``refusal`` (its error counts the refused redirect too)
    plural = "" if fetched.redirects == 1 else "s"
    return f" (via {shown(fetched.url)} after {fetched.redirects} redirect{plural})"


def refusal(fetched: FetchResult | None) -> str:
    """`` (redirect to URL refused: why)``, `` (A -> B loops)``...: where a chain without a robots.txt pointed."""
    return f" ({fetched.refused})" if fetched is not None and fetched.refused else ""
