"""What each robots.txt request looks like when it is sent: ``REP_ROBOTS_REQUEST`` applied, markers kept, no browser.

``fetch.robots_request`` builds each hop's request (SPEC 2.2: marked so that no other middleware retries, redirects
or meta-refreshes it, and carrying its size cap, SPEC 4.4). Just before the middleware sends it through the engine,
``RobotsRequests.prepare``:

1. passes it to the ``REP_ROBOTS_REQUEST`` callable, when one is set (proxy-API plugins route or mark robots.txt
   differently from pages: ``meta["proxy"]``, ``meta["zyte_api_automap"] = False``...); the callable returns the
   Request to send (the same one changed, or ``request.replace(...)``);
2. puts back scrapy-rep's meta markers with their values, whatever the callable did to them: without them the
   request would be checked against robots.txt itself, retried, redirected or sized by other middlewares, and its
   cap not enforced. Putting them back (rather than failing the fetch) keeps a hook that builds a fresh ``meta``
   working;
3. sets ``meta["playwright"] = False``: robots.txt is never fetched through a browser page (SPEC 2.1: the file as the
   server sends it, with the crawl's own HTTP client). scrapy-playwright's handler uses the browser only when that
   key is true, so a user middleware's ``meta.setdefault("playwright", True)`` leaves robots requests alone.

A callable that raises or returns something other than a ``Request`` fails that fetch with ``RobotsRequestHookError``
(logged at ERROR with the traceback, once per exception type): the origin is then treated as unreachable (SPEC 2.2:
its requests held, robots.txt retried with back-off), never as "allow all".
"""

from __future__ import annotations

import logging

from scrapy import Request

from ..config import RobotsRequestHook

logger = logging.getLogger("scrapy_rep.middleware")

#: The meta key scrapy-playwright reads to decide whether a request goes through a browser page.
PLAYWRIGHT_META_KEY = "playwright"


class RobotsRequestHookError(Exception):
    """REP_ROBOTS_REQUEST raised, or returned something that is not a Request."""


class RobotsRequests:
    """Applies ``REP_ROBOTS_REQUEST`` (optional) and scrapy-rep's invariants to each robots.txt request sent."""

    def __init__(self, hook: RobotsRequestHook | None) -> None:
        self.hook = hook
        self._logged: set[str] = set()

    def prepare(self, request: Request) -> Request:
        """The request to send for ``request`` (one robots.txt hop, built by ``fetch.robots_request``)."""
        markers = dict(request.meta)  # everything scrapy-rep put in meta is a marker the hook may not remove
        if self.hook is not None:
            request = self._call_hook(request)
            request.meta.update(markers)
        request.meta[PLAYWRIGHT_META_KEY] = False
        return request

    def _call_hook(self, request: Request) -> Request:
        assert self.hook is not None
        name = getattr(self.hook, "__qualname__", repr(self.hook))
        try:
            sent = self.hook(request)
        except Exception as exc:
            self._log_once(type(exc).__name__, f"REP_ROBOTS_REQUEST {name} raised {exc!r} for {request.url}", exc)
            raise RobotsRequestHookError(f"REP_ROBOTS_REQUEST {name} raised {exc!r}") from exc
        if not isinstance(sent, Request):
            why = f"REP_ROBOTS_REQUEST {name} returned {type(sent).__name__}, not a scrapy Request"
            self._log_once("not a Request", f"{why}, for {request.url}", None)
            raise RobotsRequestHookError(why)
        return sent

    def _log_once(self, key: str, message: str, exc: Exception | None) -> None:
        if key in self._logged:
            return
        self._logged.add(key)
        logger.error("scrapy-rep: %s; the origin is treated as unreachable (SPEC 2.2) and retried", message,
                     exc_info=exc)
