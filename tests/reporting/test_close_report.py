""""My spider yields nothing and I can't see why": at spider close, WARNING when robots.txt forbade every request of
an origin or every start request, and the INFO summary of forbidden requests per origin with their top rules
(scrapy_rep/reporting/close_report.py); an HTML page served as robots.txt (a soft 404) is said once per origin
(scrapy_rep/soft404.py). Real crawls against the local servers, logs captured from ``scrapy_rep.middleware``."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_twisted
from scrapy import Request
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler
from twisted.python.failure import Failure

from scrapy_rep.cli.lint import lint
from scrapy_rep.reporting import close_report
from scrapy_rep.stores import Entry, Outcome
from tests.crawl import ListSpider, crawl
from tests.reporting.test_waiting_log import messages
from tests.servers import Reply, robots

LOGGER = "scrapy_rep.middleware"


def close_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [m for m in messages(caplog) if m.startswith("robots.txt forbade")]


@pytest_twisted.ensureDeferred
async def test_an_origin_whose_every_request_is_forbidden_is_named_at_warning(
    sites: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /\n"))
    origin = site.origin()
    result = await crawl([site.url(f"/p{i}") for i in range(3)])
    warnings = messages(caplog, logging.WARNING)
    assert warnings[0] == (f"scrapy-rep: every request of {origin} (3) was forbidden by its robots.txt (200): "
                           "line 2 (Disallow: /) of the '*' group (line 1)")
    assert close_lines(caplog) == [f"robots.txt forbade 3 requests of 1 origin at close: {origin} 3 (line 2 "
                                   "(Disallow: /) of the '*' group (line 1))"]
    assert result.stat("rep/report/origins_all_blocked") == 1
    assert not [m for m in warnings if "looks like an HTML page" in m]
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_a_mixed_origin_gets_no_warning_but_its_top_rules_in_the_summary(
    sites: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /x\nDisallow: /y\nDisallow: /z\nDisallow: /w\n"))
    origin = site.origin()
    paths = ["/ok", "/x1", "/x2", "/x3", "/y1", "/y2", "/z1", "/w1"]
    result = await crawl([site.url(p) for p in paths])
    assert messages(caplog, logging.WARNING) == []
    assert close_lines(caplog) == [
        f"robots.txt forbade 7 requests of 1 origin at close: {origin} 7 (3 by line 2 (Disallow: /x) of the '*' group "
        "(line 1), 2 by line 3 (Disallow: /y) of the '*' group (line 1), 1 by line 4 (Disallow: /z) of the '*' group "
        "(line 1) and 1 more rule)"
    ]
    assert result.downloaded == [site.url("/ok")]
    assert result.stat("rep/report/origins_all_blocked") == 0
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_the_summary_is_bounded(
    sites: Any, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past SUMMARY_ORIGINS the summary counts origins; past MAX_TRACKED_ORIGINS an origin is summed, not tracked."""
    monkeypatch.setattr(close_report, "SUMMARY_ORIGINS", 1)
    monkeypatch.setattr(close_report, "MAX_TRACKED_ORIGINS", 2)
    caplog.set_level(logging.INFO, logger=LOGGER)
    a, b, c = sites(), sites(), sites()
    for site in (a, b, c):
        site.route("/robots.txt", robots("User-agent: *\nDisallow: /no\n"))
    # a's requests come first (priorities), so a and b are tracked and c is not.
    urls = [a.url("/no1"), a.url("/no2"), a.url("/ok"), b.url("/no"), b.url("/ok"), c.url("/no"), c.url("/ok")]
    result = await crawl(urls, spider_kwargs={"priorities": [9, 9, 9, 5, 5, 0, 0]}, CONCURRENT_REQUESTS=1)
    assert close_lines(caplog) == [
        f"robots.txt forbade 4 requests of 2 origins at close: {a.origin()} 2 (line 2 (Disallow: /no) of the '*' group "
        "(line 1)), and 1 more origin; 1 of origins past the first 2 not detailed (bounded memory)"
    ]
    assert result.stat("rep/report/untracked_forbidden") == 1
    result.assert_accounted()


