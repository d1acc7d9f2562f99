"""No internal error leaves requests held in silence: an unexpected exception while an origin's robots.txt is
fetched, parsed or adopted is logged at ERROR with its traceback, counted, and the origin goes through SPEC 2.2's
network-error path (held, retried with back-off), so the crawl recovers or ends with a visible reason.

Each test injects the exception into one step of a real crawl (the rest of the code runs as in production).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
import pytest_twisted
from scrapy.crawler import Crawler
from twisted.internet.task import Clock

import scrapy_rep.middleware
from scrapy_rep import _scrapy
from scrapy_rep.robots.refresh import Refresher
from scrapy_rep.robots.state import State
from scrapy_rep.stores import MemoryStore
from tests.crawl import crawl, middleware
from tests.servers import robots

RULES = "User-agent: *\nDisallow: /private\n"
RETRY = 60.0  # REP_ERROR_RETRY_DELAY: an internal error is retried like a network error (SPEC 2.5)


def failing_once(original: Callable[..., Any], exc: Exception) -> Callable[..., Any]:
    """``original``, except that its first call raises ``exc``."""
    calls: list[None] = []

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls.append(None)
        if len(calls) == 1:
            raise exc
        return original(*args, **kwargs)

    return wrapper


def retry_when_holding(clock: Clock, crawlers: list[Crawler]) -> Callable[[], bool]:
    """A phase: once the origin holds (the failure adopted), let the back-off elapse."""

    def action() -> bool:
        states = middleware(crawlers[0]).origins.values()
        if not states or any(state.state is not State.HOLDING for state in states):
            return False
        clock.advance(RETRY)
        return True

    return action


async def crawl_with_one_failure(sites: Any) -> tuple[Any, Any]:
    clock = Clock()
    site = sites()
    site.route("/robots.txt", robots(RULES))
    crawlers: list[Crawler] = []
    result = await crawl([site.url("/a"), site.url("/private")], REP_CLOCK=lambda: clock, on_crawler=crawlers.append,
                         REP_ERROR_RETRY_DELAY=RETRY, spider_kwargs={"phases": [(retry_when_holding(clock, crawlers),
                                                                                 [])]})
    return result, site


def assert_recovered(result: Any, site: Any, step: str, caplog: pytest.LogCaptureFixture, robots_hits: int) -> None:
    assert result.downloaded == [site.url("/a")]  # held through the error, then decided by the rules
    assert result.stat("rep/requests/forbidden") == 1
    assert result.stat(f"rep/internal_errors/{step}") == 1 and result.stat("rep/internal_errors") == 1
    assert site.hits_for("/robots.txt") == robots_hits
    assert site.paths().index("/a") > site.paths().index("/robots.txt")  # nothing sent before the rules were known
    errors = [record for record in caplog.records if record.levelno == logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info is not None
    assert site.origin() in errors[0].getMessage() and f"{step} step" in errors[0].getMessage()
    result.assert_accounted()


#: (where the exception is raised, the step it belongs to): a bug in the fetch, a store's own exception (not a
#: StoreError, which is handled as such), a bug in the parser. Each raises once; the retry reads the stored copy.
ONE_FAILURE = {
    "fetch": (Refresher, "current_entry", RuntimeError("injected fetch bug"), "fetch"),
    "store": (MemoryStore, "get", KeyError("injected store bug"), "fetch"),
    "parse": (scrapy_rep.middleware, "parse", ValueError("injected parser bug"), "parse"),
}


@pytest.mark.parametrize("where", list(ONE_FAILURE))
@pytest_twisted.ensureDeferred
async def test_an_exception_on_the_way_is_a_network_error(
    sites: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, where: str
) -> None:
    owner, name, exc, step = ONE_FAILURE[where]
    monkeypatch.setattr(owner, name, failing_once(getattr(owner, name), exc))
    result, site = await crawl_with_one_failure(sites)
    assert_recovered(result, site, step, caplog, robots_hits=1)


@pytest_twisted.ensureDeferred
async def test_an_exception_while_adopting_is_a_network_error(
    sites: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The failure Scrapy 2.15 showed: ``signals.robots_parsed`` missing, raised after robots.txt was fetched."""
    signal = _scrapy.robots_parsed
    raised: list[None] = []

    def __getattr__(name: str) -> Any:
        if name == "robots_parsed" and not raised:
            raised.append(None)
            raise AttributeError("module 'scrapy.signals' has no attribute 'robots_parsed'")
        if name == "robots_parsed":
            return signal
        raise AttributeError(name)

    monkeypatch.delattr(_scrapy, "robots_parsed")
    monkeypatch.setattr(_scrapy, "__getattr__", __getattr__, raising=False)
    result, site = await crawl_with_one_failure(sites)
    assert_recovered(result, site, "adopt", caplog, robots_hits=1)


@pytest_twisted.ensureDeferred
async def test_an_error_on_every_attempt_ends_in_visible_drops_not_silence(
    sites: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(body: bytes, max_bytes: int) -> Any:
        raise ValueError("injected parser bug")

    monkeypatch.setattr(scrapy_rep.middleware, "parse", broken)
    caplog.set_level(logging.INFO, logger="scrapy_rep.middleware")
    clock = Clock()
    site = sites()
    site.route("/robots.txt", robots(RULES))
    crawlers: list[Crawler] = []
    phases = [(retry_when_holding(clock, crawlers), []), (retry_when_holding(clock, crawlers), []),
              (lambda: clock.advance(600), [])]
    result = await crawl([site.url("/a"), site.url("/private")], REP_CLOCK=lambda: clock, on_crawler=crawlers.append,
                         REP_ERROR_RETRY_DELAY=RETRY, REP_ERROR_RETRY_MAX_DELAY=RETRY, REP_HOLD_TIMEOUT=600,
                         spider_kwargs={"phases": phases})
    assert result.downloaded == []
    assert not [path for path in site.paths() if path != "/robots.txt"]  # never "allow all"
    assert result.stat("rep/internal_errors/parse") == 4  # t = 0, 60, 120 and 720 (the jump past the hold)
    assert site.hits_for("/robots.txt") == 1  # the retries read the stored copy: the site is not asked again
    assert result.stat("rep/requests/dropped_after_hold/timeout") == 2
    errors = [record for record in caplog.records if record.levelno == logging.ERROR]
    assert len(errors) == 1  # once per origin, step and exception type; the retries are counted
    dropped = [record for record in caplog.records if record.getMessage().startswith("Dropped after waiting")]
    assert len(dropped) == 2
    result.assert_accounted()
