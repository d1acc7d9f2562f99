"""``scrapy-rep cache``: the real console script on real SQLite files and a real redis-server."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import sqlite3
import subprocess
import threading
from pathlib import Path

import pytest

from scrapy_rep.cli.cache import JSON_KEYS
from scrapy_rep.stores import Entry, Outcome, open_store
from tests.stores.storetools import RedisServer, current_form, entry, run

from .conftest import SCRIPT, run_cli

FUTURE = 4_000_000_000.0  # 2096: fresh whatever the wall clock says
RULES = entry("https://rules.example", fetched_at=1000.0, ttl=FUTURE, body=b"User-agent: *\nDisallow: /private\n")
ALLOW = Entry("https://allow.example", Outcome.ALLOW_ALL, 1000.0, FUTURE, status=404)
DOWN = Entry("https://down.example", Outcome.DISALLOW_ALL, 1000.0, 2000.0, status=503, error="HTTP 503",
             first_failure_at=1000.0, failures=3)
ENTRIES = [RULES, ALLOW, DOWN]
CORRUPT_ORIGIN = "https://future.example"


def put(uri: str, *entries: Entry) -> None:
    async def write() -> None:
        store = open_store(uri)
        for item in entries:
            await store.put(item)
        await store.close()

    run(write())


def origins_in(uri: str) -> set[str]:
    done = run_cli("cache", "list", "--json", "--store", uri)
    assert done.returncode == 0, done.stderr
    return {json.loads(line)["origin"] for line in done.stdout.splitlines()}


@pytest.fixture(params=["sqlite", "redis"])
def uri(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store holding ``ENTRIES`` (written by the real store) and a record of an unknown format version."""
    corrupt = current_form(entry(CORRUPT_ORIGIN), v=99)
    if request.param == "sqlite":
        uri = f"sqlite:///{tmp_path}/rep.db"
        put(uri, *ENTRIES)
        with sqlite3.connect(tmp_path / "rep.db") as conn:
            conn.execute("INSERT INTO rep_entries VALUES (?, ?)", (CORRUPT_ORIGIN, corrupt))
        conn.close()
        return uri
    server: RedisServer = request.getfixturevalue("redis_server")
    put(server.url, *ENTRIES)
    import redis

    with redis.Redis(port=server.port) as client:
        client.set(f"rep:entry:{CORRUPT_ORIGIN}", corrupt)
    return server.url


def test_list_shows_every_origin_with_its_state(uri: str) -> None:
    done = run_cli("cache", "list", "--store", uri)
    assert done.returncode == 0, done.stderr
    lines = {line.split()[0]: line for line in done.stdout.splitlines()[1:]}
    assert set(lines) == {RULES.origin, ALLOW.origin, DOWN.origin, CORRUPT_ORIGIN}
    assert lines[DOWN.origin].split()[1:5] == ["robots.txt", "disallow-all", "503", "HTTP"]
    assert "(expired)" in lines[DOWN.origin] and lines[DOWN.origin].endswith(" 3")
    assert "(expired)" not in lines[RULES.origin]
    assert lines[CORRUPT_ORIGIN].split()[1:6] == ["robots.txt", "corrupt", "unknown", "format", "version"]


def test_list_json_has_the_documented_keys(uri: str) -> None:
    done = run_cli("cache", "list", "--json", "--store", uri)
    rows = {row["origin"]: row for row in map(json.loads, done.stdout.splitlines())}
    assert all(tuple(row) == JSON_KEYS for row in rows.values())
    assert rows[DOWN.origin] == {
        "origin": DOWN.origin, "kind": "robots.txt", "outcome": "disallow-all", "status": 503, "error": "HTTP 503",
        "fetched_at": 1000.0, "expires_at": 2000.0, "expired": True, "failures": 3, "first_failure_at": 1000.0,
        "bytes": rows[DOWN.origin]["bytes"],
    }
    assert rows[DOWN.origin]["bytes"] > 0
    assert rows[CORRUPT_ORIGIN]["outcome"] == "corrupt" and rows[CORRUPT_ORIGIN]["expired"] is None


