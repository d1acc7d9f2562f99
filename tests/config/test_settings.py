"""SPEC 8.3-8.4: settings read and validated once; bad values fail naming the setting."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.settings import Settings
from twisted.internet.task import Clock

from scrapy_rep import RobotsStartMiddleware
from scrapy_rep.config import DAY, SETTINGS, Config, ConfigError, unknown_settings
from scrapy_rep.requests.page_directives import check_spider_middlewares
from scrapy_rep.robots.body import check_middlewares
from scrapy_rep.stores import InvalidStoreURI, RedisTarget, validate_store_uri


def config(**settings: Any) -> Config:
    return Config.from_settings(Settings({"ROBOTSTXT_OBEY": True, **settings}))


def test_defaults() -> None:
    c = config()
    assert c.user_agents == ("Scrapy",)  # SPEC 6.4: product token of Scrapy's default USER_AGENT
    assert (c.cache_ttl, c.max_size, c.max_redirects, c.unreachable_allow_after) == (DAY, 512_000, 5, 30 * DAY)
    assert (c.obey_crawl_delay, c.not_found_heuristic, c.store, c.clock) == (False, False, "memory", None)
    assert (c.store_lease_ttl, c.store_poll_interval, c.redis) == (15, 1, None)  # renewed every 5 s (refresh.py)
    assert (c.robots_tags, c.obey_nofollow, c.obey_noindex, c.clean_param) == (True, True, False, False)


def test_page_directive_switches_are_read() -> None:
    c = config(REP_ROBOTS_TAGS="false", REP_OBEY_NOFOLLOW=False, REP_CLEAN_PARAM="1")
    assert (c.robots_tags, c.obey_nofollow, c.obey_noindex, c.clean_param) == (False, False, False, True)


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
        ({"USER_AGENT": "Mozilla/5.0 (compatible; FooBot/1.0)"}, ("FooBot",)),  # its own token, not Mozilla's
        ({"USER_AGENT": "Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/121.0"}, ()),  # only the * groups
        ({"USER_AGENT": "/1.0"}, ()),
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
        ("REP_CACHE_TTL", "a day"),
        ("REP_CACHE_TTL", -1),
        ("REP_CACHE_TTL", float("inf")),
        ("REP_MAX_SIZE", 0),
        ("REP_MAX_SIZE", 1.5),
        ("REP_MAX_SIZE", 10),  # SPEC 4.4: below RFC 9309's 500 KiB without REP_ALLOW_SMALL_MAX_SIZE
        ("REP_MAX_SIZE", 511_999),
        ("REP_MAX_REDIRECTS", 4),  # SPEC 2.2: at least 5 hops
        ("REP_HOLD_TIMEOUT", 0),
        ("REP_MAX_PARKED", -1),
        ("REP_CLOCK", lambda: "not a clock"),
        ("REP_OBEY_CRAWL_DELAY", "maybe"),
        ("REP_ENFORCE", "sometimes"),
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
    c = config(REP_CACHE_TTL="3600", REP_MAX_SIZE="1000", REP_ALLOW_SMALL_MAX_SIZE=True, REP_OBEY_CRAWL_DELAY="True",
               REP_CLOCK=lambda: clock,
               REP_STORE="sqlite:///tmp/x.db", REP_UNREACHABLE_ALLOW_AFTER=43200)
    assert (c.cache_ttl, c.max_size, c.obey_crawl_delay, c.clock, c.store) == (3600, 1000, True, clock,
                                                                               "sqlite:///tmp/x.db")
    assert c.unreachable_allow_after == 43200
    assert (c.enforce, config(REP_ENFORCE="False").enforce) == (True, False)  # enforcing is the default


def test_the_user_agent_source_is_kept() -> None:
    c = config(USER_AGENT="Mozilla/5.0 (compatible; newbiebot/1.0)")
    assert c.user_agent_source == "USER_AGENT 'Mozilla/5.0 (compatible; newbiebot/1.0)'"
    assert config(REP_USER_AGENT="a").user_agent_source == "REP_USER_AGENT"


@pytest.mark.parametrize(
    ("max_size", "allow_small", "accepted"),
    [(512_000, False, True), (511_999, False, False), (10, True, True), (10, "False", False), (10**7, False, True)],
)
def test_max_size_is_at_least_500_kib_unless_acknowledged_spec_4_4(max_size: int, allow_small: Any,
                                                                    accepted: bool) -> None:
    settings = {"REP_MAX_SIZE": max_size, "REP_ALLOW_SMALL_MAX_SIZE": allow_small}
    if accepted:
        assert config(**settings).max_size == max_size
    else:
        with pytest.raises(ConfigError, match=r"^REP_MAX_SIZE=\d+: below the 512,000 bytes"):
            config(**settings)


_EXPECTED_STORE = ("expected 'memory', 'sqlite:///relative.db', 'sqlite:////absolute/path.db' or "
                   "'redis://host:port/db'")
_BUILTIN = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"
_REFUSED = "an unknown setting is refused, not ignored, because it may have been meant to restrict the crawl"

#: Every ConfigError raise site (config.py, tokens.py via config, stores/__init__.py via config, body.py) and the
#: exact message it gives: the setting and its value once, as set, then what to change.
MESSAGES: list[tuple[dict[str, Any], str]] = [
    ({"REP_USER_AGENT": ["ok", "not/ok"]},
     "REP_USER_AGENT=['ok', 'not/ok']: 'not/ok' is not a valid product token (only letters, '-' and '_')"),
    ({"REP_CACHE_TTL": "a day"}, "REP_CACHE_TTL='a day': expected a number of seconds"),
    ({"REP_CACHE_TTL": -1}, "REP_CACHE_TTL=-1: expected a finite number of seconds >= 0"),
    ({"REP_HOLD_TIMEOUT": 0}, "REP_HOLD_TIMEOUT=0: expected a finite number of seconds >= 0.001"),
    ({"REP_MAX_PARKED": "many"}, "REP_MAX_PARKED='many': expected an integer"),
    ({"REP_MAX_REDIRECTS": 4}, "REP_MAX_REDIRECTS=4: expected an integer >= 5"),
    ({"REP_MAX_SIZE": "lots"}, "REP_MAX_SIZE='lots': expected an integer"),
    ({"REP_MAX_SIZE": 10},
     "REP_MAX_SIZE=10: below the 512,000 bytes (500 KiB) RFC 9309 requires a crawler to parse: rules past the cap "
     "would be ignored, allowing what they forbid; raise it, or set REP_ALLOW_SMALL_MAX_SIZE = True to accept the "
     "smaller cap"),
    ({"REP_MAX_SIZE": 10, "REP_ALLOW_SMALL_MAX_SIZE": "perhaps"},
     "REP_ALLOW_SMALL_MAX_SIZE='perhaps': expected True or False"),
    ({"REP_OBEY_CRAWL_DELAY": "maybe"}, "REP_OBEY_CRAWL_DELAY='maybe': expected True or False"),
    ({"REP_ENFORCE": "sometimes"}, "REP_ENFORCE='sometimes': expected True or False"),
    ({"REP_STORE": "mongodb://x"},
     "REP_STORE='mongodb://x': the store must be one of memory, sqlite, redis, rediss (a URI)"),
    ({"REP_STORE": "sqlite://relative.db"},
     "REP_STORE='sqlite://relative.db': 'relative.db' is read as a host, not a file: write 'sqlite:///relative.db' "
     f"for a file relative to the working directory, or 'sqlite:////absolute/path.db'; {_EXPECTED_STORE}"),
    ({"REP_STORE": "sqlite://cache.internal:5/x.db"},
     "REP_STORE='sqlite://cache.internal:5/x.db': a sqlite store takes no host, user or password: write "
     "'sqlite:///relative.db' for a file relative to the working directory, or 'sqlite:////absolute/path.db'; "
     f"{_EXPECTED_STORE}"),
    ({"REP_STORE": "sqlite:///"}, f"REP_STORE='sqlite:///': a sqlite store needs a file path after 'sqlite:///'; "
     f"{_EXPECTED_STORE}"),
    ({"REP_STORE": "sqlite:///tmp/x.db?mode=ro"},
     f"REP_STORE='sqlite:///tmp/x.db?mode=ro': unknown option(s) 'mode=ro'; {_EXPECTED_STORE}"),
    ({"REP_STORE": "sqlite:///tmp/x.db?timeout=0"},
     f"REP_STORE='sqlite:///tmp/x.db?timeout=0': timeout must be a positive number of seconds; {_EXPECTED_STORE}"),
    ({"REP_STORE": "redis://localhost:port/0"},
     "REP_STORE='redis://localhost:port/0': Port could not be cast to integer value as 'port'; "
     f"{_EXPECTED_STORE}"),
    ({"REP_STORE": "redis://localhost/zero"},
     f"REP_STORE='redis://localhost/zero': the Redis database must be a number, got 'zero'; {_EXPECTED_STORE}"),
    ({"REP_STORE": "redis://localhost?keep_days=-1"},
     f"REP_STORE='redis://localhost?keep_days=-1': keep_days must be a positive number of days; {_EXPECTED_STORE}"),
    ({"REP_STORE": "redis://:secret@localhost/zero"},  # a password is never shown
     f"REP_STORE='redis://:***@localhost/zero': the Redis database must be a number, got 'zero'; {_EXPECTED_STORE}"),
    ({"REP_STORE": "memcached://user:secret@cache"},
     "REP_STORE='memcached://user:***@cache': the store must be one of memory, sqlite, redis, rediss (a URI)"),
    ({"REP_STORE": "redis?prefx=a:"}, f"REP_STORE='redis?prefx=a:': unknown option(s) 'prefx=a%3A'; {_EXPECTED_STORE}"),
    ({"REP_STORE": "redis", "REDIS_PARAMS": "not json"},
     "REDIS_PARAMS='not json': expected a dict of redis-py client parameters"),
    ({"REP_STORE": "redis", "REDIS_PARAMS": '{"password": "secret"'},
     "REDIS_PARAMS='***': expected a dict of redis-py client parameters"),
    ({"REP_STORE": "redis", "REDIS_PORT": "63 79"}, "REDIS_PORT='63 79': the Redis port must be an integer"),
    ({"REP_STORE": "redis", "REDIS_PARAMS": {"db": "first", "password": "secret"}},
     "REDIS_PARAMS={'db': 'first', 'password': '***'}: the Redis db must be an integer"),
    ({"REP_STORE": "redis", "REDIS_URL": 42}, "REDIS_URL=42: expected a redis://, rediss:// or unix:// URL"),
    ({"REP_STORE": "redis", "REDIS_URL": "redis://:secret@cache:port"},
     "REDIS_URL='redis://:***@cache:port': Port could not be cast to integer value as 'port'"),
    ({"REP_STORE": "redis", "REDIS_URL": "http://:secret@cache"},
     "REDIS_URL='http://:***@cache': expected a redis://, rediss:// or unix:// URL"),
    ({"REP_CLOCK": "tomorrow"},
     "REP_CLOCK='tomorrow': expected an IReactorTime provider such as twisted.internet.task.Clock (or a callable "
     "returning one)"),
    ({"REP_CACHE_MIN_TTL": 10 * DAY}, "REP_CACHE_MIN_TTL=864000.0: must not exceed REP_CACHE_MAX_TTL (604800)"),
    ({"REP_ROBOTS_REQUEST": "no.such.module.func"},
     "REP_ROBOTS_REQUEST='no.such.module.func': cannot be loaded (ModuleNotFoundError: No module named 'no'); "
     "expected the import path of a callable, 'package.module.function'"),
    ({"REP_ROBOTS_REQUEST": "scrapy_rep.config.nothere"},
     "REP_ROBOTS_REQUEST='scrapy_rep.config.nothere': cannot be loaded (NameError: Module 'scrapy_rep.config' "
     "doesn't define any object named 'nothere'); expected the import path of a callable, 'package.module.function'"),
    ({"REP_ROBOTS_REQUEST": 42},
     "REP_ROBOTS_REQUEST=42: not callable (int); expected a callable taking the robots.txt Request and returning the "
     "Request to send, or its import path"),
    ({"REP_ROBOTS_REQUEST": "scrapy_rep.config.DAY"},
     "REP_ROBOTS_REQUEST='scrapy_rep.config.DAY': not callable (float); expected a callable taking the robots.txt "
     "Request and returning the Request to send, or its import path"),    ({"REP_CONTENT_USES": {"train-ai": True}},
     "REP_CONTENT_USES={'train-ai': True}: expected a list of use names, e.g. ['train-ai']"),
    ({"REP_CONTENT_USES": "train ai"},
     "REP_CONTENT_USES='train ai': 'train ai' is not a use name (letters, digits and '-', e.g. 'train-ai', "
     "'search')"),
    ({"REP_CONTENT_USES": ["train-genai"]},
     "REP_CONTENT_USES=['train-genai']: 'train-genai' was dropped from the AIPREF vocabulary "
     "(draft-ietf-aipref-vocab-02 to -03, Generative AI Training): no site can state it any more, so the crawl would "
     "obey nothing for it; name 'train-ai' instead (the uses: train-ai, search, tdm, ai-input)"),
    ({"REP_CONTENT_USES": "search,ai-use"},
     "REP_CONTENT_USES='search,ai-use': 'ai-use' was dropped from the AIPREF vocabulary (draft-ietf-aipref-vocab-02, "
     "AI Use): no site can state it any more, so the crawl would obey nothing for it (the uses: train-ai, search, "
     "tdm, ai-input)"),
    ({"REP_CONTENT_USES": ["indexing"]},
     "REP_CONTENT_USES=['indexing']: 'indexing' is not a use any opt-out states (the uses: train-ai, search, tdm, "
     "ai-input)"),
    ({"REP_TDMREP": "sometimes"},
     "REP_TDMREP='sometimes': expected True, False or None (None: fetched when REP_CONTENT_USES names tdm or "
     "train-ai)"),
    ({"REP_USAGE_LEGACY_LABELS": "maybe"}, "REP_USAGE_LEGACY_LABELS='maybe': expected True or False"),
    ({"REP_USAGE_DISCOVERY": "maybe"}, "REP_USAGE_DISCOVERY='maybe': expected True or False"),
    ({"REP_ROBOTS_TAGS": False, "REP_OBEY_NOINDEX": True},
     "REP_OBEY_NOINDEX=True: needs REP_ROBOTS_TAGS = True (page-level directives are not read with "
     "REP_ROBOTS_TAGS = False)"),
    ({"REP_ROBOTS_TAGS": False, "REP_OBEY_NOFOLLOW": "True"},
     "REP_OBEY_NOFOLLOW='True': needs REP_ROBOTS_TAGS = True (page-level directives are not read with "
     "REP_ROBOTS_TAGS = False)"),
    ({"REP_CLEAN_PARAM": "maybe"}, "REP_CLEAN_PARAM='maybe': expected True or False"),
    ({"REP_HISTORY_VERSIONS": -1}, "REP_HISTORY_VERSIONS=-1: expected an integer >= 0"),
    ({"REP_HISTORY_VERSIONS": "all"}, "REP_HISTORY_VERSIONS='all': expected an integer"),
    ({"REP_WARC": 5}, "REP_WARC=5: expected a file or directory path (a string), or None to turn it off"),
    ({"REP_WARC_MAX_BYTES": 1000}, "REP_WARC_MAX_BYTES=1000: expected an integer >= 65536"),
    ({"REP_DECISION_LOG_MAX_BYTES": True}, "REP_DECISION_LOG_MAX_BYTES=True: expected an integer >= 65536"),
    # A misspelt name is refused, not ignored: it may have been meant to restrict the crawl.
    ({"REP_CONTENT_USE": "train-ai"},
     f"REP_CONTENT_USE='train-ai': unknown setting (did you mean REP_CONTENT_USES?); {_REFUSED}"),
    ({"REP_XYZZY": 1, "REP_HOLD_TIMOUT": 5, "REP_STOR": "redis://:secret@cache/0", "REP_MAX_SIZE": "lots"},
     "REP_HOLD_TIMOUT=5: unknown setting (did you mean REP_HOLD_TIMEOUT?); REP_STOR='redis://:***@cache/0' is "
     f"unknown too (did you mean REP_STORE?); REP_XYZZY=1 is unknown too; {_REFUSED}"),  # before any bad value
]


def occurrences(name: str, message: str) -> int:
    """How often the setting ``name`` is named in ``message`` (REP_MAX_SIZE is not named by REP_MAX_SIZE_X)."""
    return len(re.findall(rf"(?<![A-Z0-9_]){name}(?![A-Z0-9_])", message))


@pytest.mark.parametrize(("settings", "message"), MESSAGES)
def test_each_message_names_the_setting_and_value_once(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        config(**settings)
    assert str(raised.value) == message
    assert occurrences(raised.value.setting, message) == 1
    assert "secret" not in message


@pytest.mark.parametrize(
    ("settings", "target"),
    [
        ({}, RedisTarget(None, {}, "REDIS_HOST")),  # scrapy-redis's default: localhost:6379, database 0
        ({"REDIS_URL": "rediss://:pw@cache:6380/1", "REDIS_HOST": "other", "REDIS_PARAMS": {"ssl_cert_reqs": "none"}},
         RedisTarget("rediss://:pw@cache:6380/1", {"ssl_cert_reqs": "none", "host": "other"}, "REDIS_URL")),
        ({"REDIS_HOST": "cache", "REDIS_PORT": "7000", "REDIS_DB": 2,
          "REDIS_PARAMS": {"host": "params-host", "db": 5, "password": "pw", "username": "u", "socket_timeout": 30,
                           "socket_connect_timeout": 30, "retry_on_timeout": True, "encoding": "latin-1",
                           "decode_responses": True, "redis_cls": "redis.Redis"}},
         RedisTarget(None, {"host": "cache", "port": "7000", "db": 2, "password": "pw", "username": "u"},
                     "REDIS_HOST")),
        ({"REDIS_PARAMS": '{"port": 7001}', "REDIS_HOST": ""}, RedisTarget(None, {"port": 7001}, "REDIS_HOST")),
        ({"REDIS_PARAMS": {"url": "redis://cache/1"}}, RedisTarget("redis://cache/1", {}, "REDIS_PARAMS")),
    ],
)
def test_bare_redis_takes_scrapy_redis_settings(settings: dict[str, Any], target: RedisTarget) -> None:
    """SPEC 3.2: ``REP_STORE = "redis"`` reads REDIS_* as scrapy-redis does (REDIS_URL/HOST/PORT/DB over
    REDIS_PARAMS; empty ones unset); the store's own timeouts, retry and bytes replies replace those it sets."""
    c = config(REP_STORE="redis?prefix=fleet:", **settings)
    assert (c.store, c.redis) == ("redis?prefix=fleet:", target)
    assert "pw" not in repr(c.redis)


