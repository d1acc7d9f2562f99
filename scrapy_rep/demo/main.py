"""``scrapy-rep demo``: start the demo site, crawl it through scrapy-rep (and, with ``--compare``, through Scrapy's
built-in middleware), print the report, stop everything. ``--serve`` only runs the site, for ``scrapy crawl``."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from scrapy.utils.reactor import install_reactor

from scrapy_rep.demo.crawl import BUILTIN_SETTINGS, DEMO_SETTINGS, crawl
from scrapy_rep.demo.report import comparison, report
from scrapy_rep.demo.site import DemoSite

T = TypeVar("T")
ASYNCIO_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"


def demo(*, compare: bool = False, serve: bool = False) -> int:
    """Run the demo; the exit code is 0 when scrapy-rep treated every page as robots.txt says, 1 otherwise."""
    install_reactor(ASYNCIO_REACTOR)
    if serve:
        return _serve()
    text, ok = _run(lambda: _crawls(compare))
    print(text)
    return 0 if ok else 1


async def _crawls(compare: bool) -> tuple[str, bool]:
    reactor = _reactor()
    site = DemoSite()
    site.start(reactor)
    try:
        catalog = await crawl(site, "scrapy-rep", "catalog", site.page_urls(), DEMO_SETTINGS)
        news = await crawl(site, "scrapy-rep", "news", site.page_urls(("agents",)), DEMO_SETTINGS)
    finally:
        await site.stop()
    text, ok = report(site, catalog, news)
    if compare:
        theirs_site = DemoSite()  # a fresh site: the flaky origin fails three times again
        theirs_site.start(reactor)
        try:
            theirs = await crawl(theirs_site, "built-in", "catalog", theirs_site.page_urls(), BUILTIN_SETTINGS)
        finally:
            await theirs_site.stop()
        text += "\n\n" + comparison(site, catalog, theirs_site, theirs)
    return text, ok


def _run(main: Callable[[], Awaitable[T]]) -> T:
    """Run ``main`` on the (asyncio) reactor until it finishes; return its result or raise its exception."""
    reactor = _reactor()
    outcome: dict[str, Any] = {}

    async def wrapped() -> None:
        try:
            outcome["value"] = await main()
        except BaseException as exc:  # handed back to the caller below
            outcome["error"] = exc
        finally:
            reactor.stop()

    def start() -> None:
        outcome["task"] = asyncio.ensure_future(wrapped())

    reactor.callWhenRunning(start)
    reactor.run()
    if "error" in outcome:
        raise outcome["error"]
    value: T = outcome["value"]
    return value


def _serve() -> int:
    """Serve the demo site until interrupted, printing its origins and a ``scrapy crawl`` line to try."""
    reactor = _reactor()
    site = DemoSite()
    site.start(reactor)
    print("scrapy-rep demo site (Ctrl-C to stop):")
    for spec in site.origins:
        print(f"  {spec.name:<10} {site.urls[spec.name]}   {spec.shows}")
    print("Try, in example_project/:")
    print(f"  scrapy crawl catalog -a start_url={','.join(site.page_urls())} -s REP_HOLD_TIMEOUT=10")
    sys.stdout.flush()
    reactor.run()
    return 0



def _reactor() -> Any:
    """The installed reactor (imported late: ``install_reactor`` must come first; untyped: zope interfaces)."""
    from twisted.internet import reactor

    return reactor
