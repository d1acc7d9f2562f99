"""A raw-socket HTTP server on 127.0.0.1 (port 0) that a test controls byte by byte (issue 6 fault injection).

Unlike ``tests.servers.Site`` (a well-behaved twisted.web server with scripted replies), this speaks HTTP by hand so
that it can break it: send nothing, trickle, reset mid-headers, write invalid status lines, lie about
Content-Length, truncate chunked encoding, or stream an endless or huge body under back-pressure. Each request's
path is logged; ``route(path, *actions)`` scripts a path (several actions are used in turn, the last one repeats);
other paths get a small 200 page. Every connection is closed after its response (``Connection: close``).

Usage, inside the running reactor::

    server = RawServer().start()
    server.route("/robots.txt", silence())
    ... crawl server.url("/a") ...
    assert server.paths() == ["/robots.txt"]
    server.stop()
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from twisted.internet import reactor
from twisted.internet.interfaces import IDelayedCall, IListeningPort, IPullProducer
from twisted.internet.protocol import Factory, Protocol
from twisted.python.failure import Failure
from zope.interface import implementer

PAGE = b"<html><body>page</body></html>"

#: What the server does once a request's headers have arrived.
Action = Callable[["RawConnection"], None]


def head(status: str = "200 OK", headers: dict[str, str] | None = None, length: int | None = None) -> bytes:
    """A status line and headers, ``Connection: close`` always; ``length`` sets Content-Length."""
    lines = [f"HTTP/1.1 {status}", "Connection: close", *(f"{k}: {v}" for k, v in (headers or {}).items())]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def respond(body: bytes = PAGE, status: str = "200 OK", headers: dict[str, str] | None = None) -> Action:
    """A well-formed response, then close."""
    return send(head(status, headers, len(body)) + body)


def send(data: bytes, then: str = "close") -> Action:
    """Write ``data`` as it is, then ``close`` (FIN), ``reset`` (RST) or ``hang`` (keep the connection open)."""

    def act(conn: RawConnection) -> None:
        conn.write(data)
        conn.finish(then)

    return act


def silence() -> Action:
    """Accept the request and never answer (the client must time out)."""
    return lambda conn: None


def trickle(data: bytes, interval: float = 1.0) -> Action:
    """Write ``data`` one byte every ``interval`` seconds (reactor.callLater; stops when the client hangs up)."""

    def act(conn: RawConnection) -> None:
        def step(rest: bytes) -> None:
            if not rest or conn.lost:
                return
            conn.write(rest[:1])
            conn.later(interval, step, rest[1:])

        step(data)

    return act


def stream(first: bytes, chunks: Iterable[bytes]) -> Action:
    """Write ``first``, then ``chunks`` as fast as the client reads them (a pull producer: back-pressure, so a
    gigabyte stream costs the server one chunk of memory), then close."""

    def act(conn: RawConnection) -> None:
        conn.write(first)
        conn.produce(iter(chunks))

    return act


def endless(first: bytes, chunk: bytes = b"# more\n" * 1024) -> Action:
    """Write ``first`` then ``chunk`` forever, until the client hangs up."""
    return stream(first, itertools.repeat(chunk))


@implementer(IPullProducer)
class _Producer:
    def __init__(self, conn: RawConnection, chunks: Iterator[bytes]) -> None:
        self.conn = conn
        self.chunks = chunks

    def resumeProducing(self) -> None:
        chunk = next(self.chunks, None)
        if chunk is None:
            self.conn.transport.unregisterProducer()
            self.conn.finish("close")
        else:
            self.conn.write(chunk)

    def stopProducing(self) -> None:
        self.chunks = iter(())


class RawConnection(Protocol):
    """One client connection: reads the request head, logs it, runs the path's action."""

    def __init__(self, server: RawServer) -> None:
        self.server = server
        self.buffer = b""
        self.answered = False
        self.lost = False
        self.sent = 0
        self.calls: list[IDelayedCall] = []

    def dataReceived(self, data: bytes) -> None:
        self.buffer += data
        if self.answered or b"\r\n\r\n" not in self.buffer:
            return
        self.answered = True
        request_line = self.buffer.split(b"\r\n", 1)[0].split(b" ")
        path = request_line[1].decode("latin-1") if len(request_line) > 1 else ""
        self.server.connection_started(self, path)

    def write(self, data: bytes) -> None:
        if not self.lost:
            self.sent += len(data)
            self.server.bytes_sent += len(data)
            self.transport.write(data)

    def finish(self, how: str) -> None:
        if self.lost or how == "hang":
            return
        if how == "reset":
            self.transport.abortConnection()
        else:
            self.transport.loseConnection()

    def later(self, delay: float, fn: Callable[..., Any], *args: Any) -> None:
        self.calls.append(reactor.callLater(delay, fn, *args))  # type: ignore[attr-defined]

    def produce(self, chunks: Iterator[bytes]) -> None:
        self.transport.registerProducer(_Producer(self, chunks), False)

    def connectionLost(self, reason: Failure | None = None) -> None:
        self.lost = True
        for call in self.calls:
            if call.active():
                call.cancel()
        self.server.connections.discard(self)


@dataclass
class RawServer:
    """One listening port (one origin); see the module docstring."""

    routes: dict[str, list[Action]] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)
    connections: set[RawConnection] = field(default_factory=set)
    bytes_sent: int = 0
    port: IListeningPort | None = None

    def route(self, path: str, *actions: Action) -> RawServer:
        self.routes[path] = list(actions)
        return self

    def start(self) -> RawServer:
        factory = Factory.forProtocol(lambda: RawConnection(self))  # type: ignore[arg-type]
        self.port = reactor.listenTCP(0, factory, interface="127.0.0.1")  # type: ignore[attr-defined]
        return self

    def stop(self) -> None:
        for conn in list(self.connections):
            conn.transport.abortConnection()
        if self.port is not None:
            self.port.stopListening()

    @property
    def port_number(self) -> int:
        assert self.port is not None
        return int(self.port.getHost().port)

    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port_number}"

    def url(self, path: str) -> str:
        return self.origin() + path

    def paths(self) -> list[str]:
        return list(self.log)

    def hits(self, path: str) -> int:
        return self.log.count(path)

    def connection_started(self, conn: RawConnection, path: str) -> None:
        self.connections.add(conn)
        hit = self.hits(path)
        self.log.append(path)
        actions = self.routes.get(path) or [respond()]
        actions[min(hit, len(actions) - 1)](conn)


def refused_origin() -> str:
    """An origin on a loopback port nothing listens on (bound, then closed): connections are refused."""
    port = reactor.listenTCP(0, Factory(), interface="127.0.0.1")  # type: ignore[attr-defined]
    number = port.getHost().port
    port.stopListening()
    return f"http://127.0.0.1:{number}"
