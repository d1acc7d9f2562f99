"""Every ``REP_*`` setting read and validated once, at start-up, into one frozen object (SPEC 8.3-8.4).

A bad value raises ``ConfigError`` naming the setting and the value: it never disables obedience silently.
``ROBOTSTXT_OBEY = False`` is the only way to turn the middleware off (``NotConfigured``). docs/settings.md
documents each setting.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import urlsplit

from scrapy.exceptions import NotConfigured
from scrapy.settings import BaseSettings

from .errors import ConfigError
from .evidence import DECISION_LOG_MAX_BYTES, HISTORY_VERSIONS, WARC_MAX_BYTES, evidence_fields
from .hooks import Clock, RobotsRequestHook, clock_setting, robots_request_setting
from .reader import Reader

__all__ = ["DAY", "SETTINGS", "Clock", "Config", "ConfigError", "RobotsRequestHook", "unknown_settings"]
from .redis_target import InvalidRedisSetting, RedisTarget, is_settings_form, redact, target_from_settings
from .store_uri import DEFAULT_MAX_ORIGINS, InvalidStoreURI, validate_store_uri
from .tokens import InvalidToken, Tokens, tokens_from_settings
from .uses import UsesError, content_uses, fetches_tdmrep

DAY = 86_400.0
STORE_SCHEMES = ("memory", "sqlite", "redis", "rediss")
#: SPEC 4.4 (RFC 9309 2.5): a crawler must parse at least the first 500 KiB of a robots.txt. A smaller
#: REP_MAX_SIZE needs REP_ALLOW_SMALL_MAX_SIZE = True: truncating a file can only drop rules (allow more).
RFC_MIN_MAX_SIZE = 500 * 1024

#: Every ``REP_*`` setting scrapy-rep reads; any other ``REP_*`` name stops the crawl (``check_known_settings``).
SETTINGS = (
    "REP_USER_AGENT", "REP_CACHE_TTL", "REP_CACHE_MIN_TTL", "REP_CACHE_MAX_TTL", "REP_MAX_SIZE",
    "REP_ALLOW_SMALL_MAX_SIZE", "REP_MAX_REDIRECTS", "REP_ERROR_RETRY_DELAY", "REP_ERROR_RETRY_MAX_DELAY",
    "REP_UNAVAILABLE_RETRY_DELAY", "REP_UNAVAILABLE_RETRY_MAX_DELAY", "REP_RETRY_AFTER_MAX", "REP_HOLD_TIMEOUT",
    "REP_MAX_PARKED", "REP_UNREACHABLE_ALLOW_AFTER", "REP_OBEY_CRAWL_DELAY", "REP_MAX_CRAWL_DELAY",
    "REP_5XX_NOT_FOUND_HEURISTIC", "REP_STORE", "REP_MEMORY_MAX_ORIGINS", "REP_STORE_POLL_INTERVAL",
    "REP_STORE_LEASE_TTL", "REP_CLOCK", "REP_ROBOTS_REQUEST", "REP_ENFORCE", "REP_CONTENT_USES", "REP_ROBOTS_TAGS",
    "REP_OBEY_NOFOLLOW", "REP_OBEY_NOINDEX", "REP_CLEAN_PARAM", "REP_TDMREP", "REP_USAGE_LEGACY_LABELS",
    "REP_USAGE_DISCOVERY", "REP_HISTORY_VERSIONS", "REP_WARC", "REP_WARC_MAX_BYTES", "REP_DECISION_LOG",
    "REP_DECISION_LOG_MAX_BYTES", "REP_REFUSE_AT_DISCOVERY",
)


@dataclass(frozen=True)
class Config:
    """The validated configuration; field names are the settings' names without ``REP_``, lower-cased."""

    #: The product tokens obeyed, in order (SPEC 6.3); ``()`` obeys only the ``*`` groups.
    user_agents: tuple[str, ...]
    #: Where ``user_agents`` came from (``Tokens.source``), for the start-up log line.
    user_agent_source: str = "REP_USER_AGENT"
    #: Neither REP_USER_AGENT nor ROBOTSTXT_USER_AGENT is set: a request carrying its own ``User-Agent`` header obeys
    #: that header's product token (Scrapy's ROBOTSTXT_USER_AGENT contract); ``user_agents`` (USER_AGENT's) is the
    #: token of every other request (requests/agents.py).
    agent_per_request: bool = False
    #: USER_AGENT as set (a request whose header is this one obeys ``user_agents``); None when unset.
    default_user_agent: str | None = None
    cache_ttl: float = DAY
    cache_min_ttl: float = 60.0
    cache_max_ttl: float = 7 * DAY
    max_size: int = 512_000
    max_redirects: int = 5
    error_retry_delay: float = 60.0
    error_retry_max_delay: float = 3600.0
    unavailable_retry_delay: float = 15.0
    unavailable_retry_max_delay: float = 600.0
    retry_after_max: float = 3600.0
    hold_timeout: float = 600.0
    #: REP_MAX_PARKED; None: 10,000, or CONCURRENT_REQUESTS with a fleet's shared queue (parking.py).
    max_parked: int | None = None
    unreachable_allow_after: float = 30 * DAY
    obey_crawl_delay: bool = False
    max_crawl_delay: float = 60.0
    not_found_heuristic: bool = False
    store: str = "memory"
    #: The server of ``REP_STORE = "redis"`` (the bare word), from scrapy-redis's REDIS_* settings; else None.
    redis: RedisTarget | None = None
    memory_max_origins: int = DEFAULT_MAX_ORIGINS
    store_poll_interval: float = 1.0
    #: REP_STORE_LEASE_TTL: a fetch lease's lifetime, renewed every third of it while its fetch runs
    #: (refresh.py), so a crashed holder blocks its origin for at most this long plus one poll interval.
    store_lease_ttl: float = 15.0
    clock: Clock | None = None
    #: REP_ROBOTS_REQUEST: called with each robots.txt request (each hop) before it is sent (robots_request.py).
    robots_request: RobotsRequestHook | None = None
    #: REP_ENFORCE: False is a dry run: requests decided, counted and logged, none dropped or held (dry_run.py).
    enforce: bool = True
    #: REP_CONTENT_USES: the uses this crawl makes of content (``uses.USES``); a request an opt-out known before
    #: download refuses one of is forbidden, the items of a response one read after refuses are dropped
    #: (requests/usage.py). Empty: the opt-outs are only reported.
    content_uses: tuple[str, ...] = ()
    #: REP_TDMREP: each origin's /.well-known/tdmrep.json is fetched (by default when content_uses names a TDM use).
    tdmrep: bool = False
    #: REP_USAGE_LEGACY_LABELS: an ``n`` of a label earlier AIPREF drafts had that implies AI training refuses train-ai.
    usage_legacy_labels: bool = True
    #: REP_USAGE_DISCOVERY (opt-in): a page an opt-out refuses before download is downloaded for its links only.
    usage_discovery: bool = False
    #: REP_ROBOTS_TAGS: read each response's page-level directives (robots meta tag, X-Robots-Tag) into
    #: ``meta["rep_robots_tags"]``; False: not read, so neither of the two below applies (page_directives.py).
    robots_tags: bool = True
    #: REP_OBEY_NOFOLLOW: requests a callback yields from a ``nofollow`` response are not scheduled.
    obey_nofollow: bool = True
    #: REP_OBEY_NOINDEX (opt-in): items a callback yields from a ``noindex`` response (or one past its
    #: ``unavailable_after``) are dropped.
    obey_noindex: bool = False
    #: REP_CLEAN_PARAM (opt-in): a request's URL loses the parameters its robots.txt's Clean-param lines list
    #: (Yandex's directive; clean_param.py), and goes back to the scheduler under the canonical URL.
    clean_param: bool = False
    #: REP_REFUSE_AT_DISCOVERY: a request a callback yields whose origin's robots.txt is held, fresh, is decided in
    #: the spider middleware, and a forbidden one never scheduled (requests/discovery.py); False: in the downloader.
    refuse_at_discovery: bool = True
    #: REP_HISTORY_VERSIONS: the robots.txt versions a SQLite or Redis store keeps per origin; 0: none (evidence.py).
    history_versions: int = HISTORY_VERSIONS
    #: REP_WARC (opt-in): the file or directory of the WARC archive of every robots.txt copy the crawl used.
    warc: str | None = None
    warc_max_bytes: int = WARC_MAX_BYTES
    #: REP_DECISION_LOG (opt-in): the JSON-lines file of every checked request's decision, rotated by size.
    decision_log: str | None = None
    decision_log_max_bytes: int = DECISION_LOG_MAX_BYTES

    def time(self) -> Clock:
        """The crawl's clock: REP_CLOCK, else the reactor (imported when asked: Scrapy has installed one by then)."""
        if self.clock is not None:
            return self.clock
        from twisted.internet import reactor

        return cast("Clock", reactor)

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> Config:
        """Read and validate; raises ``NotConfigured`` only when ``ROBOTSTXT_OBEY`` is false."""
        if not settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured("ROBOTSTXT_OBEY is False")
        check_known_settings(settings)
        read = Reader(settings)
        tokens = _tokens(settings)
        config = cls(
            user_agents=tokens.tokens,
            user_agent_source=tokens.source,
            agent_per_request=not settings.get("REP_USER_AGENT") and not settings.get("ROBOTSTXT_USER_AGENT"),
            default_user_agent=str(settings["USER_AGENT"]) if settings.get("USER_AGENT") else None,
            cache_ttl=read.seconds("REP_CACHE_TTL", cls.cache_ttl, minimum=0),
            cache_min_ttl=read.seconds("REP_CACHE_MIN_TTL", cls.cache_min_ttl, minimum=0),
            cache_max_ttl=read.seconds("REP_CACHE_MAX_TTL", cls.cache_max_ttl, minimum=0),
            max_size=_max_size(read),
            # SPEC 2.2: at least 5 hops must be followed.
            max_redirects=read.integer("REP_MAX_REDIRECTS", cls.max_redirects, minimum=5),
            error_retry_delay=read.seconds("REP_ERROR_RETRY_DELAY", cls.error_retry_delay, minimum=0.001),
            error_retry_max_delay=read.seconds("REP_ERROR_RETRY_MAX_DELAY", cls.error_retry_max_delay, minimum=0.001),
            unavailable_retry_delay=read.seconds(
                "REP_UNAVAILABLE_RETRY_DELAY", cls.unavailable_retry_delay, minimum=0.001
            ),
            unavailable_retry_max_delay=read.seconds(
                "REP_UNAVAILABLE_RETRY_MAX_DELAY", cls.unavailable_retry_max_delay, minimum=0.001
            ),
            retry_after_max=read.seconds("REP_RETRY_AFTER_MAX", cls.retry_after_max, minimum=0.001),
            hold_timeout=read.seconds("REP_HOLD_TIMEOUT", cls.hold_timeout, minimum=0.001),
            max_parked=None if settings.get("REP_MAX_PARKED") is None else read.integer("REP_MAX_PARKED", 0, minimum=0),
            unreachable_allow_after=read.seconds(
                "REP_UNREACHABLE_ALLOW_AFTER", cls.unreachable_allow_after, minimum=0
            ),
            obey_crawl_delay=read.boolean("REP_OBEY_CRAWL_DELAY", cls.obey_crawl_delay),
            max_crawl_delay=read.seconds("REP_MAX_CRAWL_DELAY", cls.max_crawl_delay, minimum=0),
            not_found_heuristic=read.boolean("REP_5XX_NOT_FOUND_HEURISTIC", cls.not_found_heuristic),
            store=(store := _store_uri(settings.get("REP_STORE", cls.store))),
            redis=_redis_target(settings, store),
            memory_max_origins=read.integer("REP_MEMORY_MAX_ORIGINS", cls.memory_max_origins, minimum=1),
            store_poll_interval=read.seconds("REP_STORE_POLL_INTERVAL", cls.store_poll_interval, minimum=0.001),
            store_lease_ttl=read.seconds("REP_STORE_LEASE_TTL", cls.store_lease_ttl, minimum=0.001),
            clock=clock_setting(settings.get("REP_CLOCK")),
            robots_request=robots_request_setting(settings.get("REP_ROBOTS_REQUEST")),
            enforce=read.boolean("REP_ENFORCE", cls.enforce),
            **_uses(settings, read),
            robots_tags=read.boolean("REP_ROBOTS_TAGS", cls.robots_tags),
            obey_nofollow=read.boolean("REP_OBEY_NOFOLLOW", cls.obey_nofollow),
            obey_noindex=read.boolean("REP_OBEY_NOINDEX", cls.obey_noindex),
            clean_param=read.boolean("REP_CLEAN_PARAM", cls.clean_param),
            refuse_at_discovery=read.boolean("REP_REFUSE_AT_DISCOVERY", cls.refuse_at_discovery),
            **evidence_fields(settings),
        )
        _check_page_directives(config, settings)
        _check_pairs(config)
        return config


