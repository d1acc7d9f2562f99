"""Many origins behind one loopback port: an HTTP proxy that answers every request itself, by its target host.

Scrapy sends a request for an ``http://`` URL to an ``http://`` proxy (``meta["proxy"]``) as an absolute URI in the
request line (``GET http://site-00042.test/robots.txt HTTP/1.1``) with the target's ``Host`` header, on connections
pooled per proxy (Twisted's ``ProxyAgent``); no name is ever resolved. ``OriginsProxy`` does not forward: it answers
from the host name, so one listening port on 127.0.0.1 stands for any number of origins ``site-NNNNN.test``:

- ``/robots.txt`` of origin N is ``bodies[N % len(bodies)]``: the real corpus (``../shared/corpus/robots/``) taken
  round-robin, or ``BUILTIN_ROBOTS`` when the corpus is absent;
- the two ``page_paths`` of its file (one from the file's first Disallow rule when it has one) are small HTML pages;
- anything else, or a request that is not an absolute ``http://`` URI for a ``site-N.test`` host, is a 404.

Every request is logged as ``(host, path)`` in ``hits`` (path with its query, as received), so a test can count, and
the TCP connections open at once are counted as they open and close (``connections.peak``: what the crawler's
concurrency costs the server, the figure politeness is measured by). A plain (not proxied) ``GET /_hits`` answers a
JSON summary of the log and the connection peak, and clears both (the benchmark's way to read the counts of a server
in another process). ``robots_failures`` = N: each origin's first N robots.txt requests answer 503.

``ProxyEverything`` is the crawl's side: a downloader middleware putting ``meta["proxy"] = BROAD_PROXY`` on every
request. The robots.txt requests scrapy-rep makes go through the engine and every enabled downloader middleware
(docs/compatibility.md, "Proxies"), so they reach the proxy too, whatever this middleware's order.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.crawler import Crawler
from twisted.internet.interfaces import IListeningPort
from twisted.web import resource, server
from twisted.web.http import Request as TwistedRequest

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "robots"
HOST = re.compile(r"site-(\d+)\.test")
PAGE = b"<html><body>page</body></html>"
ROBOTS_HEADERS = {b"Content-Type": b"text/plain"}
PAGE_HEADERS = {b"Content-Type": b"text/html"}

#: Used when the corpus is absent: typical shapes (a `*` group, a group of our token, wildcards, allow-all, empty).
BUILTIN_ROBOTS: tuple[bytes, ...] = (
    b"User-agent: *\nDisallow: /private\nAllow: /private/ok\n",
    b"User-agent: *\nDisallow: /*.php$\nDisallow: /search?\n",
    b"User-agent: broadbot\nDisallow: /\n\nUser-agent: *\nDisallow: /admin\n",
    b"User-agent: broadbot\nAllow: /\n\nUser-agent: *\nDisallow: /\n",
    b"User-agent: *\nDisallow:\n",
    b"",
    b"# comments only\nSitemap: http://example.com/sitemap.xml\n",
    b"User-agent: otherbot\nDisallow: /\n",
)

_DISALLOW = re.compile(rb"^[ \t]*disallow[ \t]*:[ \t]*([^\s#]+)", re.IGNORECASE | re.MULTILINE)


def robots_bodies(directory: Path = CORPUS) -> tuple[list[bytes], str]:
    """The corpus files' bodies sorted by name, or ``BUILTIN_ROBOTS``; and a word saying which."""
    if directory.is_dir():
        bodies = [path.read_bytes() for path in sorted(directory.iterdir()) if path.is_file()]
        if bodies:
            return bodies, f"corpus ({len(bodies)} files)"
    return list(BUILTIN_ROBOTS), f"built-in ({len(BUILTIN_ROBOTS)} files)"


def host(n: int) -> str:
    return f"site-{n:05d}.test"


@cache
def page_paths(body: bytes) -> tuple[str, str]:
    """Two distinct page paths for an origin serving ``body``: the file's first Disallow pattern made concrete
    (``*`` -> ``x``, ``$`` dropped: often but not always disallowed for our token), else (no rule, or the rule
    names the robots.txt URL itself) ``/about.html``, and
    ``/broad/page.html``. Paths are in the form Scrapy sends them (``Request.url`` is canonicalised)."""
    first = "/about.html"
    match = _DISALLOW.search(body)
    if match:
        pattern = match.group(1).decode("utf-8", "replace").rstrip("$").replace("*", "x")
        first = pattern if pattern.startswith("/") else "/" + pattern
    paths = [_as_sent(first), _as_sent("/broad/page.html")]
    if paths[0] in (paths[1], "/robots.txt"):  # a page must be neither the other one nor the robots.txt URL
        paths[0] = _as_sent("/about.html")
    return paths[0], paths[1]


