"""Which store ``scrapy-rep cache`` inspects, opened as the middleware opens it, and how messages name it; how a
subcommand runs on it (``with_store``) and reads the origin it is given (``origin_key``)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias
from urllib.parse import urlsplit

from scrapy_rep.config.redis_target import InvalidRedisSetting, is_settings_form, target_from_settings
from scrapy_rep.robots.origin import origin_of
from scrapy_rep.stores import InvalidStoreURI, RedisTarget, SQLiteStore, StoreError, open_store, redact

from ._common import UsageError

if TYPE_CHECKING:
    from scrapy_rep.stores.redis_store import RedisStore

    Browsable: TypeAlias = SQLiteStore | RedisStore
else:
    Browsable: TypeAlias = object

_NO_STORE = "no --store given and no Scrapy project here (no scrapy.cfg): pass --store URL"


def project_store() -> str:
    """``REP_STORE`` of the Scrapy project around the working directory, or a usage error."""
    from scrapy.utils.conf import closest_scrapy_cfg

    if not closest_scrapy_cfg():
        raise UsageError(_NO_STORE)
    from scrapy.utils.project import get_project_settings

    uri = get_project_settings().get("REP_STORE", "memory")
    if uri == "memory":
        raise UsageError("the Scrapy project here uses REP_STORE = 'memory' (the default): nothing persists; "
                         "pass --store URL")
    return str(uri)


def open_browsable(uri: str) -> Browsable:
    """The SQLite or Redis store ``uri`` names, opened by ``open_store``; a usage error for a bad URI, the memory
    store, or a SQLite file that does not exist (it is not created)."""
    try:
        store = open_store(uri, redis=_redis_target(uri))
    except InvalidStoreURI as exc:
        raise UsageError(f"--store {redact(uri)}: {exc.why}") from None
    except ValueError as exc:  # e.g. redis:// under a non-asyncio reactor
        raise UsageError(str(exc).replace(uri, redact(uri))) from None
    if isinstance(store, SQLiteStore):
        if not Path(store.path).is_file():
            raise UsageError(f"cannot open store {redact(uri)}: no such file {store.path}")
        return store
    if importlib.util.find_spec("redis") is not None:
        from scrapy_rep.stores.redis_store import RedisStore

        if isinstance(store, RedisStore):
            return store
    raise UsageError("the memory store keeps nothing between runs (nothing persists): pass a sqlite:// or "
                     "redis:// --store")


def with_store(args: argparse.Namespace, work: Callable[[Browsable], Awaitable[int]]) -> int:
    """Open the store (``--store``, else the project's), run ``work`` on it in an asyncio loop, close it; a store
    failure is a usage error naming the store (password hidden)."""
    uri: str = args.store or project_store()

    async def session() -> int:
        store = open_browsable(uri)
        try:
            return await work(store)
        finally:
            with contextlib.suppress(StoreError):  # the error that matters was raised already
                await store.close()

    try:
        return asyncio.run(session())
    except StoreError as exc:
        raise UsageError(f"cannot use store {redact(uri)}: {exc}") from None


def origin_key(value: str) -> str:
    """The origin of ``value`` (an origin or any URL on it) as the store keys it; a usage error if it has none."""
    try:
        return str(origin_of(value))
    except ValueError:
        raise UsageError(f"not an origin or URL: {value!r} (write it as https://example.com)") from None


def _redis_target(uri: str) -> RedisTarget | None:
    """For the bare ``redis`` (scrapy-redis's server): REDIS_URL / REDIS_HOST... of the Scrapy project here, as a
    crawl of it reads them; without a project, scrapy-redis's default, localhost:6379."""
    parts = urlsplit(uri)
    if not is_settings_form(parts.scheme, parts.netloc, parts.path):
        return None
    from scrapy.settings import Settings
    from scrapy.utils.conf import closest_scrapy_cfg
    from scrapy.utils.project import get_project_settings

    try:
        return target_from_settings(get_project_settings() if closest_scrapy_cfg() else Settings())
    except InvalidRedisSetting as exc:
        raise UsageError(f"--store {uri}: {exc}") from None
