"""``REP_STORE``'s value read into what it names (SPEC 3.2; docs/stores.md): the store's kind, file or server, and
options, checked without connecting to anything, so the config validates it at start-up and ``stores.open_store``
opens what it describes.

- ``memory`` (default): this process only, at most ``REP_MEMORY_MAX_ORIGINS`` entries (LRU).
- ``sqlite:///relative/file.db`` (relative to the working directory at start-up) or ``sqlite:////abs/file.db``
  (absolute: four slashes), the convention of SQLAlchemy, Django and Celery: one file shared by the processes of a
  machine, resolved here to an absolute path. Query: ``timeout`` (seconds a locked database is waited for,
  default 5).
- ``redis://[:password@]host[:port][/db]`` (or ``rediss://`` for TLS): shared by many machines; needs the
  ``redis`` extra and Scrapy's asyncio reactor. Query: ``prefix`` (key prefix, default ``rep:``), ``timeout``
  (connect and command timeout in seconds, default 1), ``keep_days`` (how long entries outlive their expiry,
  default 31).
- ``redis`` (the bare word, same query): the Redis server of scrapy-redis's settings (``REDIS_URL``, else
  ``REDIS_HOST``/``REDIS_PORT``/``REDIS_DB``, with ``REDIS_PARAMS``: redis_target.py).
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from .redis_target import RedisTarget, is_settings_form, redact

#: Default bound of the memory store and of the middleware's in-process map: what about 250 MB holds (an origin's
#: entry, body compressed, and compact decision form take ~2.4 KB on real files: docs/performance.md).
DEFAULT_MAX_ORIGINS = 100_000

_DEFAULT_SQLITE_TIMEOUT = 5.0  # waited in the store's worker thread, not on the reactor: sqlite.py
_DEFAULT_REDIS_TIMEOUT = 1.0  # a dead or hung Redis is reported after about twice this
_DEFAULT_PREFIX = "rep:"
_DEFAULT_KEEP_DAYS = 31.0  # past SPEC 2.2's default 30 days, so the last good copy is still there when needed
_EXPECTED = "expected 'memory', 'sqlite:///relative.db', 'sqlite:////absolute/path.db' or 'redis://host:port/db'"
_NO_TARGET = ("the bare 'redis' takes its server from scrapy-redis's REDIS_URL / REDIS_HOST settings, which the "
              "caller did not pass (open_store(..., redis=...))")


class InvalidStoreURI(ValueError):
    """A ``REP_STORE`` value this release cannot open. ``str()`` names the setting and the value (any password
    as ``***``); ``why`` is the rest, for a caller (the config) that names them itself."""

    def __init__(self, value: object, why: str, message: str | None = None) -> None:
        super().__init__(message or f"REP_STORE={value!r}: {why}")
        self.value, self.why = value, why


@dataclass(frozen=True)
class SQLiteSpec:
    path: str  # absolute
    timeout: float


@dataclass(frozen=True)
class RedisSpec:
    target: RedisTarget | None  # the URL without our own query parameters; None: scrapy-redis's settings
    prefix: str
    timeout: float
    keep: float


def validate_store_uri(uri: str) -> None:
    """Raise ``InvalidStoreURI`` (a ``ValueError`` naming ``REP_STORE``) if ``uri`` is not a store this release can
    open. Connects to nothing, so the config can call it at start-up."""
    parse_store_uri(uri)



def redis_server(uri: str, spec: RedisSpec, redis: RedisTarget | None) -> RedisTarget:
    """The server of a Redis store: the URI's own, else (the bare ``redis``) ``redis``, scrapy-redis's server
    (``redis_target.target_from_settings``), which the caller must then pass."""
    target = spec.target or redis
    if target is None:
        raise InvalidStoreURI(uri, _NO_TARGET)
    return target


def parse_store_uri(uri: str) -> SQLiteSpec | RedisSpec | None:
    """The store ``uri`` describes (``None`` for memory), or ``InvalidStoreURI``."""
    if not isinstance(uri, str):
        why = f"must be a string; {_EXPECTED}"
        raise InvalidStoreURI(uri, why, f"REP_STORE must be a string, got {uri!r}; {_EXPECTED}")
    if uri == "memory":
        return None
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 - raises ValueError for a malformed port
    except ValueError as exc:
        raise _invalid(uri, str(exc)) from None
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    if is_settings_form(parts.scheme, parts.netloc, parts.path):
        return _parse_redis(uri, "", "", "", query)
    if parts.scheme == "sqlite":
        return _parse_sqlite(uri, parts.netloc, parts.path, query)
    if parts.scheme in ("redis", "rediss"):
        return _parse_redis(uri, parts.scheme, parts.netloc, parts.path, query)
    raise _invalid(uri, f"unknown store {parts.scheme or uri!r}")


def _parse_sqlite(uri: str, netloc: str, path: str, query: dict[str, str]) -> SQLiteSpec:
    """The file after ``sqlite://`` and one more slash: ``sqlite:///x.db`` is ``x.db`` in the working directory,
    ``sqlite:////var/x.db`` the absolute ``/var/x.db``; absolute once read, so a later ``chdir`` moves nothing."""
    if netloc:  # sqlite://robots.db: the file name stands where a host would
        spellings = "for a file relative to the working directory, or 'sqlite:////absolute/path.db'"
        if "@" in netloc or ":" in netloc:  # never echo what may be a password
            raise _invalid(uri, f"a sqlite store takes no host, user or password: write 'sqlite:///relative.db' "
                                f"{spellings}")
        raise _invalid(uri, f"{netloc!r} is read as a host, not a file: write {f'sqlite:///{netloc}{path}'!r} "
                            f"{spellings}")
    file = unquote(path[1:])
    if not file or file.endswith("/"):
        raise _invalid(uri, "a sqlite store needs a file path after 'sqlite:///'")
    _reject_unknown(uri, query, {"timeout"})
    return SQLiteSpec(path=os.path.abspath(file), timeout=_positive(uri, query, "timeout", _DEFAULT_SQLITE_TIMEOUT))


