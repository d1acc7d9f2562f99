"""SPEC 2.2 row by row, in real crawls against real local servers."""

from __future__ import annotations

import hashlib
import logging
from typing import Any

import pytest
import pytest_twisted
from twisted.internet.task import Clock

from scrapy_rep.reporting.startup import PER_REQUEST
from tests.crawl import crawl
from tests.servers import Reply, redirect, robots
from tests.versions import error_names

RULES = "User-agent: *\nDisallow: /private\n"


@pytest_twisted.ensureDeferred
async def test_2xx_rules_are_obeyed_and_forbidden_requests_logged_spec_2_2_8_1(sites: Any, caplog: Any) -> None:
    site = sites()
    site.route("/robots.txt", robots("# comment\nUser-agent: *\nDisallow: /private\n"))
    caplog.set_level(logging.DEBUG, logger="scrapy_rep.middleware")
    result = await crawl([site.url("/a"), site.url("/private/x"), site.url("/b")], LOG_LEVEL="DEBUG")
    assert sorted(result.downloaded) == [site.url("/a"), site.url("/b")]
    assert result.failed == [(site.url("/private/x"), "IgnoreRequest")]
    assert site.hits_for("/robots.txt") == 1
    assert "/private/x" not in site.paths()
    assert (result.stat("rep/requests/allowed"), result.stat("rep/requests/forbidden")) == (2, 1)
    assert result.stat("rep/robots/status/200") == 1
    result.assert_accounted()
    forbidden = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Forbidden by robots.txt")]
    version = hashlib.sha256(b"# comment\nUser-agent: *\nDisallow: /private\n").hexdigest()[:12]
    assert forbidden == [f"Forbidden by robots.txt: {site.url('/private/x')} ({site.origin()}/robots.txt line 3 "
                         f"(Disallow: /private) of the '*' group (line 2); as ['TestBot']; version {version})"]


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410])
@pytest_twisted.ensureDeferred
async def test_4xx_allows_everything_spec_2_2(sites: Any, status: int) -> None:
    site = sites()
    site.route("/robots.txt", Reply(status=status, body=b"User-agent: *\nDisallow: /"))
    result = await crawl([site.url("/a"), site.url("/private")])
    assert len(result.downloaded) == 2
    assert result.stat(f"rep/robots/status/{status}") == 1
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_five_redirect_hops_are_followed_spec_2_2(sites: Any) -> None:
    site = sites()
    for hop in range(5):
        site.route("/robots.txt" if hop == 0 else f"/r{hop}", redirect(f"/r{hop + 1}", 301 + hop % 2))
    site.route("/r5", robots(RULES))
    result = await crawl([site.url("/a"), site.url("/private")])
    assert result.downloaded == [site.url("/a")]
    assert [p for p in site.paths() if p != "/a"] == ["/robots.txt", "/r1", "/r2", "/r3", "/r4", "/r5"]
    assert result.stat("rep/requests/forbidden") == 1


@pytest_twisted.ensureDeferred
async def test_the_sixth_redirect_is_treated_as_404_spec_2_2(sites: Any) -> None:
    site = sites()
    for hop in range(6):
        site.route("/robots.txt" if hop == 0 else f"/r{hop}", redirect(f"/r{hop + 1}", 302))
    site.route("/r6", robots("User-agent: *\nDisallow: /"))
    result = await crawl([site.url("/a"), site.url("/private")])
    assert len(result.downloaded) == 2  # full allow
    assert site.hits_for("/r6") == 0
    assert result.stat("rep/robots/exception/TooManyRedirects") == 1


@pytest_twisted.ensureDeferred
async def test_a_redirect_loop_is_treated_as_404_spec_2_2(sites: Any) -> None:
    site = sites()
    site.route("/robots.txt", redirect("/loop"))
    site.route("/loop", redirect("/robots.txt"))
    result = await crawl([site.url("/a"), site.url("/private")])
    assert len(result.downloaded) == 2
    assert site.hits_for("/robots.txt") == 1 and site.hits_for("/loop") == 1
    assert result.stat("rep/robots/exception/RedirectLoop") == 1


@pytest_twisted.ensureDeferred
async def test_a_cross_origin_redirect_target_is_obeyed_for_the_original_origin_spec_2_2(sites: Any) -> None:
    first, other = sites(), sites()
    first.route("/robots.txt", redirect(other.url("/shared-robots.txt")))
    other.route("/shared-robots.txt", robots(RULES))
    other.route("/robots.txt", robots("User-agent: *\nDisallow: /other-only\n"))
    result = await crawl([first.url("/private"), first.url("/other-only"), other.url("/private")])
    # first's requests obey the redirect target's body; other's own robots.txt is its own.
    assert sorted(result.downloaded) == sorted([first.url("/other-only"), other.url("/private")])
    assert other.hits_for("/shared-robots.txt") == 1 and other.hits_for("/robots.txt") == 1


