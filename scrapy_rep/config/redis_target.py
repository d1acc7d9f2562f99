"""Which Redis server a Redis store talks to, and how messages name it without its password (SPEC 3.2).

``REP_STORE = "redis"`` (the bare word, optionally with the store's own query, ``redis?prefix=P&timeout=S``)
reuses scrapy-redis's connection settings so that a scrapy-redis project configures Redis once: read here as
``scrapy_redis.connection.get_redis_from_settings`` reads them. ``REP_STORE = "redis://..."`` names the server
itself. Imports nothing of redis-py: the config validates with it only when the ``redis`` extra is installed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from scrapy.settings import BaseSettings

#: scrapy-redis's settings and the redis-py parameters they set (scrapy_redis.connection.SETTINGS_PARAMS_MAP);
#: a set one overrides the same key of REDIS_PARAMS, as in scrapy-redis. REDIS_ENCODING and
#: REDIS_DECODE_RESPONSES are read by scrapy-redis too, and dropped here with the rest of OURS.
SETTINGS_PARAMS = {"REDIS_URL": "url", "REDIS_HOST": "host", "REDIS_PORT": "port", "REDIS_DB": "db"}

#: REDIS_PARAMS keys the store sets itself and so ignores: it needs bytes replies (no decoding), its own short
#: timeouts and single retry (a store call must fail fast, scrapy-redis's defaults wait 30 s), and redis-py's
#: own client and pool classes.
OURS = frozenset({
    "decode_responses", "encoding", "redis_cls", "socket_timeout", "socket_connect_timeout", "retry_on_timeout",
    "retry", "connection_pool",
})

#: Bare ``REP_STORE`` word that takes the server from scrapy-redis's settings.
SETTINGS_FORM = "redis"


class InvalidRedisSetting(ValueError):
    """A scrapy-redis connection setting (``REDIS_URL``...) the store cannot use; ``value`` is safe to show."""

    def __init__(self, setting: str, value: Any, why: str) -> None:
        super().__init__(f"{setting}={value!r}: {why}")
        self.setting, self.value, self.why = setting, value, why


@dataclass(frozen=True)
class RedisTarget:
    """A Redis server as redis-py is told about it: ``Redis.from_url(url, **params)`` when ``url`` is set (the
    URL's parts win over ``params``, as in redis-py), else ``Redis(**params)``. ``source`` names the settings that
    gave it, for messages: ``REP_STORE``, ``REDIS_URL`` or ``REDIS_HOST``."""

    url: str | None
    params: Mapping[str, Any] = field(default_factory=dict)
    source: str = "REP_STORE"

    def __repr__(self) -> str:
        """Without the password (a Config holding this may be printed)."""
        url = None if self.url is None else redact(self.url)
        return f"RedisTarget(url={url!r}, params={_shown(dict(self.params))!r}, source={self.source!r})"


def is_settings_form(scheme: str, netloc: str, path: str) -> bool:
    """``REP_STORE`` is the bare ``redis`` word (with or without a query): the server comes from REDIS_*."""
    return not scheme and not netloc and path == SETTINGS_FORM


def target_from_settings(settings: BaseSettings) -> RedisTarget:
    """The server scrapy-redis would use with these settings: ``REDIS_PARAMS`` (a dict), overridden by
    ``REDIS_URL``, ``REDIS_HOST``, ``REDIS_PORT`` and ``REDIS_DB`` when set (not empty), less ``OURS``. Nothing
    set means ``localhost:6379``, database 0, as for scrapy-redis. Raises ``InvalidRedisSetting``."""
    raw = settings.get("REDIS_PARAMS")
    try:
        params: dict[str, Any] = dict(settings.getdict("REDIS_PARAMS"))
    except (TypeError, ValueError):
        why = "expected a dict of redis-py client parameters"
        raise InvalidRedisSetting("REDIS_PARAMS", _shown(raw), why) from None
    for setting, param in SETTINGS_PARAMS.items():
        value = settings.get(setting)
        if value:
            params[param] = value
    params = {key: value for key, value in params.items() if key not in OURS}
    for setting, param in (("REDIS_PORT", "port"), ("REDIS_DB", "db")):  # also with a URL: one without them
        if param in params and not _is_integer(params[param]):  # takes them from here, as in redis-py
            shown = settings.get(setting) or _shown(raw)
            raise InvalidRedisSetting(setting if settings.get(setting) else "REDIS_PARAMS", shown,
                                      f"the Redis {param} must be an integer")
    url = params.pop("url", None)
    if url is None:
        return RedisTarget(None, params, "REDIS_HOST")
    source = "REDIS_URL" if settings.get("REDIS_URL") else "REDIS_PARAMS"  # scrapy-redis takes its "url" too
    _check_url(url, source)
    return RedisTarget(str(url), params, source)


def redact(uri: str) -> str:
    """``uri`` with any password replaced by ``***``: in the user part (``redis://:***@host:6379/0``,
    ``redis://user:***@host``) and in a ``password=`` query option (redis-py reads one)."""
    try:
        parts = urlsplit(uri)
        password = parts.password
    except ValueError:
        return uri
    query = parse_qsl(parts.query, keep_blank_values=True)
    in_query = any(name.lower() == "password" for name, _ in query)
    if not password and not in_query:
        return uri
    if password:
        userinfo, _, hostport = parts.netloc.rpartition("@")
        parts = parts._replace(netloc=f"{userinfo.partition(':')[0]}:***@{hostport}")
    if in_query:
        hidden = [(name, "***" if name.lower() == "password" else value) for name, value in query]
        parts = parts._replace(query=urlencode(hidden, safe="*:/"))
    return urlunsplit(parts)


def _check_url(url: Any, setting: str) -> None:
    """A URL redis-py can open, or ``InvalidRedisSetting`` naming ``setting`` and the URL without its password."""
    if not isinstance(url, str):
        raise InvalidRedisSetting(setting, url, "expected a redis://, rediss:// or unix:// URL")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a malformed port
    except ValueError as exc:
        raise InvalidRedisSetting(setting, redact(url), str(exc)) from None
    if parts.scheme not in ("redis", "rediss", "unix"):
        raise InvalidRedisSetting(setting, redact(url), "expected a redis://, rediss:// or unix:// URL")


def _is_integer(value: Any) -> bool:
    try:
        int(value)
    except (TypeError, ValueError):
        return False
    return not isinstance(value, (bool, float))


def _shown(value: Any) -> Any:
    """A REDIS_PARAMS value for a message, without a password: a dict's ``password`` replaced by ``***``, a
    string that mentions one (unparsable JSON) replaced whole."""
    if isinstance(value, Mapping) and "password" in value:
        return {**value, "password": "***"}
    if isinstance(value, str) and "password" in value.lower():
        return "***"
    return value
