"""Session-wide test set-up: every Twisted/Scrapy test runs under Scrapy's default reactor, the asyncio one.

pytest-twisted installs the reactor named by its ``--reactor`` option; we choose ``asyncio`` here so that
``pytest`` alone (the README's command) matches Scrapy's ``TWISTED_REACTOR`` default.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from tests.stores.storetools import RedisServer


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("reactor", "default") == "default":
        config.option.reactor = "asyncio"


@pytest.fixture
def serve() -> Any:
    """Start a ``tests.servers.Site`` (or a ``tests.tls.TLSSite``) on ``port`` (0: a free one), stopped after the
    test: ``site = serve(Site(), 443)``. A fixed port that cannot be bound (taken, or not allowed) skips the test: it
    must never fail because a port is busy."""
    from twisted.internet.error import CannotListenError

    from tests.servers import Site

    started: list[Site] = []

    def start(site: Site, port: int = 0) -> Any:
        try:
            site.start(port)
        except CannotListenError as exc:
            pytest.skip(f"cannot listen on 127.0.0.1:{port}: {exc.socketError}")
        started.append(site)
        return site

    yield start
    for site in started:
        if site.port is not None:
            site.port.stopListening()


@pytest.fixture
def sites(serve: Any) -> Any:
    """A factory of started ``tests.servers.Site``s, all stopped after the test: ``site = sites(default=...)``."""
    from tests.servers import Site

    return lambda **kwargs: serve(Site(**kwargs))


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A fresh redis-server on a free loopback port (``--save '' --appendonly no``), killed at teardown; the test is
    skipped where redis-server is not installed."""
    from tests.stores.storetools import RedisServer

    try:
        server = RedisServer(tmp_path)
    except FileNotFoundError:
        pytest.skip("redis-server not on PATH (apt-get install redis-server; .ci/run does)")
    server.start()
    try:
        yield server
    finally:
        server.kill()