@pytest.mark.parametrize("status", [500, 503, 429])
@pytest_twisted.ensureDeferred
async def test_server_errors_hold_requests_until_a_retry_succeeds_spec_2_2_2_3(sites: Any, status: int) -> None:
    clock = Clock()
    site = sites()
    site.route("/robots.txt", Reply(status=status), robots(RULES))
    delay = 15 if status in (503, 429) else 60  # SPEC 2.5: 503 and 429 sooner

    def too_early() -> None:
        clock.advance(delay - 1)

    def due() -> None:
        clock.advance(1)

    result = await crawl([site.url("/a"), site.url("/private")], REP_CLOCK=lambda: clock,
                         spider_kwargs={"phases": [(too_early, []), (due, [])]})
    assert result.downloaded == [site.url("/a")]
    assert site.hits_for("/robots.txt") == 2
    assert site.paths().index("/a") > 1  # nothing of the origin was sent before robots.txt answered 200
    assert (result.stat(f"rep/robots/status/{status}"), result.stat("rep/robots/status/200")) == (1, 1)
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_retry_after_sets_the_next_attempt_spec_2_5(sites: Any) -> None:
    clock = Clock()
    site = sites()
    site.route("/robots.txt", Reply(status=503, headers={"Retry-After": "120"}), robots(RULES))
    hits_at: list[int] = []

    def step() -> None:
        hits_at.append(site.hits_for("/robots.txt"))
        clock.advance(100)

    result = await crawl([site.url("/a")], REP_CLOCK=lambda: clock, spider_kwargs={"phases": [(step, []), (step, [])]})
    assert hits_at == [1, 1]  # not retried at 15 s (the 503 schedule) nor at 100 s: Retry-After said 120
    assert site.hits_for("/robots.txt") == 2 and result.downloaded == [site.url("/a")]


@pytest.mark.parametrize(
    ("where", "error"),
    [
        ("dns", "CannotResolveHostError"),
        ("refused", "DownloadConnectionRefusedError"),
        ("timeout", "DownloadTimeoutError"),
        ("reset", "DownloadFailedError"),
    ],
)
@pytest_twisted.ensureDeferred
async def test_network_errors_hold_then_drop_after_the_hold_timeout_spec_2_2_2_3(
    sites: Any, where: str, error: str
) -> None:
    clock = Clock()
    site = sites()
    if where == "dns":
        urls = ["http://robots-test.invalid/a", "http://robots-test.invalid/b"]
    elif where == "refused":
        closed = sites()
        urls = [closed.url("/a"), closed.url("/b")]
        await closed.stop()
    else:
        site.route("/robots.txt", Reply(hang=True) if where == "timeout" else Reply(body=b"x" * 5000, reset_after=10))
        urls = [site.url("/a"), site.url("/b")]
    result = await crawl(urls, REP_CLOCK=lambda: clock, DOWNLOAD_TIMEOUT=1, REP_HOLD_TIMEOUT=30,
                         spider_kwargs={"phases": [(lambda: clock.advance(30), [])]})
    assert result.downloaded == []
    assert sum(result.stat(f"rep/robots/exception/{name}") for name in error_names(error)) == 1, [
        k for k in result.stats if k.startswith("rep/")]
    assert result.stat("rep/requests/dropped_after_hold/timeout") == 2
    assert "/a" not in site.paths()
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_outcome_changes_are_logged_once_per_origin_and_summarised_at_close(sites: Any, caplog: Any) -> None:
    clock = Clock()
    site = sites()
    site.route("/robots.txt", Reply(status=503), Reply(status=503), robots(RULES))
    caplog.set_level(logging.INFO, logger="scrapy_rep.middleware")
    await crawl([site.url("/a")], REP_CLOCK=lambda: clock,
                spider_kwargs={"phases": [(lambda: clock.advance(15), []), (lambda: clock.advance(30), [])]})
    lines = [r.getMessage() for r in caplog.records if r.name == "scrapy_rep.middleware"]
    assert lines == [
        "scrapy-rep: obeying robots.txt as ['TestBot'] (the product token of USER_AGENT "
        "'TestBot/1.0 (+https://example.invalid/bot)')" + PER_REQUEST,  # once, at start (reporting/startup.py)
        "scrapy-rep: robots.txt cache: memory (this process only, at most 100,000 origins)",
        f"{site.origin()} robots.txt 503: holding requests, retry in 15 s",  # the second 503 changes nothing
        f"robots.txt: 1 request held for 1 origin; {site.origin()} (1 request, 503, 1 attempt, next retry in 15 s, "
        "drops from 600 s)",  # the origin starts holding (waiting_log.py)
        f"{site.origin()} robots.txt 200: obeying its rules",
        "robots.txt: no requests held any more",
        "robots.txt origins at close: 1 ready",
    ]


@pytest_twisted.ensureDeferred
async def test_retry_middleware_does_not_retry_robots_txt_spec_2_5(sites: Any) -> None:
    """Only the middleware's own schedule re-fetches robots.txt (RetryMiddleware would retry a 500 at once)."""
    clock = Clock()
    site = sites()
    site.route("/robots.txt", Reply(status=500))
    result = await crawl([site.url("/a")], REP_CLOCK=lambda: clock, RETRY_ENABLED=True, RETRY_TIMES=3,
                         REP_HOLD_TIMEOUT=30, spider_kwargs={"phases": [(lambda: clock.advance(30), [])]})
    assert site.hits_for("/robots.txt") == 1
    assert result.stat("retry/count") == 0


@pytest.mark.parametrize("location", ["ftp://example.com/robots.txt", "data:,x", "http://[::1/robots.txt"])
@pytest_twisted.ensureDeferred
async def test_an_unfollowable_redirect_is_treated_as_404_spec_2_2(sites: Any, location: str) -> None:
    site = sites()
    site.route("/robots.txt", redirect(location))
    result = await crawl([site.url("/a")])
    assert result.downloaded == [site.url("/a")]
    assert result.stat("rep/robots/exception/BadRedirect") == 1