def _parse_redis(uri: str, scheme: str, netloc: str, path: str, query: dict[str, str]) -> RedisSpec:
    """A ``redis://`` URI, or the bare ``redis`` form when ``scheme`` is empty."""
    if importlib.util.find_spec("redis") is None:
        raise _invalid(uri, "a redis store needs the redis package: pip install 'scrapy-rep[redis]'")
    db = path.lstrip("/")
    if "/" in db or (db and not db.isdigit()):
        raise _invalid(uri, f"the Redis database must be a number, got {db!r}")
    _reject_unknown(uri, query, {"prefix", "timeout", "keep_days"})
    return RedisSpec(
        target=RedisTarget(urlunsplit((scheme, netloc, path, "", ""))) if scheme else None,
        prefix=query.get("prefix", _DEFAULT_PREFIX),
        timeout=_positive(uri, query, "timeout", _DEFAULT_REDIS_TIMEOUT),
        keep=_positive(uri, query, "keep_days", _DEFAULT_KEEP_DAYS) * 86400,
    )


def _reject_unknown(uri: str, query: dict[str, str], known: set[str]) -> None:
    unknown = sorted(set(query) - known)
    if unknown:
        raise _invalid(uri, f"unknown option(s) {urlencode({k: query[k] for k in unknown})!r}")


def _positive(uri: str, query: dict[str, str], name: str, default: float) -> float:
    raw = query.get(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise _invalid(uri, f"{name} must be a positive number of {'days' if name == 'keep_days' else 'seconds'}")
    return value


def _invalid(uri: str, reason: str) -> InvalidStoreURI:
    return InvalidStoreURI(redact(uri), f"{reason}; {_EXPECTED}")
