"""The example project's item pipeline: the evidence of what robots.txt said when each page was fetched, flattened
into each item (docs/evidence.md).

The spiders copy the request's ``meta["rep_basis"]`` into every item they yield (``rep_basis``); this pipeline adds
the three fields a reviewer looks at first, so that a CSV feed carries them too: the robots.txt version (its body's
SHA-256), when that copy was fetched, and the rule (or its absence) that decided.
"""

from __future__ import annotations

from typing import Any


class EvidencePipeline:
    def process_item(self, item: dict[str, Any], spider: Any = None) -> dict[str, Any]:
        basis = item.get("rep_basis") or {}  # None: a request scrapy-rep did not check (dont_obey_robotstxt...)
        robots_txt = basis.get("robots_txt") or {}
        item["robots_txt_version"] = robots_txt.get("version")
        item["robots_txt_fetched_at"] = robots_txt.get("fetched_at")
        item["decided_by"] = basis.get("reason")
        return item
