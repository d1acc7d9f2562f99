"""REP_STORE URIs: what opens which store, and what fails at start-up with a message naming the setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from scrapy_rep.stores import InvalidStoreURI, MemoryStore, RedisTarget, SQLiteStore, open_store, validate_store_uri
from scrapy_rep.stores.redis_store import RedisStore

from .storetools import run


def test_memory() -> None:
    store = open_store("memory", max_origins=7)
    assert isinstance(store, MemoryStore)
    assert store.max_origins == 7


@pytest.mark.parametrize(
    ("uri", "path"),
    [  # SQLAlchemy's, Django's and Celery's convention: three slashes then a relative path, four for an absolute one
        ("sqlite:////var/cache/rep.db", "/var/cache/rep.db"),
        ("sqlite:///rep.db", "{cwd}/rep.db"),
        ("sqlite:///var/cache/rep.db", "{cwd}/var/cache/rep.db"),
        ("sqlite:///./rep.db", "{cwd}/rep.db"),
        ("sqlite:///../cache/rep.db", "{parent}/cache/rep.db"),
        ("sqlite:////tmp/with%20space.db?timeout=2.5", "/tmp/with space.db"),
    ],
)
def test_sqlite_paths_are_resolved_to_absolute_ones(uri: str, path: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    store = open_store(uri)
    assert isinstance(store, SQLiteStore)
    assert store.path == path.format(cwd=tmp_path, parent=tmp_path.parent)
    assert store.where == f"SQLite file {store.path}"


def test_a_file_name_where_the_host_goes_is_refused_with_the_uri_to_write() -> None:
    """``sqlite://robots.db`` names a host, not a file: the message gives both spellings that work."""
    with pytest.raises(InvalidStoreURI) as refused:
        validate_store_uri("sqlite://robots.db")
    assert "'robots.db' is read as a host, not a file: write 'sqlite:///robots.db' for a file relative to the " \
           "working directory, or 'sqlite:////absolute/path.db'" in str(refused.value)


@pytest.mark.parametrize(
    ("uri", "where"),
    [
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
        ("redis://localhost", "redis://localhost:6379/0"),
        ("redis://:secret@10.0.0.1:7000/3?prefix=x:&timeout=0.3", "redis://10.0.0.1:7000/3"),
        ("rediss://cache.internal:6380/1?keep_days=60", "rediss://cache.internal:6380/1"),
    ],
)
def test_redis(uri: str, where: str) -> None:
    """Opened inside a running loop (as under the asyncio reactor); named without its password in messages."""

    async def scenario() -> RedisStore:
        store = open_store(uri)
        assert isinstance(store, RedisStore)
        await store.close()
        return store

    assert run(scenario()).where == where


@pytest.mark.parametrize(
    ("uri", "reason"),
    [
        ("", "unknown store"),
        ("Memory", "unknown store"),
        ("memcached://localhost", "unknown store 'memcached'"),
        ("/var/cache/rep.db", "unknown store"),
        ("sqlite://rep.db", "is read as a host"),
        ("sqlite://", "needs a file path"),
        ("sqlite:///", "needs a file path"),
        ("sqlite:///tmp/dir/", "needs a file path"),
        ("sqlite:///tmp/x.db?timeout=0", "timeout must be a positive number of seconds"),
        ("sqlite:///tmp/x.db?timeout=soon", "timeout must be a positive number of seconds"),
        ("sqlite:///tmp/x.db?mode=ro", "unknown option"),
        ("redis://localhost:port/0", "Port could not be cast"),
        ("redis://localhost:6379/zero", "database must be a number"),
        ("redis://localhost:6379/0/1", "database must be a number"),
        ("redis://localhost?prefx=rep:", "unknown option"),
        ("redis://localhost?keep_days=-1", "keep_days must be a positive number of days"),
        ("redis://localhost?timeout=nan", "timeout must be a positive"),
        ("redis?prefx=rep:", "unknown option"),
        ("redis?timeout=0", "timeout must be a positive"),
        ("redis/0", "unknown store"),
    ],
)
def test_malformed_uri_is_refused_naming_the_setting_and_value(uri: str, reason: str) -> None:
    for call in (validate_store_uri, open_store):
        with pytest.raises(ValueError, match="REP_STORE") as raised:
            call(uri)
        assert repr(uri) in str(raised.value)
        assert reason in str(raised.value)


@pytest.mark.parametrize(
    ("uri", "target", "where"),
    [
        ("redis", RedisTarget(None, {"host": "cache.internal", "port": 7000, "db": 2}, "REDIS_HOST"),
         "redis://cache.internal:7000/2"),
        ("redis?prefix=x:&timeout=0.3", RedisTarget("rediss://:pw@cache.internal/1", {}, "REDIS_URL"),
         "rediss://cache.internal:6379/1"),
        ("redis", RedisTarget(None, {"ssl": True, "password": "pw"}, "REDIS_HOST"), "rediss://localhost:6379/0"),
        ("redis", RedisTarget("unix:///run/redis.sock?db=4", {}, "REDIS_URL"), "unix:///run/redis.sock?db=4"),
    ],
)
def test_the_bare_redis_form_opens_the_server_it_is_given(uri: str, target: RedisTarget, where: str) -> None:
    """``REP_STORE = "redis"``: the server comes from scrapy-redis's settings (the config reads them), the store's
    own options from the query."""

    async def scenario() -> RedisStore:
        store = open_store(uri, redis=target)
        assert isinstance(store, RedisStore)
        await store.close()
        return store

    assert run(scenario()).where == where


def test_the_bare_redis_form_needs_its_server() -> None:
    with pytest.raises(InvalidStoreURI, match=r"^REP_STORE='redis\?prefix=x:': the bare 'redis' takes its server "):
        open_store("redis?prefix=x:")


def test_a_password_is_never_shown_in_a_refusal() -> None:
    for uri in ("redis://:secret@localhost:port/0", "redis://user:secret@localhost/0?prefx=1",
                "sqlite://user:secret@host/x.db"):
        with pytest.raises(InvalidStoreURI) as raised:
            validate_store_uri(uri)
        assert "secret" not in str(raised.value) and ":***@" in str(raised.value)


def test_non_string_is_refused() -> None:
    with pytest.raises(ValueError, match="REP_STORE must be a string, got 3"):
        validate_store_uri(3)  # type: ignore[arg-type]
