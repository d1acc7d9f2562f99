"""Activation and configuration (SPEC 8.3-8.4), request pass-through (SPEC 1.4), origins (SPEC 1.3), signals."""

from __future__ import annotations

import logging
import re
from typing import Any, ClassVar

import pytest
import pytest_twisted
from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from scrapy_rep import (
    RobotParser,
    RobotsBodyMiddleware,
    RobotsMiddleware,
    RobotsStartMiddleware,
    RobotsTagsMiddleware,
    _scrapy,
    robots_parsed,
)
from scrapy_rep.addon import START_ORDER
from scrapy_rep.config import Config, ConfigError
from scrapy_rep.requests.page_directives import check_spider_middlewares
from tests.crawl import ListSpider, crawl, middleware
from tests.servers import robots

RULES = "User-agent: *\nDisallow: /private\n\nUser-agent: special\nDisallow: /special\n"


def enabled_middlewares(crawler: Crawler) -> list[type]:
    assert crawler.engine is not None
    return [type(mw) for mw in crawler.engine.downloader.middleware.middlewares]


@pytest_twisted.ensureDeferred
async def test_the_addon_replaces_the_builtin_at_its_position(sites: Any) -> None:
    site = sites()
    site.route("/robots.txt", robots(RULES))
    box: list[Crawler] = []
    result = await crawl([site.url("/private"), site.url("/a")],
                         on_crawler=lambda c: c.signals.connect(lambda: box.append(c), signals.spider_opened,
                                                                weak=False))
    kinds = enabled_middlewares(box[0])
    assert RobotsTxtMiddleware not in kinds
    assert kinds.index(RobotsMiddleware) == 1  # right after OffsiteMiddleware (50), where the built-in (100) was
    assert RobotsBodyMiddleware in kinds
    assert result.downloaded == [site.url("/a")]


@pytest_twisted.ensureDeferred
async def test_enabling_by_hand_works(sites: Any, caplog: pytest.LogCaptureFixture) -> None:
    site = sites()
    site.route("/robots.txt", robots(RULES))
    result = await crawl([site.url("/private"), site.url("/a")], ADDONS={}, DOWNLOADER_MIDDLEWARES=BY_HAND,
                         SPIDER_MIDDLEWARES=BY_HAND_SPIDER)
    assert result.downloaded == [site.url("/a")]
    assert result.stat("robotstxt/request_count") == 0  # the built-in did not run
    assert warning_lines(caplog) == []


#: The downloader and spider middlewares docs/getting-started.md's by-hand block enables.
BY_HAND = {"scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None, "scrapy_rep.RobotsMiddleware": 100,
           "scrapy_rep.RobotsBodyMiddleware": 595}
BY_HAND_SPIDER = {"scrapy_rep.RobotsStartMiddleware": 10, "scrapy_rep.RobotsTagsMiddleware": 45}
#: The start-up WARNING without RobotsStartMiddleware (it paces start requests; no obedience is lost).
NO_START_MIDDLEWARE = (
    "scrapy-rep: SPIDER_MIDDLEWARES does not enable scrapy_rep.RobotsStartMiddleware: start requests are not held "
    "while robots.txt fetches fill the downloader, so Scrapy's engine may move them all into the scheduler (nothing "
    f"robots.txt forbids is let through); enable it with 'scrapy_rep.RobotsStartMiddleware': {START_ORDER} in "
    "SPIDER_MIDDLEWARES, or use ADDONS = {'scrapy_rep.Addon': 0}")


def warning_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records
            if record.name == "scrapy_rep.middleware" and record.levelno == logging.WARNING]


@pytest.mark.parametrize(("spider_middlewares", "settings"), [
    ({}, {}),  # a by-hand set-up that forgot the spider middlewares: REP_OBEY_NOFOLLOW is True by default
    ({"scrapy_rep.RobotsStartMiddleware": 10, "scrapy_rep.RobotsTagsMiddleware": None}, {}),
    ({RobotsTagsMiddleware: None}, {}),  # a class key
    ({}, {"REP_OBEY_NOFOLLOW": False, "REP_OBEY_NOINDEX": True}),
])
@pytest_twisted.ensureDeferred
async def test_page_level_obedience_without_its_spider_middleware_does_not_start(
    sites: Any, caplog: pytest.LogCaptureFixture, spider_middlewares: dict[Any, Any], settings: dict[str, Any]
) -> None:
    """Without RobotsTagsMiddleware the links of nofollow pages would be followed (and noindex pages' items kept)."""
    site = sites()
    site.route("/robots.txt", robots(RULES))
    with pytest.raises(Exception) as raised:
        await crawl([site.url("/a")], ADDONS={}, DOWNLOADER_MIDDLEWARES=BY_HAND, SPIDER_MIDDLEWARES=spider_middlewares,
                    **settings)
    error = config_error(raised.value)
    assert error.setting == "SPIDER_MIDDLEWARES"
    assert "scrapy_rep.RobotsTagsMiddleware is not enabled" in str(error)
    assert critical_lines(caplog) == [f"scrapy-rep: {error}; the crawl cannot start"]
    assert site.hits == []  # not even robots.txt


