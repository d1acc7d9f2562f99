"""``scrapy-rep cache history ORIGIN``, and the version ``cache show`` names: the real console script on a real SQLite
file and a real redis-server, their history written by the stores' own ``put``."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from scrapy_rep.robots.tdmrep import tdm_url
from scrapy_rep.stores import Entry, Outcome, Version, open_store
from tests.stores.storetools import RedisServer, run

from .conftest import run_cli

ORIGIN = "https://example.com"
V1 = b"User-agent: *\nDisallow: /private/\n"
V2 = b"User-agent: *\nDisallow: /\n"
TDM = b'[{"location": "/", "tdm-reservation": 1}]'
T1, T2, T3 = 1_790_000_000.0, 1_790_086_400.0, 1_790_172_800.0
FUTURE = 4_000_000_000.0


def seen(body: bytes, at: float, *, status: int = 200, key: str = ORIGIN, url: str | None = None) -> Entry:
    outcome = Outcome.RULES if status == 200 else Outcome.ALLOW_ALL
    kept = body if outcome is Outcome.RULES else b""
    return Entry(key, outcome, at, FUTURE, body=kept, status=status,
                 version=Version.of(kept, at, status, url or f"{ORIGIN}/robots.txt"))


def put(uri: str, *entries: Entry, versions: int = 100) -> None:
    async def write() -> None:
        store = open_store(uri, history_versions=versions)
        for item in entries:
            await store.put(item)
        await store.close()

    run(write())


def sha(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


@pytest.fixture(params=["sqlite", "redis"])
def uri(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store where ORIGIN served V1 (T1, then T2 from www.), then a 404 (T3), and its tdmrep.json once."""
    if request.param == "sqlite":
        uri = f"sqlite:///{tmp_path}/rep.db"
    else:
        server: RedisServer = request.getfixturevalue("redis_server")
        uri = server.url
    put(uri, seen(V1, T1), seen(V1, T2, url="https://www.example.com/robots.txt"), seen(b"", T3, status=404),
        seen(TDM, T1, key=tdm_url(ORIGIN), url=tdm_url(ORIGIN)))
    return uri


def test_history_lists_each_version_newest_first(uri: str) -> None:
    done = run_cli("cache", "history", f"{ORIGIN}/some/page?q=1", "--store", uri)  # a URL: its origin
    assert done.returncode == 0, done.stderr
    assert [line.split() for line in done.stdout.splitlines()] == [
        ["ID", "OUTCOME", "STATUS", "FIRST", "SEEN", "LAST", "SEEN", "URL"],
        [sha(b"")[:12], "allow-all", "404", "2026-09-23", "14:13:20Z", "2026-09-23", "14:13:20Z",
         f"{ORIGIN}/robots.txt"],
        [sha(V1)[:12], "rules", "200", "2026-09-21", "14:13:20Z", "2026-09-22", "14:13:20Z",
         "https://www.example.com/robots.txt"],
    ]


def test_history_json_has_full_ids_and_bodies_only_with_body(uri: str) -> None:
    done = run_cli("cache", "history", ORIGIN, "--json", "--store", uri)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert (document["origin"], document["kind"]) == (ORIGIN, "robots.txt")
    assert document["versions"][1] == {"id": sha(V1), "outcome": "rules", "status": 200,
                                       "url": "https://www.example.com/robots.txt", "first_seen": T1,
                                       "last_seen": T2, "bytes": len(V1), "body": None}
    with_body = json.loads(run_cli("cache", "history", ORIGIN, "--json", "--body", "--store", uri).stdout)
    assert [version["body"] for version in with_body["versions"]] == ["", V1.decode()]


def test_history_body_in_text_and_the_tdmrep_kind(uri: str) -> None:
    done = run_cli("cache", "history", ORIGIN, "--body", "--store", uri)
    assert f"--- robots.txt {sha(V1)[:12]} rules ({len(V1)} bytes) ---\n{V1.decode()}---\n" in done.stdout
    tdm = run_cli("cache", "history", ORIGIN, "--kind", "tdmrep.json", "--json", "--body", "--store", uri)
    assert tdm.returncode == 0, tdm.stderr
    assert [(v["id"], v["body"]) for v in json.loads(tdm.stdout)["versions"]] == [(sha(TDM), TDM.decode())]


def test_history_of_an_origin_not_stored_or_without_versions_is_exit_1(uri: str) -> None:
    missing = run_cli("cache", "history", "https://nowhere.example", "--store", uri)
    assert (missing.returncode, missing.stdout, missing.stderr) == (
        1, "", "https://nowhere.example: no robots.txt in the store\n")
    put(uri, seen(V2, T1, key="https://quiet.example"), versions=0)  # REP_HISTORY_VERSIONS = 0
    quiet = run_cli("cache", "history", "https://quiet.example", "--store", uri)
    assert quiet.returncode == 1
    assert quiet.stderr.startswith("https://quiet.example: no robots.txt versions kept (its entry was written ")
    bad = run_cli("cache", "history", "not an origin", "--store", uri)
    assert bad.returncode == 2 and "not an origin or URL: 'not an origin'" in bad.stderr


def test_history_of_a_store_without_one(tmp_path: Path) -> None:
    """A file of the layout before the history (1) is upgraded when opened and has no versions yet; the memory
    store keeps nothing to list."""
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE rep_entries (origin TEXT PRIMARY KEY, record BLOB NOT NULL) WITHOUT ROWID;
        CREATE TABLE rep_leases (origin TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at REAL NOT NULL) WITHOUT ROWID;
        PRAGMA user_version = 1;
    """)
    conn.close()
    old = run_cli("cache", "history", ORIGIN, "--store", f"sqlite:///{path}")
    assert (old.returncode, old.stderr) == (1, f"{ORIGIN}: no robots.txt in the store\n")
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
    conn.close()
    memory = run_cli("cache", "history", ORIGIN, "--store", "memory")
    assert memory.returncode == 2 and "nothing persists" in memory.stderr


def test_show_names_the_version_in_effect(uri: str) -> None:
    put(uri, seen(V1, T1))
    text = run_cli("cache", "show", ORIGIN, "--store", uri)
    assert f"\nversion: {sha(V1)[:12]} (200, {ORIGIN}/robots.txt)\n" in text.stdout
    document = json.loads(run_cli("cache", "show", ORIGIN, "--json", "--store", uri).stdout)
    assert document["robots_txt"]["version"] == {"id": sha(V1), "fetched_at": T1, "status": 200,
                                                 "url": f"{ORIGIN}/robots.txt"}
    assert document["tdmrep"]["version"]["id"] == sha(TDM)
