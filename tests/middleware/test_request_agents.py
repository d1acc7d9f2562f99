"""A request's own User-Agent decides its robots.txt group (Scrapy's ROBOTSTXT_USER_AGENT contract: "If None, the
User-Agent header you are sending with the request or the USER_AGENT setting (in that order) will be used"), unless
REP_USER_AGENT or ROBOTSTXT_USER_AGENT makes one identity for the whole crawl (requests/agents.py; SPEC 6.3-6.4).
Real crawls; the server's log says what was requested."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_twisted
from scrapy import Request
from scrapy.http import Response
from scrapy.utils.test import get_crawler

from scrapy_rep.config import Config
from scrapy_rep.matcher import parse
from scrapy_rep.requests import agents
from scrapy_rep.requests.agents import RequestAgents
from scrapy_rep.stores import Entry, Outcome
from tests.crawl import ListSpider, crawl
from tests.servers import Reply, robots

RULES = ("User-agent: imagebot\nDisallow: /pages/\n\n"
         "User-agent: pagebot\nDisallow: /images/\n\n"
         "User-agent: *\nDisallow: /\n")
BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"
#: (path, the request's own User-Agent or None)
REQUESTS = [
    ("/images/1", "ImageBot/2.0 (+https://example.invalid/images)"),
    ("/pages/1", "ImageBot/2.0 (+https://example.invalid/images)"),
    ("/pages/2", "Mozilla/5.0 (compatible; pagebot/1.1)"),
    ("/images/2", "Mozilla/5.0 (compatible; pagebot/1.1)"),
    ("/browser", BROWSER),
    ("/default", None),  # USER_AGENT's token, TestBot: the * group
]


class AgentSpider(ListSpider):
    """Requests each of REQUESTS with its own User-Agent header, and follows the links of each page it gets with the
    same header."""

    name = "agents"

    async def start(self) -> AsyncIterator[Any]:
        for url in self.urls:
            path = url.split("/", 3)[3]
            agent = dict(REQUESTS).get("/" + path)
            headers = {"User-Agent": agent} if agent else {}
            yield Request(url, headers=headers, dont_filter=True, errback=self.failure)

    def parse(self, response: Response) -> Any:
        self.downloaded.append(response.url)
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, headers={"User-Agent": response.request.headers["User-Agent"]},
                                  errback=self.failure)


def urls(site: Any) -> list[str]:
    return [site.url(path) for path, _ in REQUESTS]


@pytest_twisted.ensureDeferred
async def test_each_request_obeys_its_own_user_agents_group(sites: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="scrapy_rep.middleware")
    site = sites()
    site.route("/robots.txt", robots(RULES))
    result = await crawl(urls(site), spider=AgentSpider, LOG_LEVEL="DEBUG")
    assert sorted(result.downloaded) == [site.url("/images/1"), site.url("/pages/2")]
    assert sorted(hit.path for hit in site.hits) == ["/images/1", "/pages/2", "/robots.txt"]
    agents_seen = {hit.path: hit.headers["user-agent"] for hit in site.hits}
    assert agents_seen["/images/1"].startswith("ImageBot/") and "pagebot" in agents_seen["/pages/2"]
    assert (result.stat("rep/requests/forbidden"), result.stat("rep/user_agent/own_header")) == (4, 5)
    assert result.stat("rep/user_agent/forms_built") == 3  # imagebot, pagebot, the browser's ()
    result.assert_accounted()
    forbidden = sorted(r.getMessage() for r in caplog.records if r.getMessage().startswith("Forbidden by"))
    origin = site.origin()
    version = hashlib.sha256(site.routes["/robots.txt"][0].body).hexdigest()[:12]  # type: ignore[union-attr]
    assert forbidden == sorted([
        f"Forbidden by robots.txt: {site.url('/pages/1')} ({origin}/robots.txt line 2 (Disallow: /pages/) of the "
        f"'imagebot' group (line 1); as ['ImageBot']; version {version})",
        f"Forbidden by robots.txt: {site.url('/images/2')} ({origin}/robots.txt line 5 (Disallow: /images/) of the "
        f"'pagebot' group (line 4); as ['pagebot']; version {version})",
        f"Forbidden by robots.txt: {site.url('/browser')} ({origin}/robots.txt line 8 (Disallow: /) of the '*' "
        f"group (line 7); as [] (only the * groups); version {version})",
        f"Forbidden by robots.txt: {site.url('/default')} ({origin}/robots.txt line 8 (Disallow: /) of the '*' "
        f"group (line 7); as ['TestBot']; version {version})",
    ])


@pytest.mark.parametrize("setting", ["REP_USER_AGENT", "ROBOTSTXT_USER_AGENT"])
@pytest_twisted.ensureDeferred
async def test_one_identity_for_the_whole_crawl_when_set(sites: Any, setting: str) -> None:
    """REP_USER_AGENT or ROBOTSTXT_USER_AGENT: every request obeys that token, whatever its header says."""
    site = sites()
    site.route("/robots.txt", robots(RULES))
    result = await crawl(urls(site), spider=AgentSpider, **{setting: "imagebot"})
    assert sorted(result.downloaded) == [site.url(path) for path in ("/browser", "/default", "/images/1",
                                                                     "/images/2")]
    assert result.stat("rep/user_agent/own_header") == 0 and result.stat("rep/user_agent/forms_built") == 0


@pytest_twisted.ensureDeferred
async def test_page_directives_address_the_requests_own_token(sites: Any) -> None:
    """``X-Robots-Tag: pagebot: nofollow`` stops the links of a page fetched as pagebot, not as imagebot."""
    site = sites()
    site.route("/robots.txt", robots("User-agent: *\nAllow: /\n"))
    page = Reply(body=b'<html><head></head><body><a href="/next">n</a></body></html>',
                 headers={"Content-Type": "text/html", "X-Robots-Tag": "pagebot: nofollow"})
    site.route("/images/1", page)
    site.route("/pages/2", page)
    result = await crawl([site.url("/images/1"), site.url("/pages/2")], spider=AgentSpider)
    assert site.hits_for("/next") == 1
    next_agent = next(hit.headers["user-agent"] for hit in site.hits if hit.path == "/next")
    assert next_agent.startswith("ImageBot/")
    assert result.stat("rep/robots_tags/requests/not_followed") == 1


@pytest_twisted.ensureDeferred
async def test_usage_preferences_address_the_requests_own_token(sites: Any) -> None:
    """``Content-Usage: train-ai=n`` in imagebot's group refuses what imagebot fetches for a crawl that trains AI
    (REP_CONTENT_USES), not what the crawl's own token (the ``*`` group, no preference) fetches."""
    site = sites()
    site.route("/robots.txt", robots("User-agent: imagebot\nAllow: /\nContent-Usage: train-ai=n\n\n"
                                     "User-agent: *\nAllow: /\n"))
    result = await crawl([site.url("/images/1"), site.url("/default")], spider=AgentSpider,
                         REP_CONTENT_USES=["train-ai"])
    assert result.downloaded == [site.url("/default")]
    assert (result.stat("rep/usage/refused/train-ai"), result.stat("rep/requests/forbidden")) == (1, 1)
    assert "/images/1" not in site.paths()


