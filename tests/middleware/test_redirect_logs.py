"""What the log says about a redirected robots.txt (issue 12; SPEC 2.2 "3xx"): the outcome line names the URL the
chain ended on, or the redirect target it refused and why. Real crawls against local servers, caplog on the
middleware's logger."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet.task import Clock

from tests.crawl import crawl
from tests.servers import Reply, redirect, robots

RULES = "User-agent: *\nDisallow: /private\n"
LOGGER = "scrapy_rep.middleware"


def outcome_lines(caplog: Any, origin: str) -> list[tuple[int, str]]:
    """(level, message) of the outcome lines logged for ``origin``."""
    return [(r.levelno, r.getMessage()) for r in caplog.records
            if r.name == LOGGER and r.getMessage().startswith(f"{origin} robots.txt ")]


@pytest_twisted.ensureDeferred
async def test_a_robots_txt_reached_through_redirects_names_where_it_came_from_spec_2_2(
    sites: Any, caplog: Any
) -> None:
    first, other = sites(), sites()
    first.route("/robots.txt", redirect("/r1")).route("/r1", redirect("/r2", 302))
    first.route("/r2", redirect(other.url("/robots.txt"), 307))
    other.route("/robots.txt", robots(RULES))
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    result = await crawl([first.url("/a"), first.url("/private/x")], LOG_LEVEL="DEBUG")
    assert result.downloaded == [first.url("/a")]
    # A first plain 2xx stays at DEBUG (a broad crawl meets many http -> https redirects), with its final URL.
    assert outcome_lines(caplog, first.origin()) == [
        (logging.DEBUG, f"{first.origin()} robots.txt 200 (via {other.url('/robots.txt')} after 3 redirects): "
                        "obeying its rules"),
    ]


@pytest_twisted.ensureDeferred
async def test_a_failure_behind_a_redirect_names_the_url_that_failed_spec_2_2_2_3(sites: Any, caplog: Any) -> None:
    clock = Clock()
    site = sites()
    site.route("/robots.txt", redirect("/real"))
    site.route("/real", Reply(status=503), robots(RULES))
    caplog.set_level(logging.INFO, logger=LOGGER)
    result = await crawl([site.url("/a")], REP_CLOCK=lambda: clock,
                         spider_kwargs={"phases": [(lambda: clock.advance(15), [])]})
    assert result.downloaded == [site.url("/a")]
    via = f"(via {site.url('/real')} after 1 redirect)"
    assert outcome_lines(caplog, site.origin()) == [
        (logging.INFO, f"{site.origin()} robots.txt 503 {via}: holding requests, retry in 15 s"),
        (logging.INFO, f"{site.origin()} robots.txt 200 {via}: obeying its rules"),
    ]


@pytest.mark.parametrize(
    ("location", "refused"),
    [
        ("ftp://example.com/robots.txt", "redirect to ftp://example.com/robots.txt refused: not http(s)"),
        ("data:,x", "redirect to data:,x refused: not http(s)"),
        ("file:///etc/passwd", "redirect to file:///etc/passwd refused: not http(s)"),
        ("https:///robots.txt", "redirect to https:///robots.txt refused: no host"),
        ("http://[::1/robots.txt", "redirect to http://[::1/robots.txt refused: not a valid URL (Invalid IPv6 URL)"),
    ],
)
@pytest_twisted.ensureDeferred
async def test_a_refused_redirect_target_is_named_with_the_reason_spec_2_2(
    sites: Any, caplog: Any, location: str, refused: str
) -> None:
    site = sites()
    site.route("/robots.txt", redirect(location))
    caplog.set_level(logging.INFO, logger=LOGGER)
    result = await crawl([site.url("/a")])
    assert result.downloaded == [site.url("/a")]
    assert outcome_lines(caplog, site.origin()) == [
        (logging.INFO, f"{site.origin()} robots.txt BadRedirect: allowing everything ({refused})"),
    ]


@pytest_twisted.ensureDeferred
async def test_a_refused_redirect_after_others_names_where_it_came_from_spec_2_2(sites: Any, caplog: Any) -> None:
    site = sites()
    site.route("/robots.txt", redirect("/r1")).route("/r1", redirect("ftp://example.com/robots.txt"))
    caplog.set_level(logging.INFO, logger=LOGGER)
    await crawl([site.url("/a")])
    assert outcome_lines(caplog, site.origin()) == [
        (logging.INFO, f"{site.origin()} robots.txt BadRedirect: allowing everything (redirect from "
                       f"{site.url('/r1')} to ftp://example.com/robots.txt refused: not http(s))"),
    ]


@pytest_twisted.ensureDeferred
async def test_a_redirect_loop_names_the_redirect_that_closes_it_spec_2_2(sites: Any, caplog: Any) -> None:
    site = sites()
    site.route("/robots.txt", redirect("/x")).route("/x", redirect("/robots.txt"))
    caplog.set_level(logging.INFO, logger=LOGGER)
    await crawl([site.url("/a")])
    assert outcome_lines(caplog, site.origin()) == [
        (logging.INFO, f"{site.origin()} robots.txt RedirectLoop: allowing everything "
                       f"({site.url('/x')} -> {site.url('/robots.txt')} loops)"),
    ]


@pytest.mark.parametrize("max_redirects", [5, 7])
@pytest_twisted.ensureDeferred
async def test_too_many_redirects_names_the_redirect_past_the_limit_spec_2_2(
    sites: Any, caplog: Any, max_redirects: int
) -> None:
    site = sites()
    for hop in range(max_redirects + 1):
        site.route("/robots.txt" if hop == 0 else f"/r{hop}", redirect(f"/r{hop + 1}", 302))
    caplog.set_level(logging.INFO, logger=LOGGER)
    await crawl([site.url("/a")], REP_MAX_REDIRECTS=max_redirects)
    nth = f"{max_redirects + 1}th"
    assert outcome_lines(caplog, site.origin()) == [
        (logging.INFO, f"{site.origin()} robots.txt TooManyRedirects: allowing everything ({nth} redirect, to "
                       f"{site.url(f'/r{max_redirects + 1}')}, past REP_MAX_REDIRECTS {max_redirects})"),
    ]
    assert site.hits_for(f"/r{max_redirects + 1}") == 0


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (Reply(status=302), "no Location header to follow"),
        (Reply(status=300, headers={"Location": "/elsewhere"}),
         "300 is not a redirect followed (301, 302, 303, 307 and 308 are)"),
    ],
)
@pytest_twisted.ensureDeferred
async def test_a_3xx_that_is_not_followed_says_why_spec_2_2(sites: Any, caplog: Any, reply: Reply, why: str) -> None:
    site = sites()
    site.route("/robots.txt", redirect("/r1")).route("/r1", reply)
    caplog.set_level(logging.INFO, logger=LOGGER)
    await crawl([site.url("/a")])
    status = reply.status
    assert outcome_lines(caplog, site.origin()) == [
        (logging.INFO, f"{site.origin()} robots.txt {status} (via {site.url('/r1')} after 1 redirect): "
                       f"allowing everything ({why})"),
    ]
    assert site.hits_for("/elsewhere") == 0


@pytest_twisted.ensureDeferred
async def test_an_entry_read_from_the_store_has_no_redirect_detail_spec_3_2(
    sites: Any, caplog: Any, tmp_path: Path
) -> None:
    """The store keeps outcomes, not URLs (Entry's format is unchanged): a crawler reading another's entry says
    what it means, without where the redirect pointed."""
    site = sites()
    site.route("/robots.txt", redirect("ftp://example.com/robots.txt"))
    store = f"sqlite:///{tmp_path / 'robots.db'}"
    caplog.set_level(logging.INFO, logger=LOGGER)
    clock = Clock()
    await crawl([site.url("/a")], REP_STORE=store, REP_CLOCK=lambda: clock)
    clock.advance(7200)
    second = await crawl([site.url("/b")], REP_STORE=store, REP_CLOCK=lambda: clock)
    assert second.stat("rep/cache/store_hits") == 1 and site.hits_for("/robots.txt") == 1
    assert [message for _, message in outcome_lines(caplog, site.origin())] == [
        f"{site.origin()} robots.txt BadRedirect: allowing everything (redirect to ftp://example.com/robots.txt "
        "refused: not http(s))",
        f"{site.origin()} robots.txt BadRedirect: allowing everything (from the store, fetched 120 min ago)",
    ]
