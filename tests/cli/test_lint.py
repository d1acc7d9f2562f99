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
    assert missing.returncode == 0 and "no valid robots.txt" in missing.stdout
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
