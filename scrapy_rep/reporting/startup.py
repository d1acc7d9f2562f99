"""What the crawl is told once when it starts (SPEC 6.4, 8.4): which product tokens robots.txt is obeyed as (a
WARNING when none: only the ``*`` groups apply), a memory store under a fleet's shared queue, and every ``REP_*``
name scrapy-rep does not know (with the nearest known one)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from .. import _scrapy
from ..config import unknown_settings
from ..config.tokens import Tokens

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

    from ..config import Config


def say_at_start(config: Config, settings: BaseSettings) -> None:
    tokens = Tokens(config.user_agents, config.user_agent_source)
    _scrapy.logger.log(logging.INFO if tokens.tokens else logging.WARNING, "scrapy-rep: %s", tokens.summary())
    if config.store == "memory" and _scrapy.is_shared_scheduler(settings.get("SCHEDULER")):
        _scrapy.logger.warning(
            "scrapy-rep: SCHEDULER is scrapy-redis's (a fleet's shared queue) but REP_STORE is 'memory': every worker "
            "downloads each robots.txt itself; REP_STORE = 'redis' shares one copy and one fetch per origin across "
            "the fleet (README, Running a fleet)")
    for name, known in unknown_settings(settings):
        hint = f" (did you mean {known}?)" if known else ""
        _scrapy.logger.warning("scrapy-rep: unknown setting %s%s: ignored", name, hint)
