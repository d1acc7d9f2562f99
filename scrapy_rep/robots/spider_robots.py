"""A spider's own request for an origin's robots.txt, answered from the plugin's copy (issue 12; SPEC 1.4, 2.1, 2.3).

Scrapy's ``SitemapSpider`` finds sitemaps by requesting ``.../robots.txt`` itself (``sitemap_urls``), and any spider
may request it. Sent on, that request would download the file a second time beside the plugin's own fetch. Instead
the middleware answers it with what the server said to the plugin: the request waits for the origin's entry exactly
as a page of the origin waits (parked, dropped at ``REP_HOLD_TIMEOUT``), then gets a ``TextResponse`` (``.text``
works) at the requested URL, with ``request`` set to the spider's request:

- a robots.txt this crawler downloaded: its final status (2xx) and body, and the headers of ``KEPT_HEADERS`` kept in
  memory beside the origin's state (``OriginState.robots_response``, read by ``kept_response``; never in the store's
  ``Entry``);
- a copy read from the shared store (fetched by another crawler), or one whose headers were not kept: status 200,
  ``Content-Type: text/plain`` and the stored body;
- a full allow (4xx, SPEC 2.2): its status (404 when the full allow came from a redirect dead end or an origin
  unreachable past ``REP_UNREACHABLE_ALLOW_AFTER``) and an empty body, as the plugin keeps no 4xx body.

Only the origin's own ``/robots.txt`` (no query) is answered, from that origin's entry: the target of another origin's
redirect is answered from its own origin's entry, never from the origin that redirected to it.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import ParseResult

from scrapy.http import Headers, Response, TextResponse
from scrapy.responsetypes import responsetypes

from ..stores import Entry, Outcome
from .fetch import RobotsFetcher

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.statscollectors import StatsCollector

    from .origin import Located
    from .policy import FetchResult
    from .state import OriginState

#: The response headers kept for the answer; the others (Content-Encoding: the body is already decoded; cookies;
#: lengths) are not.
KEPT_HEADERS = (b"Content-Type", b"Content-Language", b"Last-Modified", b"ETag", b"Cache-Control", b"Expires")
#: The headers of a copy whose own headers are unknown (read from the store).
UNKNOWN_HEADERS: dict[bytes, list[bytes]] = {b"Content-Type": [b"text/plain"]}
#: The status of a full allow whose own status is not a 4xx (redirect dead end, unreachable past the limit).
NOT_FOUND = 404
#: In the answer's ``flags`` (shown in Scrapy's "Crawled (200) <GET ...> ['scrapy-rep copy']" line).
FLAG = "scrapy-rep copy"


@dataclass(frozen=True, slots=True)
class KeptResponse:
    """The final response of this crawler's last robots.txt download that gave a copy (2xx) or a full allow (4xx):
    its status, kept headers (name, value) in order, and a digest of its body (the body is the entry's, compressed
    there). Made when needed from what the origin's state keeps (``kept_response``)."""

    status: int
    headers: tuple[tuple[bytes, bytes], ...]
    digest: bytes

    def header_dict(self) -> dict[bytes, list[bytes]]:
        """The kept headers as ``Headers`` takes them (name -> its values)."""
        headers: dict[bytes, list[bytes]] = {}
        for name, value in self.headers:
            headers.setdefault(name, []).append(value)
        return headers

    def gave(self, body: bytes) -> bool:
        """Whether this response's body was ``body``."""
        return self.digest == body_digest(body)

    def packed(self) -> Kept:
        """This response as ``OriginState.robots_response`` holds it (``unpack`` reads it back); every header name
        is one of ``KEPT_HEADERS``."""
        parts = [_HEAD.pack(self.status, self.digest)]
        for name, value in self.headers:
            parts += (_HEADER.pack(KEPT_HEADERS.index(name), len(value)), value)
        return b"".join(parts)

    @classmethod
    def unpack(cls, kept: Kept) -> KeptResponse:
        status, digest = _HEAD.unpack_from(kept)
        headers, at = [], _HEAD.size
        while at < len(kept):
            name, size = _HEADER.unpack_from(kept, at)
            at += _HEADER.size
            headers.append((KEPT_HEADERS[name], kept[at : at + size]))
            at += size
        return cls(status, tuple(headers), digest)


