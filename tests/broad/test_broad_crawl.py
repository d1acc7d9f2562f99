"""A broad crawl: 5,000 distinct origins x 2 pages through scrapy-rep, all behind one loopback proxy port.

``tests.broad.origins.OriginsProxy`` answers for every ``site-NNNNN.test`` (robots.txt round-robin from the real
corpus, or a built-in set when it is absent). Every request of the crawl, scrapy-rep's robots.txt requests
included, goes to it through ``meta["proxy"]`` (``ProxyEverything``). Its hit log is the ground truth: exactly one
robots.txt download per origin (SPEC 2.1), no page the origin's file disallows for our token, every allowed page
once, and the rep/ accounting sums (SPEC 8.2).

Whether a page is allowed is decided independently of the code under test, by Google's own C++ matcher
(``jwm.robotstxt``, a test dependency; the project's semantics are Google's, Protego's are not on some real
files). Where it is not installed, the project's matcher (``scrapy_rep.matcher``) decides, which still checks the
middleware's plumbing but not its matcher.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable

import pytest
import pytest_twisted

from tests import crawl as crawl_module
from tests.broad.origins import OriginsProxy, robots_bodies
from tests.crawl import crawl

ORIGINS = int(os.environ.get("BROAD_ORIGINS", "5000"))  # smaller for a quick look: BROAD_ORIGINS=500
TOKEN = "broadbot"
WATCHDOG_SECONDS = 240  # a safety net for a loaded machine; the crawl takes ~40-60 s on 2 idle cores


def _oracle() -> tuple[Callable[[bytes, str], bool], str]:
    """``allowed(body, url)`` for TOKEN, and the name of the matcher deciding."""
    try:
        from jwm.robotstxt import googlebot
    except ImportError:
        from scrapy_rep.matcher import parse

        return (lambda body, url: parse(body).allowed(url, TOKEN)), "scrapy_rep.matcher (jwm.robotstxt missing)"
    matcher = googlebot.RobotsMatcher()
    return (lambda body, url: bool(matcher.OneAgentAllowedByRobots(body, TOKEN, url))), "Google's robotstxt"


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_a_broad_crawl_fetches_each_robots_txt_once_and_serves_only_allowed_pages(
        monkeypatch: pytest.MonkeyPatch) -> None:
    bodies, source = robots_bodies()
    proxy = OriginsProxy(bodies).start()
    allowed, oracle = _oracle()
    urls: list[str] = []
    expected_allowed: set[tuple[str, str]] = set()
    expected_disallowed: set[tuple[str, str]] = set()
    for n in range(ORIGINS):
        for path in proxy.pages(n):
            url = proxy.url(n, path)
            urls.append(url)
            origin = url.split("/")[2]
            (expected_allowed if allowed(proxy.body_of(n), url) else expected_disallowed).add((origin, path))
    # The page choice must exercise both sides, whichever robots.txt set is served.
    assert len(expected_allowed) + len(expected_disallowed) == 2 * ORIGINS
    assert expected_allowed and expected_disallowed, (source, oracle)

    monkeypatch.setattr(crawl_module, "WATCHDOG_SECONDS", WATCHDOG_SECONDS)
    started = time.perf_counter()
    try:
        result = await crawl(
            urls, LOG_LEVEL="WARNING", CONCURRENT_REQUESTS=64, CONCURRENT_REQUESTS_PER_DOMAIN=64,
            REP_USER_AGENT=TOKEN, BROAD_PROXY=proxy.proxy_url,
            DOWNLOADER_MIDDLEWARES={"tests.broad.origins.ProxyEverything": 50},
        )
    finally:
        await proxy.stop()
    seconds = time.perf_counter() - started

    hits = Counter(proxy.hits)
    robots = {origin: count for (origin, path), count in hits.items() if path == "/robots.txt"}
    pages = Counter({hit: count for hit, count in hits.items() if hit[1] != "/robots.txt"})
    summary = (f"{ORIGINS} origins, robots.txt from the {source}, decided by {oracle}: "
               f"{len(expected_allowed)} allowed, {len(expected_disallowed)} disallowed pages, {seconds:.1f} s")
    print(summary)

    assert len(robots) == ORIGINS and set(robots.values()) == {1}, summary  # one robots.txt per origin
    assert result.stat("rep/robots/downloads") == ORIGINS
    served_disallowed = sorted(set(pages) & expected_disallowed)
    assert served_disallowed == [], (summary, served_disallowed[:20])
    assert set(pages) == expected_allowed, (summary, sorted(set(pages) ^ expected_allowed)[:20])
    assert set(pages.values()) == {1}, summary  # every allowed page once
    assert sorted(result.downloaded) == sorted(f"http://{origin}{path}" for origin, path in expected_allowed)
    assert Counter(kind for _, kind in result.failed) == Counter({"IgnoreRequest": len(expected_disallowed)})
    assert result.stat("rep/requests/checked") == 2 * ORIGINS
    assert result.stat("rep/requests/forbidden") == len(expected_disallowed)
    result.assert_accounted()
