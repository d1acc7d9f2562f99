"""Each origin's TDMRep file, ``/.well-known/tdmrep.json`` (W3C TDM Reservation Protocol, Final Report 2024-05-10),
fetched like robots.txt and held beside it (issue "every machine-readable opt-out"; docs/opt-outs.md).

Fetched only when the crawl needs it (``Config.tdmrep``: REP_CONTENT_USES names a TDM use, or REP_TDMREP = True), in
the fetch of the origin's robots.txt, after it and in the same downloader place (a second hop, ``places``), through
Scrapy's engine with the robots.txt request's markers: the size cap, our own bounded redirects, no retry, no HTTP
cache. It is kept in the same store under its URL (``TdmLocation.key``) with the same TTL, lease and stale-on-error
rules (``refresh.Refresher``, ``policy.next_entry``), so a fleet downloads it once per origin per TTL.

What an outcome means (``standing``):

- a 2xx body is the file, read as far as valid (``matcher.parse_tdmrep``; what is malformed is said once per body);
- a 4xx (404: the protocol's "no file"), a dead-end redirect, or a 2xx that is not JSON at all (an HTML page served
  at the well-known URL: a soft 404) states no reservation;
# Decision: a 5xx, 429, network error or timeout with no kept copy, and a 2xx that looks like JSON (starts with "["
# or "{") but does not parse, leave the reservation *unknown*: for a crawl declaring a TDM use that is a refusal
# ("tdmrep.json unreachable (503): reservation unknown"), never "no reservation", however long it lasts (not even
# past REP_UNREACHABLE_ALLOW_AFTER). It is retried on robots.txt's error schedule; a kept copy is used meanwhile.
# Decision: tdmrep.json is not subject to robots.txt (like robots.txt itself, it is a file the site publishes for
# crawlers at a well-known location).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..matcher import (
    TDMREP_PATH,
    Statement,
    TdmRep,
    parse_tdmrep,
    path_params_query,
    starts_like_json,
    tdm_statements,
    unknown_reservation,
)
from ..stores import Entry, Outcome
from .fetch import RobotsFetcher
from .policy import FetchResult, has_copy, next_entry
from .refresh import Refresher, StatNames

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy import Request
    from scrapy.statscollectors import StatsCollector

    from ..config import Clock, Config
    from ..stores import Store
    from .origin import Origin
    from .state import OriginState

#: The documented logger of every middleware line (docs/stats.md).
logger = logging.getLogger("scrapy_rep.middleware")

FILE, NONE, UNKNOWN = "file", "none", "unknown"


@dataclass(frozen=True, slots=True)
class TdmLocation:
    """An origin's tdmrep.json as an origin-level file: keyed and fetched by its URL."""

    origin: Origin

    @property
    def key(self) -> str:
        return tdm_url(self.origin.key)

    @property
    def robots_url(self) -> str:
        return self.key


def tdm_url(origin: str) -> str:
    """The tdmrep.json URL (and store key) of the origin whose key is ``origin``."""
    return f"{origin}{TDMREP_PATH}"


def standing(entry: Entry) -> str:
    """FILE (a copy to read, possibly kept through failures), NONE (no reservation stated), or UNKNOWN."""
    if entry.outcome is Outcome.RULES:
        return UNKNOWN if entry.error == NOT_JSON else NONE if entry.error == NOT_TDMREP else FILE
    if entry.failing and not has_copy(entry):
        return UNKNOWN
    return NONE


#: ``Entry.error`` of a 2xx body that looks like JSON and does not parse (stored, so every worker reads it the same).
NOT_JSON = "UnparsableJSON"
#: ``Entry.error`` of a 2xx body that is not JSON at all (an HTML page served for a missing file): no file; stored
#: without its body.
NOT_TDMREP = "NotTDMRep"


