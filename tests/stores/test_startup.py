"""REP_STORE = "redis" on scrapy-redis's settings, and the start-up checks of a crawler's store (SPEC 3.2, 8.4):
a Redis that does not answer PING stops the crawl at start-up with a ConfigError naming REP_STORE, the REDIS_*
setting the server came from and the server, never its password."""

from __future__ import annotations

import sqlite3
import time
from typing import Any

import pytest
import redis
from scrapy.settings import Settings
from scrapy_redis.connection import get_redis_from_settings
from twisted.internet.task import Clock

from scrapy_rep.config import Config, ConfigError
from scrapy_rep.stores import MemoryStore, SQLiteStore, Store, StoreError, open_store
from scrapy_rep.stores.redis_store import RedisStore
from scrapy_rep.stores.startup import open_crawler_store

from .storetools import DEADLINE, RedisServer, entry, free_port, run

ORIGIN = "https://example.com"
SECRET = "s3cret-Pa55"


def config(**settings: Any) -> Config:
    return Config.from_settings(Settings({"ROBOTSTXT_OBEY": True, **settings}))


def open_for(**settings: Any) -> Store:
    return open_crawler_store(config(**settings), Clock())


def redis_store(**settings: Any) -> RedisStore:
    store = open_for(**settings)
    assert isinstance(store, RedisStore)
    return store


@pytest.fixture
def password_server(redis_server: RedisServer) -> RedisServer:
    """``redis_server`` requiring the password SECRET."""
    with redis.Redis(port=redis_server.port) as client:
        client.config_set("requirepass", SECRET)
    return redis_server


def test_a_memory_store_opens_without_a_check_and_a_sqlite_file_is_created_at_start_up(tmp_path: Any) -> None:
    assert isinstance(open_for(), MemoryStore)
    assert isinstance(open_for(REP_STORE=f"sqlite:///{tmp_path}/rep.db"), SQLiteStore)
    assert (tmp_path / "rep.db").is_file()  # opened and laid out once, so a file that cannot be is known now


@pytest.mark.parametrize(
    ("name", "content", "why"),
    [
        ("nodir/rep.db", None, "the directory {tmp}/nodir does not exist"),
        ("rep.db", b"<html>not a database</html>" * 200, "cannot open {tmp}/rep.db: file is not a database"),
        ("rep.db", "schema 9", "cannot open {tmp}/rep.db: unknown schema version 9 (this release reads 2)"),
        ("isadir", "directory", "cannot open {tmp}/isadir: unable to open database file"),
    ],
)
def test_a_sqlite_file_that_cannot_be_opened_is_a_config_error_naming_its_path(tmp_path: Any, name: str,
                                                                               content: Any, why: str) -> None:
    """Issue 25: an unusable location fails at start-up, not as a WARNING per origin during the crawl."""
    if content == "directory":
        (tmp_path / name).mkdir()
    elif content == "schema 9":
        with sqlite3.connect(tmp_path / name) as conn:
            conn.execute("PRAGMA user_version = 9")
        conn.close()
    elif content is not None:
        (tmp_path / name).write_bytes(content)
    uri = f"sqlite:///{tmp_path}/{name}"
    with pytest.raises(ConfigError) as refused:
        open_for(REP_STORE=uri)
    assert str(refused.value) == (f"REP_STORE={uri!r}: {why.format(tmp=tmp_path)}; a relative path "
                                  "(sqlite:///robots.db) is relative to the working directory, an absolute one has "
                                  "four slashes (sqlite:////abs/robots.db)")


def test_bare_redis_uses_redis_url_and_our_own_options(redis_server: RedisServer) -> None:
    async def scenario() -> None:
        store = redis_store(REP_STORE="redis?prefix=fleet:&timeout=0.5", REDIS_URL=redis_server.url,
                            REDIS_HOST="ignored.invalid")  # REDIS_URL wins, as in scrapy-redis
        assert store.where == f"redis://127.0.0.1:{redis_server.port}/0"
        await store.put(entry(ORIGIN))
        await store.close()

    run(scenario())
    with redis.Redis(port=redis_server.port) as client:
        assert client.keys() == [f"fleet:entry:{ORIGIN}".encode()]


def test_bare_redis_uses_redis_host_port_and_db(redis_server: RedisServer) -> None:
    async def scenario() -> str:
        store = redis_store(REP_STORE="redis", REDIS_HOST="127.0.0.1", REDIS_PORT=str(redis_server.port), REDIS_DB=3,
                            REDIS_PARAMS={"db": 5, "socket_timeout": 30, "decode_responses": True})
        await store.put(entry(ORIGIN))
        assert await store.get(ORIGIN) == entry(ORIGIN)  # bytes replies whatever REDIS_PARAMS says
        await store.close()
        return store.where

    assert run(scenario()) == f"redis://127.0.0.1:{redis_server.port}/3"  # REDIS_DB overrides REDIS_PARAMS' db
    with redis.Redis(port=redis_server.port, db=3) as client:
        assert client.exists(f"rep:entry:{ORIGIN}") == 1