def test_redis_settings_are_read_only_for_the_bare_form() -> None:
    assert config(REP_STORE="redis://localhost/0", REDIS_URL=42).redis is None
    assert config(REDIS_PORT="not read").redis is None


def test_the_redis_package_message(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("scrapy_rep.config.store_uri.importlib.util.find_spec", lambda name: None)
    with pytest.raises(ConfigError) as raised:
        config(REP_STORE="redis://localhost")
    assert str(raised.value) == ("REP_STORE='redis://localhost': a redis store needs the redis package: pip install "
                                 f"'scrapy-rep[redis]'; {_EXPECTED_STORE}")


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("memcached://localhost", f"REP_STORE='memcached://localhost': unknown store 'memcached'; {_EXPECTED_STORE}"),
        (3, f"REP_STORE must be a string, got 3; {_EXPECTED_STORE}"),
    ],
)
def test_store_messages_the_config_checks_first(uri: Any, message: str) -> None:
    """The two store-URI errors the config's own scheme check pre-empts, as other callers of the store see them."""
    with pytest.raises(InvalidStoreURI) as raised:
        validate_store_uri(uri)
    assert str(raised.value) == message
    assert occurrences("REP_STORE", message) == 1


def _hook(request: Any) -> Any:
    return request


@pytest.mark.parametrize(("value", "loaded"), [(None, None), ("", None), (_hook, _hook),
                                               ("tests.config.test_settings._hook", _hook)])
