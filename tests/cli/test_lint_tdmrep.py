"""``scrapy-rep lint`` on a TDMRep file (by its name, or a file or stdin starting with ``[``; a URL named
``.../tdmrep.json`` fetched as given from a real local server): each problem ``parse_tdmrep`` meets is a finding, the
rules read are summarised, exit codes as for robots.txt. And robots.txt lint's ``usage-legacy-label``."""

from __future__ import annotations

import json
from pathlib import Path

from scrapy_rep.cli._common import EXIT_FINDINGS, EXIT_OK, EXIT_UNAVAILABLE, MAX_BYTES

from .conftest import run_cli
from .http_site import serve

MESSY = json.dumps([
    {"location": "/papers/*", "tdm-reservation": 1, "tdm-policy": "https://example.com/policy.json"},
    {"location": "/open/", "tdm-reservation": 0},
    {"location": "/x", "tdm-reservation": "yes"},
    {"tdm-reservation": 1},
    5,
    {"location": "/books/", "tdm-reservation": "1"},
]).encode()
SUMMARY = ('4 rules read: TDM rights reserved for "/papers/*" (entry 1, tdm-policy https://example.com/policy.json), '
           '"/books/" (entry 6); not reserved for "/open/" (entry 2); unset for "/x" (entry 3)')


def test_a_file_named_tdmrep_json_lists_each_problem_and_the_rules_read(tmp_path: Path) -> None:
    path = tmp_path / "tdmrep.json"
    path.write_bytes(MESSY)
    done = run_cli("lint", str(path))
    assert done.returncode == EXIT_FINDINGS
    assert done.stdout.splitlines() == [
        f"tdmrep.json {path}: {len(MESSY)} bytes",
        'tdmrep-malformed: entry 3 (location "/x"): tdm-reservation must be 0 or 1, not "yes": unset (a protocol '
        "error)",
        "tdmrep-malformed: entry 4 has no location: skipped",
        "tdmrep-malformed: entry 5 is a JSON number, not an object: skipped",
        "tdmrep-malformed: entry 6 (location \"/books/\"): tdm-reservation is the string '1': read as the number 1",
        SUMMARY,
        "4 findings",
    ]
    document = json.loads(run_cli("lint", str(path), "--json").stdout)
    assert document["exit_code"] == EXIT_FINDINGS and document["tdmrep_json"]["outcome"] == "rules"
    assert [finding["kind"] for finding in document["findings"]] == ["tdmrep-malformed"] * 4
    assert document["findings"][1] == {"line": 0, "kind": "tdmrep-malformed",
                                       "message": "entry 4 has no location: skipped"}
    assert document["rules"][0] == {"entry": 1, "location": "/papers/*", "tdm-reservation": 1,
                                    "tdm-policy": "https://example.com/policy.json"}
    assert document["reserved"] == ["/papers/*", "/books/"]
    assert "robots_txt" not in document


def test_stdin_starting_with_a_bracket_is_a_tdmrep_file() -> None:
    clean = run_cli("lint", "-", stdin=' \n[{"location": "/", "tdm-reservation": 0}]')
    assert clean.returncode == EXIT_OK
    assert clean.stdout.splitlines() == [
        "<stdin> starts with '[', as a JSON array does: linted as a TDMRep file (tdmrep.json)",
        "tdmrep.json <stdin>: 43 bytes",
        '1 rule read: not reserved for "/" (entry 1)',
        "clean: nothing ignored",
    ]
    broken = run_cli("lint", "-", "--json", stdin='[{"location": "/", ')
    document = json.loads(broken.stdout)
    assert broken.returncode == EXIT_FINDINGS and document["rules"] == []
    (finding,) = document["findings"]
    assert finding["kind"] == "tdmrep-unreadable" and finding["message"].startswith("the file is not JSON (")
    assert finding["message"].endswith("a crawl leaves the origin's TDM reservation unknown (tdm and train-ai "
                                       "refused)")
    robots = run_cli("lint", "-", stdin="User-agent: *\nDisallow: /x\n")  # not a bracket: a robots.txt
    assert robots.returncode == EXIT_OK and robots.stdout.startswith("robots.txt <stdin>:")


