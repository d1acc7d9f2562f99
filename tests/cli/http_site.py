"""A real local HTTP server for the CLI's tests (the CLI fetches with urllib, outside any reactor): a
``ThreadingHTTPServer`` on 127.0.0.1 (a free port) serving a test's routes, recording each request."""

from __future__ import annotations

import socket
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

#: path -> (status, headers, body); read per request, so a test may change it while serving.
Routes = dict[str, tuple[int, list[tuple[str, str]], bytes]]


@dataclass
class Site:
    base: str
    routes: Routes
    requests: list[tuple[str, str]] = field(default_factory=list)  # (path, User-Agent) as received

    def paths(self) -> Counter[str]:
        return Counter(path for path, _ in self.requests)


@contextmanager
def serve(routes: Routes) -> Iterator[Site]:
    """Serve ``routes`` (an unknown path: 404) until the block ends; the server is shut down after it."""
    served = Site("", routes)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            served.requests.append((self.path, self.headers.get("User-Agent", "")))
            status, headers, body = served.routes.get(self.path, (404, [("Content-Type", "text/plain")], b"not found"))
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    served.base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def closed_port() -> int:
    with socket.socket() as sock:  # a port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
