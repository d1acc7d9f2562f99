"""Refused at discovery (requests/discovery.py): a forbidden link of an origin whose robots.txt is held never enters
the scheduler; everything else goes the way it went before, decided in the downloader.

Real crawls against the local servers: what was scheduled is Scrapy's own ``scheduler/enqueued`` stat, what was sent
is the server's log. Each behaviour that could differ is shown with REP_REFUSE_AT_DISCOVERY on and off.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from scrapy import Request
from scrapy.core.scheduler import Scheduler
from scrapy.http import Response
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred
from twisted.internet.task import Clock
from twisted.python.failure import Failure

from tests.crawl import ListSpider, crawl
from tests.reporting.test_waiting_log import messages
from tests.servers import Reply, Site, redirect, robots

RULES = "User-agent: *\nDisallow: /private\n"
HTML = {"Content-Type": "text/html"}
LOGGER = "scrapy_rep.middleware"
AT_DISCOVERY = "rep/requests/forbidden/at_discovery"


def page(links: list[str]) -> Reply:
    anchors = "".join(f'<a href="{link}">{link}</a>' for link in links)
    return Reply(body=f"<html><body>{anchors}</body></html>".encode(), headers=HTML)


class LinkSpider(ListSpider):
    """Follows every link of every page (no errback unless ``errback``), calling ``between`` (if given) after each
    request it yields has been taken by the spider middlewares and the scheduler; records refusals an errback got."""

    name = "links"

    def __init__(self, *args: Any, errback: bool = False, between: Callable[[Response], None] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.with_errback = errback
        self.between = between

    def parse(self, response: Response) -> Iterator[Any]:  # type: ignore[override]
        self.downloaded.append(response.url)
        for href in response.xpath("//a/@href").getall():
            yield response.follow(href, errback=self.failure if self.with_errback else None)
            if self.between is not None:
                self.between(response)


def _site(sites: Any) -> Site:
    """/ links to /a, /private/1, /b, /private/2 and again /private/1 and /a; /a and /b link to /private/1 and /a."""
    site: Site = sites()
    site.route("/robots.txt", robots(RULES))
    site.route("/", page(["/a", "/private/1", "/b", "/private/2", "/private/1", "/a"]))
    for path in ("/a", "/b"):
        site.route(path, page(["/private/1", "/a"]))
    return site


def _sent(site: Site) -> list[str]:
    return sorted(path for path in site.paths() if path != "/robots.txt")


@pytest.mark.parametrize("at_discovery", [True, False])
@pytest_twisted.ensureDeferred
async def test_a_forbidden_link_of_a_held_origin_is_never_scheduled(
    sites: Any, caplog: pytest.LogCaptureFixture, tmp_path: Path, at_discovery: bool
) -> None:
    """Refused when yielded: not enqueued, counted once as it was in the downloader (the dupefilter takes a repeated
    link first, as the scheduler did), the same DEBUG line, close report and decision log line."""
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    site = _site(sites)
    log = tmp_path / "decisions.jsonl"
    result = await crawl([site.url("/")], spider=LinkSpider, LOG_LEVEL="DEBUG", REP_DECISION_LOG=str(log),
                         REP_REFUSE_AT_DISCOVERY=at_discovery)
    assert _sent(site) == ["/", "/a", "/b"] and site.hits_for("/robots.txt") == 1
    assert result.stat("scheduler/enqueued") == (3 if at_discovery else 5)  # /, /a, /b (+ the two forbidden)
    assert result.stat("dupefilter/filtered") == 6  # the repeats, whichever middleware decided
    assert (result.stat("rep/requests/forbidden"), result.stat(AT_DISCOVERY)) == (2, 2 if at_discovery else 0)
    assert (result.stat("rep/requests/checked"), result.stat("rep/requests/allowed")) == (5, 3)
    result.assert_accounted()
    origin, rule = site.origin(), "line 2 (Disallow: /private) of the '*' group (line 1)"
    version = hashlib.sha256(RULES.encode()).hexdigest()[:12]
    assert sorted(m for m in messages(caplog, logging.DEBUG) if m.startswith("Forbidden by robots.txt")) == [
        f"Forbidden by robots.txt: {site.url(p)} ({origin}/robots.txt {rule}; as ['TestBot']; version {version})"
        for p in ("/private/1", "/private/2")]
    assert f"robots.txt forbade 2 requests of 1 origin at close: {origin} 2 ({rule})" in messages(caplog)
    lines = [json.loads(line) for line in log.read_text().splitlines() if '"url"' in line]
    assert sorted((line["url"], line["decision"]) for line in lines) == sorted(
        [(site.url(p), "allowed") for p in ("/", "/a", "/b")]
        + [(site.url(p), "forbidden") for p in ("/private/1", "/private/2")])


@pytest_twisted.ensureDeferred
async def test_a_request_with_an_errback_is_decided_in_the_downloader_and_its_errback_gets_the_refusal(
    sites: Any,
) -> None:
    site = _site(sites)
    result = await crawl([site.url("/")], spider=LinkSpider, spider_kwargs={"errback": True})
    assert sorted(result.failed) == [(site.url("/private/1"), "IgnoreRequest"),
                                     (site.url("/private/2"), "IgnoreRequest")]
    assert (result.stat("rep/requests/forbidden"), result.stat(AT_DISCOVERY)) == (2, 0)
    assert result.stat("scheduler/enqueued") == 5
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_a_link_to_an_origin_not_held_is_scheduled_and_decided_once_its_robots_txt_arrives(
    sites: Any,
) -> None:
    """The spider middleware starts no robots.txt fetch and waits for none: the other origin's links go on."""
    site, other = _site(sites), sites()
    other.route("/robots.txt", robots(RULES))
    site.route("/", page([other.url("/private/1"), other.url("/ok"), "/private/2"]))
    result = await crawl([site.url("/")], spider=LinkSpider)
    assert other.hits_for("/robots.txt") == 1 and other.paths() == ["/robots.txt", "/ok"]
    assert (result.stat("rep/requests/forbidden"), result.stat(AT_DISCOVERY)) == (2, 1)  # /private/2 of the held
    assert result.stat("scheduler/enqueued") == 3  # /, and the other origin's two
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_an_expired_entry_decides_nothing_at_discovery_and_the_downloader_decides_by_the_new_one(
    sites: Any,
) -> None:
    """A link allowed by the copy held when it was yielded, forbidden by the robots.txt fetched again before it is
    sent: decided in the downloader against the current rules, and counted once."""
    clock = Clock()
    site: Site = sites()
    site.route("/robots.txt", robots(RULES), robots("User-agent: *\nDisallow: /later\n"))
    site.route("/", page(["/later", "/private/1"]))

    def expire(response: Response) -> None:
        clock.advance(2 * 86_400)  # past REP_CACHE_TTL (a day): the entry expires between yield and download

    result = await crawl([site.url("/")], spider=LinkSpider, spider_kwargs={"between": expire},
                         REP_CLOCK=lambda: clock)
    assert site.hits_for("/robots.txt") == 2 and _sent(site) == ["/", "/private/1"]  # by then allowed
    assert (result.stat("rep/requests/checked"), result.stat("rep/requests/forbidden")) == (3, 1)
    assert result.stat(AT_DISCOVERY) == 0  # /later judged allowed when yielded; /private/1 yielded once expired
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_unchecked_links_go_on_to_pass_through_in_the_downloader(sites: Any) -> None:
    """The robots.txt URL itself, data: and meta["dont_obey_robotstxt"] are passed through, as before."""
    site = _site(sites)
    site.route("/", page(["/robots.txt?x=1", "data:text/plain,hi", "/private/1"]))

    class Spider(LinkSpider):
        def parse(self, response: Response) -> Iterator[Any]:  # type: ignore[override]
            yield from super().parse(response)
            if response.url == site.url("/"):
                yield response.follow("/private/3", meta={"dont_obey_robotstxt": True})

    result = await crawl([site.url("/")], spider=Spider)
    assert _sent(site) == ["/", "/private/3", "/robots.txt?x=1"]
    assert (result.stat("rep/requests/passed_through"), result.stat(AT_DISCOVERY)) == (3, 1)
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_a_redirect_to_a_forbidden_url_is_decided_in_the_downloader(sites: Any) -> None:
    site = _site(sites)
    site.route("/", page(["/go"]))
    site.route("/go", redirect("/private/9"))
    result = await crawl([site.url("/")], spider=LinkSpider)
    assert _sent(site) == ["/", "/go"]
    assert (result.stat("rep/requests/forbidden"), result.stat(AT_DISCOVERY)) == (1, 0)
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_a_dry_run_schedules_and_sends_every_link(sites: Any) -> None:
    site = _site(sites)
    result = await crawl([site.url("/")], spider=LinkSpider, REP_ENFORCE=False)
    assert _sent(site) == ["/", "/a", "/b", "/private/1", "/private/2"]
    assert (result.stat("rep/dry_run/would_forbid"), result.stat(AT_DISCOVERY)) == (2, 0)
    assert result.stat("scheduler/enqueued") == 5
    result.assert_accounted()


