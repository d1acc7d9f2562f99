"""What the demo prints: per origin, what robots.txt answered and what happened to each page, measured at the site.

A page counts as crawled when the demo site served it in that crawl (not when a spider believes it asked for it);
forbidden and dropped requests are the spider's errback items (IgnoreRequest with the middleware's reason).
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import pairwise
from urllib.parse import urlsplit

from scrapy_rep.demo.crawl import DEMO_SETTINGS, CrawlResult
from scrapy_rep.demo.project.spiders import NewsSpider
from scrapy_rep.demo.site import CRAWL, FORBIDDEN, TOKEN, DemoSite, Hit, OriginSpec

WIDTH = 118
_FORBIDDEN_PREFIX = "Forbidden by robots.txt"


@dataclass(slots=True)
class OriginRun:
    """One origin in one crawl: robots.txt answers, pages served, requests stopped, and pages that went wrong."""

    spec: OriginSpec
    url: str
    robots: list[int] = field(default_factory=list)
    crawled: list[str] = field(default_factory=list)
    forbidden: list[tuple[str, str]] = field(default_factory=list)
    dropped: list[tuple[str, str]] = field(default_factory=list)
    let_through: list[tuple[str, str]] = field(default_factory=list)
    blocked: list[tuple[str, str]] = field(default_factory=list)
    sitemaps: list[str] = field(default_factory=list)

    @property
    def held(self) -> int:
        """SPEC 2.3: every request of an origin whose first robots.txt answer was a server error waited for it."""
        failed_first = bool(self.robots) and (self.robots[0] >= 500 or self.robots[0] == 429)
        return len(self.crawled) + len(self.forbidden) + len(self.dropped) if failed_first else 0

    @property
    def as_robots_says(self) -> bool:
        return not self.let_through and not self.blocked


def analyse(site: DemoSite, result: CrawlResult, origins: Iterable[str] | None = None) -> list[OriginRun]:
    """Per origin of ``site`` (default: all), what ``result``'s crawl did, against each page's expectation."""
    wanted = set(origins) if origins is not None else {spec.name for spec in site.origins}
    runs = []
    for spec in site.origins:
        if spec.name not in wanted:
            continue
        run = OriginRun(spec, site.urls[spec.name])
        run.sitemaps = result.sitemaps.get(site.url(spec.name, "/robots.txt"), [])
        run.robots = [hit.status for hit in result.hits if (hit.origin, hit.path) in spec.robots_locations()]
        served = {hit.path for hit in result.hits if hit.origin == spec.name and hit.status == 200}
        stopped = _stopped(site, spec, result)
        for page in spec.pages:
            if page.path in served:
                run.crawled.append(page.path)
                if page.expect != CRAWL:
                    run.let_through.append((page.path, _why_not(page.expect, page.why, run.robots)))
                continue
            reason = stopped.get(page.path, "never requested")
            bucket = run.forbidden if reason.startswith(_FORBIDDEN_PREFIX) else run.dropped
            bucket.append((page.path, reason))
            if page.expect == CRAWL:
                run.blocked.append((page.path, page.why or "robots.txt allows it"))
        runs.append(run)
    return runs


def _stopped(site: DemoSite, spec: OriginSpec, result: CrawlResult) -> dict[str, str]:
    """Path -> reason, for the spider's ``stopped`` items of ``spec``'s origin."""
    stopped = {}
    for item in result.items:
        url = str(item.get("url", ""))
        if item.get("outcome") != "stopped" or not url.startswith(site.urls[spec.name] + "/"):
            continue
        parts = urlsplit(url)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        stopped[path] = str(item.get("reason", "")).removeprefix("IgnoreRequest: ")
    return stopped


def _why_not(expect: str, why: str, robots: list[int]) -> str:
    if expect == FORBIDDEN:
        return f"robots.txt forbids it ({why})"
    return f"sent while robots.txt answered {_statuses(robots)}"


def _statuses(statuses: list[int]) -> str:
    """``[503, 503, 503, 200]`` -> ``503 x3, 200``."""
    parts: list[str] = []
    for status in statuses:
        if parts and parts[-1].split(" x")[0] == str(status):
            count = int(parts[-1].split(" x")[1]) + 1 if " x" in parts[-1] else 2
            parts[-1] = f"{status} x{count}"
        else:
            parts.append(str(status))
    return ", ".join(parts) if parts else "not fetched"


def _pages(entries: list[tuple[str, str]], origin_url: str) -> str:
    """``/a, /b (reason); /c (other reason)``: pages grouped by their reason, without the repeated prefixes."""
    by_reason: dict[str, list[str]] = {}
    for path, reason in entries:
        short = reason.removeprefix(_FORBIDDEN_PREFIX + ": ").replace(origin_url + " ", "")
        by_reason.setdefault(short, []).append(path)
    return "; ".join(f"{', '.join(paths)} ({reason})" for reason, paths in by_reason.items())


def describe(run: OriginRun) -> list[str]:
    """The lines of one origin in the report."""
    total = len(run.spec.pages)
    lines = [f"{run.spec.name:<10} {run.url}   {run.spec.shows}"]
    robots = " -> ".join(map(str, run.robots)) if run.spec.robots_fetch else _statuses(run.robots)
    lines.append(f"  robots.txt: {robots}")
    if run.sitemaps:
        lines.append(f"  sitemaps (robots_parsed signal): {', '.join(run.sitemaps)}")
    if run.held:
        released = len(run.crawled) + len(run.forbidden)
        lines.append(f"  held {run.held} while robots.txt failed: released {released}, dropped {len(run.dropped)}")
    lines.append(f"  crawled {len(run.crawled)}/{total}: {', '.join(run.crawled) or '-'}")
    if run.forbidden:
        lines.append(f"  forbidden {len(run.forbidden)}: {_pages(run.forbidden, run.url)}")
    if run.dropped:
        lines.append(f"  dropped {len(run.dropped)}: {_pages(run.dropped, run.url)}")
    for path, why in run.let_through:
        lines.append(f"  WRONG: {path} was crawled, but {why}")
    for path, why in run.blocked:
        lines.append(f"  WRONG: {path} was not crawled, but {why}")
    return _wrapped(lines)


def _wrapped(lines: list[str]) -> list[str]:
    return ["\n".join(textwrap.wrap(line, WIDTH, subsequent_indent="      ")) for line in lines]


def report(site: DemoSite, catalog: CrawlResult, news: CrawlResult) -> tuple[str, bool]:
    """The demo's report, and whether every page went as robots.txt says."""
    runs = analyse(site, catalog)
    pages = sum(len(spec.pages) for spec in site.origins)
    out = [
        f"scrapy-rep demo: {len(site.origins)} origins on 127.0.0.1, {pages} pages, spider 'catalog' as "
        f"{TOKEN!r}, through scrapy-rep ({catalog.seconds:.1f} s)",
        *_wrapped([
            "demo timings (seconds; a real crawl keeps the defaults): "
            + ", ".join(f"{name}={value}" for name, value in DEMO_SETTINGS.items() if name.startswith("REP_")),
        ]),
        "",
    ]
    for run in runs:
        out.extend(describe(run))
    out.extend(["", *_news_lines(site, news)])
    out.extend(["", "stats (rep/):", *_stats_lines(catalog)])
    if catalog.logs:
        out.extend(["", "what scrapy-rep logged (INFO):", *(f"  {line}" for line in catalog.logs)])
    ok = all(run.as_robots_says for run in runs)
    wrong = sum(len(run.let_through) + len(run.blocked) for run in runs)
    verdict = "every page went as robots.txt says" if ok else f"{wrong} pages did NOT go as robots.txt says"
    out.extend(["", f"result: {verdict} (SPEC 2, 4.4, 6, 7)."])
    return "\n".join(out), ok