def test_a_file_past_the_size_cap_is_read_as_a_crawl_reads_it(tmp_path: Path) -> None:
    entry = b'{"location": "/p/", "tdm-reservation": 1},'
    path = tmp_path / "big-tdmrep.json"
    path.write_bytes(b"[" + entry * (MAX_BYTES // len(entry) + 10) + b'{"location": "/", "tdm-reservation": 0}]')
    document = json.loads(run_cli("lint", str(path), "--json").stdout)
    kinds = [finding["kind"] for finding in document["findings"]]
    assert kinds == ["past-size-cap", "tdmrep-unreadable"]  # the crawl's copy stops mid-array: not JSON
    assert f"longer than the {MAX_BYTES}-byte cap" in document["findings"][0]["message"]


def test_urls_are_fetched_as_given_with_their_outcome() -> None:
    routes = {
        "/.well-known/tdmrep.json": (200, [("Content-Type", "application/json")], MESSY),
        "/robots.txt": (200, [("Content-Type", "text/plain")], b"User-agent: *\nDisallow: /private/\n"),
        "/down/tdmrep.json": (503, [], b"down"),
        "/html/tdmrep.json": (200, [("Content-Type", "text/html")], b"<!doctype html><html>home</html>"),
    }
    with serve(routes) as site:
        base = site.base
        done = run_cli("lint", f"{base}/.well-known/tdmrep.json")
        assert done.returncode == EXIT_FINDINGS
        lines = done.stdout.splitlines()
        assert lines[0] == f"tdmrep.json {base}/.well-known/tdmrep.json: HTTP 200, {len(MESSY)} bytes"
        assert lines[-2:] == [SUMMARY, "4 findings"]
        missing = run_cli("lint", f"{base}/none/tdmrep.json", "--json")
        document = json.loads(missing.stdout)
        assert missing.returncode == EXIT_FINDINGS and document["tdmrep_json"]["status"] == 404
        assert document["notes"] == [f"{base}/none/tdmrep.json is not at /.well-known/tdmrep.json, where crawlers "
                                     "look: read as given"]
        assert [f["kind"] for f in document["findings"]] == ["no-tdmrep-json"]
        down = run_cli("lint", f"{base}/down/tdmrep.json")
        assert down.returncode == EXIT_UNAVAILABLE and "unavailable: no tdmrep.json was read" in down.stdout
        html = run_cli("lint", f"{base}/html/tdmrep.json")
        assert html.returncode == EXIT_FINDINGS and "not-tdmrep: this is not JSON" in html.stdout
        assert html.stdout.splitlines()[-1] == "nothing linted: the answer is not a TDMRep file"
        site_url = run_cli("lint", f"{base}/")  # a site URL is still its robots.txt
        assert site_url.returncode == EXIT_OK and f"robots.txt {base}/robots.txt: HTTP 200" in site_url.stdout
        assert site.paths()["/.well-known/tdmrep.json"] == 1


def test_robots_txt_lint_reports_legacy_usage_labels(tmp_path: Path) -> None:
    path = tmp_path / "robots.txt"
    path.write_text("User-agent: *\nContent-Usage: train-ai=y\nContent-Usage: /old/ train-genai=n, search=y\n"
                    "Content-Usage: /data/ ai-use=n\n")
    done = run_cli("lint", str(path), "--json")
    assert done.returncode == EXIT_FINDINGS
    findings = json.loads(done.stdout)["findings"]
    assert [(f["line"], f["kind"]) for f in findings] == [(3, "usage-legacy-label"), (4, "usage-legacy-label")]
    assert findings[0]["message"].startswith("Content-Usage: 'train-genai' was dropped from the AIPREF vocabulary "
                                             "(draft-ietf-aipref-vocab-02 to -03, Generative AI Training)")
    assert "read as train-ai=n when it says n (REP_USAGE_LEGACY_LABELS)" in findings[0]["message"]
    assert "not read as any use" in findings[1]["message"]
    text = run_cli("lint", str(path)).stdout
    assert "line 3: usage-legacy-label: Content-Usage: 'train-genai' was dropped" in text