def test_an_origin_allowed_before_it_was_forbidden_is_not_all_blocked_and_counts_toward_the_bound(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An origin whose requests were all allowed so far is a set member only (a broad crawl's usual origin); its
    first forbidden request starts its counts, which still know that some were allowed. Such origins are tracked
    origins: past MAX_TRACKED_ORIGINS a newly forbidden origin is summed only."""
    monkeypatch.setattr(close_report, "MAX_TRACKED_ORIGINS", 2)
    caplog.set_level(logging.INFO, logger=LOGGER)
    report = close_report.CloseReport(MemoryStatsCollector(get_crawler()), enforce=True)
    rule = "line 2 (Disallow: /no) of the '*' group (line 1)"
    for origin in ("http://a.test", "http://b.test"):
        report.allowed(origin, Request(f"{origin}/ok"))
    for origin in ("http://a.test", "http://c.test"):
        entry = Entry(origin, Outcome.RULES, 0.0, 1.0, body=b"User-agent: *\nDisallow: /no\n", status=200)
        report.forbidden(entry, Request(f"{origin}/no"), rule)
    report.close(None)
    assert messages(caplog, logging.WARNING) == []  # a.test had an allowed request: not "every request"
    assert close_lines(caplog) == [
        f"robots.txt forbade 2 requests of 1 origin at close: http://a.test 1 ({rule}); 1 of origins past the first "
        "2 not detailed (bounded memory)"
    ]


NEWBIE = """User-agent: *
Disallow: /

# our friends
User-agent: newbiebot
Disallow: /private/
"""


class ReasonSpider(ListSpider):
    """Records each failure's message (the IgnoreRequest's reason), as a spider's errback sees it."""

    def __init__(self, urls: list[str], **kwargs: Any) -> None:
        super().__init__(urls, **kwargs)
        self.reasons: dict[str, str] = {}

    def failure(self, failure: Failure) -> None:
        super().failure(failure)
        self.reasons[failure.request.url] = str(failure.value)  # type: ignore[attr-defined]


@pytest_twisted.ensureDeferred
async def test_the_group_that_decided_is_named_in_every_line(sites: Any, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 25: a crawler with a group of its own obeys it (SPEC 6.2: '*' is not used, though it disallows
    everything), and the DEBUG line, the IgnoreRequest and the close report name that group and cite the rule alike
    (matcher.cite)."""
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    site = sites()
    site.route("/robots.txt", robots(NEWBIE))
    origin = site.origin()
    urls = [site.url("/a"), site.url("/private/x"), site.url("/private/y")]
    result = await crawl(urls, spider=ReasonSpider, REP_USER_AGENT="newbiebot", LOG_LEVEL="DEBUG")
    rule = "line 6 (Disallow: /private/) of the 'newbiebot' group (line 5)"
    version = hashlib.sha256(NEWBIE.encode()).hexdigest()[:12]  # the copy's (requests/basis.py)
    assert result.downloaded == [site.url("/a")]
    assert sorted(m for m in messages(caplog, logging.DEBUG) if m.startswith("Forbidden")) == [
        f"Forbidden by robots.txt: {site.url(p)} ({origin}/robots.txt {rule}; as ['newbiebot']; version {version})"
        for p in ("/private/x", "/private/y")]
    assert isinstance(result.spider, ReasonSpider)
    assert set(result.spider.reasons.values()) == {f"Forbidden by robots.txt: {rule}"}
    assert close_lines(caplog) == [f"robots.txt forbade 2 requests of 1 origin at close: {origin} 2 ({rule})"]
    result.assert_accounted()


class DepthSpider(ListSpider):
    """Start requests with ``meta["depth"]`` from ``depths`` (0: a start request; 1: as if followed from a page)."""

    def __init__(self, urls: list[str], depths: list[int], **kwargs: Any) -> None:
        super().__init__(urls, **kwargs)
        self.depths = depths

    async def start(self) -> AsyncIterator[Any]:
        for url, depth in zip(self.urls, self.depths, strict=True):
            yield Request(url, dont_filter=True, errback=self.failure, meta={"depth": depth})


@pytest_twisted.ensureDeferred
async def test_every_start_request_forbidden_across_origins_is_named_at_warning(
    sites: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """a forbids everything; b forbids its start page but allows a deeper one: one origin warning (a), and the
    start-request warning naming both origins' rules."""
    caplog.set_level(logging.INFO, logger=LOGGER)
    a, b = sites(), sites()
    a.route("/robots.txt", robots("User-agent: *\nDisallow: /\n"))
    b.route("/robots.txt", robots("# b\nUser-agent: *\nDisallow: /start\n"))
    result = await crawl([a.url("/start"), b.url("/start"), b.url("/page")], spider=DepthSpider,
                         spider_kwargs={"depths": [0, 0, 1]})
    assert result.downloaded == [b.url("/page")]
    details = sorted([f"{a.origin()} 1 forbidden (200: line 2 (Disallow: /) of the '*' group (line 1))",
                      f"{b.origin()} 1 forbidden (200: line 3 (Disallow: /start) of the '*' group (line 2))"])
    assert messages(caplog, logging.WARNING) == [
        f"scrapy-rep: every request of {a.origin()} (1) was forbidden by its robots.txt (200): line 2 (Disallow: /) "
        "of the '*' group (line 1)",
        f"scrapy-rep: every start request (2) was forbidden or dropped by robots.txt: {', '.join(details)}",
    ]
    assert result.stat("rep/report/start_requests_all_blocked") == 1
    result.assert_accounted()


HTML = b"<!DOCTYPE html>\n<html>\n<head><title>Welcome</title></head>\n<body>\n<p>Hello</p>\n</body>\n</html>\n"


@pytest_twisted.ensureDeferred
async def test_an_html_robots_txt_is_said_once_per_origin_and_counted(
    sites: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    site = sites()
    site.route("/robots.txt", Reply(body=HTML, headers={"Content-Type": "text/html; charset=utf-8"}))
    origin = site.origin()
    result = await crawl([site.url("/a"), site.url("/b")])
    (finding,) = [f for f in lint(HTML, content_type="text/html") if f.kind == "html-page"]
    assert "7 lines ignored" in finding.message  # the count lint gives, which the crawl repeats
    assert messages(caplog, logging.WARNING) == [
        f"{origin} robots.txt 200 looks like an HTML page (a soft 404?): 7 lines ignored; obeying what it says as "
        "robots.txt"
    ]
    assert result.stat("rep/robots/html_body") == 1
    assert sorted(result.downloaded) == [site.url("/a"), site.url("/b")]  # obeyed as robots.txt: nothing forbidden
    result.assert_accounted()
