"""``scrapy-rep check --page``: every AI/TDM opt-out of a page (robots.txt's preferences, the origin's tdmrep.json, the
page's Content-Usage / Content-Signal / tdm-reservation / tdm-policy headers, TDMRep meta tags, noai/noimageai) and
the answer per use they add up to, with the deciding source, in text and JSON; a declared use they refuse is REFUSED.
Served by a real local HTTP server whose routes each test may change."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from scrapy_rep.cli._common import EXIT_FINDINGS, EXIT_OK

from .conftest import run_cli
from .http_site import Routes, Site, closed_port, serve

ROBOTS = b"User-agent: *\nAllow: /\nContent-Usage: /ai-ok/ train-ai=y\nContent-Signal: search=yes\n"
TDMREP = json.dumps([
    {"location": "/papers/*", "tdm-reservation": 1, "tdm-policy": "https://example.com/policy.json"},
    {"location": "/open/", "tdm-reservation": 0},
    {"location": "/unset/", "tdm-reservation": "yes"},
]).encode()
HTML = [("Content-Type", "text/html")]


def routes() -> Routes:
    """path -> (status, headers, body): a fresh copy per test."""
    return {
        "/robots.txt": (200, [("Content-Type", "text/plain")], ROBOTS),
        "/.well-known/tdmrep.json": (200, [("Content-Type", "application/json")], TDMREP),
        "/papers/a.html": (200, HTML, b"<html><head><title>a</title></head></html>"),
        "/papers/meta.html": (200, HTML, b'<html><head><meta name="tdm-reservation" content="0"></head></html>'),
        "/open/headers.html": (200, [*HTML, ("Content-Usage", "train-ai=n"), ("Content-Signal", "search=no"),
                                     ("tdm-reservation", "1"), ("tdm-policy", "https://example.com/p2")],
                               b"<html></html>"),
        "/open/noai.html": (200, HTML, b'<html><head><meta name="robots" content="noai"></head></html>'),
        "/open/pic.png": (200, [("Content-Type", "image/png"), ("X-Robots-Tag", "noimageai")], b"\x89PNG"),
        "/open/page.html": (200, [*HTML, ("X-Robots-Tag", "noimageai")], b"<html></html>"),
        "/ai-ok/x.html": (200, HTML, b"<html></html>"),
        "/unset/x.html": (200, HTML, b"<html></html>"),
    }


@pytest.fixture
def site() -> Iterator[Site]:
    with serve(routes()) as served:
        yield served


def check(site: Site, *paths: str, extra: tuple[str, ...] = ()) -> tuple[int, list[str]]:
    done = run_cli("check", f"{site.base}/robots.txt", *(site.base + path for path in paths), "-u", "bot", "--page",
                   *extra)
    assert not done.stderr, done.stderr
    return done.returncode, done.stdout.splitlines()


def test_every_signal_and_the_answer_in_text(site: Site) -> None:
    base = site.base
    file = f"{base}/.well-known/tdmrep.json"
    code, lines = check(site, "/papers/a.html", "/papers/meta.html", "/open/headers.html", "/unset/x.html",
                        extra=("--use", "train-ai"))
    assert code == EXIT_FINDINGS
    assert lines[1] == (f"tdmrep.json {file}: HTTP 200, 3 rules, 1 problem (scrapy-rep lint {file} lists them)")
    entry1 = f'entry 1 (location "/papers/*") of {file}'
    policy = "tdm-policy https://example.com/policy.json"
    robots_search = "search=y by robots.txt (line 4 (Content-Signal: search=yes) of the '*' group (line 1))"
    meta = '<meta name="tdm-reservation" content="0">'
    assert lines[2:8] == [
        f"REFUSED     {base}/papers/a.html  [bot]  for train-ai by tdmrep.json ({entry1}), {policy}; robots.txt "
        "allows it: line 2 (Allow: /) of the '*' group (line 1)",
        "            usage: search=y by line 4 (Content-Signal: search=yes) of the '*' group (line 1)",
        "            page: no directives",
        f"            tdmrep.json: tdm=n, train-ai=n by tdmrep.json ({entry1}), {policy}",
        "            page opt-outs: none",
        f"            answer: {robots_search}; tdm=n, train-ai=n by tdmrep.json ({entry1}), {policy}",
    ]
    # the page's own tdm-reservation meta tag replaces the file's entry (meta over header over file)
    assert lines[8].startswith(f"ALLOWED     {base}/papers/meta.html  [bot]  line 2 (Allow: /)")
    assert lines[11:14] == [
        f"            tdmrep.json: tdm=n, train-ai=n by tdmrep.json ({entry1}), {policy}; replaced by the page's own "
        "tdm-reservation (meta tag over header over file)",
        f"            page opt-outs: tdm=y, train-ai=y by tdm-reservation meta tag ({meta})",
        f"            answer: {robots_search}; tdm=y, train-ai=y by tdm-reservation meta tag ({meta})",
    ]
    # headers: Content-Usage n beats the file's 0 and the header's own reservation; Content-Signal no beats robots' yes
    assert lines[14].startswith(f"REFUSED     {base}/open/headers.html  [bot]  for train-ai by Content-Usage header "
                                "(Content-Usage: train-ai=n); robots.txt allows it")
    assert lines[18] == (
        "            page opt-outs: train-ai=n by Content-Usage header (Content-Usage: train-ai=n); search=n by "
        "Content-Signal header (Content-Signal: search=no); tdm=n, train-ai=n by tdm-reservation header "
        "(tdm-reservation: 1), tdm-policy https://example.com/p2")
    assert lines[19] == ("            answer: search=n by Content-Signal header (Content-Signal: search=no); tdm=n by "
                         "tdm-reservation header (tdm-reservation: 1), tdm-policy https://example.com/p2; train-ai=n "
                         "by Content-Usage header (Content-Usage: train-ai=n)")
    assert lines[17].endswith("replaced by the page's own tdm-reservation (meta tag over header over file)")
    # an entry whose reservation is unset matches, but states nothing (a protocol error)
    assert lines[20].startswith(f"ALLOWED     {base}/unset/x.html")
    assert lines[23] == (f'            tdmrep.json: entry 3 (location "/unset/") of {file} matches, but its '
                         "tdm-reservation is unset (a protocol error): nothing stated")
    assert len(lines) == 26
    assert site.paths()["/.well-known/tdmrep.json"] == 1  # once per origin


def test_noai_and_noimageai(site: Site) -> None:
    """noai refuses train-ai on any page; noimageai only on an image (_opt_outs' decision)."""
    code, lines = check(site, "/open/noai.html", "/open/pic.png", "/open/page.html", extra=("--use", "train-ai"))
    assert code == EXIT_FINDINGS
    refusals = [line.split("  [bot]  ")[1] if line.startswith("REFUSED") else line.split()[0] for line in lines
                if line.startswith(("REFUSED", "ALLOWED"))]
    assert refusals == ['for train-ai by robots meta tag (<meta content="noai">); robots.txt allows it: line 2 '
                        "(Allow: /) of the '*' group (line 1)",
                        "for train-ai by X-Robots-Tag header (X-Robots-Tag: noimageai); robots.txt allows it: line 2 "
                        "(Allow: /) of the '*' group (line 1)",
                        "ALLOWED"]
    assert "            page opt-outs: none" in lines[lines.index(next(x for x in lines if "/open/page.html" in x)):]


def test_json_has_the_file_the_signals_and_the_answer(site: Site) -> None:
    done = run_cli("check", f"{site.base}/robots.txt", f"{site.base}/papers/meta.html", f"{site.base}/ai-ok/x.html",
                   "-u", "bot", "--page", "--json", "--use", "tdm")
    assert done.returncode == EXIT_OK, done.stdout
    document = json.loads(done.stdout)
    file_url = f"{site.base}/.well-known/tdmrep.json"
    tdm = document["tdmrep_json"][file_url]
    assert (tdm["standing"], tdm["status"], tdm["redirects"]) == ("file", 200, 0)
    assert tdm["rules"][0] == {"entry": 1, "location": "/papers/*", "tdm-reservation": 1,
                               "tdm-policy": "https://example.com/policy.json"}
    assert tdm["rules"][2]["tdm-reservation"] is None and len(tdm["problems"]) == 1
    meta, ok = document["results"]
    assert meta["opt_outs"]["tdmrep_json_url"] == file_url and meta["opt_outs"]["tdmrep_json_replaced"] is True
    assert [s["value"] for s in meta["opt_outs"]["tdmrep_json"]] == ["n", "n"]
    assert meta["opt_outs"]["page"][0]["source"] == "tdm-reservation meta tag"
    assert meta["answer"]["tdm"] == {"use": "tdm", "value": "y", "source": "tdm-reservation meta tag",
                                     "where": '<meta name="tdm-reservation" content="0">'}
    assert meta["refused"] == {} and document["uses"] == ["tdm"]
    assert ok["answer"]["train-ai"]["source"] == "robots.txt" and ok["opt_outs"]["tdmrep_json"] == []
    assert set(ok["answer"]) == {"search", "train-ai"}
    assert "page" in ok and ok["page"]["status"] == 200


@pytest.mark.parametrize(("status", "body", "standing", "refused"), [
    (503, b"down", "unknown", True),  # unreachable: unknown, never 'no reservation'
    (200, b"[{\"location\": ", "unknown", True),  # looks like JSON, does not parse
    (404, b"", "none", False),  # no file
    (200, b"<!doctype html><html>home</html>", "none", False),  # a page served for a missing file
])
def test_a_file_that_cannot_be_read(site: Site, status: int, body: bytes, standing: str, refused: bool) -> None:
    site.routes["/.well-known/tdmrep.json"] = (status, [("Content-Type", "text/html")], body)
    done = run_cli("check", f"{site.base}/robots.txt", f"{site.base}/ai-ok/x.html", "-u", "bot", "--page", "--json",
                   "--use", "train-ai")
    document = json.loads(done.stdout)
    assert document["tdmrep_json"][f"{site.base}/.well-known/tdmrep.json"]["standing"] == standing
    (result,) = document["results"]
    assert done.returncode == (EXIT_FINDINGS if refused else EXIT_OK)
    if refused:  # robots.txt's train-ai=y does not outweigh the unknown reservation
        assert result["refused"]["train-ai"]["source"] == "tdmrep.json"
        assert "TDM reservation unknown" in result["refused"]["train-ai"]["where"]
    else:
        assert result["refused"] == {} and result["answer"]["train-ai"]["source"] == "robots.txt"
    text = run_cli("check", f"{site.base}/robots.txt", f"{site.base}/ai-ok/x.html", "-u", "bot", "--page")
    line = text.stdout.splitlines()[1]
    assert line.startswith(f"tdmrep.json {site.base}/.well-known/tdmrep.json: HTTP {status}")
    assert ("TDM reservation unknown" in line) is refused and ("no TDM reservation stated" in line) is not refused
    assert text.returncode == EXIT_OK  # no use declared: nothing refused


def test_a_missing_page_still_has_the_files_signals(site: Site) -> None:
    code, lines = check(site, "/papers/gone.html", extra=("--use", "train-ai"))
    assert code == EXIT_FINDINGS  # the file's entry refuses it before any download
    assert lines[2].startswith(f"REFUSED     {site.base}/papers/gone.html  [bot]  for train-ai by tdmrep.json")
    assert lines[4] == "            page: no directives; HTTP 404; not HTML (text/plain): no meta tags read"


def test_an_unreachable_origin_leaves_the_reservation_unknown(tmp_path: Path) -> None:
    robots = tmp_path / "robots.txt"
    robots.write_bytes(b"User-agent: *\nAllow: /\n")
    url = f"http://127.0.0.1:{closed_port()}/x"
    done = run_cli("check", str(robots), url, "--page", "--use", "train-ai")
    assert done.returncode == EXIT_FINDINGS
    lines = done.stdout.splitlines()
    assert lines[1].startswith(f"tdmrep.json {url[:-2]}/.well-known/tdmrep.json: network error (")
    assert lines[1].endswith(": TDM reservation unknown (tdm and train-ai refused until it can be read)")
    assert lines[2].startswith(f"REFUSED     {url}  [Scrapy]  for train-ai by tdmrep.json ({url[:-2]}/.well-known/"
                               "tdmrep.json unreachable (network error (")
    assert lines[5] == "            page opt-outs: none (the page could not be fetched)"
    assert run_cli("check", str(robots), url, "--page").returncode == EXIT_OK  # no use declared
