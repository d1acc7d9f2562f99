"""``check --page``: one page fetched as a person's browser or curl would, for its page-level robots directives.

Contract: ``fetch_page(url)`` GETs an absolute http(s) ``url`` with the CLI's User-Agent and timeout
(``_common.FETCH_USER_AGENT``, ``FETCH_TIMEOUT``), follows up to ``MAX_PAGE_REDIRECTS`` redirects (301, 302, 303, 307,
308 with a Location, to http(s) URLs only) and reads at most ``PAGE_LIMIT`` bytes of the last answer's body, whatever
its status (an error page's directives are shown too). No robots.txt semantics apply: this is not the middleware's
fetch. It never raises for the network: a failure is ``Page.error`` in words (``network error (...)``, ``more than 5
redirects``). ``Page.tags(tokens)`` is the ``matcher.RobotsTags`` that apply to a crawler with those product tokens:
every X-Robots-Tag header value, and the robots meta tags when the page is HTML (Content-Type ``text/html`` or
``application/xhtml+xml``); ``NO_TAGS`` for a page that could not be fetched. ``Page.header(name)`` gives the values of
an opt-out header (``OPT_OUT_HEADERS``: Content-Usage, Content-Signal, tdm-reservation, tdm-policy) as sent.
"""

from __future__ import annotations

import http.client
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from email.message import Message
from urllib.parse import urljoin, urlsplit

from scrapy_rep.matcher import NO_TAGS, RobotsTags, robots_tags

from ._common import FETCH_TIMEOUT, FETCH_USER_AGENT
from ._fetch import _NoRedirects

#: The most of a page's body read: a robots meta tag belongs in the head, far before this.
PAGE_LIMIT = 1024 * 1024
#: As a browser would, though fewer: a page at the end of a longer chain is reported as an error.
MAX_PAGE_REDIRECTS = 5
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
#: The response headers a page's AI/TDM opt-outs are read from (``_page_usage``), lower-cased.
OPT_OUT_HEADERS = ("content-usage", "content-signal", "tdm-reservation", "tdm-policy")


@dataclass(frozen=True, slots=True)
class Page:
    """A page as fetched: ``status`` and the rest describe the last answer (after ``redirects`` redirects, at
    ``final_url``); ``x_robots_tag``: its X-Robots-Tag values, as sent (bytes); ``body``: at most ``PAGE_LIMIT``
    bytes of it, kept only when ``html``; ``error``: why there is no answer ("" when there is one);
    ``opt_out_headers``: (lower-cased name, value as sent) of each ``OPT_OUT_HEADERS`` header, in order."""

    url: str
    status: int | None = None
    final_url: str | None = None
    redirects: int = 0
    content_type: str | None = None
    x_robots_tag: tuple[bytes, ...] = ()
    html: bool = False
    body: bytes = b""
    error: str = ""
    opt_out_headers: tuple[tuple[str, bytes], ...] = ()

    def tags(self, tokens: Sequence[str]) -> RobotsTags:
        """The page-level directives that address ``robots`` or one of ``tokens`` (the crawler's product tokens)."""
        if self.error:
            return NO_TAGS
        return robots_tags(self.x_robots_tag, self.body if self.html else None, tokens)

    def header(self, name: str) -> list[bytes]:
        """The values of the opt-out header ``name`` (one of ``OPT_OUT_HEADERS``), as sent, in order."""
        return [value for header, value in self.opt_out_headers if header == name]

    @property
    def image(self) -> bool:
        """The answer is an image (``noimageai`` applies to it)."""
        return (self.content_type or "").strip().lower().startswith("image/")


def is_html(content_type: str | None) -> bool:
    """Whether a Content-Type (parameters and case aside) names an HTML or XHTML document."""
    return content_type is not None and content_type.split(";")[0].strip().lower() in HTML_TYPES


def fetch_page(url: str, limit: int = PAGE_LIMIT, max_redirects: int = MAX_PAGE_REDIRECTS) -> Page:
    """GET ``url`` (see the module's contract); never raises for the network or the server."""
    opener = urllib.request.build_opener(_NoRedirects)  # redirects are followed and counted here
    current = url
    for hops in range(max_redirects + 1):
        try:
            status, headers, body = _get(opener, current, limit)
        except urllib.error.URLError as exc:
            return Page(url, redirects=hops, final_url=current, error=f"network error ({exc.reason})")
        except (OSError, http.client.HTTPException, ValueError) as exc:  # a timeout while reading, a bad answer
            return Page(url, redirects=hops, final_url=current, error=f"network error ({type(exc).__name__}: {exc})")
        location = headers.get("Location") if status in _REDIRECTS else None
        if not location:
            return _page(url, current, hops, status, headers, body)
        target = urljoin(current, location.strip())
        if urlsplit(target).scheme not in ("http", "https"):
            return Page(url, status, current, hops, error=f"HTTP {status}: redirect to {target} refused (not http(s))")
        current = target
    return Page(url, redirects=max_redirects, final_url=current,
                error=f"more than {max_redirects} redirects (the last to {current})")


def _get(opener: urllib.request.OpenerDirector, url: str, limit: int) -> tuple[int, Message, bytes]:
    """One GET, following no redirect: status, headers and at most ``limit`` bytes of body (none for a redirect)."""
    get = urllib.request.Request(url, headers={"User-Agent": FETCH_USER_AGENT})
    try:
        with opener.open(get, timeout=FETCH_TIMEOUT) as answer:
            return answer.status, answer.headers, answer.read(limit)
    except urllib.error.HTTPError as exc:  # every non-2xx status, redirects included
        with exc:
            return exc.code, exc.headers, b"" if exc.code in _REDIRECTS else exc.read(limit)


def _page(url: str, final_url: str, redirects: int, status: int, headers: Message, body: bytes) -> Page:
    content_type = headers.get("Content-Type")
    html = is_html(content_type)
    # http.client decoded the header bytes as latin-1: back to those bytes, as the server sent them.
    values = tuple(value.encode("latin-1", "replace") for value in headers.get_all("X-Robots-Tag") or ())
    opt_outs = tuple((name, value.encode("latin-1", "replace")) for name in OPT_OUT_HEADERS
                     for value in headers.get_all(name) or ())
    return Page(url, status, final_url, redirects, content_type, values, html, body if html else b"",
                opt_out_headers=opt_outs)
