"""An unexpected exception while an origin's robots.txt is fetched, parsed or adopted: logged, counted, and turned
into the entry a network error would give (SPEC 2.2: requests held, robots.txt retried with back-off, a kept copy
used), so that the origin never stays pending."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..robots.policy import FetchResult, next_entry

if TYPE_CHECKING:
    from scrapy.statscollectors import StatsCollector

    from ..config import Clock, Config
    from ..robots.state import OriginState
    from ..stores import Entry

#: The documented logger of every middleware line (docs/stats.md), whichever module writes it.
logger = logging.getLogger("scrapy_rep.middleware")

#: The error name of an internal error's outcome (in log lines and the entry's ``error``).
INTERNAL_ERROR = "InternalError"


class InternalErrors:
    """ERROR with the traceback once per (origin, step, exception type); ``rep/internal_errors[/<step>]`` each."""

    def __init__(self, stats: StatsCollector, config: Config, clock: Clock) -> None:
        self.stats = stats
        self.config = config
        self.clock = clock
        self._logged: set[tuple[str, str, str]] = set()  # (origin, step, exception) logged at ERROR

    def entry_after(self, state: OriginState, step: str, exc: Exception, spider: Any) -> Entry:
        """Log and count ``exc``; return the entry a network error would give (SPEC 2.2)."""
        self.stats.inc_value("rep/internal_errors")
        self.stats.inc_value(f"rep/internal_errors/{step}")
        seen = (state.origin, step, type(exc).__name__)
        if seen not in self._logged:
            self._logged.add(seen)
            logger.error("scrapy-rep internal error while handling %s robots.txt (%s step): %r; the origin is "
                         "treated as unreachable (SPEC 2.2) and retried", state.origin, step, exc, exc_info=exc,
                         extra={"spider": spider})
        failure = FetchResult(error=INTERNAL_ERROR)
        return next_entry(state.origin, state.entry, failure, self.clock.seconds(), self.config)