class TdmFiles:
    """The tdmrep.json side of each origin's fetch: ``refresh`` brings ``state.tdm`` (the entry) and
    ``state.tdm_rules`` (its parsed file) up to date; ``statements`` gives what they say of one URL."""

    def __init__(self, store: Store, send: Callable[[Request, str], Any], config: Config, clock: Clock,
                 stats: StatsCollector, on_lease_wait: Callable[[str], None]) -> None:
        self.stats = stats
        self.clock = clock
        self.config = config
        fetcher = _TdmFetcher(send, config.max_size, config.max_redirects)
        self.refresher = Refresher(store, fetcher, config, clock, stats, on_lease_wait,
                                   names=StatNames(cache="rep/tdmrep/cache", downloads="rep/tdmrep"), owns_store=False)

    async def refresh(self, origin: Origin, state: OriginState, spider: Any) -> None:
        """Make ``state.tdm`` current (from the store, another crawler's fetch or a download). Never raises: an
        unexpected error leaves the reservation unknown, said at ERROR (counted ``rep/tdmrep/internal_errors``)."""
        try:
            entry = (await self.refresher.current_entry(TdmLocation(origin), state.tdm)).entry
        except Exception as exc:
            self.stats.inc_value("rep/tdmrep/internal_errors")
            logger.error("%s: internal error while fetching tdmrep.json (%s: %s): its TDM reservation is unknown",
                         origin, type(exc).__name__, exc, extra={"spider": spider})
            result = FetchResult(error="InternalError", url=tdm_url(origin.key))
            entry = next_entry(tdm_url(origin.key), state.tdm, result, self.clock.seconds(), self.config)
        self.adopt(state, entry, spider)

    def adopt(self, state: OriginState, entry: Entry, spider: Any) -> None:
        """``entry`` becomes the origin's; a new body is parsed once, what is malformed in it said once (WARNING)."""
        previous = state.tdm
        state.tdm = entry
        if standing(entry) != FILE:
            state.tdm_rules = None
        elif previous is None or state.tdm_rules is None or not previous.same_body(entry):
            state.tdm_rules = parse_tdmrep(entry.body)
            if state.tdm_rules.problems:
                self.stats.inc_value("rep/tdmrep/malformed")
                logger.warning("%s: %s: %s (read as far as valid)", tdm_url(state.origin), "; ".join(
                    state.tdm_rules.problems[:5]), "..." if len(state.tdm_rules.problems) > 5 else "",
                    extra={"spider": spider})
        if standing(entry) == UNKNOWN and (previous is None or standing(previous) != UNKNOWN):
            self.stats.inc_value("rep/tdmrep/unknown")
            logger.warning("%s: %s: TDM reservation unknown until it is read (retried on robots.txt's error "
                           "schedule); a crawl declaring a TDM use refuses the origin's pages meanwhile",
                           tdm_url(state.origin), _why_unknown(entry), extra={"spider": spider})

    async def close(self) -> None:
        await self.refresher.close()


def statements(state: OriginState, url: str) -> list[Statement]:
    """What the origin's tdmrep.json says of ``url`` (as sent): the ``tdm`` and ``train-ai`` statements of the first
    entry whose location matches its path and query, a refusal of both when the reservation is unknown, or none."""
    entry = state.tdm
    if entry is None:
        return []
    kind = standing(entry)
    if kind == UNKNOWN:
        return unknown_reservation(f"{tdm_url(state.origin)} {_why_unknown(entry)}: TDM reservation unknown")
    rules: TdmRep | None = state.tdm_rules
    if kind == NONE or rules is None or not rules.rules:
        return []  # the common case (a 404): no path to compute
    return tdm_statements(rules.lookup(path_params_query(url)), tdm_url(state.origin), (), (), (), ())


def _why_unknown(entry: Entry) -> str:
    if entry.error == NOT_JSON:
        return f"{entry.status} with a body that is not valid JSON"
    return f"unreachable ({entry.label})"


class _TdmFetcher:
    """A ``RobotsFetcher`` for tdmrep.json: each hop sent in the origin's fetch's place; a 2xx body that looks like
    JSON and does not parse is marked ``NOT_JSON``, one that is not JSON at all (HTML) ``NOT_TDMREP``: no file."""

    def __init__(self, send: Callable[[Request, str], Any], max_size: int, max_redirects: int) -> None:
        self.send = send
        self.max_size = max_size
        self.max_redirects = max_redirects

    async def fetch(self, origin: Any, url: str | None = None) -> FetchResult:
        key = origin.origin.key

        async def download(request: Request) -> Any:
            return await self.send(request, key)

        result = await RobotsFetcher(download, self.max_size, self.max_redirects).fetch(origin, url)
        if result.status is None or not 200 <= result.status < 300:
            return result
        if not starts_like_json(result.body):
            return replace(result, error=NOT_TDMREP, body=b"")  # a soft 404: no file (its status kept for the stats)
        if parse_tdmrep(result.body).unreadable:
            return replace(result, error=NOT_JSON)
        return result