def _as_sent(path: str) -> str:
    """``path`` (with query) as Scrapy puts it on the wire for ``http://h.test`` + path."""
    parts = urlsplit(Request("http://h.test" + path).url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


class Connections:
    """How many TCP connections a server has open, and the most it had at once since ``reset``."""

    def __init__(self) -> None:
        self.open = 0
        self.peak = 0

    def opened(self) -> None:
        self.open += 1
        self.peak = max(self.peak, self.open)

    def closed(self) -> None:
        self.open -= 1

    def reset(self) -> None:
        self.peak = self.open


class CountingSite(server.Site):
    """A ``twisted.web.server.Site`` that counts its connections in ``connections``."""

    def __init__(self, root: resource.Resource, connections: Connections) -> None:
        super().__init__(root)
        self.connections = connections

    def buildProtocol(self, addr: Any) -> Any:
        channel = super().buildProtocol(addr)
        made, lost = channel.connectionMade, channel.connectionLost
        connections = self.connections

        def connection_made() -> None:
            connections.opened()
            made()

        def connection_lost(reason: Any) -> None:
            connections.closed()
            lost(reason)

        channel.connectionMade, channel.connectionLost = connection_made, connection_lost
        return channel


class OriginsProxy(resource.Resource):
    """The server; ``bodies`` are the robots.txt files given out round-robin to the origins."""

    isLeaf = True

    def __init__(self, bodies: Sequence[bytes], robots_failures: int = 0, robots_delay: float = 0.0) -> None:
        super().__init__()
        self.bodies = list(bodies)
        self.robots_failures = robots_failures
        self.robots_delay = robots_delay  # seconds before each robots.txt is answered (pages: at once)
        self.hits: list[tuple[str, str]] = []
        self.connections = Connections()
        self.port: IListeningPort | None = None

    def body_of(self, n: int) -> bytes:
        return self.bodies[n % len(self.bodies)]

    def url(self, n: int, path: str) -> str:
        return f"http://{host(n)}{path}"

    def pages(self, n: int) -> tuple[str, str]:
        return page_paths(self.body_of(n))

    # -- serving -------------------------------------------------------------------------------------------------

    def start(self) -> OriginsProxy:
        from twisted.internet import reactor  # here: importing this module must not install a reactor

        self.port = reactor.listenTCP(  # type: ignore[attr-defined]
            0, CountingSite(self, self.connections), interface="127.0.0.1"
        )
        return self

    @property
    def proxy_url(self) -> str:
        assert self.port is not None, "start() the proxy first"
        return f"http://127.0.0.1:{self.port.getHost().port}"

    async def stop(self) -> None:
        if self.port is not None:
            await self.port.stopListening()
            self.port = None

    def render_GET(self, request: TwistedRequest) -> bytes:
        if request.uri == b"/_hits":
            return self._summary(request)
        target = self.target(request)
        if target is None:
            return self._answer(request, 404, {}, b"not an origin of this proxy")
        host_header, path, n = target
        body = self.body_of(n)
        if path == "/robots.txt":
            if self.robots_failures and self.hits.count((host_header, path)) <= self.robots_failures:
                return self._answer(request, 503, {}, b"try later")
            if self.robots_delay:
                return self._later(request, 200, ROBOTS_HEADERS, body)
            return self._answer(request, 200, ROBOTS_HEADERS, body)
        if path in page_paths(body):
            return self._answer(request, 200, PAGE_HEADERS, PAGE)
        return self._answer(request, 404, {}, b"no such page")

    def target(self, request: TwistedRequest) -> tuple[str, str, int] | None:
        """A proxied request's (host, path with its query, origin number), logged in ``hits``; None when it is not an
        absolute ``http://`` URI for a ``site-N.test`` host."""
        parts = urlsplit(request.uri.decode("latin-1"))
        host_header = (request.getHeader("host") or "").split(":")[0]
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        self.hits.append((host_header, path))
        found = HOST.fullmatch(host_header)
        if parts.scheme != "http" or parts.hostname != host_header or found is None:
            return None
        return host_header, path, int(found.group(1))

    def _summary(self, request: TwistedRequest) -> bytes:
        robots = Counter(origin for origin, path in self.hits if path == "/robots.txt")
        pages = Counter(self.hits) - Counter({(origin, "/robots.txt"): count for origin, count in robots.items()})
        summary: dict[str, Any] = {
            "hits": len(self.hits), "robots": sum(robots.values()), "robots_origins": len(robots),
            "robots_max_per_origin": max(robots.values(), default=0), "pages": sum(pages.values()),
            "pages_max_per_url": max(pages.values(), default=0), "peak_connections": self.connections.peak,
        }
        self.hits.clear()
        self.connections.reset()
        return self._answer(request, 200, {b"Content-Type": b"application/json"}, json.dumps(summary).encode())

    def _later(self, request: TwistedRequest, status: int, headers: dict[bytes, bytes], body: bytes) -> Any:
        """The answer, ``robots_delay`` seconds from now (unless the client has gone)."""
        from twisted.internet import reactor

        gone: list[bool] = []
        request.notifyFinish().addErrback(lambda _: gone.append(True))

        def answer() -> None:
            if not gone:
                request.write(self._answer(request, status, headers, body))
                request.finish()

        reactor.callLater(self.robots_delay, answer)  # type: ignore[attr-defined]
        return server.NOT_DONE_YET

    @staticmethod
    def _answer(request: TwistedRequest, status: int, headers: dict[bytes, bytes], body: bytes) -> bytes:
        request.setResponseCode(status)
        for name, value in headers.items():
            request.setHeader(name, value)
        request.setHeader(b"Content-Length", str(len(body)).encode())
        return body


class ProxyEverything:
    """Downloader middleware: ``meta["proxy"] = BROAD_PROXY`` on every request (robots.txt requests included)."""

    def __init__(self, proxy: str) -> None:
        self.proxy = proxy

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ProxyEverything:
        proxy = crawler.settings.get("BROAD_PROXY")
        assert proxy, "set BROAD_PROXY to the OriginsProxy's proxy_url"
        return cls(proxy)

    def process_request(self, request: Request, spider: Any = None) -> None:
        request.meta["proxy"] = self.proxy
