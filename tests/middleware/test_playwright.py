"""scrapy-playwright as the http/https download handler: robots.txt is never fetched through a browser page.

SPEC 2.1: robots.txt is the file as the server sends it, fetched once per origin with the crawl's own HTTP client
(its User-Agent, headers, cookies, proxy). scrapy-playwright's handler uses a browser page only for requests whose
``meta["playwright"]`` is true; scrapy-rep sets it to False on every robots request (``robots_request.py``), so a
user middleware's ``meta.setdefault("playwright", True)`` leaves robots.txt to Scrapy's HTTP handler.

The browser is Debian's ``chromium`` (``apt-get install chromium``; .ci/run installs it). Without it, or without
scrapy-playwright, the real crawls skip, saying which is missing; the handler selection itself (robots requests carry
``playwright=False``, also after REP_ROBOTS_REQUEST) is tested in tests/middleware/test_proxies.py and below without
either.
"""

from __future__ import annotations

import importlib.util
import shutil
from typing import Any

import pytest
import pytest_twisted
import scrapy
from scrapy import Request

from scrapy_rep.robots.fetch import robots_request
from scrapy_rep.robots.robots_request import RobotsRequests
from tests.crawl import crawl
from tests.servers import Reply, Site, robots

CHROMIUM = shutil.which("chromium")
USER_AGENT = "TestBot/1.0 (+https://example.invalid/bot)"
HANDLER = "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"


def _why_not() -> str | None:
    if importlib.util.find_spec("scrapy_playwright") is None:
        return f"scrapy-playwright is not installed (Scrapy {scrapy.__version__}): pip install scrapy-playwright"
    if CHROMIUM is None:
        return "no chromium on PATH: apt-get install -y chromium (.ci/run does)"
    return None


needs_browser = pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")

SETTINGS: dict[str, Any] = {
    "DOWNLOAD_HANDLERS": {"http": HANDLER, "https": HANDLER},
    "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
    "PLAYWRIGHT_BROWSER_TYPE": "chromium",
    "PLAYWRIGHT_LAUNCH_OPTIONS": {"executable_path": CHROMIUM, "args": ["--no-sandbox"], "headless": True},
    "PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT": 15_000,
    "DOWNLOAD_TIMEOUT": 15,
}


class BrowserForEverything:
    """A user downloader middleware asking for a browser page for every request (scrapy-playwright's usual idiom)."""

    def process_request(self, request: Request, spider: Any = None) -> None:
        request.meta.setdefault("playwright", True)


def _site(sites: Any) -> Site:
    site: Site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /private\n"))
    site.route("/a", Reply(body=b"<html><body>a</body></html>", headers={"Content-Type": "text/html"}))
    return site


def _browser_made(headers: dict[str, str]) -> bool:
    """Headers only a browser sends (Chromium's client hints and fetch metadata)."""
    return any(name.startswith(("sec-ch-ua", "sec-fetch-")) for name in headers)


async def _crawl_and_check(site: Site, **settings: Any) -> None:
    result = await crawl([site.url("/a"), site.url("/private/x")], **{**SETTINGS, **settings})
    assert result.downloaded == [site.url("/a")]
    assert result.failed == [(site.url("/private/x"), "IgnoreRequest")]
    assert result.stat("rep/robots/downloads") == 1
    result.assert_accounted()
    robots_hits = [hit for hit in site.hits if hit.path == "/robots.txt"]
    page_hits = [hit for hit in site.hits if hit.path == "/a"]
    assert len(robots_hits) == 1  # once per origin
    assert robots_hits[0].headers["user-agent"] == USER_AGENT  # Scrapy's HTTP handler, not a page
    assert not _browser_made(robots_hits[0].headers), robots_hits[0].headers
    assert page_hits and all(_browser_made(hit.headers) for hit in page_hits), [h.headers for h in page_hits]
    assert result.stat("playwright/page_count") >= 1  # scrapy-playwright's own count: the page used the browser
    assert "/private/x" not in site.paths()


@needs_browser
@pytest_twisted.ensureDeferred
async def test_pages_through_the_browser_robots_txt_through_scrapys_http_handler(sites: Any) -> None:
    site = _site(sites)
    await _crawl_and_check(site, spider_kwargs={"meta": {"playwright": True}})


@needs_browser
@pytest_twisted.ensureDeferred
async def test_a_middleware_setting_playwright_on_every_request_leaves_robots_txt_alone(sites: Any) -> None:
    site = _site(sites)
    await _crawl_and_check(site, DOWNLOADER_MIDDLEWARES={f"{__name__}.BrowserForEverything": 50})


def test_robots_requests_select_scrapys_http_handler_without_a_browser_installed() -> None:
    """What scrapy-playwright's handler reads (``meta.get("playwright")``): false on every robots request, also
    when REP_ROBOTS_REQUEST asks for a page, and still false after a middleware's setdefault."""
    def wants_a_page(request: Request) -> Request:
        return request.replace(meta={**request.meta, "playwright": True, "playwright_include_page": True})

    for hook in (None, wants_a_page):
        sent = RobotsRequests(hook).prepare(robots_request("https://example.com/robots.txt", 512_000))
        BrowserForEverything().process_request(sent)
        assert sent.meta.get("playwright") is False
