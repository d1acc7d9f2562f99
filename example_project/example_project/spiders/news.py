"""``news``: crawls as ``examplebot-news`` (falling back to ``examplebot``), and obeys ``crawl-delay``."""

from __future__ import annotations

from typing import Any, ClassVar

from example_project.spiders.pages import PageSpider


class NewsSpider(PageSpider):
    """An ordered list of tokens (SPEC 6.3): the first with its own group wins; ``crawl-delay`` is opt-in (SPEC 6.5)."""

    name = "news"
    custom_settings: ClassVar[dict[str, Any]] = {
        "USER_AGENT": "examplebot-news/1.0 (+https://example.com/bot)",
        "REP_USER_AGENT": ["examplebot-news", "examplebot"],
        "REP_OBEY_CRAWL_DELAY": True,
    }
