"""Refused at discovery (REP_REFUSE_AT_DISCOVERY, on by default): a forbidden link of an origin whose robots.txt this
process holds, fresh, never enters the scheduler.

The spider middleware (``RobotsStartMiddleware``, nearest the engine) hands ``Discovery.scheduled`` every request a
callback yields, and every start request. When the request's origin is held, ready and fresh, the request is judged
by the downloader middleware's own path (``Decider.judge``: robots.txt rules, REP_CONTENT_USES, the request's own
User-Agent token; without citing the rule, the matcher's fast path), against the entry the downloader would decide
it by now:

- allowed: it goes on unchanged, and is decided (counted, its basis made) when it reaches the downloader, against the
  entry its origin holds then, exactly as a request the spider middleware never saw. A callback's links repeat (a
  site's navigation on every page), and Scrapy's dupefilter drops the repeats between the two middlewares: counting
  an allowed one here would count requests that are never sent;
- forbidden: the scheduler's dupefilter takes it first, as the scheduler would (``request_seen``; a duplicate is
  filtered and said as the scheduler says it, ``dupefilter/filtered``, and counted nowhere else, as today), then it
  is decided by ``Decider.decide``: counted once (``checked``, ``rep/cache/hits``, ``forbidden``, its usage stats;
  ``rep/requests/forbidden/at_discovery``), its DEBUG line, its basis, its place in the close report; and dropped;
- with REP_CLEAN_PARAM, a URL its origin's Clean-param lines shorten: after the dupefilter, counted as rewritten
  (``rep/requests/rewritten/at_discovery`` too) and replaced by its canonical copy, which is judged the same way.

Everything else goes on unchanged, to be decided in the downloader as before: an origin not held (or expired,
failing, being fetched: nothing here starts a fetch or waits), a request with an errback (which receives the
``IgnoreRequest`` in the downloader, as Scrapy's built-in promises), ``meta["dont_obey_robotstxt"]``, a robots.txt
URL, a scheme without robots.txt. A redirect's target is never a callback's output: it is decided in the downloader.
A dry run (REP_ENFORCE = False) drops nothing, so it decides everything in the downloader: nothing is made here.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..robots.origin import ROBOTS_PATH, NoOrigin, origin_of_parts
from ..robots.state import State
from .clean_param import canonical

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from .._scrapy import Internals
    from ..config import Clock
    from ..robots.state import OriginMap
    from .clean_param import CleanParams
    from .decision import Decider

#: A URL's scheme, network location and path, as ``urlsplit`` splits them (Scrapy's ``Request.url`` is already
#: safe: ``origin_of_parts`` reads the location as the downloader middleware does).
_ORIGIN_AND_PATH = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://([^/?#]*)([^?#]*)")
#: The stats of the requests decided here (docs/stats.md): each also counts under its outcome.
FORBIDDEN_HERE = "rep/requests/forbidden/at_discovery"
REWRITTEN_HERE = "rep/requests/rewritten/at_discovery"


class Discovery:
    def __init__(self, crawler: Crawler, internals: Internals, stats: StatsCollector, origins: OriginMap,
                 clock: Clock, decider: Decider, clean: CleanParams | None) -> None:
        self.crawler = crawler
        self.internals = internals  # the scheduler's dupefilter
        self.stats = stats
        self.origins = origins
        self.clock = clock
        self.decider = decider
        self.clean = clean  # REP_CLEAN_PARAM

    def scheduled(self, request: Request) -> Request | None:
        """What to hand the scheduler for ``request``: itself, its canonical copy (REP_CLEAN_PARAM), or None when
        it is refused here (or is the duplicate of one); see the module docstring."""
        if request.errback is not None or request.meta.get("dont_obey_robotstxt"):
            return request
        parts = _ORIGIN_AND_PATH.match(request.url)  # as urlsplit reads them, for a fraction of its cost: most links
        if parts is None or parts[3] == ROBOTS_PATH:  # of a page repeat, and the dupefilter drops the repeats later
            return request
        try:
            key = origin_of_parts(parts[1], parts[2]).key
        except NoOrigin:
            return request
        state = self.origins.get(key)
        if (state is None or state.state is not State.READY or state.entry is None
                or state.fresh_until <= self.clock.seconds()):
            return request  # not known now: the downloader waits for it, as before
        entry, rules = state.entry, state.rules
        if self.clean is not None and (cleaned := canonical(request, rules)) is not None:
            if (filtered := self._filtered(request)) is not False:
                return None if filtered else request
            self.stats.inc_value("rep/requests/checked")
            self.stats.inc_value(REWRITTEN_HERE)
            return self.scheduled(self.clean.rewrite(request, cleaned))  # the canonical URL: itself clean
        if self.decider.judge(request, entry, rules, cite=False).allowed:
            return request
        if (filtered := self._filtered(request)) is not False:
            return None if filtered else request
        self.stats.inc_value("rep/requests/checked")
        self.stats.inc_value("rep/cache/hits")
        self.stats.inc_value(FORBIDDEN_HERE)
        self.origins.used(key)
        self.decider.decide(request, entry, rules)  # judged again, citing the rule: counted, said, its basis made
        return None

    def _filtered(self, request: Request) -> bool | None:
        """Whether the scheduler's dupefilter filters ``request`` (logged and counted by the dupefilter, as the
        scheduler would); False: it is new (and now seen) or ``dont_filter``; None: no dupefilter to ask (degraded,
        ``_scrapy.Internals.dupefilter``), so the request goes on to be decided in the downloader."""
        if request.dont_filter:
            return False
        df = self.internals.dupefilter()
        if df is None:
            return None
        if not df.request_seen(request):
            return False
        df.log(request, self.crawler.spider)
        return True
