"""``scrapy-rep cache`` and the tdmrep.json records a crawl reading TDMRep keeps beside each origin's robots.txt
(key ``<origin>/.well-known/tdmrep.json``): listed with their kind (never as origins), shown after the robots.txt in
TDMRep's words (``--json``: ``tdmrep``), purged with their origin, counted apart. The real console script on a real
SQLite file, written by the real store."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from scrapy_rep.robots.tdmrep import NOT_JSON
from scrapy_rep.stores import Entry, Outcome
from tests.stores.storetools import current_form, entry

from .conftest import run_cli
from .test_cache import FUTURE, put

TDMREP = b'[{"location": "/papers/", "tdm-reservation": 1}, {"location": "/", "tdm-reservation": 0}]\n'
RULES = entry("https://rules.example", fetched_at=1000.0, ttl=FUTURE, body=b"User-agent: *\nDisallow: /private\n")
RULES_TDM = Entry("https://rules.example/.well-known/tdmrep.json", Outcome.RULES, 1000.0, FUTURE, TDMREP, status=200)
DOWN = Entry("https://down.example", Outcome.ALLOW_ALL, 1000.0, FUTURE, status=404)
DOWN_TDM = Entry("https://down.example/.well-known/tdmrep.json", Outcome.DISALLOW_ALL, 1500.0, 2000.0, status=503,
                 error="HTTP 503", first_failure_at=1500.0, failures=2)
NONE_TDM = Entry("https://none.example/.well-known/tdmrep.json", Outcome.ALLOW_ALL, 1000.0, FUTURE, status=404)
NONE = Entry("https://none.example", Outcome.ALLOW_ALL, 1000.0, FUTURE, status=404)
SOFT = Entry("https://soft.example/.well-known/tdmrep.json", Outcome.RULES, 1000.0, FUTURE, b"[{", status=200,
             error=NOT_JSON)
PLAIN = entry("https://plain.example", fetched_at=1000.0, ttl=FUTURE)  # a crawl that read no TDMRep
CORRUPT_TDM = "https://bad.example/.well-known/tdmrep.json"


@pytest.fixture
def uri(tmp_path: Path) -> str:
    uri = f"sqlite:///{tmp_path}/rep.db"
    put(uri, RULES, RULES_TDM, DOWN, DOWN_TDM, NONE, NONE_TDM, SOFT, PLAIN)
    with sqlite3.connect(tmp_path / "rep.db") as conn:
        conn.execute("INSERT INTO rep_entries VALUES (?, ?)", (CORRUPT_TDM, current_form(RULES_TDM, v=99)))
    conn.close()
    return uri


def keys(uri: str) -> set[str]:
    """The keys the SQLite file holds, read directly."""
    with sqlite3.connect(uri.removeprefix("sqlite:///")) as conn:
        found = {row[0] for row in conn.execute("SELECT origin FROM rep_entries")}
    conn.close()
    return found


def test_list_has_a_kind_and_tdmrep_rows_are_not_origins(uri: str) -> None:
    done = run_cli("cache", "list", "--store", uri)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["ORIGIN", "KIND", "OUTCOME", "STATUS", "FETCHED", "EXPIRES", "FAILURES"]
    rows = {(line.split()[0], line.split()[1]): line.split()[2:4] for line in lines[1:]}
    assert rows[("https://rules.example", "robots.txt")] == ["rules", "200"]
    assert rows[("https://rules.example", "tdmrep.json")] == ["rules", "200"]
    assert rows[("https://down.example", "tdmrep.json")] == ["disallow-all", "503"]
    assert rows[("https://bad.example", "tdmrep.json")] == ["corrupt", "unknown"]
    assert not any(".well-known" in line for line in lines)
    listed = [json.loads(line) for line in run_cli("cache", "list", "--json", "--store", uri).stdout.splitlines()]
    assert {(row["origin"], row["kind"]) for row in listed if row["kind"] == "tdmrep.json"} == {
        ("https://rules.example", "tdmrep.json"), ("https://down.example", "tdmrep.json"),
        ("https://none.example", "tdmrep.json"), ("https://soft.example", "tdmrep.json"),
        ("https://bad.example", "tdmrep.json")}


@pytest.mark.parametrize(("options", "expected"), [
    (["--origin", "https://r*"], {("https://rules.example", "robots.txt"), ("https://rules.example", "tdmrep.json")}),
    (["--kind", "robots.txt"], {(origin, "robots.txt") for origin in ("https://rules.example", "https://down.example",
                                                                       "https://none.example", "https://plain.example")}),
    (["--kind", "tdmrep.json", "--outcome", "allow-all"], {("https://none.example", "tdmrep.json")}),
    (["--outcome", "disallow-all"], {("https://down.example", "tdmrep.json")}),
    (["--expired"], {("https://down.example", "tdmrep.json")}),
])
def test_list_filters_keep_working(uri: str, options: list[str], expected: set[tuple[str, str]]) -> None:
    done = run_cli("cache", "list", "--json", "--store", uri, *options)
    assert done.returncode == 0, done.stderr
    assert {(row["origin"], row["kind"]) for row in map(json.loads, done.stdout.splitlines())} == expected


def test_show_prints_the_tdmrep_entry_after_the_robots_txt(uri: str) -> None:
    done = run_cli("cache", "show", "https://rules.example", "/papers/x", "--store", uri)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.index("User-agent: *\nDisallow: /private\n---\n") < text.index("tdmrep.json: ")
    assert ("tdmrep.json: https://rules.example/.well-known/tdmrep.json\nstanding: file with 2 rules\nstatus: 200\n"
            "fetched: 1970-01-01 00:16:40Z\n") in text
    assert f"--- tdmrep.json ({len(TDMREP)} bytes) ---\n{TDMREP.decode().rstrip()}\n---\n" in text
    assert text.rstrip().endswith("ALLOWED     /papers/x  [Scrapy]  no rule of the '*' group (line 1) matches")
    down = run_cli("cache", "show", "https://down.example", "--store", uri).stdout
    assert ("standing: unknown (503, unreachable, no copy kept): TDM reservation unknown: tdm and train-ai refused "
            "until it is read\nstatus: 503 (HTTP 503)\n") in down
    assert "expires: 1970-01-01 00:33:20Z (expired)\nfailures: 2 since 1970-01-01 00:25:00Z\n" in down
    assert "--- tdmrep.json" not in down
    none = run_cli("cache", "show", "https://none.example", "--store", uri).stdout
    assert "standing: no file (404): no TDM reservation stated\n" in none
    assert "tdmrep.json:" not in run_cli("cache", "show", "https://plain.example", "--store", uri).stdout


def test_show_json_has_the_tdmrep_entry(uri: str) -> None:
    done = run_cli("cache", "show", "https://rules.example", "/private/x", "--json", "--store", uri)
    assert done.returncode == 1
    document = json.loads(done.stdout)
    assert document["origin"] == "https://rules.example" and document["exit_code"] == 1
    assert document["robots_txt"]["kind"] == "robots.txt"
    assert document["robots_txt"]["body"] == "User-agent: *\nDisallow: /private\n"
    assert document["results"][0]["allowed"] is False and document["results"][0]["url"] == "/private/x"
    tdm = document["tdmrep"]
    assert (tdm["origin"], tdm["kind"], tdm["outcome"], tdm["status"]) == ("https://rules.example", "tdmrep.json",
                                                                          "rules", 200)
    assert (tdm["standing"], tdm["rules"], tdm["body"]) == ("file", 2, TDMREP.decode())
    assert tdm["url"] == "https://rules.example/.well-known/tdmrep.json" and tdm["detail"] == "file with 2 rules"
    plain = json.loads(run_cli("cache", "show", "https://plain.example", "--json", "--store", uri).stdout)
    assert plain["tdmrep"] is None and plain["exit_code"] == 0
    soft = Entry("https://soft.example", Outcome.ALLOW_ALL, 1000.0, FUTURE, status=404)
    put(uri, soft)
    unknown = json.loads(run_cli("cache", "show", soft.origin, "--json", "--store", uri).stdout)["tdmrep"]
    assert unknown["standing"] == "unknown" and unknown["rules"] is None
    assert unknown["detail"].startswith("unknown (200, a body that is not valid JSON)")


def test_purge_deletes_the_origins_tdmrep_entry_too(uri: str) -> None:
    done = run_cli("cache", "purge", "https://rules.example/any", "https://plain.example", "--yes", "--store", uri)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("deleted 2 entries and 1 tdmrep.json entry from ")
    left = keys(uri)
    assert not {RULES.origin, RULES_TDM.origin, PLAIN.origin} & left and DOWN_TDM.origin in left
    only_tdm = run_cli("cache", "purge", "https://soft.example", "--yes", "--store", uri)  # no robots.txt record
    assert only_tdm.returncode == 0 and only_tdm.stdout.startswith("deleted 0 entries and 1 tdmrep.json entry")
    gone = run_cli("cache", "purge", "https://rules.example", "--yes", "--store", uri)
    assert gone.returncode == 1 and "https://rules.example: not in the store" in gone.stderr
    every = run_cli("cache", "purge", "--all", "--yes", "--store", uri)
    assert every.stdout.startswith("deleted 2 entries and 3 tdmrep.json entries from ") and keys(uri) == set()


def test_stats_count_tdmrep_entries_apart(uri: str) -> None:
    stats = json.loads(run_cli("cache", "stats", "--json", "--store", uri).stdout)
    assert stats["origins"] == 4 and stats["expired"] == 0
    assert stats["outcomes"] == {"rules": 2, "allow-all": 2, "disallow-all": 0, "corrupt": 0}
    assert stats["tdmrep_json"] == {"entries": 5, "file": 1, "none": 1, "unknown": 2, "corrupt": 1}
    text = run_cli("cache", "stats", "--store", uri).stdout
    assert "tdmrep.json: 5 (file: 1, none: 1, unknown: 2, corrupt: 1)\n" in text
