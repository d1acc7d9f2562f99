"""``scrapy-rep cache diff ORIGIN [A B]``: what changed between two versions of an origin's robots.txt, as rules per
group, from the history of a real SQLite file or Redis server (filled by the store's own ``put``)."""

from __future__ import annotations

import hashlib
import io
import itertools
import json
from pathlib import Path

import pytest

from scrapy_rep.cli._cache_diff import run_diff
from scrapy_rep.stores import Entry, Outcome, Version, iso, open_store
from tests.stores.storetools import RedisServer, run

from .conftest import run_cli
from .test_cache import put

ORIGIN = "https://example.com"
URL = f"{ORIGIN}/robots.txt"
V1 = b"User-agent: examplebot\nAllow: /public/\nDisallow: /private/\n\nUser-agent: *\nDisallow: /tmp/\n"
V2 = b"# moved\nUser-agent: examplebot\nDisallow: /private/\nDisallow: /new/\n\nUser-agent: *\nDisallow: /tmp/\n"
T1, T2, T3 = 1_790_000_000.0, 1_790_086_400.0, 1_790_172_800.0


def rules(body: bytes, at: float, origin: str = ORIGIN) -> Entry:
    return Entry(origin, Outcome.RULES, at, at + 86_400, body=body, status=200,
                 version=Version.of(body, at, 200, f"{origin}/robots.txt"))


def missing(at: float) -> Entry:
    """A 404: allow-all, the empty body's version."""
    return Entry(ORIGIN, Outcome.ALLOW_ALL, at, at + 86_400, status=404, version=Version.of(b"", at, 404, URL))


