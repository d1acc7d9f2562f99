"""Robots.txt through an HTTP proxy, and REP_ROBOTS_REQUEST (docs/compatibility.md).

SPEC 2.1: robots.txt is fetched the way the crawl fetches its pages (same proxy, headers, cookies), once per origin.
Real crawls through a real HTTP proxy (Twisted's ``twisted.web.proxy``) on a loopback port, recording what it
forwarded.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
import pytest_twisted
from scrapy import Request
from scrapy.crawler import Crawler
from twisted.internet import reactor
from twisted.internet.interfaces import IListeningPort
from twisted.web import http
from twisted.web.proxy import Proxy, ProxyRequest

from scrapy_rep.robots.robots_request import RobotsRequestHookError, RobotsRequests
from tests.crawl import crawl
from tests.servers import Reply, Site, redirect, robots

ROBOTS = "User-agent: *\nDisallow: /private\n"


@dataclass
class RecordingProxy:
    """A forwarding HTTP proxy on 127.0.0.1 (port 0) that records each request it forwards: (URL, headers)."""

    forwarded: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    port: IListeningPort | None = None

    def start(self) -> RecordingProxy:
        forwarded = self.forwarded

        class Recording(ProxyRequest):
            def process(self) -> None:
                headers = {name.decode().lower(): values[0].decode()
                           for name, values in self.requestHeaders.getAllRawHeaders()}
                forwarded.append((self.uri.decode(), headers))
                super().process()

        class Channel(Proxy):
            requestFactory = Recording

        factory = http.HTTPFactory()
        factory.protocol = Channel  # type: ignore[assignment]
        self.port = reactor.listenTCP(0, factory, interface="127.0.0.1")  # type: ignore[attr-defined]
        return self

    @property
    def url(self) -> str:
        assert self.port is not None
        return f"http://127.0.0.1:{self.port.getHost().port}"

    def urls(self) -> list[str]:
        return [url for url, _ in self.forwarded]

    async def stop(self) -> None:
        if self.port is not None:
            await self.port.stopListening()


@pytest.fixture
def proxy() -> Any:
    started = RecordingProxy().start()
    yield started
    if started.port is not None:
        started.port.stopListening()


class ProxyEverything:
    """A user downloader middleware setting ``meta["proxy"]`` on every request (the robots request included: it
    goes through the whole chain via the engine, whatever this middleware's order)."""

    proxy_url = ""

    def process_request(self, request: Request, spider: Any = None) -> None:
        request.meta["proxy"] = self.proxy_url


def _site(sites: Any) -> Site:
    site: Site = sites()
    site.route("/robots.txt", robots(ROBOTS))
    return site


def _pages(site: Site) -> list[str]:
    return [site.url("/a"), site.url("/b"), site.url("/private/x")]


def _assert_decisions(result: Any, site: Site) -> None:
    assert sorted(result.downloaded) == [site.url("/a"), site.url("/b")]
    assert result.failed == [(site.url("/private/x"), "IgnoreRequest")]
    assert result.stat("rep/robots/downloads") == 1
    assert result.stat("rep/requests/checked") == 3  # the robots request is not a checked request
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_a_user_middleware_proxy_carries_robots_txt_once_with_the_crawls_headers(
        sites: Any, proxy: RecordingProxy) -> None:
    site = _site(sites)
    ProxyEverything.proxy_url = proxy.url
    result = await crawl(_pages(site), CONCURRENT_REQUESTS=1, DOWNLOADER_MIDDLEWARES={
        f"{__name__}.ProxyEverything": 50}, DEFAULT_REQUEST_HEADERS={"X-Crawl": "ours"})
    _assert_decisions(result, site)
    assert proxy.urls()[0] == site.url("/robots.txt")  # SPEC 2.1: robots.txt first, once
    assert sorted(proxy.urls()) == sorted([site.url("/robots.txt"), site.url("/a"), site.url("/b")])
    robots_headers = proxy.forwarded[0][1]
    assert robots_headers["user-agent"] == "TestBot/1.0 (+https://example.invalid/bot)"
    assert robots_headers["x-crawl"] == "ours"
    assert site.hits_for("/robots.txt") == 1
    assert sorted(site.paths()) == ["/a", "/b", "/robots.txt"]


@pytest_twisted.ensureDeferred
async def test_the_http_proxy_environment_variable_carries_robots_txt_and_its_cookies(
        sites: Any, proxy: RecordingProxy, monkeypatch: pytest.MonkeyPatch) -> None:
    """HttpProxyMiddleware reads ``http_proxy`` when the crawler starts. A cookie set by one origin's page
    (cookies ignore ports) is sent with the next origin's robots.txt request, as with its pages."""
    for name in ("no_proxy", "NO_PROXY", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("http_proxy", proxy.url)
    first = _site(sites)
    first.route("/a", Reply(body=b"<html>a</html>", headers={"Set-Cookie": "session=s1; Path=/"}))
    second = _site(sites)
    crawlers: list[Crawler] = []

    def first_page_done() -> bool:  # the spider goes idle as soon as /a is parked for robots.txt: wait for /a
        return first.url("/a") in crawlers[0].spider.downloaded  # type: ignore[union-attr]

    result = await crawl([first.url("/a")], COOKIES_ENABLED=True, on_crawler=crawlers.append, spider_kwargs={
        "phases": [(first_page_done, [second.url("/b"), second.url("/private/y")])]})
    assert sorted(result.downloaded) == sorted([first.url("/a"), second.url("/b")])
    assert result.failed == [(second.url("/private/y"), "IgnoreRequest")]
    assert result.stat("rep/robots/downloads") == 2
    assert proxy.urls() == [first.url("/robots.txt"), first.url("/a"), second.url("/robots.txt"), second.url("/b")]
    assert "cookie" not in proxy.forwarded[0][1]
    assert proxy.forwarded[2][1]["cookie"] == "session=s1"  # the crawl's cookies, on robots.txt too
    assert first.hits_for("/robots.txt") == second.hits_for("/robots.txt") == 1
    result.assert_accounted()


def robots_only_through(proxy_url: str, seen: list[str]) -> Callable[[Request], Request]:
    """A ``REP_ROBOTS_REQUEST`` hook: robots.txt through the proxy, pages direct; records each hop it is given in
    ``seen``. A function, not an object: Scrapy deep-copies settings, and a function survives the copy as itself."""

    def hook(request: Request) -> Request:
        seen.append(request.url)
        return request.replace(meta={**request.meta, "proxy": proxy_url})

    return hook


@pytest_twisted.ensureDeferred
async def test_rep_robots_request_routes_only_robots_txt_through_the_proxy(sites: Any, proxy: RecordingProxy) -> None:
    site = _site(sites)
    seen: list[str] = []
    result = await crawl(_pages(site), REP_ROBOTS_REQUEST=robots_only_through(proxy.url, seen))
    _assert_decisions(result, site)
    assert seen == [site.url("/robots.txt")]
    assert proxy.urls() == [site.url("/robots.txt")]  # the pages went direct
    assert sorted(site.paths()) == ["/a", "/b", "/robots.txt"]


@pytest_twisted.ensureDeferred
async def test_rep_robots_request_sees_every_redirect_hop(sites: Any, proxy: RecordingProxy) -> None:
    site = _site(sites)
    target = sites()
    target.route("/robots.txt", robots(ROBOTS))
    site.route("/robots.txt", redirect("/moved.txt"))
    site.route("/moved.txt", redirect(target.url("/robots.txt"), status=302))
    seen: list[str] = []
    result = await crawl(_pages(site), REP_ROBOTS_REQUEST=robots_only_through(proxy.url, seen))
    _assert_decisions(result, site)  # SPEC 2.2: the redirect target's rules obeyed for the original origin
    hops = [site.url("/robots.txt"), site.url("/moved.txt"), target.url("/robots.txt")]
    assert seen == hops
    assert proxy.urls() == hops
    assert site.hits_for("/robots.txt") == site.hits_for("/moved.txt") == target.hits_for("/robots.txt") == 1


def _fresh_request(request: Request) -> Request:
    """A hook that builds a new Request and drops every meta key scrapy-rep set."""
    return Request(request.url, meta={"proxy": ProxyEverything.proxy_url, "playwright": True})


@pytest_twisted.ensureDeferred
async def test_a_hook_that_drops_the_markers_gets_them_back(sites: Any, proxy: RecordingProxy) -> None:
    site = _site(sites)
    ProxyEverything.proxy_url = proxy.url
    result = await crawl(_pages(site), REP_ROBOTS_REQUEST=f"{__name__}._fresh_request")
    _assert_decisions(result, site)  # not checked against itself, counted once
    assert result.stat("rep/requests/passed_through") == 0
    assert proxy.urls() == [site.url("/robots.txt")]


# -- the hook's contract, without a crawl -------------------------------------------------------------------------

def _robots_request() -> Request:
    from scrapy_rep.robots.fetch import robots_request

    return robots_request("http://example.com/robots.txt", 512_000)


def test_without_a_hook_robots_requests_never_use_a_browser_page() -> None:
    sent = RobotsRequests(None).prepare(_robots_request())
    assert sent.meta["playwright"] is False
    sent.meta.setdefault("playwright", True)  # what a user middleware may do to every request
    assert sent.meta["playwright"] is False


def test_the_hooks_request_is_sent_with_the_markers_restored_and_no_browser() -> None:
    original = _robots_request()
    markers = dict(original.meta)
    sent = RobotsRequests(_fresh_request).prepare(original)
    assert sent is not original
    assert sent.meta["proxy"] == ProxyEverything.proxy_url  # the hook's own meta kept
    assert {key: sent.meta[key] for key in markers} == markers
    assert sent.meta["playwright"] is False  # the hook asked for a browser: never for robots.txt


def test_a_hook_may_change_the_request_in_place() -> None:
    def mark(request: Request) -> Request:
        request.meta["zyte_api_automap"] = False
        request.meta["dont_retry"] = False  # a marker: put back
        return request

    original = _robots_request()
    sent = RobotsRequests(mark).prepare(original)
    assert sent is original
    assert (sent.meta["zyte_api_automap"], sent.meta["dont_retry"]) == (False, True)


@pytest.mark.parametrize(
    ("hook", "message"),
    [
        (lambda request: None, "returned NoneType, not a scrapy Request"),
        (lambda request: 1 / 0, "raised ZeroDivisionError('division by zero')"),
    ],
)
def test_a_broken_hook_fails_the_fetch_clearly_and_logs_once(hook: Any, message: str,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    requests = RobotsRequests(hook)
    with caplog.at_level(logging.ERROR, logger="scrapy_rep.middleware"):
        for _ in range(2):
            with pytest.raises(RobotsRequestHookError, match=message.replace("(", r"\(").replace(")", r"\)")):
                requests.prepare(_robots_request())
    assert len(caplog.records) == 1
    assert message in caplog.records[0].getMessage()
    assert "treated as unreachable" in caplog.records[0].getMessage()