def test_robots_request_is_a_callable_or_its_import_path(value: Any, loaded: Any) -> None:
    assert config(REP_ROBOTS_REQUEST=value).robots_request is loaded


def test_a_rediss_store_is_accepted() -> None:
    assert config(REP_STORE="rediss://localhost:6380/0").store == "rediss://localhost:6380/0"


_OURS = {"scrapy_rep.RobotsMiddleware": 100, "scrapy_rep.RobotsBodyMiddleware": 595}


@pytest.mark.parametrize(
    ("middlewares", "why"),
    [
        (_OURS,
         "Scrapy's built-in robots.txt middleware is enabled beside scrapy_rep.RobotsMiddleware (every robots.txt "
         f"would be fetched twice); remove it: map '{_BUILTIN}' (the import path DOWNLOADER_MIDDLEWARES_BASE uses: "
         "before Scrapy 2.15 a class key does not disable it) to None, or use ADDONS = {'scrapy_rep.Addon': 0}"),
        ({_BUILTIN: None, "scrapy_rep.RobotsMiddleware": 100},
         "scrapy_rep.RobotsBodyMiddleware must be enabled (order 595) with scrapy_rep.RobotsMiddleware; use "
         "ADDONS = {'scrapy_rep.Addon': 0} to enable both"),
        ({**_OURS, _BUILTIN: None, "scrapy_rep.RobotsBodyMiddleware": 500},
         "scrapy_rep.RobotsBodyMiddleware must be ordered after HttpCompressionMiddleware (590), e.g. at 595"),
    ],
)
def test_middleware_messages_show_the_setting_as_set(middlewares: dict[str, Any], why: str) -> None:
    with pytest.raises(ConfigError) as raised:
        check_middlewares(Settings({"DOWNLOADER_MIDDLEWARES": middlewares}))
    assert str(raised.value) == f"DOWNLOADER_MIDDLEWARES={middlewares!r}: {why}"
    assert occurrences("DOWNLOADER_MIDDLEWARES", str(raised.value)) == 1


