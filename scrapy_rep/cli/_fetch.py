"""Where the robots.txt comes from: a file, stdin, or a URL fetched with the middleware's semantics (SPEC 2.2).

A URL is read as the robots.txt itself when its path ends in ``.txt`` (``/robots.txt``, or a draft such as
``/staging/robots.txt``); any other URL (``https://example.com/``, a page) is taken as the site, and its origin's
``/robots.txt`` is fetched instead (``Robots.note`` says so).
"""

from __future__ import annotations

import asyncio
import http.client
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass, replace
from email.message import Message
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.http import Response

from scrapy_rep.reporting.soft404 import looks_like_html as looks_like_html  # check and lint import it from here
from scrapy_rep.robots.fetch import RobotsFetcher
from scrapy_rep.robots.origin import ROBOTS_PATH, origin_of
from scrapy_rep.robots.policy import BAD_REDIRECT, REDIRECT_LOOP, TOO_MANY_REDIRECTS, FetchResult, outcome_of
from scrapy_rep.stores import Outcome

from ._common import FETCH_TIMEOUT, FETCH_USER_AGENT, MAX_BYTES, MAX_REDIRECTS, UsageError


@dataclass(frozen=True, slots=True)
class Robots:
    """A robots.txt as obtained, and what its fetch means for the origin (SPEC 2.2).

    ``outcome``: RULES (obey ``body``), ALLOW_ALL (4xx, too many redirects) or DISALLOW_ALL (5xx, 429, network
    error: temporary full disallow). ``origin`` is set for URLs only. ``body`` holds at most ``limit`` + 1 bytes:
    ``truncated`` says the source was longer than ``limit`` and its true size is unknown. ``note``: what was done
    with the source the user gave (a site URL: its origin's /robots.txt was fetched). ``said``: for a URL, the
    fetch's answer in words (``HTTP 200 after 1 redirect``, ``network error (...)``, ``more than 5 redirects``).
    """

    source: str
    outcome: Outcome
    detail: str
    body: bytes = b""
    status: int | None = None
    redirects: int = 0
    origin: str | None = None
    content_type: str | None = None
    truncated: bool = False
    note: str = ""
    said: str = ""


def load(source: str, limit: int = MAX_BYTES) -> Robots:
    """Read ``source``: ``-`` (stdin), an http(s) URL, or a file path; at most ``limit`` + 1 bytes, so that content
    past ``limit`` is seen (and reported) without reading an unbounded body."""
    if source == "-":
        return _read("<stdin>", sys.stdin.buffer.read(limit + 1), limit)
    if source.startswith(("http://", "https://")):
        url, note = robots_url(source)
        fetched = fetch(url, limit)
        return _with_note(fetched, note)
    try:
        with Path(source).open("rb") as handle:
            body = handle.read(limit + 1)
    except OSError as exc:
        raise UsageError(f"cannot read {source}: {exc.strerror or exc}") from None
    return _read(source, body, limit)


def _read(source: str, body: bytes, limit: int) -> Robots:
    truncated = len(body) > limit
    return Robots(source, Outcome.RULES, size_detail(body, truncated), body, truncated=truncated)


def _with_note(robots: Robots, note: str) -> Robots:
    return replace(robots, note=note) if note else robots


def robots_url(url: str) -> tuple[str, str]:
    """The URL to fetch for ``url``, and a note when it is not ``url`` itself: a path ending in ``.txt`` is a
    robots.txt; anything else is the site, whose robots.txt is its origin's ``/robots.txt`` (SPEC 1.1)."""
    try:
        path = urlsplit(url).path
        origin = origin_of(url)
    except ValueError as exc:  # NoOrigin, or urlsplit's own (e.g. "Invalid IPv6 URL")
        raise UsageError(f"not a robots.txt URL: {url} ({exc})") from None
    if path.endswith(".txt"):
        note = "" if path == ROBOTS_PATH else f"{url} is not at {ROBOTS_PATH}, where crawlers look: read as given"
        return url, note
    return origin.robots_url, f"{url} is not a robots.txt URL: checking {origin.robots_url}"


