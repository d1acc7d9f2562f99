"""Which store ``scrapy-rep cache`` inspects, opened as the middleware opens it, and how messages name it."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias
from urllib.parse import urlsplit, urlunsplit

from scrapy_rep.stores import InvalidStoreURI, SQLiteStore, open_store

from ._common import UsageError

if TYPE_CHECKING:
    from scrapy_rep.stores.redis_store import RedisStore

    Browsable: TypeAlias = SQLiteStore | RedisStore
else:
    Browsable: TypeAlias = object

_NO_STORE = "no --store given and no Scrapy project here (no scrapy.cfg): pass --store URL"


def redact(uri: str) -> str:
    """``uri`` with any password replaced by ``***`` (``redis://:***@host:6379/0``)."""
    try:
        parts = urlsplit(uri)
        password = parts.password
    except ValueError:
        return uri
    if not password:
        return uri
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user = userinfo.partition(":")[0]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{hostport}"))


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
        store = open_store(uri)
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
