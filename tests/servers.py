"""Scriptable HTTP test servers on 127.0.0.1 (port 0), for real Scrapy crawls in tests and benchmarks.

One ``Site`` is one listening port, i.e. one origin per host name (``127.0.0.1`` and ``localhost`` reach the same
port but are different origins, SPEC 1.3). Each path answers with a scripted ``Reply`` (status, headers, body,
hang, reset mid-body, gate); a path with several replies gives them in turn and then repeats the last one. Every
request is logged as a ``Hit`` so tests can assert e.g. "robots.txt was downloaded exactly once".

Usage (inside a running Twisted reactor, e.g. a pytest-twisted test)::

    site = Site(default=Reply(body=b"<html>page</html>"))
    site.route("/robots.txt", Reply(body=b"User-agent: *\\nDisallow: /private"))
    site.start()
    ... crawl site.url("/a"), site.url("/b", host="localhost") ...
    assert site.hits_for("/robots.txt") == 1
    await site.stop()

Replies may also be computed: ``site.route("/x", lambda request: Reply(...))``.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from twisted.internet import defer, reactor
from twisted.internet.interfaces import IListeningPort
from twisted.web import resource, server
from twisted.web.http import Request

PAGE = b"<html><body>page</body></html>"


@dataclass(frozen=True)
class Reply:
    """What the server answers.

    ``hang``: send nothing, ever (the client times out). ``reset_after``: send the headers with a Content-Length of
    the full body, then only ``reset_after`` bytes of it and abort the connection. ``gate``: a Deferred the reply
    waits for before answering (the test releases it). ``chunk``: write the body in pieces of this many bytes.
    """

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False
    reset_after: int | None = None
    gate: defer.Deferred[Any] | None = None
    chunk: int | None = None


def robots(text: str, **kwargs: Any) -> Reply:
    """A 200 text/plain robots.txt reply."""
    return Reply(body=text.encode("utf-8"), headers={"Content-Type": "text/plain", **kwargs.pop("headers", {})},
                 **kwargs)


def redirect(location: str, status: int = 301) -> Reply:
    return Reply(status=status, headers={"Location": location})


def gzipped(body: bytes, **kwargs: Any) -> Reply:
    """``body`` gzip-compressed with ``Content-Encoding: gzip``."""
    return Reply(body=gzip.compress(body), headers={"Content-Encoding": "gzip", "Content-Type": "text/plain"},
                 **kwargs)


@lru_cache(maxsize=4)
def gzip_bomb(inflated_size: int, head: bytes = b"User-agent: *\n", line: bytes = b"Disallow: /bomb\n") -> bytes:
    """A gzip stream that inflates to about ``inflated_size`` bytes: ``head`` then ``line`` repeated (~1000:1)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = line * (1_048_576 // len(line))
    parts, left = [compressor.compress(head)], inflated_size
    while left > 0:
        piece = block[:left]
        parts.append(compressor.compress(piece))
        left -= len(piece)
    parts.append(compressor.flush())
    return b"".join(parts)


@dataclass(frozen=True)
class Hit:
    """One request the server received: its path (with query), Host header, method, arrival time and headers."""

    path: str
    host: str
    method: str
    at: float
    headers: dict[str, str] = field(default_factory=dict)


Route = Reply | Callable[[Request], Reply]


class Site(resource.Resource):
    """One scriptable origin. Unscripted paths get ``default`` (a small 200 page); unscripted ``/robots.txt``
    gets a 404 unless ``robots_default`` is given."""

    isLeaf = True
    #: The scheme of ``origin()`` and ``url()`` (``tests.tls.TLSSite``: https).
    scheme = "http"

    def __init__(self, default: Reply | None = None, robots_default: Reply | None = None) -> None:
        super().__init__()
        self.default = default or Reply(body=PAGE, headers={"Content-Type": "text/html"})
        self.routes: dict[str, list[Route]] = {"/robots.txt": [robots_default or Reply(status=404, body=b"nope")]}
        self.hits: list[Hit] = []
        self.sent: dict[str, int] = {}  # path -> body bytes written by chunked replies (to see a transfer stop)
        self.on_hit: list[Callable[[Hit], None]] = []
        self.port: IListeningPort | None = None
        self._port_number = 0

    # -- scripting -----------------------------------------------------------------------------------------------

    def route(self, path: str, *replies: Route) -> Site:
        """Answer ``path`` with ``replies`` in turn, then the last one forever."""
        self.routes[path] = list(replies)
        return self

    def start(self, port: int = 0) -> Site:
        """Listen on 127.0.0.1:``port`` (0: a free port; a fixed one raises CannotListenError when taken)."""
        self.port = self._listen(port)
        self._port_number = int(self.port.getHost().port)
        return self

    def _listen(self, port: int) -> IListeningPort:
        """Plain HTTP; ``tests.tls.TLSSite`` listens with TLS."""
        listening: IListeningPort = reactor.listenTCP(  # type: ignore[attr-defined]
            port, server.Site(self), interface="127.0.0.1")
        return listening

    async def stop(self) -> None:
        if self.port is not None:
            await self.port.stopListening()
            self.port = None

    # -- addresses and assertions --------------------------------------------------------------------------------

    @property
    def port_number(self) -> int:
        assert self._port_number, "start() the site first"
        return self._port_number

    def origin(self, host: str = "127.0.0.1", scheme: str | None = None) -> str:
        return f"{scheme or self.scheme}://{host}:{self.port_number}"

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"{self.origin(host)}{path}"

    def hits_for(self, path: str, host: str | None = None) -> int:
        """How many requests for ``path`` arrived (optionally only those with this Host name)."""
        return sum(1 for hit in self.hits if hit.path == path and (host is None or hit.host.split(":")[0] == host))

    def paths(self) -> list[str]:
        return [hit.path for hit in self.hits]

    # -- serving -------------------------------------------------------------------------------------------------

    def render(self, request: Request) -> bytes | int:
        path = request.uri.decode("latin-1")
        headers = {name.decode("latin-1").lower(): values[0].decode("latin-1")
                   for name, values in request.requestHeaders.getAllRawHeaders()}
        hit = Hit(path, headers.get("host", ""), request.method.decode(), reactor.seconds(),  # type: ignore[attr-defined]
                  headers)
        self.hits.append(hit)
        for callback in self.on_hit:
            callback(hit)
        reply = self._reply_for(path.split("?")[0], request)
        if reply.gate is not None:
            reply.gate.addCallback(lambda _: self._answer(request, reply))
        else:
            self._answer(request, reply)
        return server.NOT_DONE_YET

    def _reply_for(self, path: str, request: Request) -> Reply:
        routes = self.routes.get(path)
        if not routes:
            return self.default
        route = routes.pop(0) if len(routes) > 1 else routes[0]
        return route(request) if callable(route) else route

    def _write_in_chunks(self, request: Request, body: bytes, size: int) -> None:
        """Write ``body`` a piece per reactor turn, stopping when the client goes away (a capped transfer)."""
        path = request.uri.decode("latin-1")

        def write(offset: int) -> None:
            if request.finished or request._disconnected:  # type: ignore[attr-defined]
                return
            request.write(body[offset: offset + size])
            self.sent[path] = self.sent.get(path, 0) + len(body[offset: offset + size])
            if offset + size >= len(body):
                request.finish()
            else:
                reactor.callLater(0.001, write, offset + size)  # type: ignore[attr-defined]

        write(0)

    def _answer(self, request: Request, reply: Reply) -> None:
        if reply.hang or request._disconnected:  # type: ignore[attr-defined]
            return
        request.setResponseCode(reply.status)
        for name, value in reply.headers.items():
            request.setHeader(name, value)
        request.setHeader("Content-Length", str(len(reply.body)))
        if reply.reset_after is not None:
            request.write(reply.body[: reply.reset_after])
            request.channel.transport.abortConnection()
        elif reply.chunk:
            self._write_in_chunks(request, reply.body, reply.chunk)
        else:
            request.write(reply.body)
            request.finish()


async def stop_all(sites: Iterable[Site]) -> None:
    for site in sites:
        await site.stop()
