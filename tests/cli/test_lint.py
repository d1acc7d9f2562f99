"""``scrapy-rep lint``: per line, what the parser ignored or tolerated, and patterns that cannot work as written."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import run_cli

CLEAN = """\
# A file Google reads exactly as written.
User-agent: *
Disallow: /private/
Allow: /private/press-kit

Sitemap: https://example.com/sitemap.xml
"""

#: One finding per line from line 1 to 16 (line 15 is the clean user-agent of the last group).
MESSY = (
    b"Disallow: /early\n"                 # 1 rule before any user-agent (SPEC 6.1)
    b"User-agent: *\n"                    # 2 clean
    b"User-agent: Googlebot/2.1\n"        # 3 only the product token counts (SPEC 5.6)
    b"Disallow: /private/\n"              # 4 clean
    b"Allow: /private/ok\n"               # 5 clean
    b"dissallow: /typo\n"                 # 6 accepted typo (SPEC 5.2)
    b"disallow /nocolon\n"                # 7 missing colon (Google extension)
    b"disallowed: /prefix\n"              # 8 field read by its prefix (Google extension)
    b"Crawl-delay: 10\n"                  # 9 unsupported by Google (SPEC 5.3)
    b"Foo: bar\n"                         # 10 unknown field
    b"just some junk here\n"              # 11 not a directive (SPEC 4.2)
    b"Disallow: private\n"                # 12 never matches (SPEC 7.1)
    b"Disallow: /a$b\n"                   # 13 $ in the middle is literal (SPEC 7.3)
    b"Sitemap: /sitemap.xml\n"            # 14 not absolute (SPEC 5.5)
    b"User-agent: *\n"                    # 15 clean
    b"Disallow: /\xff\xfe\n"              # 16 invalid UTF-8 (SPEC 4.3)
)

EXPECTED = {
    1: "rule-before-user-agent",
    3: "user-agent",
    6: "typo",
    7: "missing-colon",
    8: "field-name",
    9: "unsupported-field",
    10: "unknown-field",
    11: "not-a-directive",
    12: "never-matches",
    13: "dollar-in-middle",
    14: "sitemap",
    16: "invalid-utf8",
}


def write(tmp_path: Path, data: bytes) -> str:
    path = tmp_path / "robots.txt"
    path.write_bytes(data)
    return str(path)


def test_clean_file_exits_0(tmp_path: Path) -> None:
    done = run_cli("lint", write(tmp_path, CLEAN.encode()))
    assert done.returncode == 0, done.stdout
    assert done.stdout.splitlines()[-1] == "clean: nothing ignored"


def test_every_kind_of_finding_on_its_line(tmp_path: Path) -> None:
    done = run_cli("lint", write(tmp_path, MESSY), "--json")
    assert done.returncode == 1
    findings = json.loads(done.stdout)["findings"]
    assert {f["line"]: f["kind"] for f in findings} == EXPECTED
    assert len(findings) == len(EXPECTED)


def test_text_output_names_line_and_reason(tmp_path: Path) -> None:
    done = run_cli("lint", write(tmp_path, MESSY))
    assert "line 9: unsupported-field: Crawl-delay: Google ignores it" in done.stdout
    assert "line 3: user-agent: 'Googlebot/2.1' is not a product token" in done.stdout
    assert done.stdout.splitlines()[-1] == f"{len(EXPECTED)} findings"


def test_content_past_the_size_cap_is_a_finding_at_the_line_where_it_starts(tmp_path: Path) -> None:
    """SPEC 4.4: 512,000 bytes are read; the line the cap falls in is reported."""
    line = b"# " + b"x" * 97 + b"\n"  # 100 bytes
    body = b"User-agent: *\n" + line * 5200 + b"Disallow: /late\n"
    done = run_cli("lint", write(tmp_path, body), "--json")
    findings = json.loads(done.stdout)["findings"]
    assert [f["kind"] for f in findings] == ["past-size-cap"]
    assert findings[0]["line"] == 1 + (512_000 - 14) // 100 + 1


def test_lint_a_url(demo_site: dict[str, str]) -> None:
    done = run_cli("lint", f"{demo_site['oversized']}/robots.txt")
    assert done.returncode == 1
    assert "past-size-cap" in done.stdout


def test_lint_a_404_has_nothing_to_lint_and_a_503_exits_3(demo_site: dict[str, str]) -> None:
    missing = run_cli("lint", f"{demo_site['missing']}/robots.txt")
    assert missing.returncode == 1 and "no valid robots.txt" in missing.stdout
    down = run_cli("lint", f"{demo_site['down']}/robots.txt")
    assert down.returncode == 3 and "temporarily unavailable" in down.stdout


def test_lint_stdin_and_missing_file(tmp_path: Path) -> None:
    assert run_cli("lint", "-", stdin="User-agent: *\nDisalow: /x\n").returncode == 1
    missing = run_cli("lint", str(tmp_path / "absent"))
    assert missing.returncode == 2 and "Traceback" not in missing.stderr


def test_bom_and_fields_of_other_crawlers(tmp_path: Path) -> None:
    """SPEC 4.2: a BOM is skipped (line 1 stays clean); SPEC 5.3: Yandex's host and other crawlers' fields."""
    body = b"\xef\xbb\xbfUser-agent: *\nHost: example.com\nNoindex: /x\nDisallow: /y\n"
    done = run_cli("lint", write(tmp_path, body), "--json")
    findings = [(f["line"], f["kind"]) for f in json.loads(done.stdout)["findings"]]
    assert findings == [(2, "unsupported-field"), (3, "unsupported-field")]


def test_past_the_size_cap_counts_the_ignored_bytes_and_names_the_lost_rules(tmp_path: Path) -> None:
    """SPEC 4.4: a 600,043-byte file loses its last 88,043 bytes and the 7 rules in them."""
    head = b"User-agent: *\nDisallow: /kept\n"
    lost = b"".join(b"Disallow: /lost-%d\n" % i for i in range(7))
    filler = b"# " + b"x" * 97 + b"\n"  # 100 bytes
    fillers, extra = divmod(600_043 - len(head) - len(lost), len(filler))
    body = head + filler * fillers + b"#" * (extra - 1) + b"\n" + lost
    assert len(body) == 600_043
    first_lost = 2 + fillers + 2
    done = run_cli("lint", write(tmp_path, body))
    (finding,) = [line for line in done.stdout.splitlines() if "past-size-cap" in line]
    assert "the file is 600043 bytes, longer than the 512000-byte cap: from here on (88043 bytes) it is ignored" in (
        finding)
    named = ", ".join(f"line {first_lost + i} 'Disallow: /lost-{i}'" for i in range(5))
    assert finding.endswith(f"7 rules lost past the cap: {named}, ... and 2 more")
    document = json.loads(run_cli("lint", write(tmp_path, body), "--json").stdout)
    (cap,) = document["findings"]
    assert cap["ignored_bytes"] == 88_043
    assert cap["lost_rules"] == [{"line": first_lost + i, "text": f"Disallow: /lost-{i}"} for i in range(7)]


def test_stdin_html_page_is_named_by_its_start(tmp_path: Path) -> None:
    """No Content-Type on stdin: a body starting with <!doctype html (after a BOM and blank lines) is HTML."""
    done = run_cli("lint", "-", "--json", stdin=b"\xef\xbb\xbf\n  <!doctype html>\n<p>Sale: 50%</p>\n")
    kinds = [f["kind"] for f in json.loads(done.stdout)["findings"]]
    assert kinds[0] == "html-page" and kinds.count("html-page") == 1


def test_a_full_user_agent_in_a_group_names_the_crawler_to_write(tmp_path: Path) -> None:
    """SPEC 5.6: Google reads 'Mozilla' from a pasted User-Agent; the crawler's own token is what was meant."""
    body = b"User-agent: Mozilla/5.0 (compatible; newbiebot/1.0)\nDisallow: /x\n"
    (finding,) = json.loads(run_cli("lint", write(tmp_path, body), "--json").stdout)["findings"]
    assert finding["message"].endswith("only 'Mozilla' counts (SPEC 5.6); to name this crawler write 'newbiebot'")


