"""The crawl's settings, read and validated once at start-up (SPEC 6.3-6.4, 8.3-8.4; docs/settings.md).

The room holds ``settings`` (every ``REP_*`` setting into one frozen ``Config``; ``ConfigError`` names a bad
setting and its value), ``tokens`` (the product tokens robots.txt is obeyed as), ``store_uri`` (what
``REP_STORE`` names, checked without connecting) and ``redis_target`` (scrapy-redis's server, password hidden).
It knows nothing of runtime state: it imports only ``matcher`` (token and use-name syntax), Scrapy and the stdlib.
"""

from .settings import DAY, SETTINGS, Clock, Config, ConfigError, RobotsRequestHook, unknown_settings

#: Tracebacks name the error by its documented path (docs/settings.md), not the module that defines it.
ConfigError.__module__ = __name__

__all__ = ["DAY", "SETTINGS", "Clock", "Config", "ConfigError", "RobotsRequestHook", "unknown_settings"]
