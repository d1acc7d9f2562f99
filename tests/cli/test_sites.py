"""``check`` and ``lint`` against scripted servers (``tests.servers.Site``): a site URL stands for its origin's
/robots.txt, a failing fetch is reported as such, and an HTML page served as robots.txt is named once, first."""

from __future__ import annotations

import json
from typing import Any

import pytest_twisted

from tests.servers import Reply, robots

from .conftest import run_cli_beside

RULES = "User-agent: *\nDisallow: /x\n"


def html_page(paragraphs: int) -> bytes:
    lines = ["<!DOCTYPE html>", "<html><head><title>Shop</title></head>", "<body>"]
    lines += [f"<p>Item {i}: on sale</p>" for i in range(paragraphs)]
    return ("\n".join([*lines, "</body></html>"]) + "\n").encode()


@pytest_twisted.ensureDeferred
async def test_check_on_a_site_url_fetches_its_robots_txt(sites: Any) -> None:
    """The home page (HTML) is not read as robots.txt: the origin's /robots.txt is, and its rule decides."""
    site = sites(robots_default=robots(RULES))
    done = await run_cli_beside("check", site.url("/"), "/x", "--json")
    document = json.loads(done.stdout)
    assert site.paths() == ["/robots.txt"]
    assert document["robots_txt"]["source"] == site.url("/robots.txt")
    assert document["notes"] == [f"{site.url('/')} is not a robots.txt URL: checking {site.url('/robots.txt')}"]
    assert document["results"][0]["rule"] == {"type": "disallow", "pattern": "/x", "line": 2, "group_line": 1}
    assert done.returncode == 1


@pytest_twisted.ensureDeferred
async def test_lint_on_a_site_url_that_answers_503_reports_the_outcome_and_never_says_clean(sites: Any) -> None:
    site = sites(robots_default=Reply(503, b"<h1>503 Service Unavailable</h1>"))
    done = await run_cli_beside("lint", site.url("/shop/"))
    lines = done.stdout.splitlines()
    assert site.paths() == ["/robots.txt"]
    assert lines[0] == f"{site.url('/shop/')} is not a robots.txt URL: checking {site.url('/robots.txt')}"
    assert lines[1].startswith(f"robots.txt {site.url('/robots.txt')}: HTTP 503: temporarily unavailable")
    assert "clean" not in done.stdout
    assert lines[-1] == "nothing linted: the answer is not a robots.txt"
    assert done.returncode == 3


@pytest_twisted.ensureDeferred
async def test_lint_on_a_404_is_a_finding_not_clean(sites: Any) -> None:
    """SPEC 2.2: a 4xx means no robots.txt (everything allowed); lint says so and exits 1."""
    site = sites()
    done = await run_cli_beside("lint", site.url("/robots.txt"), "--json")
    document = json.loads(done.stdout)
    assert document["robots_txt"]["status"] == 404 and document["robots_txt"]["outcome"] == "allow-all"
    assert [f["kind"] for f in document["findings"]] == ["no-robots-txt"]
    assert done.returncode == 1


@pytest_twisted.ensureDeferred
async def test_an_html_page_gets_one_summary_finding_first_then_a_count_of_the_others(sites: Any) -> None:
    site = sites(robots_default=Reply(body=html_page(100), headers={"Content-Type": "text/html"}))
    done = await run_cli_beside("lint", site.url("/robots.txt"))
    lines = done.stdout.splitlines()
    assert lines[1] == ("line 1: html-page: this looks like an HTML page, not a robots.txt: 104 lines ignored "
                        "(often a site's page served for a missing /robots.txt)")
    assert lines[2:] == ["... and 105 more about the page's lines, not listed for an HTML page: 101 unknown-field, "
                         "3 not-a-directive, 1 missing-colon", "106 findings (1 shown; --all lists every one)"]
    every = await run_cli_beside("lint", site.url("/robots.txt"), "--all")
    assert len(every.stdout.splitlines()) == 1 + 106 + 1
    assert done.returncode == every.returncode == 1


@pytest_twisted.ensureDeferred
async def test_text_html_content_type_counts_only_for_a_body_of_markup(sites: Any) -> None:
    """A robots.txt served as text/html (a common misconfiguration) is linted as what it is."""
    markup = sites(robots_default=Reply(body=b"<div>Not found</div>\n", headers={"Content-Type": "text/html"}))
    misnamed = sites(robots_default=Reply(body=RULES.encode(), headers={"Content-Type": "text/html"}))
    first = json.loads((await run_cli_beside("lint", markup.url("/robots.txt"), "--json")).stdout)["findings"][0]
    assert first["kind"] == "html-page" and "1 line ignored" in first["message"]
    assert (await run_cli_beside("lint", misnamed.url("/robots.txt"))).stdout.splitlines()[-1] == (
        "clean: nothing ignored")