@pytest.mark.parametrize("settings", [
    {"REP_ROBOTS_TAGS": False},  # page-level directives knowingly not read
    {"REP_OBEY_NOFOLLOW": False},  # read, nothing obeyed (REP_OBEY_NOINDEX is off by default)
])
@pytest_twisted.ensureDeferred
async def test_without_page_level_obedience_the_spider_middleware_is_not_needed(
    sites: Any, caplog: pytest.LogCaptureFixture, settings: dict[str, Any]
) -> None:
    """Only RobotsStartMiddleware is missing then: one WARNING, and the crawl obeys robots.txt as ever."""
    site = sites()
    site.route("/robots.txt", robots(RULES))
    with caplog.at_level(logging.INFO, logger="scrapy_rep"):
        result = await crawl([site.url("/private"), site.url("/a")], ADDONS={}, DOWNLOADER_MIDDLEWARES=BY_HAND,
                             **settings)
    assert result.downloaded == [site.url("/a")]
    assert warning_lines(caplog) == [NO_START_MIDDLEWARE]
    assert critical_lines(caplog) == []


@pytest_twisted.ensureDeferred
async def test_the_addon_needs_no_spider_middleware_by_hand(sites: Any, caplog: pytest.LogCaptureFixture) -> None:
    site = sites()
    site.route("/robots.txt", robots(RULES))
    with caplog.at_level(logging.INFO, logger="scrapy_rep"):
        result = await crawl([site.url("/private"), site.url("/a")])  # ADDONS = {"scrapy_rep.Addon": 0}
    assert result.downloaded == [site.url("/a")]
    assert warning_lines(caplog) == [] and critical_lines(caplog) == []


def test_the_spider_middleware_check_reads_the_setting_as_scrapy_builds_it() -> None:
    """SPIDER_MIDDLEWARES over its _BASE (Scrapy's own build_component_list): a class key or the import path enables,
    a None disables. (With both key forms for one class, which wins depends on the Scrapy version: the check follows
    the version's build, so it agrees with the middlewares Scrapy then builds.)"""
    config = Config.from_settings(Settings({"ROBOTSTXT_OBEY": True}))
    for enabled in ({RobotsTagsMiddleware: 45, RobotsStartMiddleware: 10}, BY_HAND_SPIDER):
        check_spider_middlewares(Settings({"SPIDER_MIDDLEWARES": enabled}), config, RobotsStartMiddleware)
    for disabled in ({RobotsStartMiddleware: 10, RobotsTagsMiddleware: None},
                     {**BY_HAND_SPIDER, "scrapy_rep.RobotsTagsMiddleware": None}):
        with pytest.raises(ConfigError):
            check_spider_middlewares(Settings({"SPIDER_MIDDLEWARES": disabled}), config, RobotsStartMiddleware)


#: The built-in's key in DOWNLOADER_MIDDLEWARES_BASE: a class key does not disable it on Scrapy < 2.15.
BUILTIN = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"


def config_error(exc: BaseException) -> ConfigError:
    """The ConfigError that failed the start-up. Scrapy 2.13's engine, closing a half-built downloader, raises an
    AttributeError in its place (the ConfigError is its context); later versions raise the ConfigError itself."""
    seen: BaseException | None = exc
    while seen is not None and not isinstance(seen, ConfigError):
        seen = seen.__context__
    assert seen is not None, f"no ConfigError in {exc!r}"
    return seen