def short(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()[:12]


@pytest.fixture(params=["sqlite", "redis"])
def uri(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty SQLite file or Redis server (the real redis-server of the ``redis_server`` fixture)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/rep.db"
    server: RedisServer = request.getfixturevalue("redis_server")
    return server.url


def diff(uri: str, origin: str = ORIGIN, a: str | None = None, b: str | None = None,
         as_json: bool = False) -> tuple[int, str]:
    """``run_diff`` on the store at ``uri``: (exit code, output)."""
    out = io.StringIO()

    async def work() -> int:
        store = open_store(uri)
        try:
            return await run_diff(store, origin, a, b, as_json, out)  # type: ignore[arg-type]  # a SQLiteStore
        finally:
            await store.close()

    return run(work()), out.getvalue()


def test_the_two_newest_versions_as_rules_per_group(uri: str) -> None:
    put(uri, rules(V1, T1), rules(V2, T2))
    code, text = diff(uri)
    assert code == 0
    assert text.splitlines() == [
        f"robots.txt {ORIGIN}: {short(V1)} (first seen {iso(T1)}, status 200) -> {short(V2)} (first seen {iso(T2)}, "
        "status 200)",
        "group 'examplebot':",
        "  + Disallow: /new/ (line 4)",
        "  - Allow: /public/ (line 2)",
    ]


def test_versions_named_by_prefix_in_either_order(uri: str) -> None:
    put(uri, rules(V1, T1), rules(V2, T2), missing(T3))
    code, text = diff(uri, a=short(V2)[:6].upper(), b=short(V1)[:4])
    assert code == 0
    assert text.splitlines()[1:] == ["group 'examplebot':", "  + Allow: /public/ (line 2)",
                                     "  - Disallow: /new/ (line 4)"]
    code, text = diff(uri, a=short(V1))  # B not given: the newest, the 404
    assert code == 0 and text.splitlines()[0].endswith(f"-> {short(b'')} (first seen {iso(T3)}, status 404)")


def test_an_allow_all_version_is_an_empty_file(uri: str) -> None:
    put(uri, rules(V1, T1), missing(T2))
    code, text = diff(uri)
    assert code == 0
    assert text.splitlines()[1:] == [
        f"{short(b'')} is allow-all: compared as an empty file",
        "group 'examplebot' (removed):",
        "  - Allow: /public/ (line 2)",
        "  - Disallow: /private/ (line 3)",
        "group '*' (removed):",
        "  - Disallow: /tmp/ (line 6)",
    ]


def test_json_is_the_same_as_data(uri: str) -> None:
    put(uri, rules(V1, T1), rules(V2 + b"Sitemap: https://example.com/s.xml\n", T2))
    code, text = diff(uri, as_json=True)
    assert code == 0
    document = json.loads(text)
    assert document["origin"] == ORIGIN and document["changed"] is True
    assert document["from"] == {"id": hashlib.sha256(V1).hexdigest(), "outcome": "rules", "status": 200, "url": URL,
                                "first_seen": T1, "last_seen": T1, "compared_as_empty": False}
    assert document["groups"] == [
        {"tokens": ["examplebot"], "in_old": True, "in_new": True,
         "added": [{"directive": "Disallow", "value": "/new/", "line": 4}],
         "removed": [{"directive": "Allow", "value": "/public/", "line": 2}]},
        {"tokens": [], "in_old": True, "in_new": True,
         "added": [{"directive": "Sitemap", "value": "https://example.com/s.xml", "line": 8}], "removed": []},
    ]


def test_a_new_body_with_the_same_rules_says_so(uri: str) -> None:
    put(uri, rules(V1, T1), rules(b"# a comment\n" + V1, T2))
    code, text = diff(uri)
    assert code == 0 and text.splitlines()[1:] == ["no change: the same groups, rules and sitemaps"]


def test_versions_that_cannot_be_found(uri: str, capsys: pytest.CaptureFixture[str]) -> None:
    put(uri, rules(V1, T1), rules(V1, T1, origin="https://other.example"))
    assert diff(uri, "https://nothing.example") == (1, "")
    assert capsys.readouterr().err == "https://nothing.example: no robots.txt history in the store\n"
    assert diff(uri) == (1, "")
    assert capsys.readouterr().err == f"{ORIGIN}: only one version in the store ({short(V1)}): nothing to compare\n"
    assert diff(uri, a="0000", b=short(V1))[0] == 1
    assert capsys.readouterr().err == f"{ORIGIN}: no version 0000 in the store\n"


@pytest.mark.parametrize(("origin", "a", "error"), [
    ("https://example.com", "abc", "cache diff: version 'abc': give at least 4 hex digits of its id"),
    ("https://example.com", "zzzzzz", "cache diff: version 'zzzzzz': give at least 4 hex digits of its id"),
    ("example.com", "abcd", "cache diff: not an origin or URL: 'example.com' (write it as https://example.com)"),
])
def test_usage_errors(uri: str, capsys: pytest.CaptureFixture[str], origin: str, a: str, error: str) -> None:
    put(uri, rules(V1, T1), rules(V2, T2))
    assert diff(uri, origin, a=a) == (2, "")
    assert capsys.readouterr().err == f"scrapy-rep: error: {error}\n"


def test_an_ambiguous_prefix(uri: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Two bodies whose ids share their first four hex digits: the prefix names neither."""
    seen: dict[str, bytes] = {}
    for n in itertools.count():
        body = b"User-agent: *\nDisallow: /%d\n" % n
        prefix = hashlib.sha256(body).hexdigest()[:4]
        if prefix in seen:
            break
        seen[prefix] = body
    put(uri, rules(seen[prefix], T1), rules(body, T2))
    assert diff(uri, a=prefix) == (2, "")
    err = capsys.readouterr().err
    assert err.startswith(f"scrapy-rep: error: cache diff: version {prefix} is ambiguous: ")
    assert short(body) in err and short(seen[prefix]) in err


def test_through_the_cli(uri: str) -> None:
    """``scrapy-rep cache diff`` (the console script) runs ``run_diff``."""
    put(uri, rules(V1, T1), rules(V2, T2))
    done = run_cli("cache", "diff", "--store", uri, ORIGIN)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1:] == ["group 'examplebot':", "  + Disallow: /new/ (line 4)",
                                            "  - Allow: /public/ (line 2)"]
    done = run_cli("cache", "diff", "--store", uri, "--json", ORIGIN, short(V2), short(V1))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["groups"][0]["added"] == [{"directive": "Allow", "value": "/public/", "line": 2}]
    done = run_cli("cache", "diff", "--store", uri, ORIGIN, "12")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "scrapy-rep: error: cache diff: version '12': give at least 4 hex digits of its id\n"
