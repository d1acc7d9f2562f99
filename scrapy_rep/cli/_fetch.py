"""Where the robots.txt comes from: a file, stdin, or a URL fetched with the middleware's semantics (SPEC 2.2).

A URL is read as the robots.txt itself when its path ends in ``.txt`` (``/robots.txt``, or a draft such as
``/staging/robots.txt``); any other URL (``https://example.com/``, a page) is taken as the site, and its origin's
``/robots.txt`` is fetched instead (``Robots.note`` says so).
"""

from __future__ import annotations

import http.client
import re
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from scrapy_rep.origin import ROBOTS_PATH, origin_of
from scrapy_rep.policy import BAD_REDIRECT, TOO_MANY_REDIRECTS, FetchResult, outcome_of
from scrapy_rep.stores import Outcome

from ._common import FETCH_TIMEOUT, FETCH_USER_AGENT, MAX_BYTES, MAX_REDIRECTS, UsageError

_BOM = b"\xef\xbb\xbf"
#: The start of an HTML document, after any BOM and whitespace.
_HTML_START = re.compile(rb"\s*<(?:!doctype\s+html|html)[\s>]", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Robots:
    """A robots.txt as obtained, and what its fetch means for the origin (SPEC 2.2).

    ``outcome``: RULES (obey ``body``), ALLOW_ALL (4xx, too many redirects) or DISALLOW_ALL (5xx, 429, network
    error: temporary full disallow). ``origin`` is set for URLs only. ``body`` holds at most ``limit`` + 1 bytes:
    ``truncated`` says the source was longer than ``limit`` and its true size is unknown. ``note``: what was done
    with the source the user gave (a site URL: its origin's /robots.txt was fetched).
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
    if not note:
        return robots
    return Robots(robots.source, robots.outcome, robots.detail, robots.body, robots.status, robots.redirects,
                  robots.origin, robots.content_type, robots.truncated, note)


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
    """GET ``url`` with the middleware's semantics (SPEC 2.2, decided by ``scrapy_rep.policy``): follow up to
    ``max_redirects`` redirects (the target's body is obeyed for the original origin), then treat it as 404; read at
    most ``limit`` + 1 bytes (see ``load``)."""
    try:
        origin = str(origin_of(url))
    except ValueError as exc:  # NoOrigin, or urlsplit's own (e.g. "Invalid IPv6 URL")
        raise UsageError(f"not a robots.txt URL: {url} ({exc})") from None
    opener = urllib.request.build_opener(_NoRedirects)
    current = url
    for hop in range(max_redirects + 1):
        answer = _get(opener, current, limit, hop)
        if answer.location is None:
            return _robots(url, origin, answer, limit)
        current = urljoin(current, answer.location)
        if urlsplit(current).scheme not in ("http", "https"):  # never file:, ftp: ... from a server's say-so
            dead_end = _Answer(FetchResult(error=BAD_REDIRECT, redirects=hop + 1), None, f"redirect to {current}")
            return _robots(url, origin, dead_end, limit)
    loop = _Answer(FetchResult(error=TOO_MANY_REDIRECTS, redirects=max_redirects + 1), None,
                   f"more than {max_redirects} redirects")
    return _robots(url, origin, loop, limit)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Redirects are counted and followed by ``fetch`` itself (SPEC 2.2), not by urllib."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


@dataclass(frozen=True, slots=True)
class _Answer:
    """One GET: its result, the redirect target (None: not a redirect to follow), the problem in words, and the
    response's Content-Type."""

    result: FetchResult
    location: str | None
    problem: str = ""
    content_type: str | None = None


def _get(opener: urllib.request.OpenerDirector, url: str, limit: int, hop: int) -> _Answer:
    request = urllib.request.Request(url, headers={"User-Agent": FETCH_USER_AGENT})
    try:
        with opener.open(request, timeout=FETCH_TIMEOUT) as response:
            body = response.read(limit + 1)
            return _Answer(FetchResult(response.status, body, redirects=hop), None, "",
                           response.headers.get("Content-Type"))
    except urllib.error.HTTPError as exc:
        with exc:
            location = exc.headers.get("Location") if 300 <= exc.code < 400 else None
            return _Answer(FetchResult(exc.code, redirects=hop), location)
    except ValueError:  # an unreadable redirect target (e.g. "http://[::1")
        return _Answer(FetchResult(error=BAD_REDIRECT, redirects=hop), None, f"redirect to unreadable URL {url!r}")
    except urllib.error.URLError as exc:
        error = exc.reason if isinstance(exc.reason, BaseException) else exc
        return _Answer(FetchResult(error=type(error).__name__, redirects=hop), None, f"network error ({exc.reason})")
    except (OSError, http.client.HTTPException) as exc:
        name = type(exc).__name__
        return _Answer(FetchResult(error=name, redirects=hop), None, f"network error ({name}: {exc})")


def _robots(url: str, origin: str, answer: _Answer, limit: int) -> Robots:
    """What the fetch's result means (``policy.outcome_of``), in words for the user."""
    result = answer.result
    outcome = outcome_of(result)
    hops = result.redirects
    via = f" after {hops} redirect{'s' if hops != 1 else ''}" if hops and result.status is not None else ""
    said = f"HTTP {result.status}{via}" if result.status is not None else answer.problem
    truncated = len(result.body) > limit
    if outcome is Outcome.RULES:
        detail = f"{said}, {size_detail(result.body, truncated)}"
    elif outcome is Outcome.ALLOW_ALL:
        detail = f"{said}: no valid robots.txt (SPEC 2.2: like a 404), everything allowed"
    else:
        detail = f"{said}: temporarily unavailable, every URL of {origin} is disallowed until it can be fetched"
    return Robots(url, outcome, detail, result.body, result.status, hops, origin, answer.content_type, truncated)


def size_detail(body: bytes, truncated: bool, max_bytes: int = MAX_BYTES) -> str:
    """The body's size in words, and what the size cap does to it (SPEC 4.4)."""
    if len(body) <= max_bytes:
        return f"{len(body)} bytes"
    size = f"more than {len(body) - 1} bytes" if truncated else f"{len(body)} bytes, more than {max_bytes}"
    return f"{size}: only the first {max_bytes} are used (SPEC 4.4)"


def looks_like_html(body: bytes, content_type: str | None = None) -> bool:
    """The body is an HTML page, not a robots.txt: it starts (after any BOM and whitespace) with ``<!doctype html``
    or ``<html``, or it was served as ``text/html`` and starts with ``<``."""
    text = body.removeprefix(_BOM)
    if _HTML_START.match(text):
        return True
    served_as_html = (content_type or "").split(";")[0].strip().lower() == "text/html"
    return served_as_html and text.lstrip().startswith(b"<")