def _tokens(settings: BaseSettings) -> Tokens:
    """SPEC 6.3-6.4: the ``Tokens`` obeyed (scrapy_rep.config.tokens); a bad REP_USER_AGENT entry is a ConfigError."""
    try:
        return tokens_from_settings(settings)
    except InvalidToken as exc:
        raise ConfigError(exc.setting, exc.value, exc.why) from None


def _max_size(read: Reader) -> int:
    """SPEC 4.4: at least RFC 9309's 500 KiB, unless REP_ALLOW_SMALL_MAX_SIZE acknowledges a smaller cap."""
    value = read.settings.get("REP_MAX_SIZE", Config.max_size)
    max_size = read.integer("REP_MAX_SIZE", Config.max_size, minimum=1)
    if max_size < RFC_MIN_MAX_SIZE and not read.boolean("REP_ALLOW_SMALL_MAX_SIZE", False):
        raise ConfigError("REP_MAX_SIZE", value, f"below the {RFC_MIN_MAX_SIZE:,} bytes (500 KiB) RFC 9309 requires "
                          "a crawler to parse: rules past the cap would be ignored, allowing what they forbid; raise "
                          "it, or set REP_ALLOW_SMALL_MAX_SIZE = True to accept the smaller cap")
    return max_size


def _store_uri(value: Any) -> str:
    """SPEC 3.2/8.4: a store URI the factory can open (checked without connecting)."""
    uri = str(value or "").strip()
    shown = redact(value) if isinstance(value, str) else value  # never a password in a message
    parts = urlsplit(uri)
    scheme = parts.scheme or parts.path  # the bare "memory" and "redis" (with a query: "redis?prefix=P")
    if scheme not in STORE_SCHEMES:
        raise ConfigError("REP_STORE", shown, f"the store must be one of {', '.join(STORE_SCHEMES)} (a URI)")
    try:
        validate_store_uri(uri)
    except InvalidStoreURI as exc:
        raise ConfigError("REP_STORE", shown, exc.why) from None
    return uri


