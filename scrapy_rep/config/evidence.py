"""The evidence settings (docs/evidence.md): what the crawl keeps to prove later what robots.txt said.

``REP_HISTORY_VERSIONS``: the robots.txt versions a SQLite or Redis store keeps per origin (0: no history);
``REP_WARC`` / ``REP_WARC_MAX_BYTES``: the opt-in WARC archive of every robots.txt copy the crawl used (the optional
``warcio`` library: ``pip install "scrapy-rep[warc]"``); ``REP_DECISION_LOG`` / ``REP_DECISION_LOG_MAX_BYTES``: the
opt-in JSON-lines log of every checked request's decision.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from scrapy.settings import BaseSettings

from .errors import ConfigError
from .reader import Reader

HISTORY_VERSIONS = 100
WARC_MAX_BYTES = 1_000_000_000  # Common Crawl's (and most archives') 1 GB files
DECISION_LOG_MAX_BYTES = 100_000_000
#: The smallest file size accepted: a file must hold at least a few records before it rotates.
MIN_FILE_BYTES = 64 * 1024


def evidence_fields(settings: BaseSettings) -> dict[str, Any]:
    """The Config fields of the evidence settings; a bad value is a ``ConfigError`` naming the setting."""
    read = Reader(settings)
    warc = _path(settings, "REP_WARC")
    if warc is not None and importlib.util.find_spec("warcio") is None:
        raise ConfigError("REP_WARC", warc, "the WARC archive needs the warcio library, which is not installed: "
                          "pip install 'scrapy-rep[warc]' (or unset REP_WARC)")
    return {
        "history_versions": read.integer("REP_HISTORY_VERSIONS", HISTORY_VERSIONS, minimum=0),
        "warc": warc,
        "warc_max_bytes": read.integer("REP_WARC_MAX_BYTES", WARC_MAX_BYTES, minimum=MIN_FILE_BYTES),
        "decision_log": _path(settings, "REP_DECISION_LOG"),
        "decision_log_max_bytes": read.integer("REP_DECISION_LOG_MAX_BYTES", DECISION_LOG_MAX_BYTES,
                                               minimum=MIN_FILE_BYTES),
    }


def _path(settings: BaseSettings, name: str) -> str | None:
    """A file or directory path, or None (unset or empty: off)."""
    value = settings.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str) and not hasattr(value, "__fspath__"):
        raise ConfigError(name, value, "expected a file or directory path (a string), or None to turn it off")
    return str(value)