@pytest.mark.parametrize(
    ("settings", "unobeyed"),
    [
        ({}, "REP_OBEY_NOFOLLOW: the links of nofollow pages followed"),
        ({"REP_OBEY_NOINDEX": True}, "REP_OBEY_NOFOLLOW: the links of nofollow pages followed; REP_OBEY_NOINDEX: the "
         "items of noindex pages kept"),
        ({"REP_OBEY_NOFOLLOW": False, "REP_OBEY_NOINDEX": True}, "REP_OBEY_NOINDEX: the items of noindex pages kept"),
    ],
)
def test_the_spider_middleware_message_says_what_would_go_unobeyed(settings: dict[str, Any], unobeyed: str) -> None:
    middlewares = {"scrapy_rep.RobotsStartMiddleware": 10}
    with pytest.raises(ConfigError) as raised:
        check_spider_middlewares(Settings({"SPIDER_MIDDLEWARES": middlewares}), config(**settings),
                                 RobotsStartMiddleware)
    assert str(raised.value) == (
        f"SPIDER_MIDDLEWARES={middlewares!r}: scrapy_rep.RobotsTagsMiddleware is not enabled, so page-level directives "
        f"would silently go unobeyed ({unobeyed}); enable it with 'scrapy_rep.RobotsTagsMiddleware': 45 in "
        "SPIDER_MIDDLEWARES, or use ADDONS = {'scrapy_rep.Addon': 0}; to crawl without page-level obedience set "
        "REP_ROBOTS_TAGS = False (or REP_OBEY_NOFOLLOW and REP_OBEY_NOINDEX to False)")
    assert occurrences("SPIDER_MIDDLEWARES", str(raised.value)) == 2  # the setting, then where to enable it


