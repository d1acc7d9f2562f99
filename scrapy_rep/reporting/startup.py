"""What the crawl is told once when it starts (SPEC 6.4, 8.4), in one block: which product tokens robots.txt is
obeyed as (a WARNING when none: only the ``*`` groups apply), which cache holds the robots.txt outcomes (its kind and
file or server), a WARNING when REP_ENFORCE = False (a forgotten dry run crawls what robots.txt forbids) and one for
a memory store under a fleet's shared queue, and the evidence kept beyond each decision's basis. Once the spider is
open, how many origins a persistent cache already holds. A configuration error (an unknown ``REP_*`` name among
them: ``config.check_known_settings``) is one CRITICAL line, its traceback not repeated by asyncio or Twisted
(issue 25)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from .. import _scrapy
from ..config.tokens import Tokens
from ..config.uses import TDM_USES
from ..robotparser import RobotParser
from ..stores import MemoryStore
from .outcome_log import plural

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

    from ..config import Config, ConfigError
    from ..stores import Store

logger = _scrapy.logger  # the documented logger of every middleware line

#: Where Scrapy's crawl command lets a start-up exception surface as a traceback: asyncio's "Task exception was never
#: retrieved" (AsyncCrawlerProcess, Scrapy 2.14+ with its default asyncio reactor) and Twisted's "Unhandled error in
#: Deferred" (CrawlerProcess) as Scrapy passes it to the standard logging. Not reachable from here: Scrapy 2.13's
#: crawl command, whose failed Deferred Twisted also prints to stderr through its own pre-logging observer.
_TRACEBACK_LOGGERS = ("asyncio", "twisted")


#: Appended to the tokens' line when neither REP_USER_AGENT nor ROBOTSTXT_USER_AGENT is set (requests/agents.py).
PER_REQUEST = ("; a request with a User-Agent header of its own obeys that header's product token (set REP_USER_AGENT "
               "or ROBOTSTXT_USER_AGENT for one identity for the whole crawl)")


#: ROBOTSTXT_PARSER values that name scrapy-rep's own parser (what RobotsMiddleware decides with anyway).
OUR_PARSER = ("scrapy_rep.RobotParser", "scrapy_rep.robotparser.RobotParser", RobotParser)


def say_config_error(error: ConfigError) -> None:
    """Log ``error`` as the one CRITICAL line a user needs, and keep the loggers that would repeat it with ~65 lines
    of Scrapy's and our frames from doing so. Only records carrying this very exception (or one raised while
    handling it) are dropped; the crawl still fails, and ``scrapy crawl`` still exits 1."""
    logger.critical("scrapy-rep: %s; the crawl cannot start", error)
    for name in _TRACEBACK_LOGGERS:
        logging.getLogger(name).addFilter(_WithoutTracebackOf(error))


class _WithoutTracebackOf(logging.Filter):
    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error

    def filter(self, record: logging.LogRecord) -> bool:
        seen = record.exc_info[1] if record.exc_info else None
        while seen is not None:  # Scrapy 2.13 may raise an AttributeError while closing, in the error's context
            if seen is self.error:
                return False
            seen = seen.__context__
        return True


def say_at_start(config: Config, settings: BaseSettings, store: Store) -> None:
    tokens = Tokens(config.user_agents, config.user_agent_source)
    per_request = PER_REQUEST if config.agent_per_request else ""
    logger.log(logging.INFO if tokens.tokens else logging.WARNING, "scrapy-rep: %s%s", tokens.summary(), per_request)
    logger.info("scrapy-rep: robots.txt cache: %s", store.where)
    if not config.enforce:
        logger.warning("scrapy-rep: REP_ENFORCE = False: a dry run: requests robots.txt forbids, holds or drops are "
                       "sent anyway and counted under rep/dry_run/ (the close report says what enforcing would "
                       "have stopped); remove the setting to obey robots.txt")
    say_uses(config)
    say_evidence(config, store)
    parser = settings.get("ROBOTSTXT_PARSER")
    if (settings.getpriority("ROBOTSTXT_PARSER") or 0) > 0 and parser not in OUR_PARSER:
        logger.warning("scrapy-rep: ROBOTSTXT_PARSER = %r is not used: scrapy_rep.RobotsMiddleware decides with "
                       "Google's matching (the setting serves Scrapy's built-in middleware); remove it", parser)
    if config.store == "memory" and _scrapy.is_shared_scheduler(settings.get("SCHEDULER")):
        logger.warning(
            "scrapy-rep: SCHEDULER is scrapy-redis's (a fleet's shared queue) but REP_STORE is 'memory': every worker "
            "downloads each robots.txt itself; REP_STORE = 'redis' shares one copy and one fetch per origin across "
            "the fleet (docs: https://scrapy-rep.readthedocs.io/en/latest/fleet.html)")


def say_uses(config: Config) -> None:
    """The uses the crawl declares and which opt-outs it reads for them (config/uses.py); a WARNING when
    REP_TDMREP = False leaves a declared TDM use without the origins' tdmrep.json."""
    if config.content_uses:
        discovery = "; refused pages are downloaded for their links only (REP_USAGE_DISCOVERY)" \
            if config.usage_discovery else ""
        logger.info("scrapy-rep: content uses declared (REP_CONTENT_USES): %s; opt-outs read: robots.txt, response "
                    "headers, meta tags%s%s", ", ".join(config.content_uses),
                    ", each origin's tdmrep.json" if config.tdmrep else "", discovery)
    elif config.tdmrep:
        logger.info("scrapy-rep: each origin's tdmrep.json is read (REP_TDMREP = True) and reported, not enforced "
                    "(REP_CONTENT_USES is empty)")
    if not config.tdmrep and TDM_USES.intersection(config.content_uses):
        logger.warning("scrapy-rep: REP_TDMREP = False: the origins' /.well-known/tdmrep.json is not read, so a TDM "
                       "reservation stated only there is not obeyed for %s; remove the setting to read it",
                       ", ".join(sorted(TDM_USES.intersection(config.content_uses))))


def say_evidence(config: Config, store: Store) -> None:
    """What the crawl keeps to prove later what robots.txt said (docs/evidence.md), when it keeps more than the
    version and basis it always keeps: the store's history, the decision log, the WARC archive."""
    kept = []
    if config.history_versions and not isinstance(store, MemoryStore):
        kept.append(f"each origin's last {config.history_versions:,} robots.txt versions in the store "
                    "(REP_HISTORY_VERSIONS)")
    if config.decision_log:
        kept.append(f"a decision log in {config.decision_log} (REP_DECISION_LOG)")
    if config.warc:
        kept.append(f"a WARC archive of every robots.txt copy in {config.warc} (REP_WARC)")
    if kept:
        logger.info("scrapy-rep: evidence kept: %s", "; ".join(kept))


async def say_cache_size(store: Store, spider: Any) -> None:
    """How many origins a persistent cache (SQLite, Redis) holds as the crawl starts: reused, not downloaded again
    while fresh. Never raises: a store that cannot answer is said so, and the crawl goes on (SPEC 3.2)."""
    if isinstance(store, MemoryStore):
        return  # a new memory store is empty
    try:
        count = await store.count()
    except Exception as exc:
        logger.info("scrapy-rep: robots.txt cache %s: could not count its origins (%s: %s)", store.where,
                    type(exc).__name__, exc, extra={"spider": spider})
        return
    logger.info("scrapy-rep: robots.txt cache %s holds %s already", store.where, plural(count, "origin"),
                extra={"spider": spider})
