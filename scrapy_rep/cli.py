"""The ``scrapy-rep`` console script: a robots.txt tester (``check``), a linter (``lint``) and the demo (``demo``).

Exit codes (documented in README, "The CLI"):

* ``0``: every URL allowed (``check``), no finding (``lint``), every demo page went as robots.txt says (``demo``);
* ``1``: some URL disallowed (``check``), findings (``lint``), a demo page did not go as robots.txt says;
* ``2``: usage or input error (bad arguments, missing file, unreadable URL);
* ``3``: robots.txt temporarily unavailable (5xx, 429 or network error: SPEC 2.2 disallows the whole origin);
* ``4``: an internal error (a bug: the message names the exception).

Errors are one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from scrapy_rep import __version__
from scrapy_rep.config import Config
from scrapy_rep.matcher import (
    MAX_LINE_BYTES,
    LineKind,
    ParsedLine,
    extract_user_agent,
    is_valid_user_agent,
    parse,
    report,
)
from scrapy_rep.origin import origin_of
from scrapy_rep.policy import BAD_REDIRECT, TOO_MANY_REDIRECTS, FetchResult, outcome_of
from scrapy_rep.stores import Outcome

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_UNAVAILABLE = 3
EXIT_INTERNAL = 4

#: The product token of Scrapy's default ``USER_AGENT`` (SPEC 6.4): what a fresh Scrapy project identifies as.
DEFAULT_TOKEN = "Scrapy"
#: SPEC 4.4 and 2.2: the middleware's defaults for ``REP_MAX_SIZE`` and ``REP_MAX_REDIRECTS``.
MAX_BYTES = Config.max_size
MAX_REDIRECTS = Config.max_redirects
FETCH_TIMEOUT = 30.0
FETCH_USER_AGENT = f"scrapy-rep/{__version__} (robots.txt tester)"


class UsageError(Exception):
    """Bad input a user can fix: printed as one line (``PROG: error: MESSAGE``), exit code 2."""

    def __init__(self, message: str, prog: str = "scrapy-rep"):
        super().__init__(message)
        self.prog = prog


# --- where the robots.txt comes from --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Robots:
    """A robots.txt as obtained, and what its fetch means for the origin (SPEC 2.2).

    ``outcome``: RULES (obey ``body``), ALLOW_ALL (4xx, too many redirects) or DISALLOW_ALL (5xx, 429, network
    error: temporary full disallow). ``origin`` is set for URLs only.
    """

    source: str
    outcome: Outcome
    detail: str
    body: bytes = b""
    status: int | None = None
    redirects: int = 0
    origin: str | None = None


def load(source: str, max_bytes: int = MAX_BYTES) -> Robots:
    """Read ``source``: ``-`` (stdin), an http(s) URL, or a file path. Reads at most one byte past ``max_bytes`` so
    that content past the cap is seen (and reported) without reading an unbounded body."""
    if source == "-":
        body = sys.stdin.buffer.read(max_bytes + 1)
        return Robots("<stdin>", Outcome.RULES, _size_detail(body, max_bytes), body)
    if source.startswith(("http://", "https://")):
        return fetch(source, max_bytes)
    path = Path(source)
    try:
        with path.open("rb") as handle:
            body = handle.read(max_bytes + 1)
    except OSError as exc:
        raise UsageError(f"cannot read {source}: {exc.strerror or exc}") from None
    return Robots(source, Outcome.RULES, _size_detail(body, max_bytes), body)


def fetch(url: str, max_bytes: int = MAX_BYTES, max_redirects: int = MAX_REDIRECTS) -> Robots:
    """GET ``url`` with the middleware's semantics (SPEC 2.2, decided by ``scrapy_rep.policy``): follow up to
    ``max_redirects`` redirects (the target's body is obeyed for the original origin), then treat it as 404; read at
    most ``max_bytes`` (+1, see ``load``)."""
    try:
        origin = str(origin_of(url))
    except ValueError as exc:  # NoOrigin, or urlsplit's own (e.g. "Invalid IPv6 URL")
        raise UsageError(f"not a robots.txt URL: {url} ({exc})") from None
    opener = urllib.request.build_opener(_NoRedirects)
    current = url
    for hop in range(max_redirects + 1):
        result, location, problem = _get(opener, current, max_bytes, hop)
        if location is None:
            return _robots(url, origin, result, problem, max_bytes)
        current = urljoin(current, location)
        if urlsplit(current).scheme not in ("http", "https"):  # never file:, ftp: ... from a server's say-so
            result = FetchResult(error=BAD_REDIRECT, redirects=hop + 1)
            return _robots(url, origin, result, f"redirect to {current}", max_bytes)
    result = FetchResult(error=TOO_MANY_REDIRECTS, redirects=max_redirects + 1)
    return _robots(url, origin, result, f"more than {max_redirects} redirects", max_bytes)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Redirects are counted and followed by ``fetch`` itself (SPEC 2.2), not by urllib."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _get(
    opener: urllib.request.OpenerDirector, url: str, max_bytes: int, hop: int
) -> tuple[FetchResult, str | None, str]:
    """One GET: its result, the redirect target (None: not a redirect to follow), and the problem in words."""
    request = urllib.request.Request(url, headers={"User-Agent": FETCH_USER_AGENT})
    try:
        with opener.open(request, timeout=FETCH_TIMEOUT) as response:
            return FetchResult(response.status, response.read(max_bytes + 1), redirects=hop), None, ""
    except urllib.error.HTTPError as exc:
        with exc:
            location = exc.headers.get("Location") if 300 <= exc.code < 400 else None
            return FetchResult(exc.code, redirects=hop), location, ""
    except ValueError:  # an unreadable redirect target (e.g. "http://[::1")
        return FetchResult(error=BAD_REDIRECT, redirects=hop), None, f"redirect to unreadable URL {url!r}"
    except urllib.error.URLError as exc:
        error = exc.reason if isinstance(exc.reason, BaseException) else exc
        return FetchResult(error=type(error).__name__, redirects=hop), None, f"network error ({exc.reason})"
    except (OSError, http.client.HTTPException) as exc:
        name = type(exc).__name__
        return FetchResult(error=name, redirects=hop), None, f"network error ({name}: {exc})"


def _robots(url: str, origin: str, result: FetchResult, problem: str, max_bytes: int) -> Robots:
    """What ``result`` means (``policy.outcome_of``), in words for the user."""
    outcome = outcome_of(result)
    hops = result.redirects
    via = f" after {hops} redirect{'s' if hops != 1 else ''}" if hops and result.status is not None else ""
    said = f"HTTP {result.status}{via}" if result.status is not None else problem
    if outcome is Outcome.RULES:
        detail = f"{said}, {_size_detail(result.body, max_bytes)}"
    elif outcome is Outcome.ALLOW_ALL:
        detail = f"{said}: no valid robots.txt (SPEC 2.2: like a 404), everything allowed"
    else:
        detail = f"{said}: temporarily unavailable, every URL of {origin} is disallowed until it can be fetched"
    return Robots(url, outcome, detail, result.body, result.status, hops, origin)


def _size_detail(body: bytes, max_bytes: int) -> str:
    if len(body) > max_bytes:
        return f"more than {max_bytes} bytes: only the first {max_bytes} are used (SPEC 4.4)"
    return f"{len(body)} bytes"


# --- check ------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Result:
    """The verdict for one URL and one crawler (a token or an ordered list of tokens, SPEC 6.3)."""

    url: str
    user_agent: list[str]
    allowed: bool
    rule: dict[str, Any] | None
    reason: str

    def as_text(self) -> str:
        word = "ALLOWED" if self.allowed else "DISALLOWED"
        return f"{word:<11} {self.url}  [{','.join(self.user_agent)}]  {self.reason}"


def check(robots: Robots, urls: Sequence[str], crawlers: Sequence[list[str]]) -> list[Result]:
    """Decide every URL for every crawler, as the middleware would (SPEC 2.2, 6, 7)."""
    for url in urls:
        _check_url_belongs(robots, url)
    if robots.outcome is not Outcome.RULES:
        allowed = robots.outcome is Outcome.ALLOW_ALL
        return [Result(url, ua, allowed, None, robots.detail) for url in urls for ua in crawlers]
    parsed = parse(robots.body, max_bytes=MAX_BYTES)
    results = []
    for url in urls:
        for ua in crawlers:
            verdict = parsed.explain(url, ua)
            rule = verdict.rule
            if rule is None:
                results.append(Result(url, ua, verdict.allowed, None, "no rule matches"))
                continue
            kind = "allow" if rule.allow else "disallow"
            info = {"type": kind, "pattern": rule.written, "line": rule.line}
            results.append(Result(url, ua, verdict.allowed, info, f"{kind}: {rule.written} (line {rule.line})"))
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


def _check_exit(robots: Robots, results: Sequence[Result]) -> int:
    if robots.outcome is Outcome.DISALLOW_ALL:
        return EXIT_UNAVAILABLE
    return EXIT_OK if all(result.allowed for result in results) else EXIT_FINDINGS


def run_check(args: argparse.Namespace) -> int:
    robots = load(args.robots)
    crawlers = [_tokens(value) for value in args.user_agent] or [[DEFAULT_TOKEN]]
    results = check(robots, args.urls, crawlers)
    code = _check_exit(robots, results)
    if args.json:
        document = {
            "robots_txt": {
                "source": robots.source,
                "outcome": robots.outcome.value,
                "status": robots.status,
                "redirects": robots.redirects,
                "detail": robots.detail,
            },
            "results": [
                {"url": r.url, "user_agent": r.user_agent, "allowed": r.allowed, "rule": r.rule} for r in results
            ],
            "exit_code": code,
        }
        print(json.dumps(document, indent=2))
        return code
    print(f"robots.txt {robots.source}: {robots.detail}")
    for result in results:
        print(result.as_text())
    return code


def _tokens(value: str) -> list[str]:
    """``a,b`` is one crawler with the ordered tokens a then b (SPEC 6.3)."""
    tokens = [token.strip() for token in value.split(",") if token.strip()]
    if not tokens:
        raise UsageError(f"empty --user-agent value: {value!r}")
    for token in tokens:
        if not is_valid_user_agent(token):  # SPEC 6.4, as REP_USER_AGENT is validated
            hint = f"; did you mean {extract_user_agent(token)!r}?" if extract_user_agent(token) else ""
            raise UsageError(f"--user-agent {token!r} is not a product token ([A-Za-z_-]+){hint}")
    return tokens


# --- lint -------------------------------------------------------------------------------------------------------------

#: Why each field Google ignores but other crawlers read is worth a finding (SPEC 5.3, 9.2); others: _UNUSED.
_UNSUPPORTED = {
    "crawl-delay": "Google ignores it (SPEC 5.3); scrapy-rep obeys it only with REP_OBEY_CRAWL_DELAY = True",
    "clean-param": "Yandex's field: Google ignores it (SPEC 5.3)",
    "host": "Yandex's old field: Google ignores it (SPEC 5.3)",
}
_UNUSED = "a field other crawlers read: Google ignores it (SPEC 5.3)"
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")
_RULES = (LineKind.ALLOW, LineKind.DISALLOW)


@dataclass(frozen=True, slots=True)
class Finding:
    """Something the parser ignored or tolerated, or a pattern that cannot do what it seems to say."""

    line: int
    kind: str
    message: str

    def as_text(self) -> str:
        return f"line {self.line}: {self.kind}: {self.message}"


def lint(body: bytes, max_bytes: int = MAX_BYTES) -> list[Finding]:
    """Every finding of ``body``, in line order, from the matcher's per-line ``report`` (read exactly as ``parse``
    reads it); content past ``max_bytes`` is one finding at the line the cap falls in (SPEC 4.4)."""
    parsed = report(body, max_bytes=max_bytes)
    written_keys = [_written_key(raw) for raw in _LINE_BREAK.split(body[:max_bytes].removeprefix(b"\xef\xbb\xbf"))]
    findings = [
        Finding(line.line_num, kind, message)
        for line in parsed.lines
        for kind, message in _line_findings(line, _at(written_keys, line.line_num - 1))
    ]
    if parsed.ignored_bytes:
        findings.append(Finding(
            parsed.last_line_seen, "past-size-cap",
            f"the file is longer than {max_bytes} bytes: from here on ({parsed.ignored_bytes} bytes) it is ignored",
        ))
    return findings


def _at(keys: list[str], index: int) -> str:
    return keys[index] if index < len(keys) else ""


def _written_key(raw: bytes) -> str:
    """The field name as written on a line (before ``:``), lower-cased; empty when there is no colon."""
    text = raw.split(b"#", 1)[0]
    return text.split(b":", 1)[0].strip().lower().decode("utf-8", "replace") if b":" in text else ""


def _line_findings(line: ParsedLine, written_key: str) -> Iterator[tuple[str, str]]:
    """(kind, message) for each thing worth saying about one line."""
    meta = line.metadata
    if meta.is_line_too_long:
        yield "line-too-long", f"longer than {MAX_LINE_BYTES} bytes: the rest of the line is ignored"
    if meta.has_invalid_utf8:
        yield "invalid-utf8", "bytes that are not UTF-8 (SPEC 4.3): compared as they are"
    if meta.is_missing_colon_separator:
        yield "missing-colon", "no ':' after the field: accepted as two tokens (Google extension)"
    if line.is_typo:
        yield "typo", f"{written_key or line.key!r} is a misspelling Google accepts as {line.key!r} (SPEC 5.2)"
    elif written_key and line.kind not in (LineKind.UNKNOWN, LineKind.UNUSED) and written_key != line.key:
        yield "field-name", f"{written_key!r} is read as {line.key!r}: Google matches field names by prefix"
    if not (meta.has_directive or meta.is_empty or meta.is_comment):
        yield "not-a-directive", "not a 'field: value' line: ignored (SPEC 4.2)"
    elif line.kind is LineKind.USER_AGENT:
        yield from _agent_findings(line.value)
    elif line.kind in _RULES:
        yield from _rule_findings(line)
    elif line.kind is LineKind.SITEMAP and not line.value.startswith(("http://", "https://")):
        yield "sitemap", f"sitemap {line.value!r} is not an absolute URL (SPEC 5.5)"
    elif line.kind is LineKind.UNUSED:
        yield "unsupported-field", f"{line.key}: {_UNSUPPORTED.get(line.key.lower(), _UNUSED)}"
    elif line.kind is LineKind.UNKNOWN and meta.has_directive:
        yield "unknown-field", f"unknown field {line.key!r}: ignored (SPEC 5.3)"


def _agent_findings(value: str) -> Iterator[tuple[str, str]]:
    if value == "*" or value.startswith("* ") or is_valid_user_agent(value):
        return
    token = extract_user_agent(value)
    counted = f"only {token!r} counts" if token else "no product token: the group applies to no crawler"
    yield "user-agent", f"{value!r} is not a product token of [A-Za-z_-]: {counted} (SPEC 5.6)"


def _rule_findings(line: ParsedLine) -> Iterator[tuple[str, str]]:
    rule = f"{line.key}: {line.value}"
    if line.before_user_agent:
        yield "rule-before-user-agent", f"{line.key} before any user-agent line: ignored (SPEC 6.1)"
        return
    if line.value and not line.value.startswith(("/", "*")):
        yield "never-matches", f"{rule} does not start with / or *: it matches no URL (SPEC 7.1)"
    if "$" in line.value[:-1]:
        yield "dollar-in-middle", f"{rule}: $ anchors only at the end of a pattern; here it is a literal $ (SPEC 7.3)"


def run_lint(args: argparse.Namespace) -> int:
    robots = load(args.robots)
    findings = lint(robots.body) if robots.outcome is Outcome.RULES else []
    code = EXIT_UNAVAILABLE if robots.outcome is Outcome.DISALLOW_ALL else EXIT_FINDINGS if findings else EXIT_OK
    if args.json:
        document = {
            "robots_txt": {"source": robots.source, "outcome": robots.outcome.value, "detail": robots.detail},
            "findings": [{"line": f.line, "kind": f.kind, "message": f.message} for f in findings],
            "exit_code": code,
        }
        print(json.dumps(document, indent=2))
        return code
    print(f"robots.txt {robots.source}: {robots.detail}")
    for finding in findings:
        print(finding.as_text())
    print(f"{len(findings)} finding{'s' if len(findings) != 1 else ''}" if findings else "clean: nothing ignored")
    return code


# --- demo -------------------------------------------------------------------------------------------------------------


def run_demo(args: argparse.Namespace) -> int:
    """The demo lives in ``scrapy_rep.demo`` (imported here: Scrapy and the reactor are only needed for it)."""
    from scrapy_rep.demo.main import demo

    return demo(compare=args.compare, serve=args.serve)


# --- entry point ------------------------------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit code 2 (``EXIT_USAGE``)."""

    def error(self, message: str) -> Any:
        raise UsageError(f"{message} (try {self.prog} --help)", self.prog)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="scrapy-rep", description="robots.txt the way Google reads it: test, lint, demo.")
    parser.add_argument("--version", action="version", version=f"scrapy-rep {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    check_cmd = commands.add_parser("check", help="is each URL allowed? (exit 0 all allowed, 1 some disallowed)")
    check_cmd.add_argument("robots", metavar="ROBOTS", help="robots.txt file, - for stdin, or an http(s) URL")
    check_cmd.add_argument("urls", metavar="URL", nargs="+", help="URL or path (starting with /) to check")
    check_cmd.add_argument(
        "--user-agent", "-u", action="append", default=[], metavar="TOKEN",
        help=f"crawler token (repeatable; 'a,b' = ordered tokens of one crawler, SPEC 6.3); default {DEFAULT_TOKEN}",
    )
    check_cmd.add_argument("--json", action="store_true", help="machine-readable output")
    check_cmd.set_defaults(run=run_check)

    lint_cmd = commands.add_parser("lint", help="what the parser ignored or tolerated (exit 0 when clean)")
    lint_cmd.add_argument("robots", metavar="ROBOTS", help="robots.txt file, - for stdin, or an http(s) URL")
    lint_cmd.add_argument("--json", action="store_true", help="machine-readable output")
    lint_cmd.set_defaults(run=run_lint)

    demo_cmd = commands.add_parser("demo", help="crawl a local demo site through the middleware and report")
    mode = demo_cmd.add_mutually_exclusive_group()
    mode.add_argument("--compare", action="store_true", help="also crawl with Scrapy's built-in middleware")
    mode.add_argument("--serve", action="store_true", help="only serve the demo site until Ctrl-C")
    demo_cmd.set_defaults(run=run_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Console-script entry point; returns the exit code."""
    try:
        args = build_parser().parse_args(argv)
        code: int = args.run(args)
    except UsageError as exc:
        print(f"{exc.prog}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. `scrapy-rep demo | head`: stop quietly, as a shell tool does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as exc:  # the contract is one line, never a traceback; this is a bug to report
        print(f"scrapy-rep: internal error (please report): {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_INTERNAL
    return code


if __name__ == "__main__":
    sys.exit(main())
