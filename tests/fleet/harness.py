"""The fleet tests' harness: origin servers in the test process that log who fetched what and how many page requests
were in flight at once, worker processes (``python -m scrapy crawl fleet`` with the example project's fleet profile)
whose log lines the tests wait on, and an event hub so that every wait is on an event (a server hit, a log line, a
process exit) with a deadline, never a sleep.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from html import escape
from pathlib import Path
from typing import Any

from twisted.internet import defer, protocol, reactor, task
from twisted.internet.error import ProcessDone, ProcessTerminated
from twisted.python.failure import Failure
from twisted.web.http import Request

from tests.servers import PAGE, Hit, Reply, Route, Site

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "example_project"

#: The fleet's store: the bare word, reusing scrapy-redis's REDIS_URL (what docs/fleet.md and the profile use).
STORE = "redis"
RULES = "User-agent: *\nDisallow: /private\n"
#: The prefix of the fleet spider's final stats line (example_project/example_project/fleet/spiders.py).
STATS_LINE = "fleet worker stats: "
START_URLS_KEY = "fleet:start_urls"
REQUESTS_KEY = "fleet:requests"
#: How long a page answer takes at the servers: the servers' behaviour, so that simultaneous requests overlap.
PAGE_DELAY = 0.05
#: The reactor, untyped: Twisted's interfaces (zope) defeat mypy without the mypy-zope plugin.
REACTOR: Any = reactor


def now() -> float:
    """The reactor's time (that of the servers' ``Hit.at``)."""
    seconds: float = REACTOR.seconds()
    return seconds


class Events:
    """Waits on conditions re-checked whenever something happens (a hit, a log line, an exit), each with a deadline
    after which the test fails saying what it waited for."""

    def __init__(self) -> None:
        self._waits: list[tuple[Callable[[], bool], defer.Deferred[None]]] = []

    def notify(self) -> None:
        for wait in list(self._waits):
            predicate, deferred = wait
            if wait in self._waits and predicate():
                self._waits.remove(wait)
                deferred.callback(None)

    async def until(self, predicate: Callable[[], bool], timeout: float, what: str | Callable[[], str]) -> None:
        """Wait until ``predicate()``; past ``timeout`` fail saying ``what`` (a callable: evaluated then)."""
        if predicate():
            return
        deferred: defer.Deferred[None] = defer.Deferred()
        wait = (predicate, deferred)
        self._waits.append(wait)

        def expire() -> None:
            if wait in self._waits:
                self._waits.remove(wait)
                said = what() if callable(what) else what
                deferred.errback(AssertionError(f"not within {timeout} s: {said}"))

        timer = REACTOR.callLater(timeout, expire)
        try:
            await deferred
        finally:
            if timer.active():
                timer.cancel()


class Origins:
    """Origin servers (``tests.servers.Site``), each on its own loopback address (127.0.0.2, .3, ...: its own host
    name, hence its own Scrapy download slot), whose page answers take ``PAGE_DELAY``. Counts the page requests (not
    robots.txt) in flight, globally and per origin, and their peaks."""

    def __init__(self, events: Events) -> None:
        self.events = events
        self.sites: list[Site] = []
        self.hosts: dict[int, str] = {}  # id(site) -> its address
        self.in_flight = 0
        self.peak = 0
        self.site_in_flight: Counter[int] = Counter()
        self.site_peak: Counter[int] = Counter()

    def add(self, robots: Iterable[Route], pages: Iterable[str], delay: float = PAGE_DELAY,
            links: Callable[[str], Iterable[str]] | None = None, after: defer.Deferred[None] | None = None) -> Site:
        """An origin serving ``robots`` at /robots.txt and ``pages``: ``PAGE``, or with ``links`` an HTML page whose
        ``<a href>`` are ``links(path)`` (hrefs as given). With ``after``, a page answer waits for it to fire (the
        test fires it), then ``delay``."""
        host = f"127.0.0.{len(self.sites) + 2}"
        site = Site()
        port: Any = REACTOR.listenTCP(0, _server_site(site), interface=host)
        site.port = port
        site._port_number = int(port.getHost().port)
        self.hosts[id(site)] = host
        site.route("/robots.txt", *robots)
        for path in pages:
            body = None if links is None else page_with_links(links(path))
            site.route(path, self._page(site, delay, body, after))
        site.on_hit.append(lambda hit: self.events.notify())
        self.sites.append(site)
        return site

    def _page(self, site: Site, delay: float, body: bytes | None = None,
              after: defer.Deferred[None] | None = None) -> Callable[[Request], Reply]:
        def reply(request: Request) -> Reply:
            self.in_flight += 1
            self.site_in_flight[id(site)] += 1
            self.peak = max(self.peak, self.in_flight)
            self.site_peak[id(site)] = max(self.site_peak[id(site)], self.site_in_flight[id(site)])

            def done(_: object) -> None:
                self.in_flight -= 1
                self.site_in_flight[id(site)] -= 1

            gate = task.deferLater(REACTOR, delay, lambda: None) if after is None else _delayed_after(after, delay)
            gate.addCallback(done)
            return Reply(body=PAGE if body is None else body, headers={"Content-Type": "text/html"}, gate=gate)

        return reply

    def url(self, site: Site, path: str) -> str:
        return f"http://{self.hosts[id(site)]}:{site.port_number}{path}"

    def origin(self, site: Site) -> str:
        return f"http://{self.hosts[id(site)]}:{site.port_number}"

    def stop(self) -> None:
        for site in self.sites:
            port: Any = site.port
            if port is not None:
                port.stopListening()
                site.port = None


def _delayed_after(after: defer.Deferred[None], delay: float) -> defer.Deferred[None]:
    """A Deferred firing ``delay`` seconds after ``after`` fires (``after``'s result passed on unchanged)."""
    gate: defer.Deferred[None] = defer.Deferred()

    def go(result: object) -> object:
        task.deferLater(REACTOR, delay, lambda: None).chainDeferred(gate)
        return result

    after.addCallback(go)
    return gate


def page_with_links(hrefs: Iterable[str]) -> bytes:
    """An HTML page whose only content is one ``<a href>`` per href, in order."""
    anchors = "".join(f'<a href="{escape(href)}">{escape(href)}</a>\n' for href in hrefs)
    return f"<html><body>\n{anchors}</body></html>".encode()


def _server_site(site: Site) -> Any:
    from twisted.web import server

    factory: Any = server.Site
    return factory(site)


def worker_of(hit: Hit) -> str:
    """The worker that sent a request: each worker's User-Agent names it (``examplebot/1.0 (+worker-2)``)."""
    match = re.search(r"\+(worker-\d+)\)", hit.headers.get("user-agent", ""))
    return match.group(1) if match else "?"


def page_hits(sites: Iterable[Site]) -> list[tuple[Site, Hit]]:
    return [(site, hit) for site in sites for hit in site.hits if hit.path != "/robots.txt"]


#: How often (real seconds) ``wait_exit`` asks Twisted to reap a worker that may have exited unnoticed.
REAP_INTERVAL = 0.5
#: How often (real seconds) ``interrupt`` looks whether a worker is idle in its event loop.
IDLE_POLL_INTERVAL = 0.02


class Worker(protocol.ProcessProtocol):
    """One ``scrapy crawl fleet`` process of the example project's fleet profile, its log kept line by line."""

    def __init__(self, name: str, events: Events, redis_url: str, settings: dict[str, Any],
                 spider_args: dict[str, str] | None = None, spider: str = "fleet",
                 settings_module: str = "example_project.fleet_settings") -> None:
        self.name = name
        self.events = events
        self.lines: list[str] = []
        self._partial = {1: b"", 2: b""}
        self.ended = False
        self.exit_code: int | None = None
        self.exit_signal: int | None = None
        self.pid: int | None = None
        self.argv = [sys.executable, "-m", "scrapy", "crawl", spider]
        for key, value in {"LOG_LEVEL": "INFO", "USER_AGENT": f"examplebot/1.0 (+{name})", **settings}.items():
            self.argv += ["-s", f"{key}={value}"]
        for key, value in (spider_args or {}).items():
            self.argv += ["-a", f"{key}={value}"]
        self.env = {**os.environ, "SCRAPY_SETTINGS_MODULE": settings_module, "REDIS_URL": redis_url,
                    "PYTHONPATH": os.pathsep.join([str(PROJECT), str(ROOT)])}

    def start(self) -> Worker:
        transport = REACTOR.spawnProcess(self, sys.executable, self.argv, env=self.env,
                                         path=str(PROJECT))
        self.pid = transport.pid
        return self

    # -- process events ------------------------------------------------------------------------------------------

    def childDataReceived(self, fd: int, data: bytes) -> None:
        lines = (self._partial.get(fd, b"") + data).split(b"\n")
        self._partial[fd] = lines.pop()
        self.lines.extend(line.decode(errors="replace") for line in lines)
        self.events.notify()

    def processEnded(self, reason: Failure) -> None:
        for fd, rest in self._partial.items():
            if rest:
                self.lines.append(rest.decode(errors="replace"))
                self._partial[fd] = b""
        if isinstance(reason.value, ProcessDone | ProcessTerminated):
            self.exit_code = reason.value.exitCode
            self.exit_signal = reason.value.signal
        self.ended = True
        self.events.notify()

    # -- control and inspection ----------------------------------------------------------------------------------

    def signal(self, name: str) -> None:
        """``INT`` (Scrapy's graceful shutdown, once) or ``KILL``."""
        assert self.transport is not None and not self.ended, f"{self.name} is not running"
        transport: Any = self.transport
        transport.signalProcess(name)

    async def interrupt(self, timeout: float = 10) -> None:
        """One SIGINT (Scrapy's graceful shutdown), sent once the worker's main thread is idle in its event loop
        (``/proc/<pid>/wchan`` is ``do_epoll_wait``). Scrapy 2.13 to 2.16 log inside their SIGINT handler (2.19 does
        not): a signal landing while the worker writes a log line loses the shutdown (seen on Scrapy 2.13.2:
        "reentrant call inside <_io.BufferedWriter name='<stderr>'>"), as it would lose a user's Ctrl-C. Where /proc
        has no wchan, at once."""
        wchan = Path(f"/proc/{self.pid}/wchan")

        def idle() -> bool:
            try:
                return self.ended or wchan.read_text() == "do_epoll_wait"
            except OSError:
                return True

        poll = task.LoopingCall(self.events.notify)
        poll.start(IDLE_POLL_INTERVAL, now=False)
        try:
            await self.events.until(idle, timeout, f"{self.name} idle in its event loop")
        finally:
            poll.stop()
        self.signal("INT")

    def saw(self, text: str) -> bool:
        return any(text in line for line in self.lines)

    async def wait_line(self, text: str, timeout: float) -> None:
        await self.events.until(lambda: self.saw(text) or self.ended, timeout, f"{self.name} logs {text!r}")
        assert self.saw(text), f"{self.name} exited without logging {text!r}:\n{self.log_tail()}"

    async def wait_exit(self, timeout: float) -> int | None:
        """Wait for the worker's exit. While waiting, ask Twisted every REAP_INTERVAL to reap it (a guard: one CI run
        on Twisted 21.7 reported a SIGINTed worker as still running after 30 s, cause not established; a missed
        SIGCHLD would look so, and the log at the deadline now tells)."""
        reaper = task.LoopingCall(self._reap)
        reaper.start(REAP_INTERVAL, now=False)
        try:
            await self.events.until(lambda: self.ended, timeout,
                                    lambda: f"{self.name} exits by itself; its log at the deadline:\n{self.log_tail()}")
        finally:
            reaper.stop()
        return self.exit_code

    def _reap(self) -> None:
        transport: Any = self.transport
        if not self.ended and transport is not None and transport.pid is not None:
            transport.reapProcess()  # waitpid(WNOHANG): processEnded if it has exited, nothing otherwise

    def stats(self) -> dict[str, Any]:
        """The final stats line the fleet spider logs (``{}`` when there is none, e.g. after SIGKILL)."""
        for line in reversed(self.lines):
            if STATS_LINE in line:
                parsed: dict[str, Any] = json.loads(line.split(STATS_LINE, 1)[1])
                return parsed
        return {}

    def stat(self, key: str) -> int:
        return int(self.stats().get(key, 0))

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.lines[-lines:])

    def kill_if_running(self) -> None:
        transport: Any = self.transport
        if not self.ended and transport is not None:
            transport.signalProcess("KILL")


def scrapy_stat(lines: list[str], key: str) -> int:
    """A stat from Scrapy's own ``Dumping Scrapy stats`` block (for spiders other than ``fleet``)."""
    for line in reversed(lines):
        match = re.search(rf"'{re.escape(key)}': (\d+)", line)
        if match:
            return int(match.group(1))
    return 0