@pytest.mark.parametrize(
    ("middlewares", "message"),
    [
        ({"scrapy_rep.RobotsMiddleware": 100, "scrapy_rep.RobotsBodyMiddleware": 595},
         r"built-in robots.txt middleware is enabled beside scrapy_rep.RobotsMiddleware \(every robots.txt would be "
         r"fetched twice\); remove it"),
        ({BUILTIN: None, "scrapy_rep.RobotsMiddleware": 100},
         "scrapy_rep.RobotsBodyMiddleware must be enabled"),
        ({BUILTIN: None, "scrapy_rep.RobotsMiddleware": 100, "scrapy_rep.RobotsBodyMiddleware": 500},
         "must be ordered after HttpCompressionMiddleware"),
    ],
)
@pytest_twisted.ensureDeferred
async def test_bad_middleware_set_ups_fail_at_start_up_spec_8_4(sites: Any, middlewares: Any, message: str,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    site = sites()
    with pytest.raises(Exception) as raised:
        await crawl([site.url("/a")], ADDONS={}, DOWNLOADER_MIDDLEWARES=middlewares)
    error = config_error(raised.value)
    assert re.search(message, str(error))
    assert critical_lines(caplog) == [f"scrapy-rep: {error}; the crawl cannot start"]
    assert site.hits == []


def critical_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records
            if record.name == "scrapy_rep.middleware" and record.levelno == logging.CRITICAL]


@pytest.mark.parametrize(
    ("settings", "line"),
    [
        ({"REP_MAX_SIZE": "lots"}, "scrapy-rep: REP_MAX_SIZE='lots': expected an integer; the crawl cannot start"),
        # SPEC 4.4: below RFC 9309's 500 KiB only with the acknowledgement
        ({"REP_MAX_SIZE": 10}, "scrapy-rep: REP_MAX_SIZE=10: below the 512,000 bytes (500 KiB) RFC 9309 requires a "
         "crawler to parse: rules past the cap would be ignored, allowing what they forbid; raise it, or set "
         "REP_ALLOW_SMALL_MAX_SIZE = True to accept the smaller cap; the crawl cannot start"),
    ],
)
@pytest_twisted.ensureDeferred
async def test_a_bad_setting_fails_at_start_up_naming_it_spec_8_4(sites: Any, caplog: pytest.LogCaptureFixture,
                                                                  settings: dict[str, Any], line: str) -> None:
    site = sites()
    with pytest.raises(Exception) as raised:
        await crawl([site.url("/a")], **settings)
    assert config_error(raised.value).setting == "REP_MAX_SIZE"
    assert critical_lines(caplog) == [line]  # one clean line, before Scrapy's long traceback
    assert site.hits == []


def addon_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records
            if record.name == "scrapy_rep.addon" and record.levelno == logging.INFO]


@pytest.mark.parametrize(
    ("middlewares", "said", "position"),
    [
        ({BUILTIN: 100}, ["scrapy-rep's add-on disabled RobotsTxtMiddleware (DOWNLOADER_MIDDLEWARES had it at 100)"],
         1),
        ({RobotsTxtMiddleware: 120}, ["scrapy-rep's add-on disabled RobotsTxtMiddleware (DOWNLOADER_MIDDLEWARES had "
                                      "it at 120)"], 1),
        ({BUILTIN: None}, [], 1),  # already disabled: nothing changed, nothing said
        ({"scrapy_rep.RobotsMiddleware": 40},
         ["scrapy-rep's add-on kept RobotsMiddleware at 40, the position DOWNLOADER_MIDDLEWARES gives it (its "
          "default is 100)"], 0),  # before OffsiteMiddleware (50)
        ({"scrapy_rep.RobotsMiddleware": None},
         ["scrapy-rep's add-on enabled RobotsMiddleware at 100 (DOWNLOADER_MIDDLEWARES had it disabled with None; "
          "set ROBOTSTXT_OBEY = False to stop obeying robots.txt)"], 1),
        ({"scrapy_rep.RobotsBodyMiddleware": 596},
         ["scrapy-rep's add-on kept RobotsBodyMiddleware at 596, the position DOWNLOADER_MIDDLEWARES gives it (its "
          "default is 595)"], 1),
    ],
)
@pytest_twisted.ensureDeferred
async def test_the_addon_says_what_it_changes_in_the_users_middlewares(
    sites: Any, caplog: pytest.LogCaptureFixture, middlewares: dict[Any, Any], said: list[str], position: int
) -> None:
    site = sites()
    site.route("/robots.txt", robots(RULES))
    box: list[Crawler] = []
    with caplog.at_level(logging.INFO, logger="scrapy_rep"):
        result = await crawl([site.url("/private"), site.url("/a")], DOWNLOADER_MIDDLEWARES=middlewares,
                             on_crawler=lambda c: c.signals.connect(lambda: box.append(c), signals.spider_opened,
                                                                    weak=False))
    assert addon_lines(caplog) == said
    kinds = enabled_middlewares(box[0])
    assert RobotsTxtMiddleware not in kinds and kinds.index(RobotsMiddleware) == position
    assert result.downloaded == [site.url("/a")]


