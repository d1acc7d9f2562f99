"""What the crawl keeps to prove later what robots.txt said (docs/evidence.md), off the request's path: the decision
log (REP_DECISION_LOG, decision_log.py), the WARC archive (REP_WARC, warc_archive.py, written from the
``robots_version_adopted`` signal, adopted.py) and the line saying when a refresh changed the rules that apply to the
crawl (rule_changes.py). Each is made only when its setting asks for it: off, it costs nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..stores import Outcome
from .adopted import is_new_version, say_adopted
from .rule_changes import say_rule_changes

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from ..config import Config
    from ..matcher import AgentRules
    from ..robots.policy import FetchResult
    from ..stores import Entry
    from .decision_log import DecisionLog
    from .warc_archive import WarcArchive


class Evidence:
    def __init__(self, crawler: Crawler, config: Config, stats: StatsCollector) -> None:
        self.crawler = crawler
        self.config = config
        self.stats = stats
        self.log: DecisionLog | None = None
        self.warc: WarcArchive | None = None  # kept: the signal holds only a weak reference to its handler
        if config.decision_log:
            from .decision_log import DecisionLog

            self.log = DecisionLog.from_crawler(crawler, config)
        if config.warc:
            from .warc_archive import WarcArchive  # the optional warcio library: imported only when asked for

            self.warc = WarcArchive.from_crawler(crawler, config)

    async def adopted(self, robots_url: str, previous: Entry | None, entry: Entry, old: AgentRules | None,
                      new: AgentRules | None, source: Any, fetched: FetchResult | None) -> None:
        """``entry`` is being adopted in place of ``previous``: say when the rules that apply changed, and send
        ``robots_version_adopted`` for a new version. ``source``: ``robots.refresh.Source`` (None: an internal
        error's entry, not adopted from anywhere)."""
        if (previous is not None and previous.outcome is Outcome.RULES and entry.outcome is Outcome.RULES
                and not previous.same_body(entry)):
            say_rule_changes(entry.origin, previous, entry, old, new, self.config.user_agents, self.stats,
                             self.crawler.spider)
        if source is not None and is_new_version(previous, entry):
            response = None if fetched is None else fetched.response
            await say_adopted(self.crawler, entry, robots_url, source.name.lower(), response)  # e.g. other_crawler
