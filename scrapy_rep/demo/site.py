"""The demo site: several origins on 127.0.0.1, each showing one robots.txt behaviour of SPEC 2.

Every origin is its own listening port (SPEC 1.2: a different port is a different origin). The site records every
request it serves (``DemoSite.hits``), so the report states what actually reached the server, not what a spider
believes it sent. Each page declares what a crawler identifying as ``examplebot`` should see (``Page.expect``); the
``--compare`` table is measured against that.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from typing import Any

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.web.resource import Resource
from twisted.web.server import Request, Site

#: The token the demo's expectations are written for (the ``catalog`` spider's ``REP_USER_AGENT``).
TOKEN = "examplebot"

CRAWL = "crawl"
FORBIDDEN = "forbidden"
HELD = "held"


@dataclass(frozen=True, slots=True)
class Page:
    """A page of an origin and what should happen to it: ``crawl``, ``forbidden`` (by ``why``) or ``held``."""

    path: str
    expect: str
    why: str = ""


@dataclass(frozen=True, slots=True)
class Reply:
    """What the server answers to one request."""

    status: int
    body: bytes = b""
    location: str = ""


@dataclass(frozen=True, slots=True)
class Hit:
    """One request the site served."""

    origin: str
    path: str
    status: int
    user_agent: str
    at: float


#: Answers a robots.txt request: (the site, 1-based number of this robots.txt fetch on the origin) -> reply.
RobotsBehaviour = Callable[["DemoSite", int], Reply]


@dataclass(frozen=True, slots=True)
class OriginSpec:
    """One origin of the demo: what it shows, its robots.txt behaviour, its pages and any extra files it serves."""

    name: str
    shows: str
    robots: RobotsBehaviour
    pages: tuple[Page, ...]
    extra: dict[str, bytes] = field(default_factory=dict)
    robots_fetch: tuple[tuple[str, str], ...] = ()
    """The (origin, path) requests that make up its robots.txt fetch (redirect hops), when not just /robots.txt."""

    def robots_locations(self) -> tuple[tuple[str, str], ...]:
        return self.robots_fetch or ((self.name, "/robots.txt"),)


def _text(body: str) -> Reply:
    return Reply(200, body.encode())


RULES_ROBOTS = """\
# The demo's "rules" origin: SPEC 2.2, 2xx: the file is obeyed.
User-agent: *
Disallow: /private/
Allow: /private/press-kit
Disallow: /*.pdf$
"""

REDIRECT_TARGET = """\
# Reached through three redirects, the last one to another origin: obeyed for the original origin (SPEC 2.2, 3xx).
User-agent: *
Disallow: /drafts/
"""

REDIRECT_TARGET_PATH = "/shared/robots-for-redirect.txt"
SITEMAP_PATH = "/sitemap.xml"

FLAKY_ROBOTS = """\
# Served after three 503 answers (SPEC 2.2, 5xx: temporary full disallow, then recovery).
User-agent: *
Disallow: /checkout/
"""

AGENTS_ROBOTS = """\
# One group per crawler (SPEC 6.2): examplebot follows its own group, never the * group.
User-agent: *
Disallow: /

User-agent: examplebot
Disallow: /members/

User-agent: examplebot-news
Allow: /
Crawl-delay: 0.5
"""

#: How many times the ``flaky`` origin answers 503 before it serves its robots.txt. Scrapy's built-in middleware
#: retries twice (RETRY_TIMES), so three failures outlast it.
FLAKY_FAILURES = 3
OVERSIZED_CAP = 512_000
#: Redirects on the ``redirect`` origin that the demo crawl never meets: cases for ``scrapy-rep check`` URLs (a loop:
#: more than 5 redirects; a redirect to a local file, which must not be read).
CHECK_REDIRECTS = {"/robots-loop.txt": "/robots-loop.txt", "/robots-to-file.txt": "file:///etc/hostname"}


def oversized_robots() -> bytes:
    """A robots.txt past the 512,000-byte cap (SPEC 4.4): a rule at the top, one past the cap."""
    head = b"# More than 500 KiB: only the first 512,000 bytes are read (SPEC 4.4).\nUser-agent: *\nDisallow: /admin/\n"
    filler = b"# " + b"-" * 97 + b"\n"
    padding = filler * ((OVERSIZED_CAP - len(head)) // len(filler) + 10)
    return head + padding + b"Disallow: /beyond-the-cap/\n"


def _rules(site: DemoSite, fetch: int) -> Reply:
    return _text(RULES_ROBOTS + f"\nSitemap: {site.url('rules', SITEMAP_PATH)}\n")


def _missing(site: DemoSite, fetch: int) -> Reply:
    return Reply(404, b"<h1>404 Not Found</h1>")


def _flaky(site: DemoSite, fetch: int) -> Reply:
    if fetch <= FLAKY_FAILURES:
        return Reply(503, b"<h1>503 Service Unavailable</h1>")
    return _text(FLAKY_ROBOTS)


def _down(site: DemoSite, fetch: int) -> Reply:
    return Reply(503, b"<h1>503 Service Unavailable</h1>")


def _redirect(site: DemoSite, fetch: int) -> Reply:
    return Reply(301, location="/robots-moved.txt")


def _oversized(site: DemoSite, fetch: int) -> Reply:
    return Reply(200, oversized_robots())


def _agents(site: DemoSite, fetch: int) -> Reply:
    return _text(AGENTS_ROBOTS)


ORIGINS: tuple[OriginSpec, ...] = (
    OriginSpec(
        "rules",
        "200 with rules",
        _rules,
        (
            Page("/", CRAWL),
            Page("/about", CRAWL),
            Page("/private/accounts", FORBIDDEN, "disallow: /private/"),
            Page("/private/press-kit", CRAWL, "allow: /private/press-kit wins (longer)"),
            Page("/files/report.pdf", FORBIDDEN, "disallow: /*.pdf$"),
            Page("/files/report.pdf?download=1", CRAWL, "$ anchors the end: the query escapes it"),
        ),
        {REDIRECT_TARGET_PATH: REDIRECT_TARGET.encode()},
    ),
    OriginSpec(
        "missing",
        "404: no robots.txt, everything allowed",
        _missing,
        (Page("/", CRAWL), Page("/private/notes", CRAWL), Page("/admin", CRAWL)),
    ),
    OriginSpec(
        "flaky",
        f"503 x{FLAKY_FAILURES}, then 200: requests held, then released",
        _flaky,
        (
            Page("/", CRAWL),
            Page("/products", CRAWL),
            Page("/checkout/cart", FORBIDDEN, "disallow: /checkout/"),
            Page("/checkout/pay", FORBIDDEN, "disallow: /checkout/"),
        ),
    ),
    OriginSpec(
        "down",
        "503 every time: requests held, dropped at the hold timeout",
        _down,
        (Page("/", HELD), Page("/catalogue", HELD), Page("/basket", HELD)),
    ),
    OriginSpec(
        "redirect",
        "3 redirects, the last to another origin",
        _redirect,
        (Page("/", CRAWL), Page("/posts/1", CRAWL), Page("/drafts/1", FORBIDDEN, "disallow: /drafts/")),
        robots_fetch=(
            ("redirect", "/robots.txt"),
            ("redirect", "/robots-moved.txt"),
            ("redirect", "/robots/v2.txt"),
            ("rules", REDIRECT_TARGET_PATH),
        ),
    ),
    OriginSpec(
        "oversized",
        "robots.txt of 600 kB: a rule past the 512,000-byte cap",
        _oversized,
        (
            Page("/", CRAWL),
            Page("/admin/users", FORBIDDEN, "disallow: /admin/"),
            Page("/beyond-the-cap/page", CRAWL, "its rule lies past the cap (SPEC 4.4)"),
        ),
    ),
    OriginSpec(
        "agents",
        "per-user-agent groups (examplebot vs *)",
        _agents,
        (Page("/", CRAWL), Page("/news/today", CRAWL), Page("/members/profile", FORBIDDEN, "disallow: /members/")),
    ),
)


class DemoSite:
    """The running demo site: start it on a reactor, read ``urls`` and ``hits``, stop it."""

    def __init__(self, origins: tuple[OriginSpec, ...] = ORIGINS, clock: Callable[[], float] = time.monotonic):
        self.origins = origins
        self.urls: dict[str, str] = {}
        self.hits: list[Hit] = []
        self._clock = clock
        self._ports: list[Any] = []  # IListeningPort (zope interfaces are opaque to mypy)
        self._robots_fetches: dict[str, int] = {}

    def start(self, reactor: Any) -> None:
        """Listen on a free loopback port per origin of ``reactor`` (an IReactorTCP)."""
        for spec in self.origins:
            port = reactor.listenTCP(0, Site(_OriginResource(self, spec)), interface="127.0.0.1")  # type: ignore[no-untyped-call]
            self._ports.append(port)
            self.urls[spec.name] = f"http://127.0.0.1:{port.getHost().port}"

    async def stop(self) -> None:
        """Close every listening port."""
        for port in self._ports:
            stopped = port.stopListening()
            if stopped is not None:
                await maybe_deferred_to_future(stopped)
        self._ports.clear()

    def url(self, origin: str, path: str) -> str:
        return self.urls[origin] + path

    def page_urls(self, origins: tuple[str, ...] | None = None) -> list[str]:
        """Every page URL of the named origins (default: all)."""
        return [self.url(o.name, p.path) for o in self.origins if origins is None or o.name in origins for p in o.pages]

    def reply(self, spec: OriginSpec, path: str) -> Reply:
        """The answer to ``path`` on ``spec``'s origin (robots.txt, redirect hops, extra files, pages)."""
        if path == "/robots.txt":
            count = self._robots_fetches.get(spec.name, 0) + 1
            self._robots_fetches[spec.name] = count
            return spec.robots(self, count)
        if spec.name == "redirect" and path == "/robots-moved.txt":
            return Reply(302, location="/robots/v2.txt")
        if spec.name == "redirect" and path == "/robots/v2.txt":
            return Reply(307, location=self.url("rules", REDIRECT_TARGET_PATH))
        if spec.name == "redirect" and path in CHECK_REDIRECTS:
            return Reply(302, location=CHECK_REDIRECTS[path])
        if path in spec.extra:
            return Reply(200, spec.extra[path])
        if any(page.path == path for page in spec.pages):
            return Reply(200, _page_html(spec, path))
        return Reply(404, b"<h1>404 Not Found</h1>")

    def record(self, spec: OriginSpec, path: str, status: int, user_agent: str) -> None:
        self.hits.append(Hit(spec.name, path, status, user_agent, self._clock()))


def _page_html(spec: OriginSpec, path: str) -> bytes:
    links = "".join(f'<li><a href="{escape(p.path)}">{escape(p.path)}</a></li>' for p in spec.pages)
    return f"<html><body><h1>{escape(spec.name)}: {escape(path)}</h1><ul>{links}</ul></body></html>".encode()


class _OriginResource(Resource):
    """Serves one origin: every path goes through ``DemoSite.reply``."""

    isLeaf = True

    def __init__(self, site: DemoSite, spec: OriginSpec):
        super().__init__()  # type: ignore[no-untyped-call]
        self._site = site
        self._spec = spec

    def render_GET(self, request: Request) -> bytes:
        path = request.uri.decode("latin-1")
        reply = self._site.reply(self._spec, path)
        user_agent = (request.getHeader(b"user-agent") or b"").decode("latin-1")
        self._site.record(self._spec, path, reply.status, user_agent)
        request.setResponseCode(reply.status)
        if reply.location:
            request.responseHeaders.setRawHeaders(b"location", [reply.location.encode()])
        content_type = b"text/plain" if path.endswith(".txt") else b"text/html"
        request.responseHeaders.setRawHeaders(b"content-type", [content_type + b"; charset=utf-8"])
        return reply.body
