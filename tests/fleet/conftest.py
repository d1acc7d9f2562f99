"""Fixtures for the fleet tests: a real redis-server per test (skipped without one, or without scrapy-redis), and
the event hub the tests wait on."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # the harness imports the reactor: only once pytest-twisted has installed the asyncio one
    from .harness import Events, Origins, Worker


@pytest.fixture(autouse=True)
def _needs_scrapy_redis() -> None:
    pytest.importorskip("scrapy_redis", reason="scrapy-redis is not installed (pip install -e '.[test]')")


@pytest.fixture
def events() -> Events:
    from .harness import Events

    return Events()


@pytest.fixture
def origins(events: Events) -> Iterator[Origins]:
    """The origin servers of a test, in this process (the reactor of pytest-twisted), stopped at teardown."""
    from .harness import Origins

    made = Origins(events)
    yield made
    made.stop()


@pytest.fixture
def workers() -> Iterator[list[Worker]]:
    """The worker processes a test started (append them); any still running at teardown is killed (only those)."""
    started: list[Worker] = []
    yield started
    for worker in started:
        worker.kill_if_running()