@pytest.mark.parametrize(("options", "expected"), [
    (["--origin", "https://*w*.example"], {ALLOW.origin, DOWN.origin}),
    (["--outcome", "allow-all"], {ALLOW.origin}),
    (["--outcome", "corrupt"], {CORRUPT_ORIGIN}),
    (["--expired"], {DOWN.origin}),
    (["--expired", "--origin", "https://r*"], set()),
])
def test_list_filters(uri: str, options: list[str], expected: set[str]) -> None:
    done = run_cli("cache", "list", "--json", "--store", uri, *options)
    assert done.returncode == 0, done.stderr
    assert {json.loads(line)["origin"] for line in done.stdout.splitlines()} == expected


def test_show_prints_the_entry_the_body_and_each_decision(uri: str) -> None:
    done = run_cli("cache", "show", "https://rules.example/anything", "/private/x", "https://rules.example/ok",
                   "-u", "examplebot", "--store", uri)
    assert done.returncode == 1, done.stderr  # a URL is disallowed, as check says
    assert "outcome: rules\nstatus: 200\n" in done.stdout
    assert "User-agent: *\nDisallow: /private\n---\n" in done.stdout
    assert "DISALLOWED  /private/x  [examplebot]  line 2 (Disallow: /private) of the '*' group (line 1)" in done.stdout
    assert "ALLOWED     https://rules.example/ok  [examplebot]  no rule of the '*' group (line 1) matches" in (
        done.stdout)


def test_show_of_an_unavailable_origin_disallows_and_of_a_missing_one_fails(uri: str) -> None:
    down = run_cli("cache", "show", DOWN.origin, "/", "--store", uri)
    assert down.returncode == 1
    assert "failures: 3 since 1970-01-01 00:16:40Z" in down.stdout and "DISALLOWED  /  [Scrapy]" in down.stdout
    missing = run_cli("cache", "show", "https://nowhere.example", "--store", uri)
    assert (missing.returncode, missing.stderr) == (1, "https://nowhere.example: not in the store\n")
    off_origin = run_cli("cache", "show", RULES.origin, "https://other.example/", "--store", uri)
    assert off_origin.returncode == 2 and "does not apply" in off_origin.stderr


def test_stats_counts_outcomes_bytes_and_expired(uri: str) -> None:
    done = run_cli("cache", "stats", "--json", "--store", uri)
    stats = json.loads(done.stdout)
    assert stats["origins"] == 4 and stats["expired"] == 1 and stats["bytes"] > 0
    assert stats["outcomes"] == {"rules": 1, "allow-all": 1, "disallow-all": 1, "corrupt": 1}
    text = run_cli("cache", "stats", "--store", uri).stdout
    assert "origins: 4\n  rules: 1\n" in text and "  corrupt: 1\nexpired: 1\n" in text


def test_purge_one_origin_with_yes(uri: str) -> None:
    done = run_cli("cache", "purge", "https://down.example/", "--yes", "--store", uri)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("deleted 1 entry from ")
    assert origins_in(uri) == {RULES.origin, ALLOW.origin, CORRUPT_ORIGIN}
    again = run_cli("cache", "purge", DOWN.origin, "--yes", "--store", uri)
    assert again.returncode == 1 and "https://down.example: not in the store" in again.stderr


def test_purge_without_yes_and_without_a_terminal_is_refused(uri: str) -> None:
    done = run_cli("cache", "purge", "--all", "--store", uri, stdin="y\n")
    assert done.returncode == 2 and "pass --yes" in done.stderr
    assert len(origins_in(uri)) == 4


def test_purge_all_with_yes_empties_the_store(uri: str) -> None:
    done = run_cli("cache", "purge", "--all", "-y", "--store", uri)
    assert done.returncode == 0 and done.stdout.startswith("deleted 4 entries")
    assert origins_in(uri) == set()