def test_every_config_error_raise_site_is_covered() -> None:
    """A new ``raise ConfigError`` (or store-URI error) must come with a row above: count the sites."""
    package = Path(__file__).resolve().parents[2] / "scrapy_rep"
    sources = {path.name: path.read_text(encoding="utf-8") for path in (
        package / "config" / "settings.py", package / "config" / "hooks.py", package / "config" / "evidence.py",
        package / "config" / "reader.py",
        package / "robots" / "body.py", package / "config" / "tokens.py",
        package / "config" / "store_uri.py", package / "config" / "redis_target.py",
        package / "requests" / "page_directives.py", package / "config" / "uses.py",
        package / "requests" / "response_usage.py")}
    raised = r"raise (ConfigError|InvalidToken|InvalidStoreURI|InvalidRedisSetting|UsesError|_invalid)\("
    sites = sum(len(re.findall(raised, text)) for text in sources.values())
    # config/settings.py 9 (the InvalidToken, InvalidStoreURI, InvalidRedisSetting and UsesError re-raises included),
    # config/reader.py 5 (typed reads), config/hooks.py 3 (REP_CLOCK, REP_ROBOTS_REQUEST), config/evidence.py 2
    # (test_rep_warc_without_warcio...),
    # robots/body.py 3, config/tokens.py 1, config/store_uri.py 11 (the bare 'redis' without its server:
    # tests/stores/test_open_store.py), config/redis_target.py 5, requests/page_directives.py 1, config/uses.py 5,
    # requests/response_usage.py 1 (test_a_declared_use_needs_the_usage_middleware). The start-up checks
    # (TWISTED_REACTOR, PING) are tests/stores/test_startup.py's and test_redis_store.py's.
    assert sites == 46


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["REP_HOLD_TIMOUT"], [("REP_HOLD_TIMOUT", "REP_HOLD_TIMEOUT")]),
        (["REP_USERAGENT", "REP_CACHE_TTL"], [("REP_USERAGENT", "REP_USER_AGENT")]),
        (["REP_XYZZY"], [("REP_XYZZY", None)]),
        (list(SETTINGS), []),
    ],
)
def test_unknown_settings_with_the_closest_known_name(names: list[str], expected: list[tuple[str, str | None]]
                                                      ) -> None:
    assert unknown_settings(Settings(dict.fromkeys(names, 1))) == expected


