"""A robots.txt that is an HTML page (a *soft 404*: a site's page served for a missing /robots.txt, with 200).

``looks_like_html`` is the one heuristic, shared by the CLI (``check``, ``lint``) and the crawl. In the crawl the
body is still obeyed as robots.txt (SPEC 2.2: a 2xx is a robots.txt; Google does the same): ``Soft404Log`` only says
so, once per origin at WARNING, and counts it (``rep/robots/html_body``).
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

from ..matcher import ignored_lines

if TYPE_CHECKING:
    from scrapy.statscollectors import StatsCollector

    from ..matcher import Robots
    from ..stores import Entry

#: The documented logger of every middleware line (docs/stats.md), whichever module writes it.
logger = logging.getLogger("scrapy_rep.middleware")

_BOM = b"\xef\xbb\xbf"
#: The start of an HTML document, after any BOM and whitespace.
_HTML_START = re.compile(rb"\s*<(?:!doctype\s+html|html)[\s>]", re.IGNORECASE)
#: Origins remembered as already reported; past this many, an origin may be reported again (bounded memory).
MAX_REPORTED = 10_000


def looks_like_html(body: bytes, content_type: str | None = None) -> bool:
    """The body is an HTML page, not a robots.txt: it starts (after any BOM and whitespace) with ``<!doctype html``
    or ``<html``, or it was served as ``text/html`` and starts with ``<``."""
    text = body.removeprefix(_BOM)
    if _HTML_START.match(text):
        return True
    served_as_html = (content_type or "").split(";")[0].strip().lower() == "text/html"
    return served_as_html and text.lstrip().startswith(b"<")


class Soft404Log:
    """WARNING once per origin whose robots.txt body looks like an HTML page; ``rep/robots/html_body`` per origin."""

    def __init__(self, stats: StatsCollector, max_bytes: int) -> None:
        self.stats = stats
        self.max_bytes = max_bytes
        self._reported: set[str] = set()

    def check(self, entry: Entry, body: bytes, robots: Robots, kept: Any, spider: Any) -> None:
        """``body``: ``entry.body`` (decompressed once by the caller) and ``robots`` its parse (capped at the same
        ``max_bytes``: its count of lines read spares a second parse); ``kept``: the origin's
        ``spider_robots.KeptResponse`` (its Content-Type), or None."""
        if entry.origin in self._reported or not body.removeprefix(_BOM).lstrip().startswith(b"<"):
            return  # no HTML page (either test of looks_like_html needs the "<"): no Content-Type to look up
        if not looks_like_html(body, _content_type(kept, body)):
            return
        if len(self._reported) < MAX_REPORTED:
            self._reported.add(entry.origin)
        self.stats.inc_value("rep/robots/html_body")
        logger.warning("%s robots.txt %s looks like an HTML page (a soft 404?): %d lines ignored; obeying what it "
                       "says as robots.txt", entry.origin, entry.status if entry.status is not None else "(stored)",
                       ignored_lines(body, max_bytes=self.max_bytes, robots=robots), extra={"spider": spider})


def _content_type(kept: Any, body: bytes) -> str | None:
    """The Content-Type this crawler's download of ``body`` was served with, if it kept it."""
    if kept is None or not kept.gave(body):
        return None
    value = next((value for name, value in kept.headers if name.lower() == b"content-type"), None)
    return value.decode("latin-1") if value is not None else None
