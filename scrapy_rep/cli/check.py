"""``scrapy-rep check ROBOTS URL... [-u TOKEN]... [--use USE]... [--page] [--json]``: is each URL allowed, and by which
rule? And, for the content uses the crawl declares (``--use``, else the project's REP_CONTENT_USES: ``_uses``), does
an opt-out refuse one?

An allowed URL whose robots.txt usage preferences refuse a declared use (read as the crawl reads them:
``from_preference``, legacy labels per REP_USAGE_LEGACY_LABELS, ``combine``) is ``REFUSED``, naming the use and the
line, and exits 1 as a disallowed one does: the crawl refuses the request.

With ``--page`` every URL (absolute http(s) URLs only: a path is a usage error) is also fetched once, as a person's
browser would (``_page``), and each result shows the page-level directives (robots meta tags, X-Robots-Tag headers)
that apply to its crawler, and every AI/TDM opt-out that applies (``_page_usage``: the origin's tdmrep.json, fetched
once per origin, the page's headers, TDMRep meta tags, noai/noimageai) with the answer they add up to, per use. The
page's robots directives never change the exit code; its opt-outs do, as they change what the crawl does with it
(a declared use they refuse: REFUSED). A page that cannot be fetched is said on its line.

# Decision: with ``--page`` a page robots.txt disallows is fetched all the same (the user asked for it: one request
# by a person, as curl is), and its line says that a crawler obeying robots.txt never reads these directives (a
# ``noindex`` on a disallowed page is never seen, Google's robots meta tag documentation warns).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from scrapy_rep.matcher import ROBOTS_TXT, Preference, RobotsTags, Statement, combine, from_preference, parse
from scrapy_rep.robotparser import url_to_match
from scrapy_rep.robots.origin import origin_of
from scrapy_rep.stores import Outcome

from ._common import DEFAULT_TOKEN, EXIT_FINDINGS, EXIT_OK, EXIT_UNAVAILABLE, MAX_BYTES, UsageError
from ._crawlers import Crawler, crawlers_of
from ._fetch import Robots, load, looks_like_html
from ._page import MAX_PAGE_REDIRECTS, PAGE_LIMIT, Page, fetch_page
from ._page_usage import OptOuts, TdmFile, fetch_tdmrep, opt_outs
from ._uses import Uses, declared_uses, use_help

_HTML_WARNING = "; this looks like an HTML page, not a robots.txt: its lines are ignored (scrapy-rep lint says which)"


def add_parser(commands: argparse._SubParsersAction[Any]) -> None:
    """The ``check`` subcommand's arguments."""
    cmd = commands.add_parser("check", help="is each URL allowed? (exit 0 all allowed, 1 some disallowed or refused "
                                            "for a declared use)")
    cmd.add_argument("robots", metavar="ROBOTS",
                     help="robots.txt file, - for stdin, or an http(s) URL (a site URL: its /robots.txt)")
    cmd.add_argument("urls", metavar="URL", nargs="+", help="URL or path (starting with /) to check")
    cmd.add_argument(
        "--user-agent", "-u", action="append", default=[], metavar="TOKEN",
        help="crawler token (repeatable; 'a,b' = ordered tokens of one crawler, SPEC 6.3; a full User-Agent is "
             "obeyed as its product token); default: the token the Scrapy project here obeys (REP_USER_AGENT, "
             f"else USER_AGENT's), outside a project {DEFAULT_TOKEN}",
    )
    cmd.add_argument("--use", action="append", default=[], metavar="USE", help=use_help())
    cmd.add_argument(
        "--page", action="store_true",
        help="also GET each URL (absolute http(s) URLs only) as a browser would (up to "
             f"{MAX_PAGE_REDIRECTS} redirects, the first {PAGE_LIMIT // 1024 // 1024} MiB) and show, per crawler, "
             "its page-level directives: X-Robots-Tag headers and, for HTML, robots meta tags; a page robots.txt "
             "disallows is fetched too, and said so; a page that cannot be fetched is said on its line; also every "
             "AI/TDM opt-out of the page (the origin's /.well-known/tdmrep.json, Content-Usage, Content-Signal, "
             "tdm-reservation and tdm-policy headers, TDMRep meta tags, noai/noimageai) and the answer per use they "
             "add up to, with the deciding source; a declared use (--use) they refuse makes the URL REFUSED (exit 1)",
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
    statements: tuple[Statement, ...] = ()  # ``usage`` read as the crawl reads it (``from_preference``)
    answer: dict[str, Statement] = field(default_factory=dict)  # use -> deciding statement (with --page: every signal)
    refused: tuple[Statement, ...] = ()  # the statements of ``answer`` refusing a declared use (an allowed URL only)
    opt_outs: OptOuts | None = None  # with --page: the signals beside robots.txt's

    def as_text(self) -> str:
        word = "ALLOWED" if self.allowed and not self.refused else "REFUSED" if self.allowed else "DISALLOWED"
        reason = f"{refusal_text(self.refused)}; robots.txt allows it: {self.reason}" if self.refused else self.reason
        text = f"{word:<11} {self.url}  [{','.join(self.user_agent)}]  {reason}"
        if self.usage:
            text += "\n" + " " * 12 + "usage: " + ", ".join(map(str, self.usage.values()))
        return text

    def usage_json(self) -> dict[str, dict[str, Any]]:
        return {use: {"allowed": pref.allowed, "line": pref.line, "source": pref.source, "written": pref.written}
                for use, pref in self.usage.items()}

    def as_json(self) -> dict[str, Any]:
        """One result of ``--json``: ``allowed`` is robots.txt's verdict; ``refused`` (use -> statement) the declared
        uses an opt-out refuses; ``answer`` (use -> statement) what the opt-outs add up to."""
        return {"url": self.url, "user_agent": self.user_agent, "allowed": self.allowed, "rule": self.rule,
                "group": self.group, "usage": self.usage_json(),
                "answer": {use: statement.as_dict() for use, statement in self.answer.items()},
                "refused": {statement.use: statement.as_dict() for statement in self.refused},
                **({"opt_outs": self.opt_outs.as_json()} if self.opt_outs is not None else {})}


def refusal_text(refused: Sequence[Statement]) -> str:
    """``for train-ai by line 4 (Content-Usage: train-ai=n) of the '*' group (line 1)``; another source is named
    (``for tdm by tdm-reservation header (tdm-reservation: 1), tdm-policy https://...``)."""
    return "; ".join(f"for {statement.use} by {_cited(statement)}" for statement in refused)


def _cited(statement: Statement) -> str:
    said = statement.where if statement.source == ROBOTS_TXT else f"{statement.source} ({statement.where})"
    if statement.legacy:
        said += f" (the legacy label {statement.legacy!r}, REP_USAGE_LEGACY_LABELS)"
    return said + (f", tdm-policy {statement.policy}" if statement.policy else "")


def check(robots: Robots, urls: Sequence[str], crawlers: Sequence[Crawler], uses: Uses | None = None) -> list[Result]:
    """Decide every URL for every crawler, as the middleware would (SPEC 2.2, 6, 7), and for the declared ``uses``
    (none by default), as its usage check would (requests/usage.py, robots.txt's preferences)."""
    uses = uses or Uses()
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
            statements = tuple(statement for preference in verdict.usage.values()
                               for statement in from_preference(preference, legacy_labels=uses.legacy_labels))
            answer = combine(statements)
            refused = uses.refused(answer) if verdict.allowed else ()
            results.append(Result(url, crawler.label, verdict.allowed, info, verdict.reason, dict(verdict.usage),
                                  obeyed, statements, answer, refused))
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
    return EXIT_OK if all(result.allowed and not result.refused for result in results) else EXIT_FINDINGS


def _detail(robots: Robots) -> str:
    """The fetch's outcome in words, warning when the body obeyed is an HTML page."""
    is_html = robots.outcome is Outcome.RULES and looks_like_html(robots.body, robots.content_type)
    return robots.detail + (_HTML_WARNING if is_html else "")


def notes(robots: Robots, crawlers: Sequence[Crawler], uses: Uses | None = None) -> list[str]:
    """What was made of the user's input: a site URL's robots.txt, tokens derived from full User-Agents, the uses
    the project declares."""
    said = (robots.note, *(crawler.note for crawler in crawlers), uses.note if uses else "")
    return [note for note in said if note]


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


def _with_opt_outs(result: Result, page: Page, tags: RobotsTags, tdm_file: TdmFile, uses: Uses) -> Result:
    """``result`` with every signal of its page: the combined answer, and what it refuses of the declared uses."""
    found = opt_outs(result.url, result.statements, page, tags, tdm_file, uses.legacy_labels)
    refused = uses.refused(found.answer) if result.allowed else ()
    return replace(result, answer=found.answer, refused=refused, opt_outs=found)


def run_check(args: argparse.Namespace) -> int:
    if args.page:
        check_page_urls(args.urls)
    uses = declared_uses(args.use)  # a bad --use is refused before any fetch
    robots = load(args.robots)
    crawlers = crawlers_of(args.user_agent)
    results = check(robots, args.urls, crawlers, uses)
    pages = {url: fetch_page(url) for url in dict.fromkeys(args.urls)} if args.page else {}  # once per URL
    tags = {(url, tuple(crawler.label)): page.tags(crawler.tokens) for url, page in pages.items()
            for crawler in crawlers}
    origins = {url: str(origin_of(url)) for url in pages}
    tdm_files = {origin: fetch_tdmrep(origin) for origin in dict.fromkeys(origins.values())}  # once per origin
    if pages:
        results = [_with_opt_outs(r, pages[r.url], tags[r.url, tuple(r.user_agent)], tdm_files[origins[r.url]], uses)
                   for r in results]
    code = _exit_code(robots, results)
    if args.json:
        document = {
            "robots_txt": {
                "source": robots.source,
                "outcome": robots.outcome.value,
                "status": robots.status,
                "redirects": robots.redirects,
                "detail": _detail(robots),
            },
            **({"tdmrep_json": {tdm.url: tdm.as_json() for tdm in tdm_files.values()}} if pages else {}),
            "uses": list(uses.uses),
            "notes": notes(robots, crawlers, uses),
            "results": [
                {**r.as_json(), **({"page": page_json(pages[r.url], tags[r.url, tuple(r.user_agent)])} if pages
                                   else {})}
                for r in results
            ],
            "exit_code": code,
        }
        print(json.dumps(document, indent=2))
        return code
    for note in notes(robots, crawlers, uses):
        print(note)
    print(f"robots.txt {robots.source}: {_detail(robots)}")
    for tdm in tdm_files.values():
        print(f"tdmrep.json {tdm.url}: {tdm.detail}")
    for result in results:
        print(result.as_text())
        if pages:
            print(page_text(pages[result.url], tags[result.url, tuple(result.user_agent)], result.allowed))
        if result.opt_outs is not None:
            print("\n".join(result.opt_outs.lines(pages[result.url])))
    return code
