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
def sites() -> Any:
    """A factory of started ``tests.servers.Site``s, all stopped after the test: ``site = sites(default=...)``."""
    from tests.servers import Site

    started: list[Site] = []

    def make(**kwargs: Any) -> Site:
        site = Site(**kwargs).start()
        started.append(site)
        return site

    yield make
    for site in started:
        if site.port is not None:
            site.port.stopListening()


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
