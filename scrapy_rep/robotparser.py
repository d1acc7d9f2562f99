"""``scrapy_rep.RobotParser``: the matcher behind Scrapy's ``RobotParser`` interface.

With ``ROBOTSTXT_PARSER = "scrapy_rep.RobotParser"`` Scrapy's built-in RobotsTxtMiddleware decides with Google's
matching (SPEC 4-7) but keeps its own fetch semantics. ``RobotsMiddleware`` sends instances of it with Scrapy's
``robots_parsed`` signal, so handlers get ``allowed``, ``crawl_delay`` and ``sitemaps``.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from scrapy.robotstxt import RobotParser as ScrapyRobotParser

from .matcher import Robots, extract_user_agent, parse

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from typing_extensions import Self


class RobotParser(ScrapyRobotParser):
    """A parsed robots.txt answering for any user agent; a full User-Agent string counts by its product token
    (SPEC 6.4)."""

    def __init__(self, robots: Robots) -> None:
        self.robots = robots

    @classmethod
    def from_crawler(cls, crawler: Crawler, robotstxt_body: bytes) -> Self:
        return cls(parse(robotstxt_body))

    def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
        return self.robots.allowed(_text(url), _token(user_agent))

    def crawl_delay(self, user_agent: str | bytes) -> float | None:
        return self.robots.crawl_delay(_token(user_agent))

    @property
    def sitemaps(self) -> list[str]:
        """SPEC 5.5: the file's sitemap URLs, as written."""
        return list(self.robots.sitemaps)


def _text(value: str | bytes) -> str:
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else value


# Scrapy asks with the same User-Agent (its ROBOTSTXT_USER_AGENT, else the request's header) on every request: the
# token is read from it once, not per decision. Bounded: a cache, not a registry of every agent ever seen.
@functools.lru_cache(maxsize=64)
def _token(user_agent: str | bytes) -> str:
    return extract_user_agent(_text(user_agent).strip())