def _news_lines(site: DemoSite, news: CrawlResult) -> list[str]:
    """The second spider: an ordered token list and crawl-delay, on the per-user-agent origin."""
    (run,) = analyse(site, news, ["agents"])
    pages = [hit for hit in news.hits if hit.origin == "agents" and hit.path != "/robots.txt"]
    gap = _mean_gap(pages)
    spacing = f", {gap:.2f} s between pages on average (crawl-delay: 0.5; Scrapy varies each delay 0.5-1.5x)"
    spacing = spacing if gap is not None else ""
    return _wrapped([
        f"spider 'news' (REP_USER_AGENT = {NewsSpider.tokens}, REP_OBEY_CRAWL_DELAY = {NewsSpider.obey_crawl_delay})"
        " on agents:",
        f"  follows the examplebot-news group: crawled {len(run.crawled)}/{len(run.spec.pages)}"
        f" ({', '.join(run.crawled)}){spacing}",
    ])


def _mean_gap(hits: list[Hit]) -> float | None:
    times = sorted(hit.at for hit in hits)
    gaps = [later - earlier for earlier, later in pairwise(times)]
    return sum(gaps) / len(gaps) if gaps else None


def _stats_lines(result: CrawlResult) -> list[str]:
    keys = sorted(key for key in result.stats if key.startswith("rep/"))
    width = max((len(key) for key in keys), default=0)
    return [f"  {key:<{width}}  {result.stats[key]}" for key in keys]