def fetch(url: str, limit: int = MAX_BYTES, max_redirects: int = MAX_REDIRECTS) -> Robots:
    """GET ``url`` with the middleware's semantics (SPEC 2.2): its ``RobotsFetcher`` follows up to ``max_redirects``
    redirects (the target's body is obeyed for the original origin), then treats the chain as 404, and
    ``scrapy_rep.robots.policy`` decides what the result means; read at most ``limit`` + 1 bytes (see ``load``)."""
    try:
        origin = origin_of(url)
    except ValueError as exc:  # NoOrigin, or urlsplit's own (e.g. "Invalid IPv6 URL")
        raise UsageError(f"not a robots.txt URL: {url} ({exc})") from None
    download = _Download(limit)
    # ``limit`` + 1: RobotsFetcher keeps at most its max_size bytes, and one more says the source was longer.
    result = asyncio.run(RobotsFetcher(download, limit + 1, max_redirects).fetch(origin, url))
    return _robots(url, str(origin), result, download, limit, max_redirects)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Redirects are counted and followed by ``RobotsFetcher`` (SPEC 2.2), not by urllib."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class _Download:
    """``RobotsFetcher``'s download for the CLI, which runs no reactor: one urllib GET that follows no redirect and
    reads at most ``limit`` + 1 bytes, raising for network errors. Keeps, for ``Robots``, the last answer's
    Content-Type and the last network error in words."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.opener = urllib.request.build_opener(_NoRedirects)
        self.content_type: str | None = None
        self.problem = ""

    async def __call__(self, request: Request) -> Response:
        self.content_type, self.problem = None, ""
        get = urllib.request.Request(request.url, headers={"User-Agent": FETCH_USER_AGENT})
        try:
            with self.opener.open(get, timeout=FETCH_TIMEOUT) as answer:
                return self._response(request.url, answer.status, answer.headers, answer.read(self.limit + 1))
        except urllib.error.HTTPError as exc:  # every non-2xx status, redirects included: no body needed
            with exc:
                return self._response(request.url, exc.code, exc.headers, b"")
        except urllib.error.URLError as exc:
            self.problem = f"network error ({exc.reason})"
            if isinstance(exc.reason, BaseException):  # named for the cause: ConnectionRefusedError, gaierror...
                raise exc.reason from exc
            raise
        except (OSError, http.client.HTTPException, ValueError) as exc:
            self.problem = f"network error ({type(exc).__name__}: {exc})"
            raise

    def _response(self, url: str, status: int, headers: Message, body: bytes) -> Response:
        self.content_type = headers.get("Content-Type")
        # http.client decoded the header bytes as latin-1: back to those bytes, as Scrapy would have them.
        raw = [(name, value.encode("latin-1", "replace")) for name, value in headers.items()]
        return Response(url, status=status, headers=raw, body=body)


def _robots(url: str, origin: str, result: FetchResult, download: _Download, limit: int,
            max_redirects: int) -> Robots:
    """What the fetch's result means (``policy.outcome_of``), in words for the user."""
    outcome = outcome_of(result)
    hops = result.redirects
    if result.status is not None:
        via = f" after {hops} redirect{'s' if hops != 1 else ''}" if hops else ""
        said = f"HTTP {result.status}{via}"
    elif result.error == TOO_MANY_REDIRECTS:
        said = f"more than {max_redirects} redirects"
    elif result.error == REDIRECT_LOOP:  # followed, it would never end
        said = f"{result.refused}, so more than {max_redirects} redirects"
    elif result.error == BAD_REDIRECT:
        said = result.refused or "redirect refused"
    else:
        said = download.problem or f"network error ({result.error})"
    truncated = len(result.body) > limit
    if outcome is Outcome.RULES:
        detail = f"{said}, {size_detail(result.body, truncated)}"
    elif outcome is Outcome.ALLOW_ALL:
        detail = f"{said}: no valid robots.txt (SPEC 2.2: like a 404), everything allowed"
    else:
        detail = f"{said}: temporarily unavailable, every URL of {origin} is disallowed until it can be fetched"
    content_type = download.content_type if result.status is not None else None
    return Robots(url, outcome, detail, result.body, result.status, hops, origin, content_type, truncated, said=said)


def size_detail(body: bytes, truncated: bool, max_bytes: int = MAX_BYTES) -> str:
    """The body's size in words, and what the size cap does to it (SPEC 4.4)."""
    if len(body) <= max_bytes:
        return f"{len(body)} bytes"
    size = f"more than {len(body) - 1} bytes" if truncated else f"{len(body)} bytes, more than {max_bytes}"
    return f"{size}: only the first {max_bytes} are used (SPEC 4.4)"