@pytest_twisted.ensureDeferred
async def test_robotstxt_obey_false_disables_it_spec_8_3(sites: Any) -> None:
    site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /"))
    result = await crawl([site.url("/a")], ROBOTSTXT_OBEY=False)
    assert result.downloaded == [site.url("/a")]
    assert site.hits_for("/robots.txt") == 0
    assert not [key for key in result.stats if key.startswith("rep/")]


class SpecialSpider(ListSpider):
    name = "special"
    custom_settings: ClassVar[dict[str, Any]] = {"REP_USER_AGENT": ["special", "TestBot"], "REP_MAX_REDIRECTS": 7}


@pytest_twisted.ensureDeferred
async def test_custom_settings_per_spider_spec_8_3(sites: Any) -> None:
    site = sites()
    site.route("/robots.txt", robots(RULES))
    box: list[Crawler] = []
    result = await crawl([site.url("/private"), site.url("/special")], spider=SpecialSpider,
                         on_crawler=box.append)
    assert result.downloaded == [site.url("/private")]  # the "special" group applies (SPEC 6.3), not "*"
    config = middleware(box[0]).config
    assert (config.user_agents, config.max_redirects) == (("special", "TestBot"), 7)


@pytest_twisted.ensureDeferred
async def test_requests_passed_through_unchecked_spec_1_4(sites: Any) -> None:
    site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /\n"))
    result = await crawl([site.url("/robots.txt"), "data:,hello"])
    assert sorted(result.downloaded) == sorted([site.url("/robots.txt"), "data:,hello"])
    assert result.stat("rep/requests/passed_through/robots_txt") == 1
    assert result.stat("rep/requests/passed_through/no_robots_location") == 1
    # The robots.txt request is answered from the plugin's own download (issue 12: test_spider_robots.py).
    assert result.stat("rep/robots/downloads") == 1 and site.hits_for("/robots.txt") == 1
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_meta_dont_obey_robotstxt_spec_1_4(sites: Any) -> None:
    site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /\n"))
    result = await crawl([site.url("/a")], spider_kwargs={"meta": {"dont_obey_robotstxt": True}})
    assert result.downloaded == [site.url("/a")]
    assert site.hits_for("/robots.txt") == 0
    assert result.stat("rep/requests/passed_through/dont_obey_robotstxt") == 1
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_one_robots_txt_per_origin_spec_1_3(sites: Any) -> None:
    one, two = sites(), sites()
    one.route("/robots.txt", robots(RULES))
    two.route("/robots.txt", robots("User-agent: *\nDisallow: /a\n"))
    urls = [one.url("/private", "127.0.0.1"), one.url("/a", "localhost"), one.url("/b", "LOCALHOST"),
            one.url("/private", "localhost").replace("http://", "HTTP://"), two.url("/a"), two.url("/private")]
    result = await crawl(urls)
    # 127.0.0.1 and localhost are two origins of the same port; case does not matter; ports are origins.
    assert one.hits_for("/robots.txt", host="127.0.0.1") == 1 and one.hits_for("/robots.txt", host="localhost") == 1
    assert two.hits_for("/robots.txt") == 1
    assert sorted(result.downloaded) == sorted([one.url("/a", "localhost"), one.url("/b", "localhost"),
                                                two.url("/private")])


