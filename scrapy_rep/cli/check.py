"""``scrapy-rep check ROBOTS URL... [-u TOKEN]... [--page] [--json]``: is each URL allowed, and by which rule?

With ``--page`` every URL (absolute http(s) URLs only: a path is a usage error) is also fetched once, as a person's
browser would (``_page``), and each result shows the page-level directives (robots meta tags, X-Robots-Tag headers)
that apply to its crawler. The page never changes the exit code: robots.txt alone decides it; a page that cannot be
fetched is said on its line.

# Decision: with ``--page`` a page robots.txt disallows is fetched all the same (the user asked for it: one request
# by a person, as curl is), and its line says that a crawler obeying robots.txt never reads these directives (a
# ``noindex`` on a disallowed page is never seen, Google's robots meta tag documentation warns).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from scrapy_rep.matcher import Preference, RobotsTags, parse
from scrapy_rep.robotparser import url_to_match
from scrapy_rep.robots.origin import origin_of
from scrapy_rep.stores import Outcome

from ._common import DEFAULT_TOKEN, EXIT_FINDINGS, EXIT_OK, EXIT_UNAVAILABLE, MAX_BYTES, UsageError
from ._crawlers import Crawler, crawlers_of
from ._fetch import Robots, load, looks_like_html
from ._page import MAX_PAGE_REDIRECTS, PAGE_LIMIT, Page, fetch_page

_HTML_WARNING = "; this looks like an HTML page, not a robots.txt: its lines are ignored (scrapy-rep lint says which)"


def add_parser(commands: argparse._SubParsersAction[Any]) -> None:
    """The ``check`` subcommand's arguments."""
    cmd = commands.add_parser("check", help="is each URL allowed? (exit 0 all allowed, 1 some disallowed)")
    cmd.add_argument("robots", metavar="ROBOTS",
                     help="robots.txt file, - for stdin, or an http(s) URL (a site URL: its /robots.txt)")
    cmd.add_argument("urls", metavar="URL", nargs="+", help="URL or path (starting with /) to check")
    cmd.add_argument(
        "--user-agent", "-u", action="append", default=[], metavar="TOKEN",
        help="crawler token (repeatable; 'a,b' = ordered tokens of one crawler, SPEC 6.3; a full User-Agent is "
             "obeyed as its product token); default: the token the Scrapy project here obeys (REP_USER_AGENT, "
             f"else USER_AGENT's), outside a project {DEFAULT_TOKEN}",
    )
    cmd.add_argument(
        "--page", action="store_true",
        help="also GET each URL (absolute http(s) URLs only) as a browser would (up to "
             f"{MAX_PAGE_REDIRECTS} redirects, the first {PAGE_LIMIT // 1024 // 1024} MiB) and show, per crawler, "
             "its page-level directives: X-Robots-Tag headers and, for HTML, robots meta tags; a page robots.txt "
             "disallows is fetched too, and said so; a page that cannot be fetched is said on its line; the exit "
             "code is still robots.txt's alone",
    )
    cmd.add_argument("--json", action="store_true", help="machine-readable output")
    cmd.set_defaults(run=run_check)


@dataclass(frozen=True, slots=True)
class Result:
    """The verdict for one URL and one crawler (a token or an ordered list of tokens, SPEC 6.3)."""

    url: str
    user_agent: list[str]
    allowed: bool
    rule: dict[str, Any] | None
    reason: str  # Verdict.reason: the rule and its group as every message words them (matcher.cite)
    usage: dict[str, Preference] = field(default_factory=dict)  # the URL's usage preferences, when allowed
    group: dict[str, Any] | None = None  # the group obeyed (SPEC 6.2/6.3): {"user_agent": token, "lines": [...]}

    def as_text(self) -> str:
        word = "ALLOWED" if self.allowed else "DISALLOWED"
        text = f"{word:<11} {self.url}  [{','.join(self.user_agent)}]  {self.reason}"
        if self.usage:
            text += "\n" + " " * 12 + "usage: " + ", ".join(map(str, self.usage.values()))
        return text

    def usage_json(self) -> dict[str, dict[str, Any]]:
        return {use: {"allowed": pref.allowed, "line": pref.line, "source": pref.source, "written": pref.written}
                for use, pref in self.usage.items()}


