"""The ``robots_version_adopted`` signal: an origin's robots.txt version became the one its requests are decided by,
downloaded by this process or read from the store (docs/evidence.md). Sent once per version adopted: a refresh that
downloads the same body again is a new version (a new fetch time), a copy kept on error is not.

Its handlers receive, as keyword arguments (any subset may be declared, as with every Scrapy signal):

- ``origin``: the origin's key (``https://example.com``); ``url``: its robots.txt URL;
- ``version``: the ``scrapy_rep.stores.Version`` (``id``: the body's SHA-256 in hex, ``fetched_at``, ``status``,
  ``url``: the final URL after redirects), the same in every process that adopts the copy;
- ``outcome``: ``"rules"`` or ``"allow-all"``; ``body``: the body the crawl decides by (capped at REP_MAX_SIZE, empty
  for a 4xx);
- ``source``: ``"downloaded"``, ``"store"`` (fresh there: an earlier run's or another crawler's download) or
  ``"other_crawler"`` (stored while this process waited for that crawler's fetch lease);
- ``response``: the final Scrapy ``Response`` when this process downloaded it (its ``headers``, ``request``,
  ``body`` as received), else None; ``headers``: that response's headers, else None;
- ``spider``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import _scrapy

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from ..stores import Entry

#: The signal object (``crawler.signals.connect(handler, signal=scrapy_rep.robots_version_adopted)``).
robots_version_adopted = object()

def is_new_version(previous: Entry | None, entry: Entry) -> bool:
    """Whether adopting ``entry`` adopts a version: it has one, and it is not the one in effect (a copy kept on error
    keeps its version)."""
    return entry.version is not None and (previous is None or previous.version != entry.version)


async def say_adopted(crawler: Crawler, entry: Entry, robots_url: str, source: str, response: Any) -> None:
    """Send ``robots_version_adopted`` for ``entry`` (``is_new_version``), if anything receives it; waits for its
    handlers (coroutines included), whose exceptions Scrapy logs."""
    if not _scrapy.has_receivers(crawler, robots_version_adopted):
        return
    await _scrapy.send_signal(
        crawler, robots_version_adopted, origin=entry.origin, url=robots_url, version=entry.version,
        outcome=entry.outcome.value, body=entry.body, source=source, response=response,
        headers=None if response is None else response.headers, spider=crawler.spider,
    )
