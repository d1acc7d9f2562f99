"""``example_project/``: a real Scrapy project; ``scrapy list`` and ``scrapy crawl`` work inside it, through the
add-on, against the demo site served by ``scrapy-rep demo --serve``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scrapy import version_info as scrapy_version

from .conftest import REPO

PROJECT = REPO / "example_project"
SCRAPY = Path(sys.executable).parent / "scrapy"

pytestmark = pytest.mark.slow


def scrapy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRAPY), *args], cwd=PROJECT, capture_output=True, text=True, timeout=120, check=False)


def crawl(tmp_path: Path, spider: str, urls: list[str]) -> tuple[dict[str, str], str]:
    """Run a spider; return url -> outcome (and reason, for stopped requests) and Scrapy's log."""
    outcomes, _, log = crawl_items(tmp_path, spider, urls)
    return outcomes, log


def crawl_items(tmp_path: Path, spider: str, urls: list[str]) -> tuple[dict[str, str], list[dict[str, Any]], str]:
    """``crawl``, with the items as exported."""
    out = tmp_path / f"{spider}.jsonl"
    done = scrapy("crawl", spider, "-a", f"start_url={','.join(urls)}", "-O", str(out), "-s", "LOG_LEVEL=INFO")
    assert done.returncode == 0, done.stderr[-3000:]
    items = [json.loads(line) for line in out.read_text().splitlines()]
    return {item["url"]: item.get("reason", item["outcome"]) for item in items}, items, done.stderr


def test_scrapy_list_shows_both_spiders() -> None:
    done = scrapy("list")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["catalog", "news"]


def test_catalog_crawls_as_examplebot_through_the_addon(tmp_path: Path, demo_site: dict[str, str]) -> None:
    base = demo_site["agents"]
    outcomes, log = crawl(tmp_path, "catalog", [f"{base}/", f"{base}/members/profile"])
    assert outcomes[f"{base}/"] == "crawled"
    assert outcomes[f"{base}/members/profile"] == (
        "IgnoreRequest: Forbidden by robots.txt: line 6 (Disallow: /members/) of the 'examplebot' group (line 5)")
    assert "'rep/requests/forbidden': 1" in log  # scrapy-rep's stats: the add-on replaced the built-in
    assert "robotstxt/request_count" not in log


def test_every_item_carries_the_evidence_of_its_decision(tmp_path: Path, demo_site: dict[str, str]) -> None:
    """The spiders copy meta["rep_basis"] into each item; the project's EvidencePipeline flattens the robots.txt
    version, its fetch time and the deciding rule into it: one version for the origin, allowed and stopped alike."""
    base = demo_site["agents"]
    _, items, _ = crawl_items(tmp_path, "catalog", [f"{base}/", f"{base}/members/profile"])
    by_url = {item["url"]: item for item in items}
    crawled, stopped = by_url[f"{base}/"], by_url[f"{base}/members/profile"]
    assert crawled["rep_basis"]["decision"] == "allowed" and stopped["rep_basis"]["decision"] == "forbidden"
    versions = {item["robots_txt_version"] for item in items}
    assert len(versions) == 1 and all(len(version) == 64 for version in versions)
    assert stopped["decided_by"] == "line 6 (Disallow: /members/) of the 'examplebot' group (line 5)"
    assert crawled["robots_txt_fetched_at"] == stopped["robots_txt_fetched_at"]


def test_news_uses_its_own_tokens_and_crawl_delay(tmp_path: Path, demo_site: dict[str, str]) -> None:
    """Per-spider settings: REP_USER_AGENT = [examplebot-news, examplebot] and REP_OBEY_CRAWL_DELAY."""
    base = demo_site["agents"]
    outcomes, log = crawl(tmp_path, "news", [f"{base}/", f"{base}/members/profile"])
    assert outcomes[f"{base}/"] == outcomes[f"{base}/members/profile"] == "crawled"  # its group allows all
    assert "'rep/crawl_delay/" in log


def test_a_spider_without_start_url_says_what_to_give() -> None:
    done = scrapy("crawl", "catalog")
    assert "give the pages to crawl: scrapy crawl NAME -a start_url=URL" in done.stderr


def test_a_configuration_error_is_one_line_and_exit_status_1() -> None:
    """Issue 25: a setting scrapy-rep refuses (here a SQLite file in a directory that does not exist, resolved
    against the working directory) is one CRITICAL line, not followed by asyncio's or Twisted's ~65-line traceback of
    the same error, and ``scrapy crawl`` exits 1 before any request."""
    done = scrapy("crawl", "catalog", "-a", "start_url=http://127.0.0.1:9/", "-s",
                  "REP_STORE=sqlite:///no-such-dir/robots.db")
    assert done.returncode == 1
    ours = [line for line in done.stderr.splitlines() if "CRITICAL" in line]
    assert len(ours) >= 1 and ours[0].endswith(
        f"[scrapy_rep.middleware] CRITICAL: scrapy-rep: REP_STORE='sqlite:///no-such-dir/robots.db': the directory "
        f"{PROJECT}/no-such-dir does not exist; a relative path (sqlite:///robots.db) is relative to the working "
        "directory, an absolute one has four slashes (sqlite:////abs/robots.db); the crawl cannot start")
    after = done.stderr.split(ours[0], 1)[1]
    assert "Logging error" not in after and "Task exception was never retrieved" not in after
    if scrapy_version >= (2, 14):
        assert after.strip() == ""
    else:  # Scrapy 2.13's crawl command: Twisted prints the failed Deferred to stderr itself, once
        assert after.count("Traceback (most recent call last)") == 1
    assert not (PROJECT / "no-such-dir").exists()
