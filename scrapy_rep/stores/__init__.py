"""Where robots.txt outcomes are cached (SPEC 3): the entry format, the store interface and the stores.

``REP_STORE`` names the store (SPEC 3.2; docs/stores.md), read by ``config.store_uri``: ``memory`` (default: this
process only, LRU), ``sqlite:///path/file.db`` (the processes of a machine), ``redis://host:port/db`` or the bare
``redis`` (scrapy-redis's server; many machines). Imports nothing of the project but ``config`` (the URI's
reading, ``ConfigError``) and ``_scrapy``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from scrapy_rep.config.evidence import HISTORY_VERSIONS
from scrapy_rep.config.redis_target import RedisTarget, redact
from scrapy_rep.config.store_uri import (
    DEFAULT_MAX_ORIGINS,
    InvalidStoreURI,
    RedisSpec,
    SQLiteSpec,
    parse_store_uri,
    redis_server,
    validate_store_uri,
)
from scrapy_rep.stores._base import (
    FORMAT_VERSION,
    CorruptEntry,
    Entry,
    HistoryVersion,
    Outcome,
    Store,
    StoredEntry,
    StoreError,
    Version,
    iso,
)
from scrapy_rep.stores.memory import MemoryStore
from scrapy_rep.stores.sqlite import SQLiteStore

__all__ = [
    "DEFAULT_MAX_ORIGINS",
    "FORMAT_VERSION",
    "CorruptEntry",
    "Entry",
    "HistoryVersion",
    "InvalidStoreURI",
    "MemoryStore",
    "Outcome",
    "RedisTarget",
    "SQLiteStore",
    "Store",
    "StoreError",
    "StoredEntry",
    "Version",
    "iso",
    "open_store",
    "redact",
    "validate_store_uri",
]


def open_store(
    uri: str,
    *,
    max_origins: int = DEFAULT_MAX_ORIGINS,
    clock: Callable[[], float] = time.time,
    redis: RedisTarget | None = None,
    history_versions: int = HISTORY_VERSIONS,
) -> Store:
    """The store ``uri`` names. Nothing is connected yet: connection failures surface as ``StoreError`` from
    the store's methods (``startup.open_crawler_store`` checks the server at start-up). ``max_origins`` bounds
    the memory store; ``clock`` (epoch seconds) dates SQLite leases and Redis key lifetimes; ``redis`` is the
    server of the bare ``redis`` form (``redis_target.target_from_settings``), required by it, unused otherwise;
    ``history_versions`` bounds a SQLite or Redis store's history per origin (``REP_HISTORY_VERSIONS``; 0: none).
    A Redis store under a non-asyncio Twisted reactor is a ``ConfigError`` naming ``TWISTED_REACTOR``."""
    spec = parse_store_uri(uri)
    if isinstance(spec, SQLiteSpec):
        return SQLiteStore(spec.path, clock=clock, timeout=spec.timeout, history_versions=history_versions)
    if isinstance(spec, RedisSpec):
        from scrapy_rep.stores.redis_store import RedisStore  # the optional ``redis`` extra

        target = redis_server(uri, spec, redis)
        return RedisStore(target, prefix=spec.prefix, timeout=spec.timeout, keep=spec.keep, clock=clock,
                          history_versions=history_versions)
    return MemoryStore(max_origins)