@pytest.mark.parametrize(("answer", "left"), [("y\n", 3), ("n\n", 4)])
def test_purge_asks_on_a_terminal(uri: str, answer: str, left: int) -> None:
    main, terminal = pty.openpty()
    try:
        process = subprocess.Popen([str(SCRIPT), "cache", "purge", RULES.origin, "--store", uri],
                                   stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        os.write(main, answer.encode())
        _, err = process.communicate(timeout=60)
    finally:
        os.close(main)
        os.close(terminal)
    assert b"Delete https://rules.example from " in err
    assert process.returncode == (0 if left == 3 else 1)
    assert len(origins_in(uri)) == left


def test_list_and_purge_while_another_connection_writes(uri: str) -> None:
    """Crawlers keep writing the store (its own connection, real puts) while the CLI lists and purges it."""
    started, stop = threading.Event(), threading.Event()
    written: list[str] = []

    async def write() -> None:
        store = open_store(uri)
        while not stop.is_set():
            origin = f"https://w{len(written)}.example"
            await store.put(entry(origin))
            written.append(origin)
            started.set()
            # Load, not synchronisation: a crawler writes once per robots.txt download, with the network between. A
            # loop with no pause holds the file's write lock nearly all the time (a put is one transaction: the entry
            # and its history), and SQLite's busy handler, which retries in sleeps of 1-100 ms, then seldom finds it
            # free: the CLI's purge waited out its 5 s timeout in one fresh-clone run of .ci/run.
            await asyncio.sleep(0.001)
        await store.close()

    writer = threading.Thread(target=lambda: asyncio.run(write()))
    writer.start()
    try:
        assert started.wait(30)
        listed = origins_in(uri)
        purged = run_cli("cache", "purge", RULES.origin, ALLOW.origin, "--yes", "--store", uri)
    finally:
        stop.set()
        writer.join(30)
    assert {RULES.origin, ALLOW.origin, DOWN.origin, written[0]} <= listed
    assert purged.returncode == 0, purged.stderr
    left = origins_in(uri)
    assert RULES.origin not in left and ALLOW.origin not in left and set(written) <= left


def test_a_missing_sqlite_file_is_refused_and_not_created(tmp_path: Path) -> None:
    done = run_cli("cache", "list", "--store", f"sqlite:///{tmp_path}/missing.db")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and f"no such file {tmp_path}/missing.db" in done.stderr
    assert not (tmp_path / "missing.db").exists()


def test_an_unknown_schema_version_is_refused(tmp_path: Path) -> None:
    put(f"sqlite:///{tmp_path}/rep.db", RULES)
    with sqlite3.connect(tmp_path / "rep.db") as conn:
        conn.execute("PRAGMA user_version = 7")
    conn.close()
    done = run_cli("cache", "stats", "--store", f"sqlite:///{tmp_path}/rep.db")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert f"sqlite:///{tmp_path}/rep.db" in done.stderr and "unknown schema version 7" in done.stderr


def test_unreachable_redis_is_refused_with_the_password_hidden() -> None:
    from tests.stores.storetools import free_port

    done = run_cli("cache", "list", "--store", f"redis://:hunter2@127.0.0.1:{free_port()}/0")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "redis://:***@127.0.0.1:" in done.stderr and "hunter2" not in done.stderr


@pytest.mark.parametrize(("store", "message"), [
    ("memory", "nothing persists"),
    ("foo://x", "--store foo://x: unknown store 'foo'"),
    ("redis://:hunter2@127.0.0.1:6379/x", "--store redis://:***@127.0.0.1:6379/x: the Redis database must be"),
])
def test_stores_that_cannot_be_inspected_are_refused(store: str, message: str) -> None:
    done = run_cli("cache", "stats", "--store", store)
    assert done.returncode == 2 and message in done.stderr and "hunter2" not in done.stderr


def test_the_default_store_is_the_scrapy_projects(tmp_path: Path) -> None:
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = proj.settings\n")
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "__init__.py").write_text("")
    (tmp_path / "proj" / "settings.py").write_text('REP_STORE = "sqlite:///./rep.db"\n')
    (tmp_path / "sub").mkdir()
    put(f"sqlite:///{tmp_path}/rep.db", RULES)
    done = run_cli("cache", "list", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["origin"] for line in done.stdout.splitlines()] == [RULES.origin]
    (tmp_path / "proj" / "settings.py").write_text("BOT_NAME = 'proj'\n")
    memory = run_cli("cache", "list", cwd=tmp_path / "sub")
    assert memory.returncode == 2 and "REP_STORE = 'memory'" in memory.stderr


