"""Every ``REP_*`` setting read and validated once, at start-up, into one frozen object (SPEC 8.3-8.4).

A bad value raises ``ConfigError`` naming the setting and the value: it never disables obedience silently.
``ROBOTSTXT_OBEY = False`` is the only way to turn the middleware off (``NotConfigured``). docs/settings.md
documents each setting.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, cast
from urllib.parse import urlsplit

from scrapy.exceptions import NotConfigured
from scrapy.settings import BaseSettings

from .matcher import extract_user_agent, is_valid_user_agent
from .stores import DEFAULT_MAX_ORIGINS, validate_store_uri

DAY = 86_400.0
STORE_SCHEMES = ("memory", "sqlite", "redis")


class ConfigError(ValueError):
    """A ``REP_*`` (or related Scrapy) setting has a value the middleware cannot obey."""

    def __init__(self, name: str, value: Any, why: str) -> None:
        super().__init__(f"{name}={value!r}: {why}")
        self.setting = name


class Clock(Protocol):
    """What the middleware needs of time: Twisted's ``IReactorTime`` subset (a reactor or ``task.Clock``)."""

    def seconds(self) -> float: ...

    def callLater(self, delay: float, callable: Callable[..., Any], *args: Any, **kw: Any) -> Any: ...


@dataclass(frozen=True)
class Config:
    """The validated configuration; field names are the settings' names without ``REP_``, lower-cased."""

    user_agents: tuple[str, ...]
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
    max_parked: int = 10_000
    unreachable_allow_after: float = 30 * DAY
    obey_crawl_delay: bool = False
    max_crawl_delay: float = 60.0
    not_found_heuristic: bool = False
    store: str = "memory"
    memory_max_origins: int = DEFAULT_MAX_ORIGINS
    store_poll_interval: float = 1.0
    store_lease_ttl: float = 300.0
    clock: Clock | None = None

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> Config:
        """Read and validate; raises ``NotConfigured`` only when ``ROBOTSTXT_OBEY`` is false."""
        if not settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured("ROBOTSTXT_OBEY is False")
        read = _Reader(settings)
        config = cls(
            user_agents=_user_agents(settings),
            cache_ttl=read.seconds("REP_CACHE_TTL", cls.cache_ttl, minimum=0),
            cache_min_ttl=read.seconds("REP_CACHE_MIN_TTL", cls.cache_min_ttl, minimum=0),
            cache_max_ttl=read.seconds("REP_CACHE_MAX_TTL", cls.cache_max_ttl, minimum=0),
            max_size=read.integer("REP_MAX_SIZE", cls.max_size, minimum=1),
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
            max_parked=read.integer("REP_MAX_PARKED", cls.max_parked, minimum=0),
            unreachable_allow_after=read.seconds(
                "REP_UNREACHABLE_ALLOW_AFTER", cls.unreachable_allow_after, minimum=0
            ),
            obey_crawl_delay=read.boolean("REP_OBEY_CRAWL_DELAY", cls.obey_crawl_delay),
            max_crawl_delay=read.seconds("REP_MAX_CRAWL_DELAY", cls.max_crawl_delay, minimum=0),
            not_found_heuristic=read.boolean("REP_5XX_NOT_FOUND_HEURISTIC", cls.not_found_heuristic),
            store=_store_uri(settings.get("REP_STORE", cls.store)),
            memory_max_origins=read.integer("REP_MEMORY_MAX_ORIGINS", cls.memory_max_origins, minimum=1),
            store_poll_interval=read.seconds("REP_STORE_POLL_INTERVAL", cls.store_poll_interval, minimum=0.001),
            store_lease_ttl=read.seconds("REP_STORE_LEASE_TTL", cls.store_lease_ttl, minimum=0.001),
            clock=_clock(settings.get("REP_CLOCK")),
        )
        _check_pairs(config)
        return config


class _Reader:
    """Typed reads that turn every malformed value into a ``ConfigError`` naming the setting."""

    def __init__(self, settings: BaseSettings) -> None:
        self.settings = settings

    def seconds(self, name: str, default: float, *, minimum: float) -> float:
        value = self.settings.get(name, default)
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ConfigError(name, value, "expected a number of seconds") from None
        if isinstance(value, bool) or not number >= minimum or number == float("inf"):
            raise ConfigError(name, value, f"expected a finite number of seconds >= {minimum:g}")
        return number

    def integer(self, name: str, default: int, *, minimum: int) -> int:
        value = self.settings.get(name, default)
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise ConfigError(name, value, "expected an integer") from None
        if isinstance(value, bool) or (isinstance(value, float) and value != number) or number < minimum:
            raise ConfigError(name, value, f"expected an integer >= {minimum}")
        return number

    def boolean(self, name: str, default: bool) -> bool:
        value = self.settings.get(name, default)
        try:
            return self.settings.getbool(name, default)
        except ValueError:
            raise ConfigError(name, value, "expected True or False") from None


def _user_agents(settings: BaseSettings) -> tuple[str, ...]:
    """SPEC 6.3-6.4: REP_USER_AGENT (token or ordered list), else ROBOTSTXT_USER_AGENT's or USER_AGENT's product
    token."""
    configured = settings.get("REP_USER_AGENT")
    if configured:
        tokens = [str(token).strip() for token in settings.getlist("REP_USER_AGENT")]
        for token in tokens:
            if not is_valid_user_agent(token):
                raise ConfigError("REP_USER_AGENT", configured, f"{token!r} is not a valid product token ([A-Za-z_-]+)")
        return tuple(tokens)
    for name in ("ROBOTSTXT_USER_AGENT", "USER_AGENT"):
        value = settings.get(name)
        if value:
            token = extract_user_agent(str(value))
            if not is_valid_user_agent(token):
                raise ConfigError(name, value, "has no product token ([A-Za-z_-]+ at its start); set REP_USER_AGENT")
            return (token,)
    raise ConfigError("USER_AGENT", settings.get("USER_AGENT"), "no user agent to obey as; set REP_USER_AGENT")


def _store_uri(value: Any) -> str:
    """SPEC 3.2/8.4: a store URI the factory can open (checked without connecting)."""
    uri = str(value or "").strip()
    scheme = urlsplit(uri).scheme or uri
    if scheme not in STORE_SCHEMES:
        raise ConfigError("REP_STORE", value, f"the store must be one of {', '.join(STORE_SCHEMES)} (a URI)")
    try:
        validate_store_uri(uri)
    except ValueError as exc:
        raise ConfigError("REP_STORE", value, str(exc)) from None
    return uri


def _clock(value: Any) -> Clock | None:
    """An IReactorTime provider, or a zero-argument callable returning one. Scrapy deep-copies settings, which
    would copy a clock object given directly; a callable (``lambda: clock``) survives the copy as itself."""
    if value is None:
        return None
    clock = value if _is_clock(value) else value() if callable(value) else None
    if _is_clock(clock):
        return cast(Clock, clock)
    raise ConfigError("REP_CLOCK", value, "expected an IReactorTime provider such as twisted.internet.task.Clock "
                      "(or a callable returning one)")


def _is_clock(value: Any) -> bool:
    return callable(getattr(value, "seconds", None)) and callable(getattr(value, "callLater", None))


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