def test_every_rep_name_the_projects_code_sets_is_known() -> None:
    """Refusing unknown names breaks nothing of ours: every ``REP_*`` name in the package, the demo, the example
    project, the benchmarks and the fuzzer is a setting, but for the benchmarks' own variable REP_MODES."""
    repo = Path(__file__).resolve().parents[2]
    named = {name for folder in ("scrapy_rep", "example_project", "benchmarks", "fuzz")
             for path in (repo / folder).rglob("*.py")
             for name in re.findall(r"\bREP_[A-Z0-9_]*[A-Z0-9]\b", path.read_text(encoding="utf-8"))}
    assert "REP_CLOCK" in named and "REP_STORE" in named
    assert named - set(SETTINGS) == {"REP_MODES"}


def test_settings_lists_every_rep_name_the_package_reads() -> None:
    """``SETTINGS`` (what is not reported as unknown) holds every REP_ setting read anywhere in scrapy_rep."""
    package = Path(__file__).resolve().parents[2] / "scrapy_rep"
    read = {name for path in package.rglob("*.py")
            for name in re.findall(r"settings\.get\w*\(\s*\"(REP_\w+)\"", path.read_text(encoding="utf-8"))}
    settings = (package / "config" / "settings.py").read_text(encoding="utf-8")
    read |= set(re.findall(r"read\.\w+\(\s*\"(REP_\w+)\"", settings))
    assert read and read <= set(SETTINGS)


