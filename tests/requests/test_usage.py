"""Usage preferences in real crawls (scrapy_rep/requests/usage.py): every allowed request carries
``meta["rep_usage"]``; a ``train-ai=n`` path is dropped only when the crawl declares that use (``REP_CONTENT_USES``)."""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from typing import Any

import pytest
import pytest_twisted
from scrapy.http import Response

from scrapy_rep.config import ConfigError
from tests.crawl import ListSpider, crawl
from tests.servers import Site, robots

AIPREF = """User-Agent: *
Allow: /
Disallow: /private
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y
"""
SIGNAL = """User-agent: *
Content-Signal: search=yes, ai-train=no
Allow: /
"""


class UsageSpider(ListSpider):
    """Records each downloaded page's ``meta["rep_usage"]``."""

    name = "usage"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.usage: dict[str, dict[str, str]] = {}

    def parse(self, response: Response) -> None:
        super().parse(response)
        self.usage[response.url] = response.meta["rep_usage"]


def site_with(sites: Any, text: str) -> Site:
    site: Site = sites()
    site.route("/robots.txt", robots(text))
    return site


@pytest_twisted.ensureDeferred
async def test_preferences_are_reported_and_nothing_is_dropped_without_declared_uses(sites: Any) -> None:
    site = site_with(sites, AIPREF)
    urls = [site.url("/a"), site.url("/ai-ok/b"), site.url("/private/x")]
    result = await crawl(urls, spider=UsageSpider)
    spider = result.spider
    assert isinstance(spider, UsageSpider)
    assert spider.usage == {site.url("/a"): {"train-ai": "n"}, site.url("/ai-ok/b"): {"train-ai": "y"}}
    assert result.stat("rep/usage/train-ai/n") == 1 and result.stat("rep/usage/train-ai/y") == 1
    assert result.stat("rep/usage/refused/train-ai") == 0
    assert result.stat("rep/requests/forbidden") == 1  # /private/x: a rule
    result.assert_accounted()


@pytest.mark.parametrize("declared", [["train-ai"], ["ai-train"], "train-ai,search"])
@pytest_twisted.ensureDeferred
async def test_a_refused_declared_use_drops_the_request_like_a_disallowed_one(
    sites: Any, declared: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """``REP_CONTENT_USES`` declares training: ``/a`` (train-ai=n) is forbidden and never requested, ``/ai-ok/b``
    (train-ai=y) is crawled. Content-Signal's name ``ai-train`` is the same use. The DEBUG line says it was refused
    for its use (not forbidden by robots.txt) and cites the refusing line as rules are cited (matcher.cite)."""
    caplog.set_level(logging.DEBUG, logger="scrapy_rep.middleware")
    site = site_with(sites, AIPREF)
    urls = [site.url("/a"), site.url("/ai-ok/b"), site.url("/private/x")]
    result = await crawl(urls, spider=UsageSpider, REP_CONTENT_USES=declared, LOG_LEVEL="DEBUG")
    version = hashlib.sha256(AIPREF.encode()).hexdigest()[:12]
    assert (f"Refused for its use: {site.url('/a')} (train-ai refused by robots.txt line 4 (Content-Usage: "
            f"train-ai=n) of the '*' group (line 1); as ['TestBot']; version {version})") in [
                r.getMessage() for r in caplog.records]
    assert result.downloaded == [site.url("/ai-ok/b")]
    assert sorted(result.failed) == sorted([(site.url("/a"), "IgnoreRequest"), (site.url("/private/x"),
                                                                              "IgnoreRequest")])
    # Declaring training reads the origin's tdmrep.json too (TDMRep: AI training is text and data mining).
    assert Counter(hit.path for hit in site.hits) == Counter({"/robots.txt": 1, "/.well-known/tdmrep.json": 1,
                                                              "/ai-ok/b": 1})
    assert result.stat("rep/usage/refused/train-ai") == 1
    assert result.stat("rep/usage/train-ai/n") == 0  # counted as refused, not among the sent requests' answers
    assert result.stat("rep/requests/forbidden") == 2 and result.stat("rep/requests/forbidden/usage") == 1
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_content_signal_preferences_use_the_aipref_names(sites: Any) -> None:
    site = site_with(sites, SIGNAL)
    result = await crawl([site.url("/a")], spider=UsageSpider)
    spider = result.spider
    assert isinstance(spider, UsageSpider)
    assert spider.usage == {site.url("/a"): {"search": "y", "train-ai": "n"}}


@pytest_twisted.ensureDeferred
async def test_an_origin_without_preferences_gives_an_empty_dict(sites: Any) -> None:
    site = site_with(sites, "User-agent: *\nDisallow: /private\n")
    missing: Site = sites()  # robots.txt 404: full allow, no file
    result = await crawl([site.url("/a"), missing.url("/b")], spider=UsageSpider)
    spider = result.spider
    assert isinstance(spider, UsageSpider)
    assert spider.usage == {site.url("/a"): {}, missing.url("/b"): {}}


@pytest.mark.parametrize("value", [[1], "train ai", ["train-ai", ""], {"train-ai": True}])
def test_bad_content_uses_fail_at_start_up(value: Any) -> None:
    from scrapy.settings import Settings

    from scrapy_rep.config import Config

    with pytest.raises(ConfigError, match="REP_CONTENT_USES"):
        Config.from_settings(Settings({"ROBOTSTXT_OBEY": True, "REP_CONTENT_USES": value}))
