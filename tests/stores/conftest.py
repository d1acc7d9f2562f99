"""Fixtures for the store tests: a real redis-server per test and one backend object per store kind."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import redis

from .storetools import Backend, RedisServer


def make_backend(name: str, request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    if name == "memory":
        return Backend("memory", "memory", None)
    if name == "sqlite":
        path = tmp_path / "rep.db"

        def write_sqlite(origin: str, data: bytes) -> None:
            with sqlite3.connect(path) as conn:
                conn.execute("INSERT OR REPLACE INTO rep_entries VALUES (?, ?)", (origin, data))
            conn.close()

        return Backend("sqlite", f"sqlite:///{path}", write_sqlite)
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