def test_usage_lines(tmp_path: Path) -> None:
    """Content-Usage / Content-Signal: clean when well-formed; warnings with line numbers when (partly) ignored."""
    body = (b"Content-Signal: search=yes\n"                         # 1 before any user-agent line
            b"User-agent: *\n"
            b"Content-Usage: / train-ai=n, search=y\n"            # 3 clean
            b"Content-Usage: /a/ train-ai=no\n"                   # 4 not y/n
            b"Content-Usage: /b/ training=n\n"                    # 5 unknown label
            b"Content-Usage: /c/ train-ai=n search=y\n"           # 6 not a dictionary
            b"Content-Signal: search=yes, ai-train=no, ai-input=no\n"  # 7 clean
            b"Content-Signal: ai-train=never, robots=no, search\n")  # 8 three problems
    done = run_cli("lint", write(tmp_path, body), "--json")
    findings = [(f["line"], f["kind"]) for f in json.loads(done.stdout)["findings"]]
    assert findings == [(1, "usage-before-user-agent"), (4, "usage-value"), (5, "usage-unknown-key"),
                        (6, "usage-malformed"), (8, "usage-malformed"), (8, "usage-value"), (8, "usage-unknown-key")]
    text = run_cli("lint", write(tmp_path, body)).stdout
    assert "line 6: usage-malformed: Content-Usage: /c/ train-ai=n search=y: the preference is not a Structured " \
           "Fields dictionary (RFC 9651), e.g. 'train-ai=n, search=y': the line is ignored" in text
    assert "line 4: usage-value: Content-Usage: train-ai must be y or n: its preference is unknown" in text
    clean = run_cli("lint", write(tmp_path, b"User-agent: *\nContent-Usage: train-ai=n\nContent-Signal: search=yes\n"))
    assert clean.returncode == 0 and "clean: nothing ignored" in clean.stdout
