"""``RobotsBodyMiddleware``, the companion that decodes robots.txt bodies within the size cap, and the start-up check
that the two middlewares are enabled and placed so they work together (SPEC 4.4, 8.4)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy import Request
from scrapy.downloadermiddlewares.httpcompression import HttpCompressionMiddleware
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.exceptions import NotConfigured
from scrapy.http import Response

from .._scrapy import enabled_downloader_middlewares
from ..config import ConfigError
from .decoding import bounded_decode
from .fetch import ROBOTS_META_KEY

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from scrapy.statscollectors import StatsCollector
    from typing_extensions import Self

#: The documented logger of every middleware line (docs/stats.md).
logger = logging.getLogger("scrapy_rep.middleware")

#: The order the add-on gives the companion: its process_response must run before HttpCompressionMiddleware's.
BODY_MIDDLEWARE_ORDER = 595


class RobotsBodyMiddleware:
    """Decompresses robots.txt responses within the size cap before HttpCompressionMiddleware sees them (SPEC 4.4).

    Only responses to the robots requests of ``RobotsMiddleware`` are touched; their Content-Encoding is removed so
    the compression middleware leaves them alone. A coding that cannot be decoded here (unknown, or ``br``/``zstd``
    without their library) gives an empty body, counted under ``rep/robots/undecodable/<coding>``.
    """

    def __init__(self, stats: StatsCollector) -> None:
        self.stats = stats
        self._warned: set[str] = set()  # codings already reported as undecodable

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        if not crawler.settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured("ROBOTSTXT_OBEY is False")
        assert crawler.stats is not None
        return cls(crawler.stats)

    def process_response(self, request: Request, response: Response, spider: Spider | None = None) -> Response:
        max_size = request.meta.get(ROBOTS_META_KEY)
        if max_size is None:
            return response
        encodings = [
            part.strip().lower()
            for value in response.headers.getlist(b"Content-Encoding")
            for part in value.decode("latin-1").split(",")
            if part.strip()
        ]
        if not encodings and len(response.body) <= max_size:
            return response
        headers = response.headers.copy()
        headers.pop(b"Content-Encoding", None)
        body, undecodable = bounded_decode(response.body, encodings, max_size)
        if undecodable is not None:
            self.stats.inc_value("rep/robots/undecodable")
            self.stats.inc_value(f"rep/robots/undecodable/{undecodable}")
            if undecodable not in self._warned:
                self._warned.add(undecodable)
                logger.warning("robots.txt in content coding %r, which this install cannot decode (br needs brotli "
                               ">= 1.2, zstd backports.zstd or zstandard): read as an empty file (%s)", undecodable,
                               request.url)
        return response.replace(body=body, headers=headers)


def check_middlewares(settings: BaseSettings) -> None:
    """Fail at start-up when the middlewares would not work together (SPEC 8.4): the built-in robots middleware
    enabled beside this one (every robots.txt fetched twice), or the body companion missing or misplaced."""
    enabled = enabled_downloader_middlewares(settings)
    name, value = "DOWNLOADER_MIDDLEWARES", settings.getdict("DOWNLOADER_MIDDLEWARES")
    if RobotsTxtMiddleware in enabled:
        raise ConfigError(
            name, value,
            "Scrapy's built-in robots.txt middleware is enabled beside scrapy_rep.RobotsMiddleware (every robots.txt "
            "would be fetched twice); remove it: map 'scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware' "
            "(the import path DOWNLOADER_MIDDLEWARES_BASE uses: before Scrapy 2.15 a class key does not disable it) "
            "to None, or use ADDONS = {'scrapy_rep.Addon': 0}",
        )
    if RobotsBodyMiddleware not in enabled:
        raise ConfigError(
            name, value,
            f"scrapy_rep.RobotsBodyMiddleware must be enabled (order {BODY_MIDDLEWARE_ORDER}) with "
            "scrapy_rep.RobotsMiddleware; use ADDONS = {'scrapy_rep.Addon': 0} to enable both",
        )
    if HttpCompressionMiddleware in enabled and enabled.index(RobotsBodyMiddleware) < enabled.index(
        HttpCompressionMiddleware
    ):
        raise ConfigError(
            name, value,
            f"scrapy_rep.RobotsBodyMiddleware must be ordered after HttpCompressionMiddleware (590), e.g. at "
            f"{BODY_MIDDLEWARE_ORDER}",
        )