@pytest.mark.parametrize(
    "settings",
    [
        {"REDIS_URL": "redis://:pw@cache.internal:6380/2", "REDIS_PARAMS": {"socket_timeout": 30, "username": "u"}},
        {"REDIS_URL": "rediss://user:pw@cache.internal/1", "REDIS_DB": 4},
        {"REDIS_HOST": "cache.internal", "REDIS_PORT": 7000, "REDIS_PARAMS": {"password": "pw", "db": 2}},
        {"REDIS_PARAMS": {"host": "a.internal", "ssl": True, "ssl_cert_reqs": "none", "encoding": "latin-1"}},
        {},
    ],
)
@pytest.mark.filterwarnings("ignore:Call to '__init__' function with deprecated usage:DeprecationWarning")
def test_the_server_is_the_one_scrapy_redis_connects_to(settings: dict[str, Any]) -> None:
    """Same host, port, database, credentials and TLS as scrapy-redis's own client for the same settings; our
    own timeouts, single retry and bytes replies instead of scrapy-redis's 30 s and decoding."""
    theirs = get_redis_from_settings(Settings(settings)).connection_pool

    async def scenario() -> tuple[dict[str, Any], str]:
        bare = config(REP_STORE="redis", **settings)
        store = open_store(bare.store, redis=bare.redis)  # not open_crawler_store: these servers do not exist
        assert isinstance(store, RedisStore)
        ours = store._client.connection_pool
        await store.close()
        return dict(ours.connection_kwargs), ours.connection_class.__name__

    ours, connection_class = run(scenario())
    same = ("host", "port", "db", "username", "password", "ssl_cert_reqs")
    assert {k: ours.get(k) for k in same} == {k: theirs.connection_kwargs.get(k) for k in same}
    assert connection_class == theirs.connection_class.__name__  # SSLConnection for rediss:// or ssl=True
    assert (ours["socket_timeout"], ours["socket_connect_timeout"], ours.get("decode_responses", False)) == (
        1.0, 1.0, False)


def test_a_password_url_works_and_is_never_shown(password_server: RedisServer) -> None:
    url = f"redis://:{SECRET}@127.0.0.1:{password_server.port}/0"

    async def scenario() -> str:
        store = redis_store(REP_STORE="redis", REDIS_URL=url)
        await store.put(entry(ORIGIN))
        assert await store.get(ORIGIN) == entry(ORIGIN)
        password_server.kill()
        with pytest.raises(StoreError) as raised:
            await store.get(ORIGIN)
        await store.close()
        return str(raised.value)

    message = run(scenario())
    assert SECRET not in message and f"redis://127.0.0.1:{password_server.port}/0" in message


def test_a_password_in_redis_params_works(password_server: RedisServer) -> None:
    async def scenario() -> Any:
        store = redis_store(REP_STORE="redis", REDIS_PORT=password_server.port, REDIS_PARAMS={"password": SECRET})
        await store.put(entry(ORIGIN))
        read = await store.get(ORIGIN)
        await store.close()
        return read

    assert run(scenario()) == entry(ORIGIN)


def test_a_wrong_password_fails_at_start_up_without_showing_it(password_server: RedisServer) -> None:
    with pytest.raises(ConfigError) as raised:
        open_for(REP_STORE="redis", REDIS_URL=f"redis://:wrong-{SECRET}@127.0.0.1:{password_server.port}/0")
    message = str(raised.value)
    assert raised.value.setting == "REP_STORE"
    assert message.startswith(f"REP_STORE='redis': no answer to PING at start-up (server from REDIS_URL): Redis store "
                              f"redis://127.0.0.1:{password_server.port}/0: AuthenticationError: ")
    assert SECRET not in message


@pytest.mark.parametrize(
    ("settings", "shown"),
    [
        ({"REP_STORE": "redis", "REDIS_PORT": "{port}"},
         "REP_STORE='redis': no answer to PING at start-up (server from REDIS_HOST): Redis store "
         "redis://localhost:{port}/0: "),
        ({"REP_STORE": f"redis://:{SECRET}@127.0.0.1:{{port}}/0?timeout=0.2"},
         "REP_STORE='redis://:***@127.0.0.1:{port}/0?timeout=0.2': no answer to PING at start-up: Redis store "
         "redis://127.0.0.1:{port}/0: "),
    ],
)
def test_an_unreachable_redis_fails_at_start_up_naming_the_settings(settings: dict[str, str], shown: str) -> None:
    port = free_port()
    started = time.monotonic()
    with pytest.raises(ConfigError) as raised:
        open_for(**{name: value.format(port=port) for name, value in settings.items()})
    assert time.monotonic() - started < DEADLINE
    message = str(raised.value)
    assert message.startswith(shown.format(port=port))
    assert message.endswith("; start the server or correct the setting")
    assert SECRET not in message