def check(robots: Robots, urls: Sequence[str], crawlers: Sequence[Crawler]) -> list[Result]:
    """Decide every URL for every crawler, as the middleware would (SPEC 2.2, 6, 7)."""
    for url in urls:
        _check_url_belongs(robots, url)
    if robots.outcome is not Outcome.RULES:
        allowed = robots.outcome is Outcome.ALLOW_ALL
        return [Result(url, crawler.label, allowed, None, robots.detail) for url in urls for crawler in crawlers]
    parsed = parse(robots.body, max_bytes=MAX_BYTES)
    results = []
    for url in urls:
        for crawler in crawlers:
            verdict = parsed.explain(url_to_match(url), crawler.tokens)  # as the crawl would send it
            rule, group = verdict.rule, verdict.group
            info = None
            if rule is not None:  # then a group holds it: group_line is its user-agent line
                info = {"type": rule.directive.lower(), "pattern": rule.written, "line": rule.line,
                        "group_line": group.line_of(rule.line) if group is not None else None}
            obeyed = None if group is None else {"user_agent": group.token, "lines": list(group.lines)}
            results.append(Result(url, crawler.label, verdict.allowed, info, verdict.reason, dict(verdict.usage),
                                  obeyed))
    return results


def _check_url_belongs(robots: Robots, url: str) -> None:
    """A path is checked as is; an absolute URL must be on the fetched origin (SPEC 1.2)."""
    if url.startswith("/"):
        return
    try:
        origin = str(origin_of(url))
    except ValueError:  # NoOrigin, or urlsplit's own
        raise UsageError(f"not a URL or a path starting with '/': {url}") from None
    if robots.origin is not None and origin != robots.origin:
        raise UsageError(f"{url} is not on {robots.origin}: its robots.txt does not apply (SPEC 1.2)")


def _exit_code(robots: Robots, results: Sequence[Result]) -> int:
    if robots.outcome is Outcome.DISALLOW_ALL:
        return EXIT_UNAVAILABLE
    return EXIT_OK if all(result.allowed for result in results) else EXIT_FINDINGS


def _detail(robots: Robots) -> str:
    """The fetch's outcome in words, warning when the body obeyed is an HTML page."""
    is_html = robots.outcome is Outcome.RULES and looks_like_html(robots.body, robots.content_type)
    return robots.detail + (_HTML_WARNING if is_html else "")


def notes(robots: Robots, crawlers: Sequence[Crawler]) -> list[str]:
    """What was made of the user's input: a site URL's robots.txt, tokens derived from full User-Agents."""
    return [note for note in (robots.note, *(crawler.note for crawler in crawlers)) if note]


def check_page_urls(urls: Sequence[str]) -> None:
    """``--page`` fetches every URL: each must be an absolute http(s) URL (checked before any fetch)."""
    for url in urls:
        if url.startswith("/"):
            raise UsageError(f"--page fetches each page, which needs an absolute URL: {url} is a path "
                             f"(write it in full: https://HOST{url})")
        if not url.lower().startswith(("http://", "https://")):
            raise UsageError(f"--page fetches http(s) URLs only: {url}")


#: The order a page's directives are listed in: Google's documented ones, the weightiest first; others after, sorted.
_ORDER = {name: rank for rank, name in enumerate((
    "noindex", "nofollow", "none", "noarchive", "nocache", "nosnippet", "max-snippet", "max-image-preview",
    "max-video-preview", "noimageindex", "notranslate", "indexifembedded", "unavailable_after", "all"))}
_FLAGS = ("noindex", "nofollow", "noarchive", "nosnippet", "noimageindex", "notranslate", "indexifembedded")
_DISALLOWED_PAGE = "robots.txt disallows it: fetched anyway, but a crawler obeying robots.txt never reads these"