def comparison(ours_site: DemoSite, ours: CrawlResult, their_site: DemoSite, theirs: CrawlResult) -> str:
    """Side by side, per origin: the pages each let through that robots.txt forbids (or that a temporary error
    should have held), and the pages each blocked that robots.txt allows."""
    left = {run.spec.name: run for run in analyse(ours_site, ours)}
    right = {run.spec.name: run for run in analyse(their_site, theirs)}
    column = (WIDTH - 12) // 2
    rows = [("origin", "scrapy-rep", "Scrapy's RobotsTxtMiddleware + Protego"), ("", "", "")]
    for name, run in left.items():
        rows.append((name, _cell(run), _cell(right[name])))
    lines = [
        f"--compare: the same crawl with Scrapy's built-in robots.txt middleware ({theirs.seconds:.1f} s; "
        f"scrapy-rep's {ours.seconds:.1f} s include the hold timeout of 'down')",
        "",
    ]
    for origin, ours_cell, theirs_cell in rows:
        wrapped_left = textwrap.wrap(ours_cell, column) or [""]
        wrapped_right = textwrap.wrap(theirs_cell, column) or [""]
        for index in range(max(len(wrapped_left), len(wrapped_right))):
            first = origin if index == 0 else ""
            a = wrapped_left[index] if index < len(wrapped_left) else ""
            b = wrapped_right[index] if index < len(wrapped_right) else ""
            lines.append(f"{first:<10}  {a:<{column}}  {b}".rstrip())
    through_left = sum(len(run.let_through) for run in left.values())
    through_right = sum(len(run.let_through) for run in right.values())
    lines.extend([
        "",
        f"let through against robots.txt: scrapy-rep {through_left} page(s), built-in {through_right} page(s).",
        textwrap.fill(
            "Why the built-in lets pages through: it parses whatever a 5xx robots.txt answer holds (an error page: "
            "no rules, so everything is allowed), and of the requests that wait for an origin's robots.txt only "
            "the first receives the parser; the others go out unchecked.",
            WIDTH,
        ),
    ])
    return "\n".join(lines)


def _cell(run: OriginRun) -> str:
    if run.as_robots_says:
        return f"as robots.txt says ({len(run.crawled)} crawled)"
    parts = [f"LET THROUGH {path}: {why}." for path, why in run.let_through]
    parts += [f"BLOCKED {path}: {why}." for path, why in run.blocked]
    return " ".join(parts)