@pytest_twisted.ensureDeferred
async def test_robots_parsed_signal_and_sitemaps(sites: Any) -> None:
    site = sites()
    site.route("/robots.txt", robots("Sitemap: https://example.com/s.xml\nUser-agent: *\nDisallow: /x\n"
                                     "Crawl-delay: 3\n"))
    got: list[tuple[Any, str]] = []
    box: list[Crawler] = []

    def hook(crawler: Crawler) -> None:
        box.append(crawler)
        crawler.signals.connect(lambda robotparser, request, **_: got.append((robotparser, request.url)),
                                signal=robots_parsed, weak=False)

    await crawl([site.url("/a")], on_crawler=hook)
    [(parser, url)] = got
    assert isinstance(parser, RobotParser) and url == site.url("/a")  # the request that triggered the download
    assert not parser.allowed(site.url("/x"), "AnyBot/1.0") and parser.allowed(site.url("/y"), b"AnyBot")
    assert parser.crawl_delay("AnyBot") == 3.0 and parser.sitemaps == ["https://example.com/s.xml"]
    assert middleware(box[0]).sitemaps(site.url("/anything")) == ["https://example.com/s.xml"]


def test_robots_parsed_is_looked_up_for_the_crawler_that_sends_it() -> None:
    """``robots_parsed`` is built and sent only when something receives it (a broad crawl parses thousands of
    files): its receivers are found as ``send_catch_log`` finds them, for this crawler only."""
    crawler, other = get_crawler(ListSpider), get_crawler(ListSpider)
    assert not _scrapy.has_receivers(crawler, robots_parsed)

    def receiver(**_: Any) -> None:
        return None

    crawler.signals.connect(receiver, signal=robots_parsed)
    assert _scrapy.has_receivers(crawler, robots_parsed) and not _scrapy.has_receivers(other, robots_parsed)
    assert not _scrapy.has_receivers(crawler, signals.spider_error)
    crawler.signals.disconnect(receiver, signal=robots_parsed)
    assert not _scrapy.has_receivers(crawler, robots_parsed)


@pytest_twisted.ensureDeferred
async def test_without_a_receiver_robots_parsed_is_not_built(sites: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /x\n"))
    built: list[Any] = []
    monkeypatch.setattr("scrapy_rep.reporting.announce.RobotParser", built.append)
    result = await crawl([site.url("/a"), site.url("/x")])
    assert result.downloaded == [site.url("/a")] and built == []


@pytest.mark.parametrize(("obey", "expected"), [(True, 0.05), (False, None)])
@pytest_twisted.ensureDeferred
async def test_crawl_delay_is_opt_in_and_bounded_spec_6_5(sites: Any, obey: bool, expected: float | None) -> None:
    site = sites()
    site.route("/robots.txt", robots("User-agent: *\nCrawl-delay: 30\n"))
    box: list[Crawler] = []
    result = await crawl([site.url("/a"), site.url("/b")], on_crawler=box.append, REP_OBEY_CRAWL_DELAY=obey,
                         REP_MAX_CRAWL_DELAY=0.05)
    assert len(result.downloaded) == 2
    assert box[0].engine is not None
    assert box[0].engine.downloader.per_slot_settings.get("127.0.0.1", {}).get("delay") == expected


@pytest_twisted.ensureDeferred
async def test_the_robots_request_goes_through_the_projects_other_middlewares_spec_2_1(sites: Any) -> None:
    """Headers, user agent (and proxies, cookies...) apply to robots.txt too; retries and redirects do not."""
    site = sites()
    site.route("/robots.txt", robots(RULES))
    await crawl([site.url("/a")], DEFAULT_REQUEST_HEADERS={"X-Project": "yes"}, RETRY_ENABLED=True)
    [hit] = [hit for hit in site.hits if hit.path == "/robots.txt"]
    assert hit.headers["x-project"] == "yes"
    assert hit.headers["user-agent"].startswith("TestBot/1.0")
    assert "gzip" in hit.headers["accept-encoding"]


@pytest.mark.parametrize(("store", "warned"), [("memory", True), ("sqlite:///./fleet.db", False)])
def test_a_fleet_scheduler_with_a_memory_store_is_warned_about(store: str, warned: bool,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    """scrapy-redis's shared queue with an in-process cache: every worker would download each robots.txt itself."""
    pytest.importorskip("scrapy_redis")
    caplog.set_level(logging.WARNING, logger="scrapy_rep.middleware")
    settings = {"ROBOTSTXT_OBEY": True, "ADDONS": {"scrapy_rep.Addon": 0}, "REP_STORE": store,
                "SCHEDULER": "scrapy_redis.scheduler.Scheduler"}
    RobotsMiddleware.from_crawler(get_crawler(ListSpider, settings))
    lines = [r.getMessage() for r in caplog.records if "SCHEDULER is scrapy-redis's" in r.getMessage()]
    assert len(lines) == (1 if warned else 0), lines
