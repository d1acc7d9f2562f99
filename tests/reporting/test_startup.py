"""The start-up block (reporting/startup.py; issue 25, item 4): the tokens obeyed, the cache (kind and resolved file
or server; once the spider is open, how many origins a persistent one already holds), a WARNING for a dry run; an
unknown REP_* name is no longer among its warnings: it stops the crawl.
Real crawls against the local servers, logs captured from ``scrapy_rep.middleware``."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted

from scrapy_rep.reporting.startup import PER_REQUEST
from tests.crawl import crawl
from tests.middleware.test_activation import config_error
from tests.reporting.test_waiting_log import messages
from tests.requests.test_dry_run import DRY_RUN_WARNING
from tests.servers import robots
from tests.stores.storetools import RedisServer

CACHE = "scrapy-rep: robots.txt cache: "


def cache_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [line for line in messages(caplog) if line.startswith(("scrapy-rep: robots.txt cache", "scrapy-rep: obey"))]


@pytest_twisted.ensureDeferred
async def test_memory_cache_is_named_and_not_counted(sites: Any, caplog: pytest.LogCaptureFixture) -> None:
    site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /private\n"))
    with caplog.at_level(logging.INFO):
        await crawl([site.url("/a")], REP_MEMORY_MAX_ORIGINS=500)
    assert cache_lines(caplog) == [
        "scrapy-rep: obeying robots.txt as ['TestBot'] (the product token of USER_AGENT "
        "'TestBot/1.0 (+https://example.invalid/bot)')" + PER_REQUEST,
        CACHE + "memory (this process only, at most 500 origins)",
    ]
    assert not messages(caplog, logging.WARNING)


@pytest_twisted.ensureDeferred
async def test_a_sqlite_cache_says_its_absolute_path_and_what_it_holds(
    sites: Any, caplog: pytest.LogCaptureFixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relative path is said resolved; the second crawl is told the first one's origins are there to reuse."""
    monkeypatch.chdir(tmp_path)
    first, second = sites(), sites()
    for site in (first, second):
        site.route("/robots.txt", robots("User-agent: *\nDisallow: /private\n"))
    path = os.path.realpath(tmp_path / "rep.db")
    seen = []
    for urls in ([first.url("/a"), second.url("/a")], [first.url("/b")]):
        caplog.clear()
        with caplog.at_level(logging.INFO):
            await crawl(urls, REP_STORE="sqlite:///./rep.db")
        seen.append(cache_lines(caplog)[1:])
    assert seen == [
        [CACHE + f"SQLite file {path}", f"scrapy-rep: robots.txt cache SQLite file {path} holds 0 origins already"],
        [CACHE + f"SQLite file {path}", f"scrapy-rep: robots.txt cache SQLite file {path} holds 2 origins already"],
    ]
    assert first.hits_for("/robots.txt") == 1  # the second crawl reused it


@pytest_twisted.ensureDeferred
async def test_a_redis_cache_names_its_server_and_counts(
    sites: Any, caplog: pytest.LogCaptureFixture, redis_server: RedisServer
) -> None:
    site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /private\n"))
    await crawl([site.url("/a")], REP_STORE=redis_server.url)
    with caplog.at_level(logging.INFO):
        await crawl([site.url("/b")], REP_STORE=redis_server.url)
    where = f"redis://127.0.0.1:{redis_server.port}/0"
    assert cache_lines(caplog)[1:] == [CACHE + where, f"scrapy-rep: robots.txt cache {where} holds 1 origin already"]


@pytest_twisted.ensureDeferred
async def test_a_dry_run_is_a_warning_at_start(sites: Any, caplog: pytest.LogCaptureFixture) -> None:
    """A forgotten REP_ENFORCE = False crawls forbidden pages: said as a WARNING before anything is sent."""
    site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /private\n"))
    with caplog.at_level(logging.INFO):
        result = await crawl([site.url("/private/x")], REP_ENFORCE=False)
    warnings = messages(caplog, logging.WARNING)
    assert [line for line in warnings if line.startswith("scrapy-rep: REP_ENFORCE")] == [DRY_RUN_WARNING]
    assert warnings.index(DRY_RUN_WARNING) == 0  # before anything the crawl says about robots.txt
    assert result.downloaded == [site.url("/private/x")]


