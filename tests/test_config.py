"""SPEC 8.3-8.4: settings read and validated once; bad values fail naming the setting."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.settings import Settings
from twisted.internet.task import Clock

from scrapy_rep.config import DAY, Config, ConfigError


def config(**settings: Any) -> Config:
    return Config.from_settings(Settings({"ROBOTSTXT_OBEY": True, **settings}))


def test_defaults() -> None:
    c = config()
    assert c.user_agents == ("Scrapy",)  # SPEC 6.4: product token of Scrapy's default USER_AGENT
    assert (c.cache_ttl, c.max_size, c.max_redirects, c.unreachable_allow_after) == (DAY, 512_000, 5, 30 * DAY)
    assert (c.obey_crawl_delay, c.not_found_heuristic, c.store, c.clock) == (False, False, "memory", None)


def test_obey_false_is_not_configured() -> None:
    with pytest.raises(NotConfigured):
        Config.from_settings(Settings({"ROBOTSTXT_OBEY": False}))


@pytest.mark.parametrize(
    ("settings", "agents"),
    [
        ({"REP_USER_AGENT": "MyBot"}, ("MyBot",)),
        ({"REP_USER_AGENT": ["googlebot-news", "googlebot"]}, ("googlebot-news", "googlebot")),  # SPEC 6.3
        ({"REP_USER_AGENT": "a,b"}, ("a", "b")),  # as given on the command line
        ({"ROBOTSTXT_USER_AGENT": "RoboBot/2.0"}, ("RoboBot",)),
        ({"USER_AGENT": "Mozilla/5.0 (compatible; FooBot/1.0)"}, ("Mozilla",)),  # SPEC 6.4: leading token
        ({"USER_AGENT": "x", "ROBOTSTXT_USER_AGENT": "y", "REP_USER_AGENT": "z"}, ("z",)),
    ],
)
def test_user_agent_spec_6_3_6_4(settings: dict[str, Any], agents: tuple[str, ...]) -> None:
    assert config(**settings).user_agents == agents


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("REP_USER_AGENT", "My Bot"),
        ("REP_USER_AGENT", ["ok", "not/ok"]),
        ("USER_AGENT", "/1.0"),
        ("REP_CACHE_TTL", "a day"),
        ("REP_CACHE_TTL", -1),
        ("REP_CACHE_TTL", float("inf")),
        ("REP_MAX_SIZE", 0),
        ("REP_MAX_SIZE", 1.5),
        ("REP_MAX_REDIRECTS", 4),  # SPEC 2.2: at least 5 hops
        ("REP_HOLD_TIMEOUT", 0),
        ("REP_MAX_PARKED", -1),
        ("REP_CLOCK", lambda: "not a clock"),
        ("REP_OBEY_CRAWL_DELAY", "maybe"),
        ("REP_STORE", "mongodb://x"),
        ("REP_STORE", ""),
        ("REP_CLOCK", "tomorrow"),
        ("REP_CACHE_MIN_TTL", 10 * DAY),  # above REP_CACHE_MAX_TTL
        ("REP_ERROR_RETRY_DELAY", 99999),  # above REP_ERROR_RETRY_MAX_DELAY
    ],
)
def test_bad_values_name_the_setting_spec_8_4(name: str, value: Any) -> None:
    with pytest.raises(ConfigError) as raised:
        config(**{name: value})
    assert raised.value.setting == name
    assert str(raised.value).startswith(f"{name}=")


def test_values_are_read() -> None:
    clock = Clock()
    c = config(REP_CACHE_TTL="3600", REP_MAX_SIZE="1000", REP_OBEY_CRAWL_DELAY="True", REP_CLOCK=lambda: clock,
               REP_STORE="sqlite:///tmp/x.db", REP_UNREACHABLE_ALLOW_AFTER=43200)
    assert (c.cache_ttl, c.max_size, c.obey_crawl_delay, c.clock, c.store) == (3600, 1000, True, clock,
                                                                               "sqlite:///tmp/x.db")
    assert c.unreachable_allow_after == 43200