def test_a_declared_use_needs_the_usage_middleware() -> None:
    """REP_CONTENT_USES without UsageMiddleware: the items of refused responses would be kept, silently."""
    from scrapy_rep.requests.response_usage import check_usage_middleware

    middlewares = {"scrapy_rep.RobotsTagsMiddleware": 45}
    with pytest.raises(ConfigError) as raised:
        check_usage_middleware(Settings({"SPIDER_MIDDLEWARES": middlewares}), config(REP_CONTENT_USES=["train-ai"]))
    assert str(raised.value) == (
        f"SPIDER_MIDDLEWARES={middlewares!r}: scrapy_rep.UsageMiddleware is not enabled, so the items of responses "
        "whose headers or meta tags refuse a use of REP_CONTENT_USES would be kept; enable it with "
        "'scrapy_rep.UsageMiddleware': 46 in SPIDER_MIDDLEWARES, or use ADDONS = {'scrapy_rep.Addon': 0}")
    check_usage_middleware(Settings({"SPIDER_MIDDLEWARES": middlewares}), config())  # no use declared: nothing to drop


def test_rep_warc_without_warcio_stops_the_crawl_at_start_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """The archive asked for cannot be written without the optional library: refused, never silently skipped."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "warcio" else real(name, *a))
    with pytest.raises(ConfigError) as raised:
        config(REP_WARC="robots.warc.gz")
    assert str(raised.value) == ("REP_WARC='robots.warc.gz': the WARC archive needs the warcio library, which is not "
                                 "installed: pip install 'scrapy-rep[warc]' (or unset REP_WARC)")
