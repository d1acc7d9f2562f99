"""``scrapy_rep.Addon``: ``ADDONS = {"scrapy_rep.Addon": 0}`` swaps Scrapy's robots.txt middleware for ours."""

from __future__ import annotations

from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.settings import BaseSettings
from scrapy.utils.misc import load_object

from .body import BODY_MIDDLEWARE_ORDER, RobotsBodyMiddleware
from .middleware import RobotsMiddleware

#: The built-in's position (DOWNLOADER_MIDDLEWARES_BASE), which RobotsMiddleware takes.
ROBOTS_MIDDLEWARE_ORDER = 100
#: The key DOWNLOADER_MIDDLEWARES_BASE gives the built-in.
BUILTIN_PATH = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"


class Addon:
    """Disables ``RobotsTxtMiddleware`` and enables ``RobotsMiddleware`` at its place (100) plus its body
    companion (595). Obedience itself stays governed by ``ROBOTSTXT_OBEY`` (SPEC 8.3); positions the user already
    gave our middlewares are kept."""

    def update_settings(self, settings: BaseSettings) -> None:
        name = "DOWNLOADER_MIDDLEWARES"
        middlewares = settings.getdict(name)
        # Disabled under the import path DOWNLOADER_MIDDLEWARES_BASE uses: Scrapy < 2.15 merges the two dicts by key
        # as written, so a class key would leave the base's path key enabled.
        for key in [key for key in middlewares if _loaded(key) is RobotsTxtMiddleware]:
            del middlewares[key]
        middlewares[BUILTIN_PATH] = None
        enabled = {_loaded(key) for key, order in middlewares.items() if order is not None}
        for component, order in ((RobotsMiddleware, ROBOTS_MIDDLEWARE_ORDER),
                                 (RobotsBodyMiddleware, BODY_MIDDLEWARE_ORDER)):
            if component not in enabled:
                middlewares[component] = order
        settings.set(name, middlewares, settings.getpriority(name) or 0)


def _loaded(key: object) -> object:
    return load_object(key) if isinstance(key, str) else key
