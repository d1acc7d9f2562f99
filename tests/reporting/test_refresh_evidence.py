"""A refresh that changes an origin's robots.txt, end to end: a real crawl on a real SQLite store, driven by an
injected clock, says it in the crawl log (reporting/rule_changes.py), and the store's history then lists both
versions (``scrapy-rep cache history``) and their difference as rules (``scrapy-rep cache diff``)."""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from scrapy.crawler import Crawler
from twisted.internet.task import Clock

from scrapy_rep.stores import iso
from tests.cli.conftest import run_cli
from tests.crawl import crawl, when_settled
from tests.servers import robots

DAY = 86_400.0
BEFORE = "User-agent: *\nAllow: /private/open\nDisallow: /private\n"
AFTER = "User-agent: *\nDisallow: /private\nDisallow: /b\n"


def short(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


@pytest_twisted.ensureDeferred
async def test_a_changed_robots_txt_shows_in_the_log_the_history_and_the_diff(
    sites: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="scrapy_rep.middleware")
    clock = Clock()
    site = sites()
    site.route("/robots.txt", robots(BEFORE), robots(AFTER))
    store = f"sqlite:///{tmp_path / 'robots.db'}"
    crawlers: list[Crawler] = []
    result = await crawl(
        [site.url("/b")], on_crawler=crawlers.append, REP_CLOCK=lambda: clock, REP_STORE=store,
        spider_kwargs={"phases": [(when_settled(crawlers, lambda: clock.advance(DAY + 1)), [site.url("/b?again")])]},
    )
    assert result.downloaded == [site.url("/b")]  # allowed by the first version, forbidden by the second
    assert result.stat("rep/robots/rules_changed") == 1
    changed = [record.getMessage() for record in caplog.records if "robots.txt changed" in record.getMessage()]
    assert changed == [
        f"{site.origin()} robots.txt changed (version {short(BEFORE)} -> {short(AFTER)}, fetched {iso(DAY + 1)}): "
        "for ['TestBot'], rules added: Disallow: /b (line 3); removed: Allow: /private/open (line 2)"]

    history = run_cli("cache", "history", site.origin(), "--store", store, "--json")
    assert history.returncode == 0, history.stderr
    versions = json.loads(history.stdout)["versions"]
    assert [(row["id"][:12], row["first_seen"]) for row in versions] == [(short(AFTER), DAY + 1),
                                                                          (short(BEFORE), 0.0)]  # newest first

    diff = run_cli("cache", "diff", site.origin(), "--store", store)
    assert diff.returncode == 0, diff.stderr
    assert "+ Disallow: /b (line 3)" in diff.stdout and "- Allow: /private/open (line 2)" in diff.stdout
