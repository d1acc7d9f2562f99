"""Fixtures for the store tests: a real redis-server per test and one backend object per store kind."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from storetools import RedisServer

from scrapy_rep.stores import Store, open_store


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A fresh redis-server on a free loopback port, killed at teardown."""
    try:
        server = RedisServer(tmp_path)
    except FileNotFoundError:
        pytest.skip("redis-server not on PATH (apt-get install redis-server; .ci/run does)")
    server.start()
    try:
        yield server
    finally:
        server.kill()


class Backend:
    """How a test opens a store of one kind, and writes a raw record behind its back."""

    def __init__(self, name: str, uri: str, write_raw: Callable[[str, bytes], None] | None) -> None:
        self.name = name
        self.uri = uri
        self._write_raw = write_raw

    def open(self, clock: Callable[[], float] = lambda: 1000.0) -> Store:
        """Call inside the coroutine that uses the store (the Redis client binds to the running loop)."""
        return open_store(self.uri, max_origins=1000, clock=clock)

    def write_raw(self, origin: str, data: bytes) -> None:
        assert self._write_raw is not None, f"the {self.name} store keeps objects, not records"
        self._write_raw(origin, data)


def make_backend(name: str, request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    if name == "memory":
        return Backend("memory", "memory", None)
    if name == "sqlite":
        path = tmp_path / "rep.db"

        def write_sqlite(origin: str, data: bytes) -> None:
            with sqlite3.connect(path) as conn:
                conn.execute("INSERT OR REPLACE INTO rep_entries VALUES (?, ?)", (origin, data))
            conn.close()

        return Backend("sqlite", f"sqlite://{path}", write_sqlite)
    server: RedisServer = request.getfixturevalue("redis_server")

    def write_redis(origin: str, data: bytes) -> None:
        with redis.Redis(port=server.port) as client:
            client.set(f"rep:entry:{origin}", data)

    return Backend("redis", server.url, write_redis)


@pytest.fixture(params=["memory", "sqlite", "redis"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """Each of the three stores."""
    return make_backend(request.param, request, tmp_path)


@pytest.fixture(params=["sqlite", "redis"])
def shared_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """The stores that keep records and exclude other crawlers by leases."""
    return make_backend(request.param, request, tmp_path)


@pytest.fixture
def sqlite_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    return make_backend("sqlite", request, tmp_path)


@pytest.fixture
def redis_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    return make_backend("redis", request, tmp_path)
