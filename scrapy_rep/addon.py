"""``scrapy_rep.Addon``: ``ADDONS = {"scrapy_rep.Addon": 0}`` swaps Scrapy's robots.txt middleware for ours."""

from __future__ import annotations

import logging
from typing import Any

from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.settings import BaseSettings
from scrapy.utils.misc import load_object

from .middleware import RobotsMiddleware, RobotsStartMiddleware
from .requests.page_directives import SPIDER_ORDER, START_ORDER, RobotsTagsMiddleware
from .requests.response_usage import USAGE_ORDER, UsageMiddleware
from .robots.body import BODY_MIDDLEWARE_ORDER, RobotsBodyMiddleware

logger = logging.getLogger(__name__)

#: The built-in's position (DOWNLOADER_MIDDLEWARES_BASE), which RobotsMiddleware takes.
ROBOTS_MIDDLEWARE_ORDER = 100
#: The key DOWNLOADER_MIDDLEWARES_BASE gives the built-in.
BUILTIN_PATH = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"


class Addon:
    """Disables ``RobotsTxtMiddleware`` and enables ``RobotsMiddleware`` at its place (100) plus its body
    companion (595), and in SPIDER_MIDDLEWARES the one that obeys page-level directives (``RobotsTagsMiddleware``,
    45), the one that reads each response's opt-outs (``UsageMiddleware``, 46) and the one that paces start requests
    while robots.txt fetches fill the downloader (``RobotsStartMiddleware``, 10). Obedience itself stays governed by
    ``ROBOTSTXT_OBEY`` (SPEC 8.3); positions the user already gave our middlewares are kept. Each change to what the
    user wrote in either setting is logged at INFO (logger ``scrapy_rep.addon``), and so is each position kept."""

    def update_settings(self, settings: BaseSettings) -> None:
        name = "DOWNLOADER_MIDDLEWARES"
        middlewares = settings.getdict(name)
        # Disabled under the import path DOWNLOADER_MIDDLEWARES_BASE uses: Scrapy < 2.15 merges the two dicts by key
        # as written, so a class key would leave the base's path key enabled.
        for key in [key for key in middlewares if _loaded(key) is RobotsTxtMiddleware]:
            order = middlewares.pop(key)
            if order is not None:
                logger.info("scrapy-rep's add-on disabled RobotsTxtMiddleware (%s had it at %s)", name, order)
        middlewares[BUILTIN_PATH] = None
        for component, order in ((RobotsMiddleware, ROBOTS_MIDDLEWARE_ORDER),
                                 (RobotsBodyMiddleware, BODY_MIDDLEWARE_ORDER)):
            _place(name, middlewares, component, order, "ROBOTSTXT_OBEY = False to stop obeying robots.txt")
        settings.set(name, middlewares, settings.getpriority(name) or 0)
        name = "SPIDER_MIDDLEWARES"
        middlewares = settings.getdict(name)
        _place(name, middlewares, RobotsTagsMiddleware, SPIDER_ORDER,
               "REP_ROBOTS_TAGS = False to stop reading page-level directives")
        _place(name, middlewares, UsageMiddleware, USAGE_ORDER, "ROBOTSTXT_OBEY = False to stop reading opt-outs")
        _place(name, middlewares, RobotsStartMiddleware, START_ORDER,
               "ROBOTSTXT_OBEY = False to stop obeying robots.txt")
        settings.set(name, middlewares, settings.getpriority(name) or 0)


def _place(name: str, middlewares: dict[Any, Any], component: type, order: int, off: str) -> None:
    """Enable ``component`` at ``order`` in the ``name`` setting's ``middlewares`` unless the user enabled it
    elsewhere (kept, and said so). A user's None is replaced, and said so: the add-on's purpose is to enable it; the
    setting ``off`` names turns it off."""
    keys = [key for key in middlewares if _loaded(key) is component]
    kept = [middlewares[key] for key in keys if middlewares[key] is not None]
    if kept:
        logger.info("scrapy-rep's add-on kept %s at %s, the position %s gives it (its default is %s)",
                    component.__name__, kept[0], name, order)
        return
    if keys:
        logger.info("scrapy-rep's add-on enabled %s at %s (%s had it disabled with None; set %s)",
                    component.__name__, order, name, off)
    for key in keys:
        del middlewares[key]  # a None under another key form would make Scrapy's merge ambiguous
    middlewares[component] = order


def _loaded(key: object) -> object:
    return load_object(key) if isinstance(key, str) else key
