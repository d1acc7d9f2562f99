"""``check --page``: every machine-readable AI/TDM opt-out that applies to a page, and the answer they add up to, as the
crawl combines them (requests/usage.py before the download, requests/response_usage.py after it; docs/opt-outs.md).

The signals of one result: the robots.txt usage preferences of the URL (``check``, through ``from_preference``), the
origin's ``/.well-known/tdmrep.json`` (``fetch_tdmrep``, once per origin), and the page's own (``page_statements``):
its Content-Usage and Content-Signal headers, TDMRep's tdm-reservation / tdm-policy headers and, in HTML, meta tags,
and ``noai`` / ``noimageai`` in the robots meta tags and X-Robots-Tag headers that address the crawler. ``opt_outs``
combines them (``combine``: any ``n`` wins, the deciding statement kept per use); a valid TDMRep reservation of the
page itself replaces the file's statements (the protocol's precedence: meta tag over header over file), exactly as
``UsageMiddleware`` does.

Contract: ``fetch_tdmrep(origin)`` fetches the file with the middleware's fetch semantics (``_fetch.fetch``: the crawl
fetches tdmrep.json as it fetches robots.txt, same redirects, size cap and status codes) and reads the answer as
robots/tdmrep.py does (``standing``): a 2xx JSON body is the file; a 4xx, a dead-end redirect or a 2xx that is not
JSON at all (an HTML page served for a missing file) states no reservation; a 5xx, 429 or network error, or a 2xx
that looks like JSON and does not parse, leaves the reservation unknown, which refuses ``tdm`` and ``train-ai``. It
never raises for the network or the server.

# Decision: tdmrep.json is fetched with the robots.txt fetch (``_fetch.fetch``, urllib, no reactor), not with
# ``_page.fetch_page``: the crawl fetches it with robots.txt's fetcher (robots/tdmrep.py), so its redirects, size cap
# and status codes mean here what they mean to the crawl.
# Decision: with --page the tdmrep.json is fetched and shown whatever the declared uses (the crawl fetches it for a
# TDM use, or with REP_TDMREP = True): showing every signal is what --page is for.
# Decision: the exit code follows the combined answer: a declared use any signal refuses makes the URL REFUSED (exit
# 1). robots.txt and tdmrep.json refuse the request before it is sent; the page's own signals make the crawl drop
# its items: either way the crawl makes no such use of the page.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from scrapy_rep.matcher import (
    RobotsTags,
    Statement,
    TdmRep,
    TdmRule,
    combine,
    parse_tdmrep,
    path_params_query,
    starts_like_json,
    tdm_statements,
    unknown_reservation,
    with_page,
)
from scrapy_rep.matcher import page_statements as statements_of_page
from scrapy_rep.reporting.outcome_log import plural
from scrapy_rep.robotparser import url_to_match
from scrapy_rep.robots.tdmrep import FILE, NONE, UNKNOWN, tdm_url
from scrapy_rep.stores import Outcome

from ._common import MAX_BYTES
from ._fetch import Robots, fetch
from ._page import Page

_PAD = " " * 12


@dataclass(frozen=True, slots=True)
class TdmFile:
    """An origin's tdmrep.json as fetched: ``standing`` (robots/tdmrep.py's FILE, NONE or UNKNOWN), ``detail`` (the
    answer and what it means, in words), ``why`` (what left it unknown), and its rules when it is a file."""

    url: str
    standing: str
    detail: str
    status: int | None = None
    redirects: int = 0
    rules: TdmRep | None = None
    why: str = ""

    def statements(self, url: str) -> list[Statement]:
        """What the file says of ``url`` (as robots/tdmrep.statements): the first matching entry's ``tdm`` and
        ``train-ai``; both refused when the reservation is unknown; none without a file or a matching entry."""
        if self.standing == UNKNOWN:
            return unknown_reservation(f"{self.url} {self.why}: TDM reservation unknown")
        return tdm_statements(self.rule(url), self.url, (), (), (), ()) if self.rules is not None else []

    def rule(self, url: str) -> TdmRule | None:
        """The entry of the file that applies to ``url`` (the first whose location matches), if any."""
        return None if self.rules is None else self.rules.lookup(path_params_query(url_to_match(url)))

    def as_json(self) -> dict[str, Any]:
        """The ``tdmrep_json`` object of ``check --page --json``, per tdmrep.json URL."""
        rules = self.rules
        return {
            "url": self.url, "standing": self.standing, "status": self.status, "redirects": self.redirects,
            "detail": self.detail,
            "rules": None if rules is None else [
                {"entry": rule.index + 1, "location": rule.location, "tdm-reservation": rule.reservation,
                 "tdm-policy": rule.policy} for rule in rules.rules],
            "problems": [] if rules is None else list(rules.problems),
        }


def fetch_tdmrep(origin: str) -> TdmFile:
    """The tdmrep.json of ``origin`` (``https://example.com``), fetched once (see the module's contract)."""
    url = tdm_url(origin)
    return read_tdmrep(url, fetch(url))


def read_tdmrep(url: str, answer: Robots) -> TdmFile:
    """What the fetch's ``answer`` means for TDMRep (robots/tdmrep.py's ``standing`` and ``_TdmFetcher``)."""
    said, status, hops = answer.said, answer.status, answer.redirects
    if answer.outcome is Outcome.ALLOW_ALL:
        return TdmFile(url, NONE, f"{said}: no file, no TDM reservation stated", status, hops)
    if answer.outcome is Outcome.DISALLOW_ALL:
        why = f"unreachable ({said})"
        return TdmFile(url, UNKNOWN, f"{said}: TDM reservation unknown (tdm and train-ai refused until it can be "
                                     "read)", status, hops, why=why)
    body = answer.body[:MAX_BYTES]  # the crawl reads no more
    if not starts_like_json(body):
        return TdmFile(url, NONE, f"{said}: not JSON (a page served for a missing file?): no TDM reservation "
                                  "stated", status, hops)
    rules = parse_tdmrep(body)
    if rules.unreadable:
        why = f"{said} with a body that is not valid JSON"
        return TdmFile(url, UNKNOWN, f"{why}: TDM reservation unknown (tdm and train-ai refused)", status, hops,
                       rules, why)
    problems = len(rules.problems)
    more = f", {plural(problems, 'problem')} (scrapy-rep lint {url} lists them)" if problems else ""
    return TdmFile(url, FILE, f"{said}, {plural(len(rules.rules), 'rule')}{more}", status, hops, rules)


def page_statements(page: Page, tags: RobotsTags, legacy_labels: bool) -> list[Statement]:
    """The statements of the page itself (response_usage.py's reading): headers, TDMRep header and meta tags, noai."""
    if page.error:
        return []
    return statements_of_page(page.header("content-usage"), page.header("content-signal"),
                              page.header("tdm-reservation"), page.header("tdm-policy"),
                              page.body if page.html else None, tags.from_meta, tags.from_header, image=page.image,
                              legacy_labels=legacy_labels)


@dataclass(frozen=True, slots=True)
class OptOuts:
    """The signals of one result beside robots.txt's: the origin's file's statements, the page's, whether the page's
    own TDMRep reservation replaced the file's, and the combined answer (use -> deciding statement)."""

    tdm_file: TdmFile
    rule: TdmRule | None
    from_file: tuple[Statement, ...]
    from_page: tuple[Statement, ...]
    replaced: bool
    answer: dict[str, Statement]

    def lines(self, page: Page) -> list[str]:
        """The text lines under a result's ``page:`` line."""
        if self.from_file:
            file_said = said(self.from_file)
        elif self.rule is not None:
            file_said = (f"{self.rule.where} of {self.tdm_file.url} matches, but its tdm-reservation is unset (a "
                         "protocol error): nothing stated")
        elif self.tdm_file.standing == FILE:
            file_said = f"no entry of {self.tdm_file.url} matches this URL"
        else:
            file_said = f"none ({self.tdm_file.url}: {self.tdm_file.detail})"
        if self.replaced:
            file_said += "; replaced by the page's own tdm-reservation (meta tag over header over file)"
        page_said = said(self.from_page) or ("none (the page could not be fetched)" if page.error else "none")
        answer = said(self.answer.values()) or "nothing stated"
        return [f"{_PAD}tdmrep.json: {file_said}", f"{_PAD}page opt-outs: {page_said}", f"{_PAD}answer: {answer}"]

    def as_json(self) -> dict[str, Any]:
        """The ``opt_outs`` object of a result in ``check --page --json``."""
        return {"tdmrep_json_url": self.tdm_file.url,
                "tdmrep_json": [statement.as_dict() for statement in self.from_file],
                "tdmrep_json_replaced": self.replaced,
                "page": [statement.as_dict() for statement in self.from_page]}


def opt_outs(url: str, from_robots: tuple[Statement, ...], page: Page, tags: RobotsTags, tdm_file: TdmFile,
             legacy_labels: bool) -> OptOuts:
    """Every signal of ``url`` and their combination, as the crawl reaches it for the response (see the contract)."""
    from_file = tuple(tdm_file.statements(url))
    from_page = tuple(page_statements(page, tags, legacy_labels))
    read = with_page([*from_robots, *from_file], from_page)
    replaced = bool(from_file) and from_file[0] not in read  # the page's own reservation replaced the file's
    answer = combine(read)
    return OptOuts(tdm_file, tdm_file.rule(url), from_file, from_page, replaced, answer)


def said(statements: Iterable[Statement]) -> str:
    """Statements in words, those of one answer, source and place together: ``tdm=n, train-ai=n by tdmrep.json
    (entry 1 (location "/papers/") of https://...), tdm-policy https://...; search=y by robots.txt (line 4 ...)``."""
    groups: dict[tuple[str, str, str | None], list[str]] = {}
    for statement in statements:
        key = (statement.source, statement.where, statement.policy)
        groups.setdefault(key, []).append(f"{statement.use}={'y' if statement.allowed else 'n'}")
    return "; ".join(f"{', '.join(uses)} by {source} ({where})" + (f", tdm-policy {policy}" if policy else "")
                     for (source, where, policy), uses in groups.items())
