"""``scrapy-rep lint`` on the two shapes of issue 25, item 7: an HTML page served as robots.txt (its whole-file
finding, then the per-line ones counted by kind, not listed) and a file past the size cap (the line the cap cuts is
read as what is left of it, SPEC 4.4: a finding says what is in effect). Run as the user ran it: the console script
on the real corpus files (skipped when ``../shared/corpus`` is absent), and on small bodies for the exact wording."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from .conftest import REPO, run_cli

CORPUS = REPO / ".." / "shared" / "corpus" / "robots"
CAP = 512_000
FIRST = "User-agent: *\n"


def corpus_file(name: str) -> str:
    path = CORPUS / name
    if not path.is_file():
        pytest.skip(f"corpus file {name} absent (../shared/corpus/robots)")
    return str(path)


def write(tmp_path: Path, data: bytes) -> str:
    path = tmp_path / "robots.txt"
    path.write_bytes(data)
    return str(path)


def cut_at(line: str, cut: int, head: str = FIRST) -> bytes:
    """``head``, comment lines, then ``line`` with the 512,000-byte cap after its first ``cut`` bytes, then a rule
    past the cap."""
    lines, last = divmod(CAP - len(head) - cut - 1, 100)  # comment lines of 100 bytes, then one of last + 1
    body = (head + ("#" * 99 + "\n") * lines + "#" * last + "\n" + line + "\nDisallow: /after\n").encode()
    assert body[:CAP].endswith(line.encode()[:cut]) and body[CAP - cut - 1 : CAP - cut] == b"\n"
    return body


def cut_finding(tmp_path: Path, body: bytes) -> dict[str, object] | None:
    findings = json.loads(run_cli("lint", write(tmp_path, body), "--json").stdout)["findings"]
    cut = [finding for finding in findings if finding["kind"] == "cut-at-cap"]
    assert len(cut) <= 1
    return cut[0] if cut else None


# --- an HTML page ---------------------------------------------------------------------------------------------------

def test_corpus_html_page_lists_the_html_finding_then_counts_the_others_by_kind() -> None:
    """alight.com.txt: an HTML page of 1,659 lines; its 1,810 per-line findings are one line, not 1,810."""
    path = corpus_file("alight.com.txt")
    done = run_cli("lint", path)
    findings = json.loads(run_cli("lint", path, "--json").stdout)["findings"]
    counts = Counter(finding["kind"] for finding in findings[1:])
    assert findings[0]["kind"] == "html-page" and "html-page" not in counts and counts["missing-colon"] > 100
    kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(counts.items(), key=lambda kc: (-kc[1], kc[0])))
    lines = done.stdout.splitlines()
    assert lines[1:] == [
        "line 1: html-page: " + findings[0]["message"],
        f"... and {len(findings) - 1} more about the page's lines, not listed for an HTML page: {kinds}",
        f"{len(findings)} findings (1 shown; --all lists every one)",
    ]
    assert done.returncode == 1
    every = run_cli("lint", path, "--all")
    assert len(every.stdout.splitlines()) == 1 + len(findings) + 1 and every.returncode == 1
    assert sum("missing-colon" in line for line in every.stdout.splitlines()) == counts["missing-colon"]


def test_html_page_wording_and_all(tmp_path: Path) -> None:
    page = b"<!doctype html>\n<html>\n<head><title>Shop</title></head>\n<p>Sale: 50%</p>\n<p>Disallow /x</p>\n</html>\n"
    done = run_cli("lint", "-", stdin=page)
    assert done.stdout.splitlines()[1:] == [
        "line 1: html-page: this looks like an HTML page, not a robots.txt: 6 lines ignored (often a site's page "
        "served for a missing /robots.txt)",
        "... and 8 more about the page's lines, not listed for an HTML page: 3 not-a-directive, 3 unknown-field, "
        "2 missing-colon",
        "9 findings (1 shown; --all lists every one)",
    ]
    every = run_cli("lint", "-", "--all", stdin=page)
    assert len(every.stdout.splitlines()) == 1 + 9 + 1 and every.stdout.splitlines()[-1] == "9 findings"
    assert "line 5: missing-colon: no ':' after the field" in every.stdout
    assert done.returncode == every.returncode == 1
    assert len(json.loads(run_cli("lint", "-", "--json", stdin=page).stdout)["findings"]) == 9


def test_html_page_past_the_cap_still_lists_the_whole_file_findings(tmp_path: Path) -> None:
    page = ("<!doctype html>\n" + "<p>Item</p>\n" * (CAP // 12) + "<p>Disallow: /x</p>\n").encode()
    lines = run_cli("lint", write(tmp_path, page)).stdout.splitlines()
    assert [line.split(": ")[1] for line in lines[1:3]] == ["html-page", "past-size-cap"]
    assert lines[3].startswith("... and ") and ": 42666 not-a-directive, " in lines[3]
    assert lines[4].endswith(" findings (2 shown; --all lists every one)") and len(lines) == 5


# --- the line the size cap cuts -------------------------------------------------------------------------------------

def test_corpus_file_past_the_cap_says_the_cut_rule_in_effect_and_check_agrees() -> None:
    """docs.oracle.com.txt: the cap cuts line 19134, 'Disallow: /html/E12243_01/', to 'Disallow: /html/E'."""
    path = corpus_file("docs.oracle.com.txt")
    done = run_cli("lint", path)
    (cut,) = [line for line in done.stdout.splitlines() if "cut-at-cap" in line]
    assert cut == (
        "line 19134: cut-at-cap: the 512000-byte cap cuts this line (SPEC 4.4): it is read as 'Disallow: /html/E', "
        "written 'Disallow: /html/E12243_01/'; the rule in effect, 'disallow: /html/E', is broader than written: it "
        "matches every URL the written one does, and more; being shorter, it yields to any matching allow at least "
        "as long (SPEC 7.4)")
    assert done.stdout.splitlines()[-1] == "2 findings" and done.returncode == 1
    finding = json.loads(run_cli("lint", path, "--json").stdout)["findings"][-1]
    assert {key: finding[key] for key in ("line", "in_effect", "change", "written_complete")} == {
        "line": 19134, "in_effect": "disallow: /html/E", "change": "broader", "written_complete": True}
    (decided,) = json.loads(run_cli("check", path, "/html/E99999/page", "--json").stdout)["results"]
    assert not decided["allowed"]
    assert {key: decided["rule"][key] for key in ("type", "pattern", "line")} == {
        "type": "disallow", "pattern": "/html/E", "line": 19134}


RULE_CUTS = [
    ("Disallow: /html/E12243_01/", 17, "broader",
     "it is read as 'Disallow: /html/E', written 'Disallow: /html/E12243_01/'; the rule in effect, 'disallow: "
     "/html/E', is broader than written: it matches every URL the written one does, and more; being shorter, it "
     "yields to any matching allow at least as long (SPEC 7.4)"),
    ("Allow: /shop/cart/", 11, "widens-access",
     "it is read as 'Allow: /sho', written 'Allow: /shop/cart/'; the rule in effect, 'allow: /sho', widens access: "
     "it matches every URL the written one does, and more; being shorter, it yields to any longer matching disallow "
     "(SPEC 7.4)"),
    ("Disallow: /a*$", 13, "same-urls",
     "it is read as 'Disallow: /a*', written 'Disallow: /a*$'; the rule in effect, 'disallow: /a*', matches the same "
     "URLs as the written one (SPEC 7.3); being shorter, it yields to any matching allow at least as long (SPEC 7.4)"),
    ("Disallow: /a$b", 13, "different",
     "it is read as 'Disallow: /a$', written 'Disallow: /a$b'; the rule in effect, 'disallow: /a$', ends in a '$' "
     "that now anchors it: it matches other URLs than the written one (SPEC 7.3)"),
    ("Allow: /dir/index.html", 20, "different",
     "it is read as 'Allow: /dir/index.ht', written 'Allow: /dir/index.html'; the rule in effect, 'allow: "
     "/dir/index.ht', no longer allows '/dir/', which Google allows with 'allow: /dir/index.html' (Google extension)"),
    ("Disallow: /café", 15, "broader",
     "it is read as 'Disallow: /caf\ufffd', written 'Disallow: /café'; the rule in effect, 'disallow: /caf%C3', is "
     "broader than written"),
    ("Allow: /shop/", 7, "lost",
     "it is read as 'Allow:', written 'Allow: /shop/'; what is left is an empty allow, ignored (SPEC 5.4): the "
     "written rule is lost"),
    ("Disallow: /x", 5, "lost",
     "it is read as 'Disal', written 'Disallow: /x'; what is left is not a directive (SPEC 4.2): the written rule is "
     "lost"),
]


@pytest.mark.parametrize(("line", "cut", "change", "words"), RULE_CUTS, ids=[case[2] for case in RULE_CUTS])
def test_a_cut_rule_is_said_as_in_effect(tmp_path: Path, line: str, cut: int, change: str, words: str) -> None:
    finding = cut_finding(tmp_path, cut_at(line, cut))
    assert finding is not None and finding["change"] == change
    assert str(finding["message"]).startswith(f"the 512000-byte cap cuts this line (SPEC 4.4): {words}")


OTHER_CUTS = [
    ("User-agent: Googlebot", 16, FIRST, "different",
     "it is read as 'User-agent: Goog', written 'User-agent: Googlebot'; it names the crawler 'Goog', not the crawler "
     "'Googlebot' as written (SPEC 5.6)"),
    ("User-agent: Googlebot/2.1", 22, FIRST, "none",
     "it is read as 'User-agent: Googlebot/', written 'User-agent: Googlebot/2.1'; no change in effect: it still "
     "names the crawler 'Googlebot' (SPEC 5.6)"),
    ("User-agent: Googlebot", 5, FIRST, "lost",
     "it is read as 'User-', written 'User-agent: Googlebot'; what is left is not a directive (SPEC 4.2): the "
     "written user-agent line is lost"),
    ("Sitemap: https://example.com/s.xml", 20, FIRST, "different",
     "it is read as 'Sitemap: https://exa', written 'Sitemap: https://example.com/s.xml'; its value is cut: 'sitemap: "
     "https://exa' is read, not 'sitemap: https://example.com/s.xml'"),
    ("Crawl-delay: 10", 14, FIRST, "different",
     "it is read as 'Crawl-delay: 1', written 'Crawl-delay: 10'; its value is cut: 'Crawl-delay: 1' is read, not "
     "'Crawl-delay: 10'"),
    ("Disallow: /x/y", 12, "# no group yet\n", "none",
     "it is read as 'Disallow: /x', written 'Disallow: /x/y'; no change in effect: the line is ignored either way: a "
     "rule before any user-agent line (SPEC 6.1)"),
]


@pytest.mark.parametrize(("line", "cut", "head", "change", "words"), OTHER_CUTS, ids=[c[0][:10] for c in OTHER_CUTS])
def test_a_cut_line_of_another_kind_is_said_accurately(tmp_path: Path, line: str, cut: int, head: str, change: str,
                                                       words: str) -> None:
    finding = cut_finding(tmp_path, cut_at(line, cut, head))
    assert finding is not None and finding["change"] == change
    assert finding["message"] == f"the 512000-byte cap cuts this line (SPEC 4.4): {words}"


@pytest.mark.parametrize(("line", "cut"), [("Disallow: /x # why", 15), ("Disallow: /x", 0), ("Disallow: /x\r", 13)])
def test_no_cut_finding_when_the_line_is_read_as_written(tmp_path: Path, line: str, cut: int) -> None:
    """The cap in a comment, at a line's start, or between the CR and LF of a line break: nothing is read otherwise."""
    body = cut_at(line, cut)
    assert cut_finding(tmp_path, body) is None
    kinds = [f["kind"] for f in json.loads(run_cli("lint", write(tmp_path, body), "--json").stdout)["findings"]]
    assert kinds == ["past-size-cap"]