def _redis_target(settings: BaseSettings, store: str) -> RedisTarget | None:
    """SPEC 3.2: ``REP_STORE = "redis"`` reuses scrapy-redis's REDIS_URL / REDIS_HOST / REDIS_PORT / REDIS_DB /
    REDIS_PARAMS (stores/redis_target.py); a bad one is a ConfigError naming it, without its password."""
    parts = urlsplit(store)
    if not is_settings_form(parts.scheme, parts.netloc, parts.path):
        return None
    try:
        return target_from_settings(settings)
    except InvalidRedisSetting as exc:
        raise ConfigError(exc.setting, exc.value, exc.why) from None


def _uses(settings: BaseSettings, read: Reader) -> dict[str, Any]:
    """The fields of the content-use settings (uses.py)."""
    try:
        uses = content_uses(settings.get("REP_CONTENT_USES"))
        return {"content_uses": uses, "tdmrep": fetches_tdmrep(settings.get("REP_TDMREP"), uses),
                "usage_legacy_labels": read.boolean("REP_USAGE_LEGACY_LABELS", Config.usage_legacy_labels),
                "usage_discovery": read.boolean("REP_USAGE_DISCOVERY", Config.usage_discovery)}
    except UsesError as exc:
        raise ConfigError(exc.setting, exc.value, exc.why) from None