@pytest_twisted.ensureDeferred
async def test_a_misspelt_setting_stops_the_crawl_before_anything_is_sent(sites: Any,
                                                                         caplog: pytest.LogCaptureFixture) -> None:
    """``-s REP_CONTENT_USE=train-ai`` (for REP_CONTENT_USES) was a WARNING, and the crawl then downloaded the pages
    the site refuses for AI training: now one CRITICAL line, and no request at all (not even robots.txt)."""
    site = sites()
    site.route("/robots.txt", robots("User-agent: *\nContent-Usage: train-ai=n\n"))
    with caplog.at_level(logging.INFO), pytest.raises(Exception) as raised:
        await crawl([site.url("/a")], REP_CONTENT_USE="train-ai")
    assert config_error(raised.value).setting == "REP_CONTENT_USE"
    assert messages(caplog, logging.CRITICAL) == [
        "scrapy-rep: REP_CONTENT_USE='train-ai': unknown setting (did you mean REP_CONTENT_USES?); an unknown setting "
        "is refused, not ignored, because it may have been meant to restrict the crawl; the crawl cannot start"]
    assert messages(caplog, logging.WARNING) == [] and cache_lines(caplog) == []  # no start-up block
    assert site.hits == []


@pytest.mark.parametrize(("parser", "warned"), [("scrapy.robotstxt.PythonRobotParser", True),
                                                ("scrapy_rep.RobotParser", False), (None, False)])
@pytest_twisted.ensureDeferred
async def test_a_robotstxt_parser_of_its_own_is_said_not_to_be_used(sites: Any, caplog: pytest.LogCaptureFixture,
                                                                    parser: str | None, warned: bool) -> None:
    """ROBOTSTXT_PARSER serves Scrapy's built-in middleware; set to another parser beside scrapy-rep it would be
    silently ignored: one WARNING at start-up. Scrapy's default (not set by the user) says nothing."""
    site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /private\n"))
    settings = {"ROBOTSTXT_PARSER": parser} if parser else {}
    with caplog.at_level(logging.INFO):
        result = await crawl([site.url("/private/x"), site.url("/a")], **settings)
    said = [line for line in messages(caplog, logging.WARNING) if "ROBOTSTXT_PARSER" in line]
    assert said == ([f"scrapy-rep: ROBOTSTXT_PARSER = {parser!r} is not used: scrapy_rep.RobotsMiddleware decides "
                     "with Google's matching (the setting serves Scrapy's built-in middleware); remove it"]
                    if warned else [])
    assert result.downloaded == [site.url("/a")]


@pytest.mark.parametrize(("settings", "expected"), [
    ({}, []),  # the memory store keeps no history; nothing opt-in
    ({"REP_STORE": "sqlite"}, ["scrapy-rep: evidence kept: each origin's last 100 robots.txt versions in the store "
                               "(REP_HISTORY_VERSIONS)"]),
    ({"REP_STORE": "sqlite", "REP_HISTORY_VERSIONS": 0, "REP_DECISION_LOG": "log", "REP_WARC": "warc"},
     ["scrapy-rep: evidence kept: a decision log in {tmp}/decisions.jsonl (REP_DECISION_LOG); a WARC archive of every "
      "robots.txt copy in {tmp}/warc (REP_WARC)"]),
])
@pytest_twisted.ensureDeferred
async def test_the_evidence_kept_is_said_at_start(sites: Any, caplog: pytest.LogCaptureFixture, tmp_path: Path,
                                                 settings: dict[str, Any], expected: list[str]) -> None:
    paths = {"REP_STORE": f"sqlite:///{tmp_path}/rep.db", "REP_DECISION_LOG": f"{tmp_path}/decisions.jsonl",
             "REP_WARC": f"{tmp_path}/warc"}
    site = sites()
    with caplog.at_level(logging.INFO):
        await crawl([site.url("/a")], **{name: paths.get(name, value) if name in paths else value
                                         for name, value in settings.items()})
    assert [line for line in messages(caplog) if line.startswith("scrapy-rep: evidence")] == [
        line.format(tmp=tmp_path) for line in expected]
