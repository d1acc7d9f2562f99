"""Sending one robots.txt hop through the engine (SPEC 2.1, 4.4; DESIGN rule 1).

Each hop is prepared by ``robots_request`` (REP_ROBOTS_REQUEST, scrapy-rep's markers, never a browser page), enters
the downloader in its fetch's place (``places``: the robots.txt request takes the place in the reactor step it is
sent) and goes through ``engine.download`` with the crawl's own middlewares and slots. The size cap's
``bytes_received`` handler (``fetch.stop_at_cap``) is connected only while robots.txt hops are in flight: every
response's chunks would otherwise go through it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import IgnoreRequest

from .. import _scrapy
from .fetch import stop_at_cap
from .robots_request import RobotsRequests

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from ..config import RobotsRequestHook
    from .places import Places


class RobotsDownloads:
    """``download``: one hop of an origin's robots.txt fetch, the ``Download`` a ``RobotsFetcher`` calls."""

    def __init__(self, crawler: Crawler, hook: RobotsRequestHook | None, places: Places) -> None:
        self.crawler = crawler
        self.places = places
        self._requests = RobotsRequests(hook)
        self._in_flight = 0  # the bytes_received handler is connected only while this is positive

    async def download(self, request: Request, origin: str) -> Response:
        """Send ``request``, a hop of ``origin``'s fetch, in the fetch's downloader place. IgnoreRequest when the
        crawl is closing: a network error to the fetcher, so nothing is adopted."""
        assert self.crawler.engine is not None
        request = self._requests.prepare(request)
        if not await self.places.enter(origin):
            raise IgnoreRequest("the crawl is closing")
        if self._in_flight == 0:
            self.crawler.signals.connect(self._bytes_received, signal=signals.bytes_received)
        self._in_flight += 1
        try:
            return await _scrapy.download(self.crawler.engine, request)  # in the active set from this same step
        finally:
            self.places.sent()
            self._in_flight -= 1
            if self._in_flight == 0:
                self.crawler.signals.disconnect(self._bytes_received, signal=signals.bytes_received)

    def _bytes_received(self, data: bytes, request: Request, **kwargs: Any) -> None:
        stop_at_cap(data, request)
