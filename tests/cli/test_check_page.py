"""``scrapy-rep check --page``: each URL fetched once, its page-level directives (robots meta tags, X-Robots-Tag
headers) shown per crawler in text and JSON; a path is a usage error; a page that cannot be fetched is said, and the
exit code stays robots.txt's. Served by a real local HTTP server (``site``)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from scrapy_rep.cli._common import ERROR_PREFIX, EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, FETCH_USER_AGENT
from scrapy_rep.cli._page import fetch_page, is_html

from .conftest import run_cli
from .http_site import Site, closed_port, serve

ROBOTS = b"User-agent: *\nDisallow: /private/\n"
HTML = b"""<!doctype html><html><head><title>t</title>
<meta name="robots" content="noindex">
<meta name="otherbot" content="nofollow">
</head><body>hello</body></html>"""
PLAIN = b"<!doctype html><html><head><title>nothing here</title></head><body>hi</body></html>"
BOTH = b'<html><head><meta name="robots" content="noindex"></head><body>both</body></html>'
PDF = b'%PDF-1.4 <meta name="robots" content="noindex"> not read: not HTML'

#: path -> (status, headers, body)
ROUTES: dict[str, tuple[int, list[tuple[str, str]], bytes]] = {
    "/robots.txt": (200, [("Content-Type", "text/plain")], ROBOTS),
    "/page.html": (200, [("Content-Type", "text/html; charset=utf-8")], HTML),
    "/report.pdf": (200, [("Content-Type", "application/pdf"), ("X-Robots-Tag", "nofollow"),
                          ("X-Robots-Tag", "mybot: noarchive")], PDF),
    "/old": (301, [("Location", "/page.html")], b""),
    "/plain.html": (200, [("Content-Type", "text/html")], PLAIN),
    "/both.html": (200, [("Content-Type", "application/xhtml+xml"), ("X-Robots-Tag", "max-snippet: 50")], BOTH),
    "/private/secret.html": (200, [("Content-Type", "text/html")], HTML),
    "/loop": (302, [("Location", "/loop")], b""),
    "/gone.html": (404, [("Content-Type", "text/html"), ("X-Robots-Tag", "noarchive")], b"<html>gone</html>"),
}


@pytest.fixture
def site() -> Iterator[Site]:
    with serve(ROUTES) as served:
        yield served


def test_text_shows_each_crawlers_directives_and_fetches_each_url_once(site: Site) -> None:
    base = site.base
    urls = [f"{base}/page.html", f"{base}/report.pdf", f"{base}/old", f"{base}/plain.html", f"{base}/both.html",
            f"{base}/gone.html"]
    done = run_cli("check", f"{base}/robots.txt", *urls, "-u", "mybot", "-u", "otherbot", "--page")
    assert done.returncode == EXIT_OK, done.stderr
    pages = [line.strip() for line in done.stdout.splitlines() if line.startswith(" " * 12 + "page: ")]
    not_html = "not HTML (application/pdf): no meta tags read"
    assert pages == [
        "page: noindex (meta tag)",  # mybot: name="otherbot" does not address it
        "page: noindex, nofollow (meta tag)",  # otherbot
        f"page: nofollow, noarchive (X-Robots-Tag header); {not_html}",  # 'mybot: noarchive' addresses mybot
        f"page: nofollow (X-Robots-Tag header); {not_html}",
        f"page: noindex (meta tag); HTTP 200 after 1 redirect to {base}/page.html",
        f"page: noindex, nofollow (meta tag); HTTP 200 after 1 redirect to {base}/page.html",
        "page: no directives",
        "page: no directives",
        "page: noindex (meta tag); max-snippet 50 (X-Robots-Tag header)",
        "page: noindex (meta tag); max-snippet 50 (X-Robots-Tag header)",
        "page: noarchive (X-Robots-Tag header); HTTP 404",
        "page: noarchive (X-Robots-Tag header); HTTP 404",
    ]
    lines = done.stdout.splitlines()
    assert lines[1] == f"tdmrep.json {base}/.well-known/tdmrep.json: HTTP 404: no file, no TDM reservation stated"
    assert lines[2].startswith(f"ALLOWED     {base}/page.html  [mybot]")
    assert lines[3] == " " * 12 + "page: noindex (meta tag)"  # right under its result
    # once per URL, not per crawler (/page.html: once itself, once as /old's target), with the CLI's User-Agent;
    # the origin's tdmrep.json once (_page_usage)
    assert site.paths() == Counter({"/robots.txt": 1, "/page.html": 2, "/report.pdf": 1, "/old": 1,
                                    "/plain.html": 1, "/both.html": 1, "/gone.html": 1,
                                    "/.well-known/tdmrep.json": 1})
    assert {agent for _, agent in site.requests} == {FETCH_USER_AGENT}


def test_json_has_a_page_object_per_result(site: Site) -> None:
    base = site.base
    done = run_cli("check", f"{base}/robots.txt", f"{base}/page.html", f"{base}/report.pdf", f"{base}/both.html",
                   "-u", "mybot", "-u", "otherbot", "--page", "--json")
    assert done.returncode == EXIT_OK, done.stderr
    results = json.loads(done.stdout)["results"]
    pages = {(r["url"].rpartition("/")[2], r["user_agent"][0]): r["page"] for r in results}
    assert len(pages) == 6
    mine, other = pages["page.html", "mybot"], pages["page.html", "otherbot"]
    assert (mine["status"], mine["html"], mine["error"], mine["redirects"]) == (200, True, None, 0)
    assert mine["directives"] == ["noindex"] and mine["sources"] == {"noindex": "meta tag"}
    assert mine["noindex"] is True and mine["nofollow"] is False
    assert other["directives"] == ["nofollow", "noindex"] and other["nofollow"] is True
    assert other["sources"] == {"nofollow": "meta tag", "noindex": "meta tag"}
    pdf = pages["report.pdf", "mybot"]
    assert (pdf["html"], pdf["content_type"]) == (False, "application/pdf")
    assert pdf["x_robots_tag"] == ["nofollow", "mybot: noarchive"]
    assert pdf["directives"] == ["noarchive", "nofollow"] and pdf["noarchive"] is True and pdf["noindex"] is False
    assert pdf["sources"] == {"noarchive": "X-Robots-Tag header", "nofollow": "X-Robots-Tag header"}
    assert pages["report.pdf", "otherbot"]["directives"] == ["nofollow"]
    assert pages["report.pdf", "otherbot"]["noarchive"] is False
    both = pages["both.html", "otherbot"]
    assert both["max_snippet"] == 50 and both["max_image_preview"] is None and both["unavailable_after"] is None
    assert both["sources"] == {"max-snippet": "X-Robots-Tag header", "noindex": "meta tag"}
    assert site.paths()["/page.html"] == 1


def test_a_page_robots_txt_disallows_is_fetched_and_said_so(site: Site) -> None:
    """Decision (check.py): fetched all the same; the line says a crawler obeying robots.txt never reads it."""
    done = run_cli("check", f"{site.base}/robots.txt", f"{site.base}/private/secret.html", "-u", "mybot", "--page")
    assert done.returncode == EXIT_FINDINGS  # robots.txt's verdict, as without --page
    assert done.stdout.splitlines()[3] == (" " * 12 + "page: noindex (meta tag); robots.txt disallows it: fetched "
                                           "anyway, but a crawler obeying robots.txt never reads these")
    assert site.paths()["/private/secret.html"] == 1


def test_a_path_with_page_is_a_usage_error_before_any_fetch(site: Site) -> None:
    done = run_cli("check", f"{site.base}/robots.txt", f"{site.base}/page.html", "/page.html", "--page")
    assert done.returncode == EXIT_USAGE
    assert done.stdout == ""
    assert done.stderr.startswith(ERROR_PREFIX) and len(done.stderr.splitlines()) == 1
    assert "--page" in done.stderr and "/page.html is a path" in done.stderr and "absolute URL" in done.stderr
    assert site.requests == []  # refused before robots.txt or any page is fetched
    ftp = run_cli("check", f"{site.base}/robots.txt", "ftp://127.0.0.1/file", "--page")
    assert ftp.returncode == EXIT_USAGE and "http(s) URLs only" in ftp.stderr


def test_a_page_that_cannot_be_fetched_is_said_and_the_exit_code_is_robots_txts(site: Site, tmp_path: Path) -> None:
    robots = tmp_path / "robots.txt"
    robots.write_bytes(b"User-agent: *\nAllow: /\n")
    refused = f"http://127.0.0.1:{closed_port()}/x"
    done = run_cli("check", str(robots), refused, f"{site.base}/loop", "--page")
    assert done.returncode == EXIT_OK, done.stderr
    pages = [line.strip() for line in done.stdout.splitlines() if line.startswith(" " * 12 + "page: ")]
    assert len(pages) == 2
    assert pages[0].startswith("page: network error (") and "refused" in pages[0].lower()
    assert pages[1] == f"page: more than 5 redirects (the last to {site.base}/loop)"
    # the first GET and 5 redirects followed, no more; the origin's tdmrep.json once (the other origin is closed)
    assert site.paths() == Counter({"/loop": 6, "/.well-known/tdmrep.json": 1})
    document = json.loads(run_cli("check", str(robots), refused, "--page", "--json").stdout)
    page = document["results"][0]["page"]
    assert page["error"].startswith("network error (") and page["status"] is None and page["directives"] == []
    assert document["exit_code"] == EXIT_OK


def test_fetch_page_reads_a_bounded_body_and_knows_html(site: Site) -> None:
    page = fetch_page(f"{site.base}/page.html", limit=40)
    assert page.body == HTML[:40] and page.status == 200 and page.html
    assert page.tags(["otherbot"]).noindex is False  # the meta tags lie past the first 40 bytes
    assert fetch_page(f"{site.base}/page.html").tags(["otherbot"]).nofollow is True
    pdf = fetch_page(f"{site.base}/report.pdf")
    assert pdf.body == b"" and not pdf.html and pdf.x_robots_tag == (b"nofollow", b"mybot: noarchive")
    assert is_html("Text/HTML; charset=utf-8") and is_html("application/xhtml+xml")
    assert not is_html("text/plain") and not is_html(None)