def _entry(body: bytes, origin: str = "http://a.example") -> Entry:
    return Entry(origin=origin, outcome=Outcome.RULES, body=body, status=200, fetched_at=0.0, expires_at=1e9)


def test_forms_are_bounded_and_made_again_for_a_new_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """At most FORMS forms for other tokens, least recently used let go; a form made from an older entry of the
    origin is not used for a new one."""
    monkeypatch.setattr(agents, "FORMS", 2)
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True, "USER_AGENT": "TestBot/1.0"})
    assert crawler.stats is not None
    request_agents = RequestAgents(Config.from_settings(crawler.settings), crawler.stats)
    first, second = _entry(RULES.encode()), _entry(b"User-agent: imagebot\nDisallow: /images/\n")
    default = parse(first.body).compact(request_agents.default)
    imagebot = request_agents.rules(("imagebot",), first, default)
    assert imagebot is not None and not imagebot.allowed("/pages/x") and imagebot.allowed("/images/x")
    assert request_agents.rules(("imagebot",), first, default) is imagebot  # kept
    assert request_agents.rules(request_agents.default, first, default) is default  # the origin's own form
    assert request_agents.rules(("imagebot",), first, None) is None  # no rules: allowed, whatever the token
    renewed = request_agents.rules(("imagebot",), second, default)
    assert renewed is not imagebot and renewed is not None and not renewed.allowed("/images/x")
    request_agents.rules(("pagebot",), first, default)
    request_agents.rules(("otherbot",), first, default)  # the third pair: imagebot's, used longest ago, let go
    assert len(request_agents._forms) == 2 and ("http://a.example", ("imagebot",)) not in request_agents._forms
    assert crawler.stats.get_value("rep/user_agent/forms_built") == 4


@pytest.mark.parametrize(
    ("header", "tokens"),
    [
        (None, ("TestBot",)),
        (b"TestBot/1.0", ("TestBot",)),  # USER_AGENT itself
        (b"ImageBot/2.0", ("ImageBot",)),
        (b"Mozilla/5.0 (compatible; pagebot/1.1; +https://x)", ("pagebot",)),
        (BROWSER.encode(), ()),
    ],
)
def test_the_tokens_of_a_request(header: bytes | None, tokens: tuple[str, ...]) -> None:
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True, "USER_AGENT": "TestBot/1.0"})
    assert crawler.stats is not None
    request_agents = RequestAgents(Config.from_settings(crawler.settings), crawler.stats)
    request = Request("http://a.example/", headers={"User-Agent": header} if header else {})
    assert request_agents.tokens(request) == tokens
