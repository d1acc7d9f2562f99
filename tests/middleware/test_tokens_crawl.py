"""SPEC 6.4 in a real crawl: robots.txt is obeyed as the crawler's own product token in USER_AGENT, and the start-up
says which token that is and where it came from; a REP_* name it does not know stops it."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import pytest_twisted

from scrapy_rep.reporting.startup import PER_REQUEST
from tests.crawl import crawl
from tests.middleware.test_activation import config_error
from tests.servers import robots

RULES = "User-agent: newbiebot\nDisallow: /private/\n\nUser-agent: *\nAllow: /\n"
NEWBIE = "Mozilla/5.0 (compatible; newbiebot/1.0; +https://example.com/bot)"
BROWSER = ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 "
           "Safari/537.36")


def lines(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    """The messages scrapy-rep's middleware logged at exactly ``level``."""
    return [record.getMessage() for record in caplog.records
            if record.name == "scrapy_rep.middleware" and record.levelno == level]


@pytest_twisted.ensureDeferred
async def test_obeyed_as_the_token_inside_compatible_spec_6_4(sites: Any, caplog: pytest.LogCaptureFixture) -> None:
    site = sites()
    site.route("/robots.txt", robots(RULES))
    with caplog.at_level(logging.INFO, logger="scrapy_rep"):
        result = await crawl([site.url("/private/x"), site.url("/a")], USER_AGENT=NEWBIE)
    assert result.downloaded == [site.url("/a")]  # the newbiebot group, not * (which allows all)
    assert result.stat("rep/requests/forbidden") == 1
    assert (f"scrapy-rep: obeying robots.txt as ['newbiebot'] (the product token of USER_AGENT {NEWBIE!r})"
            + PER_REQUEST) in lines(caplog, logging.INFO)
    assert lines(caplog, logging.WARNING) == []


@pytest_twisted.ensureDeferred
async def test_a_browser_user_agent_obeys_the_star_group_and_warns(sites: Any,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    site = sites()
    site.route("/robots.txt", robots(RULES))
    with caplog.at_level(logging.INFO, logger="scrapy_rep"):
        result = await crawl([site.url("/private/x"), site.url("/a")], USER_AGENT=BROWSER)
    assert sorted(result.downloaded) == [site.url("/a"), site.url("/private/x")]
    [warning] = lines(caplog, logging.WARNING)
    assert warning == (f"scrapy-rep: obeying robots.txt as [] (only the * groups): no token of its own in USER_AGENT "
                       f"{BROWSER!r}; set REP_USER_AGENT to the crawler's product token (or an ordered list of "
                       "tokens) to obey the groups that name it" + PER_REQUEST)
    assert not [line for line in lines(caplog, logging.INFO) if "obeying robots.txt" in line]  # said once


@pytest_twisted.ensureDeferred
async def test_rep_user_agent_wins_and_is_named(sites: Any, caplog: pytest.LogCaptureFixture) -> None:
    site = sites()
    site.route("/robots.txt", robots(RULES))
    with caplog.at_level(logging.INFO, logger="scrapy_rep"):
        result = await crawl([site.url("/private/x"), site.url("/a")], USER_AGENT=NEWBIE, REP_USER_AGENT="other")
    assert sorted(result.downloaded) == [site.url("/a"), site.url("/private/x")]
    assert "scrapy-rep: obeying robots.txt as ['other'] (set by REP_USER_AGENT)" in lines(caplog, logging.INFO)


@pytest_twisted.ensureDeferred
async def test_unknown_rep_settings_stop_the_crawl_at_start_up(sites: Any, caplog: pytest.LogCaptureFixture) -> None:
    """Refused, not ignored: an unknown name may have been meant to restrict the crawl (all named in one line)."""
    site = sites()
    site.route("/robots.txt", robots(RULES))
    with caplog.at_level(logging.INFO, logger="scrapy_rep"), pytest.raises(Exception) as raised:
        await crawl([site.url("/a")], REP_HOLD_TIMOUT=5, REP_NOTHING_LIKE_IT=1)
    assert config_error(raised.value).setting == "REP_HOLD_TIMOUT"
    assert lines(caplog, logging.CRITICAL) == [
        "scrapy-rep: REP_HOLD_TIMOUT=5: unknown setting (did you mean REP_HOLD_TIMEOUT?); REP_NOTHING_LIKE_IT=1 is "
        "unknown too; an unknown setting is refused, not ignored, because it may have been meant to restrict the "
        "crawl; the crawl cannot start"]
    assert lines(caplog, logging.WARNING) == []
    assert site.hits == []