def _value(tags: RobotsTags, name: str) -> int | str | datetime | None:
    """The value in effect of a valued directive (None: an invalid value, or a directive that takes none)."""
    return {"max-snippet": tags.max_snippet, "max-image-preview": tags.max_image_preview,
            "max-video-preview": tags.max_video_preview, "unavailable_after": tags.unavailable_after}.get(name)


def _shown(tags: RobotsTags, name: str) -> str:
    value = _value(tags, name)
    if value is None:
        return name
    return f"{name} {value.isoformat() if isinstance(value, datetime) else value}"


def page_text(page: Page, tags: RobotsTags, allowed: bool) -> str:
    """The line under a result: the directives grouped by where they came from, then what the user should know
    (a status other than 200, redirects, no meta tags read, robots.txt disallowing the page)."""
    notes = []
    if page.error:
        said = page.error
    else:
        groups: dict[str, list[str]] = {}
        for name in sorted(tags.directives, key=lambda name: (_ORDER.get(name, len(_ORDER)), name)):
            groups.setdefault(tags.source(name), []).append(_shown(tags, name))
        said = "; ".join(f"{', '.join(names)} ({source})" for source, names in groups.items()) or "no directives"
        if page.status != 200 or page.redirects:
            hops = page.redirects
            via = f" after {hops} redirect{'s' if hops != 1 else ''} to {page.final_url}" if hops else ""
            notes.append(f"HTTP {page.status}{via}")
        if not page.html:
            notes.append(f"not HTML ({page.content_type or 'no Content-Type'}): no meta tags read")
    if not allowed:
        notes.append(_DISALLOWED_PAGE)
    return " " * 12 + "page: " + "; ".join([said, *notes])


def page_json(page: Page, tags: RobotsTags) -> dict[str, Any]:
    """The ``page`` object of a result in ``--json``."""
    names = sorted(tags.directives)
    when = tags.unavailable_after
    return {
        "url": page.url, "status": page.status, "final_url": page.final_url, "redirects": page.redirects,
        "content_type": page.content_type, "html": page.html,
        "x_robots_tag": [value.decode("latin-1") for value in page.x_robots_tag],
        "directives": names, "sources": {name: tags.source(name) for name in names},
        **{flag: getattr(tags, flag) for flag in _FLAGS},
        "max_snippet": tags.max_snippet, "max_image_preview": tags.max_image_preview,
        "max_video_preview": tags.max_video_preview, "unavailable_after": None if when is None else when.isoformat(),
        "error": page.error or None,
    }


def run_check(args: argparse.Namespace) -> int:
    if args.page:
        check_page_urls(args.urls)
    robots = load(args.robots)
    crawlers = crawlers_of(args.user_agent)
    results = check(robots, args.urls, crawlers)
    code = _exit_code(robots, results)
    pages = {url: fetch_page(url) for url in dict.fromkeys(args.urls)} if args.page else {}  # once per URL
    tags = {(url, tuple(crawler.label)): page.tags(crawler.tokens) for url, page in pages.items()
            for crawler in crawlers}
    if args.json:
        document = {
            "robots_txt": {
                "source": robots.source,
                "outcome": robots.outcome.value,
                "status": robots.status,
                "redirects": robots.redirects,
                "detail": _detail(robots),
            },
            "notes": notes(robots, crawlers),
            "results": [
                {"url": r.url, "user_agent": r.user_agent, "allowed": r.allowed, "rule": r.rule, "group": r.group,
                 "usage": r.usage_json(),
                 **({"page": page_json(pages[r.url], tags[r.url, tuple(r.user_agent)])} if pages else {})}
                for r in results
            ],
            "exit_code": code,
        }
        print(json.dumps(document, indent=2))
        return code
    for note in notes(robots, crawlers):
        print(note)
    print(f"robots.txt {robots.source}: {_detail(robots)}")
    for result in results:
        print(result.as_text())
        if pages:
            print(page_text(pages[result.url], tags[result.url, tuple(result.user_agent)], result.allowed))
    return code
