"""``catalog``: crawls as ``examplebot``, with the project's defaults."""

from __future__ import annotations

from typing import Any, ClassVar

from example_project.spiders.pages import PageSpider


class CatalogSpider(PageSpider):
    """Obeys the robots.txt groups written for ``examplebot`` (or ``*`` where there is none, SPEC 6.2)."""

    name = "catalog"
    custom_settings: ClassVar[dict[str, Any]] = {
        "REP_USER_AGENT": "examplebot",
    }