def test_without_a_project_or_store_says_to_pass_store(tmp_path: Path) -> None:
    done = run_cli("cache", "list", cwd=tmp_path)
    assert done.returncode == 2 and "pass --store URL" in done.stderr


def test_a_projects_bare_redis_store_is_scrapy_rediss_server(tmp_path: Path, redis_server: RedisServer) -> None:
    """``REP_STORE = "redis"`` in the project: ``scrapy-rep cache`` reads the server from its REDIS_URL, as a
    crawl does (docs/fleet.md)."""
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = proj.settings\n")
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "__init__.py").write_text("")
    (tmp_path / "proj" / "settings.py").write_text(f'REP_STORE = "redis"\nREDIS_URL = "{redis_server.url}"\n')
    put(redis_server.url, RULES)
    done = run_cli("cache", "list", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["origin"] for line in done.stdout.splitlines()] == [RULES.origin]


NEWBIE = entry("https://newbie.example", fetched_at=1000.0, ttl=FUTURE,
               body=b"User-agent: *\nDisallow: /admin/\n\nUser-agent: newbiebot\nDisallow: /private/\n")


def project(tmp_path: Path, settings: str) -> Path:
    """A Scrapy project in ``tmp_path`` (scrapy.cfg + a settings module) using a SQLite store there."""
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = proj.settings\n")
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "__init__.py").write_text("")
    (tmp_path / "proj" / "settings.py").write_text('REP_STORE = "sqlite:///./rep.db"\n' + settings)
    put(f"sqlite:///{tmp_path}/rep.db", NEWBIE)
    return tmp_path


@pytest.mark.parametrize(("settings", "token", "why"), [
    ('USER_AGENT = "Mozilla/5.0 (compatible; newbiebot/1.0; +https://example.com/bot)"\n', "newbiebot",
     "the product token of USER_AGENT"),
    ('REP_USER_AGENT = ["newbiebot", "Scrapy"]\n', "newbiebot,Scrapy", "set by REP_USER_AGENT"),
])
def test_show_decides_as_the_projects_crawl(tmp_path: Path, settings: str, token: str, why: str) -> None:
    """Inside a project, ``cache show`` obeys the token the crawl obeys (issue 25: it decided as ``Scrapy`` and
    called a page the crawl forbade allowed) and says which and why; ``-u`` overrides."""
    where = project(tmp_path, settings)
    done = run_cli("cache", "show", NEWBIE.origin, "/private/secret.html", "/admin/", cwd=where)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert (f"DISALLOWED  /private/secret.html  [{token}]  line 5 (Disallow: /private/) of the 'newbiebot' group "
            "(line 4)") in lines
    # the * group is not this crawler's
    assert f"ALLOWED     /admin/  [{token}]  no rule of the 'newbiebot' group (line 4) matches" in lines
    note = next(line for line in lines if line.startswith("the Scrapy project here: "))
    assert f"obeying robots.txt as {token.split(',')}" in note and why in note
    other = run_cli("cache", "show", NEWBIE.origin, "/private/secret.html", "-u", "Scrapy", cwd=where)
    assert "ALLOWED     /private/secret.html  [Scrapy]  no rule of the '*' group (line 1) matches" in (
        other.stdout.splitlines())
    assert "the Scrapy project here" not in other.stdout


def test_show_names_a_projects_bad_token(tmp_path: Path) -> None:
    where = project(tmp_path, 'REP_USER_AGENT = "news bot"\n')
    done = run_cli("cache", "show", NEWBIE.origin, "/x", cwd=where)
    assert done.returncode == 2
    assert "the Scrapy project here has REP_USER_AGENT='news bot'" in done.stderr and "-u TOKEN" in done.stderr
