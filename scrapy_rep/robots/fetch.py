"""One robots.txt download through Scrapy's engine, with its own redirects and a size cap during transfer.

The robots request goes through the project's other downloader middlewares (proxy, headers, cookies...; SPEC 2.1)
but is marked so that none of them retries, redirects or meta-refreshes it, nor answers it from Scrapy's HTTP cache
(``dont_cache``: robots.txt is cached by this plugin, SPEC 3): this module follows redirects itself (SPEC 2.2) and
``policy`` decides what a status means. The size cap (SPEC 4.4) is enforced while the body arrives
(``stop_at_cap`` on Scrapy's ``bytes_received`` signal) and while it is decompressed (``decoding.bounded_decode``,
used by ``body.RobotsBodyMiddleware`` before Scrapy's HttpCompressionMiddleware could inflate it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol
from urllib.parse import urljoin, urlsplit

from scrapy import Request
from scrapy.exceptions import StopDownload
from scrapy.http import Response
from scrapy.http.request import NO_CALLBACK

from .decoding import ACCEPT_ENCODING
from .origin import Located
from .policy import BAD_REDIRECT, REDIRECT_LOOP, TOO_MANY_REDIRECTS, FetchResult

#: Marks a robots.txt request (and carries its size cap) for the signal handler and the body middleware.
ROBOTS_META_KEY = "rep_robots_max_size"
#: Same as Scrapy's built-in: robots.txt goes ahead of the origin's queued pages.
ROBOTS_PRIORITY = 1000
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


def robots_request(url: str, max_size: int) -> Request:
    """The request for one hop. SPEC 2.2: no other middleware retries, redirects or meta-refreshes it; every
    status reaches us; the transfer size is ours to cap (``download_maxsize`` 0 so Scrapy does not fail it first);
    Scrapy's HTTP cache never answers it (``dont_cache``, SPEC 3: the cache of robots.txt is this plugin's)."""
    return Request(
        url,
        priority=ROBOTS_PRIORITY,
        dont_filter=True,
        callback=NO_CALLBACK,
        headers={"Accept-Encoding": ACCEPT_ENCODING},
        meta={
            "dont_obey_robotstxt": True,
            "dont_retry": True,
            "dont_redirect": True,
            "handle_httpstatus_all": True,
            "allow_offsite": True,
            # Scrapy's HttpCacheMiddleware neither stores nor replays it, whatever HTTPCACHE_POLICY: robots.txt
            # freshness is ours (REP_CACHE_TTL, stale-on-error, REP_STORE; SPEC 2.4, 3.1). A replayed 503 would hold
            # a healthy site's requests run after run.
            "dont_cache": True,
            "download_maxsize": 0,
            "download_warnsize": 0,
            ROBOTS_META_KEY: max_size,
        },
    )


def stop_at_cap(data: bytes, request: Request) -> None:
    """``bytes_received`` handler: stop a robots.txt transfer once its cap is reached, keeping what arrived."""
    max_size = request.meta.get(ROBOTS_META_KEY)
    if max_size is None:
        return
    received = request.meta.get("rep_received", 0) + len(data)
    request.meta["rep_received"] = received
    if received >= max_size:
        raise StopDownload(fail=False)


class Fetcher(Protocol):
    async def fetch(self, origin: Located, url: str | None = None) -> FetchResult: ...


class RobotsFetcher:
    """Downloads one origin's robots.txt, following up to ``max_redirects`` redirects itself (SPEC 2.2)."""

    def __init__(self, download: Callable[[Request], Any], max_size: int, max_redirects: int) -> None:
        self.download = download
        self.max_size = max_size
        self.max_redirects = max_redirects

    async def fetch(self, origin: Located, url: str | None = None) -> FetchResult:
        """The final status/body or error; never raises for network or HTTP conditions. A chain that ends without
        a robots.txt says in ``refused`` where it pointed and why it stopped there (for the log). The chain starts
        at ``url`` (``scrapy-rep check`` of a draft such as ``/staging/robots.txt``), by default the origin's
        robots.txt."""
        url = origin.robots_url if url is None else url
        seen = {url}
        hop = 0
        while True:
            try:
                response: Response = await self.download(robots_request(url, self.max_size))
            except Exception as exc:  # every download failure is an outcome (SPEC 2.2 network errors)
                return FetchResult(error=type(exc).__name__, redirects=hop, url=url)
            location = response.headers.get(b"Location")
            if response.status not in REDIRECT_STATUSES or not location:
                return _result(response, self.max_size, hop)
            target, unfollowable = redirect_target(response.url, location)
            if unfollowable is not None:
                # A redirect we cannot follow is a redirect chain without a robots.txt: 404 semantics.
                where = "" if hop == 0 else f" from {shown(url)}"
                return FetchResult(error=BAD_REDIRECT, redirects=hop + 1, url=url,
                                   refused=f"redirect{where} to {shown(target)} refused: {unfollowable}")
            if target in seen:
                return FetchResult(error=REDIRECT_LOOP, redirects=hop + 1, url=url,
                                   refused=f"{shown(url)} -> {shown(target)} loops")
            if hop == self.max_redirects:
                # SPEC 2.2: past the maximum, treat as 404.
                return FetchResult(error=TOO_MANY_REDIRECTS, redirects=hop + 1, url=url,
                                   refused=f"{ordinal(hop + 1)} redirect, to {shown(target)}, past REP_MAX_REDIRECTS "
                                           f"{self.max_redirects}")
            seen.add(target)
            url = target
            hop += 1


def redirect_target(base: str, location: bytes) -> tuple[str, str | None]:
    """Where a ``Location`` points, and why it cannot be followed (None when it can): SPEC 2.2 follows http(s) URLs
    with a host only."""
    raw = location.decode("latin-1").strip()
    try:
        target = urljoin(base, raw)
        parts = urlsplit(target)
        host = parts.hostname
    except ValueError as exc:  # e.g. "Invalid IPv6 URL"
        return raw, f"not a valid URL ({exc})"
    if parts.scheme not in ("http", "https"):
        return target, "not http(s)"
    if not host:
        return target, "no host"
    return target, None


#: URLs named in log lines are cut to this many characters (a Location header can be kilobytes long).
SHOWN_URL_MAX = 200


def shown(url: str) -> str:
    """``url`` as log lines show it: cut at SHOWN_URL_MAX characters."""
    return url if len(url) <= SHOWN_URL_MAX else url[:SHOWN_URL_MAX] + "..."


def ordinal(number: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ``11th``, ``21st``..."""
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


def why_not_followed(response: Response) -> str | None:
    """Why a final 3xx response ended the chain (None for other statuses): SPEC 2.2 gives it 404 semantics."""
    if not 300 <= response.status < 400:
        return None
    if response.status in REDIRECT_STATUSES:
        return "no Location header to follow"
    return f"{response.status} is not a redirect followed (301, 302, 303, 307 and 308 are)"


def _result(response: Response, max_size: int, redirects: int) -> FetchResult:
    def header(name: bytes) -> str | None:
        value = response.headers.get(name)
        return value.decode("latin-1") if value is not None else None

    return FetchResult(
        status=response.status,
        body=response.body[:max_size],
        cache_control=header(b"Cache-Control"),
        retry_after=header(b"Retry-After"),
        redirects=redirects,
        url=response.url,
        refused=why_not_followed(response),
        response=response,
    )
