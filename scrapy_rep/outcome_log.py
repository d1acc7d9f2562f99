"""What the middleware says in the log about an origin's robots.txt: one line each time what it means changes."""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import Any

from .config import Clock
from .policy import has_copy
from .stores import Entry, Outcome

#: The documented logger of every middleware line (docs/stats.md), whichever module writes it.
logger = logging.getLogger("scrapy_rep.middleware")


class OutcomeLog:
    """INFO once per origin each time what its robots.txt means changes; a first plain 2xx (the normal case) is
    logged at DEBUG so that broad crawls do not log a line per origin."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._logged: dict[str, str] = {}  # origin -> last outcome line logged

    def outcome(self, origin: str, entry: Entry, spider: Any) -> None:
        label = str(entry.status) if entry.status is not None else str(entry.error)
        if entry.first_failure_at is None:
            meaning = {Outcome.RULES: "obeying its rules", Outcome.ALLOW_ALL: "allowing everything"}[entry.outcome]
        else:
            retry = f"retry in {entry.expires_at - self.clock.seconds():.0f} s"
            if has_copy(entry):
                fetched = datetime.fromtimestamp(entry.fetched_at, tz=timezone.utc).isoformat(timespec="seconds")
                meaning = f"keeping the copy fetched {fetched}, {retry}"
            elif entry.outcome is Outcome.ALLOW_ALL:
                meaning = f"unreachable past REP_UNREACHABLE_ALLOW_AFTER: allowing everything, {retry}"
            else:
                meaning = f"holding requests, {retry}"
        key = f"{label}/{entry.outcome.value}/{entry.first_failure_at is None}"
        previous = self._logged.get(origin)
        if previous == key:
            return
        self._logged[origin] = key
        plain = previous is None and entry.outcome is Outcome.RULES and not entry.failures
        logger.log(logging.DEBUG if plain else logging.INFO, "%s robots.txt %s: %s", origin, label, meaning,
                   extra={"spider": spider})

    def forget(self, origin: str) -> None:
        self._logged.pop(origin, None)