def unknown_settings(settings: BaseSettings) -> list[tuple[str, str | None]]:
    """The ``REP_*`` names set that scrapy-rep does not read, in name order, each with the closest known one or None."""
    unknown = sorted(name for name in settings if name.startswith("REP_") and name not in SETTINGS)
    return [(name, next(iter(difflib.get_close_matches(name, SETTINGS, n=1)), None)) for name in unknown]


def check_known_settings(settings: BaseSettings) -> None:
    """Every unknown ``REP_*`` name, in one ``ConfigError``: never ignored, as it may be meant to restrict the crawl."""
    named = [(name, redact(value) if isinstance(value := settings.get(name), str) else value,  # no password shown
              f" (did you mean {known}?)" if known else "") for name, known in unknown_settings(settings)]
    if named:
        also = "".join(f"; {name}={value!r} is unknown too{hint}" for name, value, hint in named[1:])
        raise ConfigError(named[0][0], named[0][1], f"unknown setting{named[0][2]}{also}; an unknown setting is "
                          "refused, not ignored, because it may have been meant to restrict the crawl")


def _check_page_directives(config: Config, settings: BaseSettings) -> None:
    """An obedience the user asked for that REP_ROBOTS_TAGS = False would silently switch off."""
    if config.robots_tags:
        return
    for name in ("REP_OBEY_NOFOLLOW", "REP_OBEY_NOINDEX"):
        if settings.get(name) is not None and settings.getbool(name):
            raise ConfigError(name, settings.get(name), "needs REP_ROBOTS_TAGS = True (page-level directives are "
                              "not read with REP_ROBOTS_TAGS = False)")


def _check_pairs(config: Config) -> None:
    """Bounds that only make sense together."""
    pairs = [
        ("REP_CACHE_MIN_TTL", config.cache_min_ttl, "REP_CACHE_MAX_TTL", config.cache_max_ttl),
        ("REP_ERROR_RETRY_DELAY", config.error_retry_delay, "REP_ERROR_RETRY_MAX_DELAY", config.error_retry_max_delay),
        (
            "REP_UNAVAILABLE_RETRY_DELAY",
            config.unavailable_retry_delay,
            "REP_UNAVAILABLE_RETRY_MAX_DELAY",
            config.unavailable_retry_max_delay,
        ),
    ]
    for low_name, low, high_name, high in pairs:
        if low > high:
            raise ConfigError(low_name, low, f"must not exceed {high_name} ({high:g})")
