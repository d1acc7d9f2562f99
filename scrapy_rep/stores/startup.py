"""Opening a crawler's store at start-up, checked (SPEC 3.2, 8.4).

A SQLite store's file must open: its directory must exist and the file must be (or become) a store of this layout,
else ``ConfigError`` naming ``REP_STORE`` and the resolved path (issue 25). A Redis store must be usable before the
first request: Scrapy's asyncio reactor (else ``ConfigError`` naming ``TWISTED_REACTOR``, from
``redis_store.require_asyncio_reactor``) and a server that answers one PING (else ``ConfigError`` naming
``REP_STORE``, the REDIS_* setting the server came from, and the server without its password). Later outages are not
start-up errors: they are ``StoreError``s, logged and counted (refresh.py).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from scrapy_rep.config import Clock, Config, ConfigError
from scrapy_rep.stores import SQLiteStore, Store, StoreError, open_store, redact

if TYPE_CHECKING:
    from scrapy_rep.stores.redis_store import RedisStore


def open_crawler_store(config: Config, clock: Clock) -> Store:
    """The store ``config.store`` names (with ``config.redis``, scrapy-redis's server, for the bare ``redis``),
    its lease and key times on ``clock``, its history bounded by ``config.history_versions``; a Redis store is checked
    with one PING, bounded by its timeout."""
    store = open_store(config.store, max_origins=config.memory_max_origins, clock=clock.seconds, redis=config.redis,
                       history_versions=config.history_versions)
    if isinstance(store, SQLiteStore):
        try:
            store.check()
        except StoreError as exc:
            raise ConfigError("REP_STORE", config.store, f"{exc}; a relative path (sqlite:///robots.db) is relative "
                              "to the working directory, an absolute one has four slashes (sqlite:////abs/robots.db)"
                              ) from None
    redis_store = _as_redis(store)
    if redis_store is not None:
        try:
            redis_store.ping()
        except StoreError as exc:
            source = "" if redis_store.target.source == "REP_STORE" else f" (server from {redis_store.target.source})"
            raise ConfigError("REP_STORE", redact(config.store), f"no answer to PING at start-up{source}: {exc}; "
                              "start the server or correct the setting") from None
    return store


def _as_redis(store: Store) -> RedisStore | None:
    """``store`` if it is a Redis store. Its module is loaded only when ``open_store`` made one: redis-py (an
    optional extra, and some 10 MB once imported) is not imported for the other stores."""
    module = sys.modules.get("scrapy_rep.stores.redis_store")
    return store if module is not None and isinstance(store, module.RedisStore) else None