#: What ``OriginState.robots_response`` holds: a ``KeptResponse`` packed into one bytes object (``_HEAD``, then per
#: header ``_HEADER`` and its value). A broad crawl keeps one per origin: ~70 bytes, where the tuples of ints and
#: bytes before were ~260 (issue 21), and not an object the garbage collector walks.
Kept = bytes
_HEAD = struct.Struct(">H16s")  # status, body digest (``body_digest``)
_HEADER = struct.Struct(">BI")  # a header: its name's index in KEPT_HEADERS, its value's length


def kept_response(state: OriginState | None) -> KeptResponse | None:
    """The response kept for ``state``'s origin, if any."""
    kept: Kept | None = state.robots_response if state is not None else None
    return KeptResponse.unpack(kept) if kept is not None else None


def body_digest(body: bytes) -> bytes:
    return hashlib.blake2b(body, digest_size=16).digest()


def is_own_robots_url(parts: ParseResult) -> bool:
    """The URL is its origin's robots.txt as the plugin fetches it (SPEC 1.1): no parameters, no query."""
    return not parts.params and not parts.query


def is_kept_status(status: int | None) -> bool:
    """A status whose response the answer may use: not a 5xx or 429, after which the previous copy stays in effect
    (SPEC 2.4), nor a network error."""
    return status is not None and status < 500 and status != 429


def is_full_allow_status(status: int | None) -> bool:
    return status is not None and 400 <= status < 500 and status != 429


class KeepingFetcher:
    """A ``RobotsFetcher`` per fetch, sending each hop with ``send(request, origin)`` (``origin``: the key of the
    origin whose fetch it is, for ``places``), that also keeps the final response's status and headers on the
    origin's state."""

    def __init__(self, send: Callable[[Request, str], Any], max_size: int, max_redirects: int,
                 state_of: Callable[[str], OriginState | None]) -> None:
        self.send = send
        self.max_size = max_size
        self.max_redirects = max_redirects
        self.state_of = state_of

    async def fetch(self, origin: Located, url: str | None = None) -> FetchResult:
        final: list[Response] = []

        async def download(request: Request) -> Response:
            response: Response = await self.send(request, origin.key)
            final[:] = [response]
            return response

        result = await RobotsFetcher(download, self.max_size, self.max_redirects).fetch(origin, url)
        state = self.state_of(origin.key)
        if state is not None and final and result.status is not None and is_kept_status(result.status):
            got = final[0].headers
            headers = tuple((name, value) for name in KEPT_HEADERS if name in got for value in got.getlist(name))
            state.robots_response = KeptResponse(result.status, headers, body_digest(result.body)).packed()
        return result


def is_own_copy(entry: Entry, kept: KeptResponse | None) -> bool:
    """``kept`` is the download that gave ``entry``'s copy (not an older one, nor another crawler's)."""
    return kept is not None and 200 <= kept.status < 300 and kept.gave(entry.body)


def full_allow_status(entry: Entry, kept: KeptResponse | None) -> int:
    """The 4xx that made the full allow: the entry's, else (a refresh failed since) the kept response's, else 404."""
    if is_full_allow_status(entry.status) and entry.status is not None:
        return entry.status
    if kept is not None and is_full_allow_status(kept.status):
        return kept.status
    return NOT_FOUND


def answer_from_copy(request: Request, entry: Entry, state: OriginState | None, stats: StatsCollector) -> Response:
    """The response to a spider's own request for its origin's robots.txt, from ``entry`` (a usable one: rules or a
    full allow; held origins never get here, their requests wait)."""
    kept = kept_response(state)
    if entry.outcome is Outcome.RULES and kept is not None and is_own_copy(entry, kept):
        kind, status, headers, body = "fetched", kept.status, kept.header_dict(), entry.body
    elif entry.outcome is Outcome.RULES:
        kind, status, headers, body = "stored", 200, UNKNOWN_HEADERS, entry.body
    else:
        kind, status, headers, body = "allow_all", full_allow_status(entry, kept), UNKNOWN_HEADERS, b""
    stats.inc_value("rep/robots/answered_from_copy")
    stats.inc_value(f"rep/robots/answered_from_copy/{kind}")
    kept_headers = Headers(headers)
    cls = responsetypes.from_args(headers=kept_headers, url=request.url, body=body)
    if not issubclass(cls, TextResponse):
        cls = TextResponse  # SitemapSpider and users read ``response.text``
    return cls(url=request.url, status=status, headers=kept_headers, body=body, request=request, flags=[FLAG])
