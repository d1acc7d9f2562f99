"""``scrapy_rep.RobotParser`` behind Scrapy's built-in RobotsTxtMiddleware (ROBOTSTXT_PARSER)."""

from __future__ import annotations

from typing import Any

import pytest
import pytest_twisted
from scrapy.utils.test import get_crawler

from scrapy_rep import RobotParser
from tests.crawl import crawl
from tests.servers import robots

BODY = (b"User-agent: *\nDisallow: /private\nAllow: /private/ok$\n\n"
        b"User-agent: foobot\nDisallow: /*.php$\nCrawl-delay: 2")


@pytest.mark.parametrize(
    ("url", "agent", "allowed"),
    [
        ("https://example.com/private/x", "AnyBot", False),
        ("https://example.com/private/ok", "AnyBot", True),  # SPEC 7.4: longer allow wins
        (b"https://example.com/private/ok?x", b"AnyBot", False),
        ("https://example.com/a.php", "FooBot/2.1 (+http://foo)", False),  # SPEC 6.4 product token, 5.6 case
        ("https://example.com/private/x", b"foobot", True),  # SPEC 6.2: only the specific group
    ],
)
def test_allowed(url: str | bytes, agent: str | bytes, allowed: bool) -> None:
    parser = RobotParser.from_crawler(get_crawler(), BODY)
    assert parser.allowed(url, agent) is allowed


def test_crawl_delay() -> None:
    parser = RobotParser.from_crawler(get_crawler(), BODY)
    assert (parser.crawl_delay("foobot/1"), parser.crawl_delay("other")) == (2.0, None)


@pytest_twisted.ensureDeferred
async def test_builtin_middleware_with_our_parser_in_a_real_crawl(sites: Any) -> None:
    site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /*.php$\nAllow: /$\nDisallow: /\n"))
    result = await crawl([site.url("/"), site.url("/x"), site.url("/a.php"), site.url("/a.php?q")], ADDONS={},
                         ROBOTSTXT_PARSER="scrapy_rep.RobotParser",
                         # One at a time: the built-in lets concurrent waiters through undecided (see test_hold).
                         CONCURRENT_REQUESTS=1)
    assert result.downloaded == [site.url("/")]
    assert result.stat("robotstxt/forbidden") == 3 and result.stat("robotstxt/request_count") == 1
    assert not [key for key in result.stats if key.startswith("rep/")]