@pytest.mark.parametrize("at_discovery", [True, False])
@pytest_twisted.ensureDeferred
async def test_clean_param_links_are_made_canonical_when_yielded(sites: Any, at_discovery: bool) -> None:
    """REP_CLEAN_PARAM: the canonical copy replaces the link at once (no round trip through the scheduler), and is
    judged the same way: the forbidden one refused, the allowed one's repeats filtered."""
    site: Site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /private\nClean-param: sid /\n"))
    site.route("/", page(["/page?sid=1", "/page?sid=2", "/private?sid=3", "/page?sid=1"]))
    result = await crawl([site.url("/")], spider=LinkSpider, REP_CLEAN_PARAM=True,
                         REP_REFUSE_AT_DISCOVERY=at_discovery)
    assert _sent(site) == ["/", "/page"]
    assert (result.stat("rep/requests/rewritten"), result.stat("rep/requests/forbidden")) == (3, 1)
    assert result.stat("rep/requests/rewritten/at_discovery") == (3 if at_discovery else 0)
    assert result.stat(AT_DISCOVERY) == (1 if at_discovery else 0)
    assert result.stat("scheduler/enqueued") == (2 if at_discovery else 6)  # / and /page (+ 3 originals, /private)
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_a_use_an_opt_out_refuses_is_refused_at_discovery(sites: Any) -> None:
    site: Site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /private\nContent-Usage: /ai/ train-ai=n\n"))
    site.route("/", page(["/ai/1", "/news"]))
    result = await crawl([site.url("/")], spider=LinkSpider, REP_CONTENT_USES=["train-ai"],
                         REP_TDMREP=False)
    assert _sent(site) == ["/", "/news"]
    assert (result.stat("rep/requests/forbidden/usage"), result.stat(AT_DISCOVERY)) == (1, 1)
    assert result.stat("rep/usage/refused/train-ai") == 1
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_a_link_is_judged_by_its_own_user_agent_token(sites: Any) -> None:
    """With neither REP_USER_AGENT nor ROBOTSTXT_USER_AGENT set, a request's own User-Agent header picks its group,
    at discovery as in the downloader."""
    site: Site = sites()
    site.route("/robots.txt", robots("User-agent: otherbot\nDisallow: /other\n\nUser-agent: *\nDisallow: /private\n"))
    site.route("/", page(["/other/1"]))

    class Spider(LinkSpider):
        def parse(self, response: Response) -> Iterator[Any]:  # type: ignore[override]
            self.downloaded.append(response.url)
            if response.url == site.url("/"):
                yield response.follow("/other/1", headers={"User-Agent": "OtherBot/2.0"})
                yield response.follow("/other/2")

    result = await crawl([site.url("/")], spider=Spider)
    assert _sent(site) == ["/", "/other/2"]
    assert (result.stat(AT_DISCOVERY), result.stat("rep/user_agent/own_header")) == (1, 1)
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_a_start_request_of_a_held_origin_is_refused_when_read(
    sites: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Start requests are read as the crawl goes (RobotsStartMiddleware): one of an origin held by then is judged
    there too, and counts in the close report's start requests: here the first, with an errback, is forbidden in the
    downloader, the second refused when read, so every request and every start request of the crawl was forbidden."""
    site = _site(sites)
    refused: Deferred[None] = Deferred()

    class Spider(LinkSpider):
        async def start(self) -> Any:
            yield Request(site.url("/private/first"), dont_filter=True, errback=self.refusal)
            await maybe_deferred_to_future(refused)  # the first was refused in the downloader: its origin is held
            yield Request(site.url("/private/second"), dont_filter=True)

        def refusal(self, failure: Failure) -> None:
            self.failure(failure)
            refused.callback(None)

    result = await crawl([], spider=Spider)
    assert _sent(site) == [] and result.failed == [(site.url("/private/first"), "IgnoreRequest")]
    assert (result.stat("rep/requests/forbidden"), result.stat(AT_DISCOVERY)) == (2, 1)
    assert (result.stat("rep/report/origins_all_blocked"), result.stat("rep/report/start_requests_all_blocked")) \
        == (1, 1)
    rule = "line 2 (Disallow: /private) of the '*' group (line 1)"
    assert messages(caplog, logging.WARNING) == [
        f"scrapy-rep: every request of {site.origin()} (2) was forbidden by its robots.txt (200): {rule}",
        f"scrapy-rep: every start request (2) was forbidden or dropped by robots.txt: {site.origin()} 2 forbidden "
        f"(200: {rule})",
    ]
    result.assert_accounted()


class SchedulerWithoutDupefilter(Scheduler):
    """Scrapy's scheduler with its dupefilter under another name (``df`` only while its own methods run): a
    scheduler scrapy-rep cannot ask."""

    def __init__(self, dupefilter: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(dupefilter, *args, **kwargs)
        self.filter = self.df
        del self.df

    def __getattribute__(self, name: str) -> Any:
        method = super().__getattribute__(name)
        if name not in ("open", "enqueue_request", "close"):
            return method

        def with_df(*args: Any, **kwargs: Any) -> Any:
            self.df = self.filter
            try:
                return method(*args, **kwargs)
            finally:
                del self.df

        return with_df


@pytest_twisted.ensureDeferred
async def test_a_scheduler_without_a_dupefilter_leaves_the_decision_to_the_downloader(
    sites: Any, caplog: pytest.LogCaptureFixture
) -> None:
    site = _site(sites)
    result = await crawl([site.url("/")], spider=LinkSpider,
                         SCHEDULER=f"{__name__}.{SchedulerWithoutDupefilter.__qualname__}")
    assert _sent(site) == ["/", "/a", "/b"]
    assert (result.stat("rep/requests/forbidden"), result.stat(AT_DISCOVERY)) == (2, 0)
    assert result.stat("rep/degraded/discovery") == 1
    assert [m for m in messages(caplog, logging.WARNING) if "discovery" in m] == [
        "scrapy-rep: the scheduler has no dupefilter (df) as expected on this Scrapy (discovery): forbidden links "
        "are refused in the downloader, as with Scrapy's built-in middleware"]
    result.assert_accounted()


@pytest.mark.parametrize("at_discovery", [True, False])
@pytest_twisted.ensureDeferred
async def test_with_jobdir_a_refused_link_stays_out_of_the_disk_queue_and_its_repeats_are_filtered_on_resume(
    sites: Any, tmp_path: Path, at_discovery: bool
) -> None:
    """JOBDIR: a refused link is never pickled into the job's disk queue; its fingerprint is in the job's
    ``requests.seen`` as before, so the resumed job filters its repeats instead of counting them again."""
    site = _site(sites)
    settings = {"JOBDIR": str(tmp_path / "job"), "REP_REFUSE_AT_DISCOVERY": at_discovery}
    first = await crawl([site.url("/")], spider=LinkSpider, **settings)
    assert first.stat("scheduler/enqueued/disk") == (3 if at_discovery else 5)
    assert (first.stat("rep/requests/forbidden"), first.stat(AT_DISCOVERY)) == (2, 2 if at_discovery else 0)
    again = await crawl([site.url("/")], spider=LinkSpider, **settings)  # the same job: the same requests.seen
    assert _sent(site) == ["/", "/", "/a", "/b"]
    assert (again.stat("rep/requests/forbidden"), again.stat("scheduler/enqueued/disk")) == (0, 1)
    assert again.stat("dupefilter/filtered") == 6  # /a, /private/1, /private/2 (twice), /a: all seen in the job
    first.assert_accounted()
    again.assert_accounted()
