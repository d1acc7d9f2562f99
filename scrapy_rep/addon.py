"""``scrapy_rep.Addon``: ``ADDONS = {"scrapy_rep.Addon": 0}`` swaps Scrapy's robots.txt middleware for ours."""

from __future__ import annotations

from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.settings import BaseSettings
from scrapy.utils.misc import load_object

from .body import BODY_MIDDLEWARE_ORDER, RobotsBodyMiddleware
from .middleware import RobotsMiddleware

#: The built-in's position (DOWNLOADER_MIDDLEWARES_BASE), which RobotsMiddleware takes.
ROBOTS_MIDDLEWARE_ORDER = 100


class Addon:
    """Disables ``RobotsTxtMiddleware`` and enables ``RobotsMiddleware`` at its place (100) plus its body
    companion (595). Obedience itself stays governed by ``ROBOTSTXT_OBEY`` (SPEC 8.3); positions the user already
    gave our middlewares are kept."""

    def update_settings(self, settings: BaseSettings) -> None:
        name = "DOWNLOADER_MIDDLEWARES"
        settings.set_in_component_priority_dict(name, RobotsTxtMiddleware, None)
        enabled = {load_object(path) for path in settings.getdict(name)}
        for component, order in ((RobotsMiddleware, ROBOTS_MIDDLEWARE_ORDER),
                                 (RobotsBodyMiddleware, BODY_MIDDLEWARE_ORDER)):
            if component not in enabled:
                settings.set_in_component_priority_dict(name, component, order)
