"""``scrapy-rep lint ROBOTS [--all] [--json]``: what Google's parser ignores or tolerates, line by line, after the
findings about the whole file (an HTML page in place of a robots.txt; content past the size cap and the line the cap
cuts, SPEC 4.4). On an HTML page the text output lists only the findings about the whole file and counts the rest by
kind (``--all`` and ``--json`` list every one). A TDMRep file (``tdmrep.json``: by its name, or a file or stdin
starting with ``[``) is linted as one instead (``_lint_tdmrep``)."""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from scrapy_rep.matcher import ParseReport, report
from scrapy_rep.reporting.outcome_log import plural
from scrapy_rep.stores import Outcome

from ._common import EXIT_FINDINGS, EXIT_OK, EXIT_UNAVAILABLE, MAX_BYTES, READ_LIMIT
from ._fetch import Robots, load, looks_like_html
from ._lint_lines import RULES, Finding, bom_length, cut_line_finding, line_findings
from ._lint_tdmrep import is_tdmrep_name, load_tdmrep, looks_like_tdmrep, run_tdmrep_lint, tdmrep_json_help

#: Text output lists this many findings unless ``--all`` (``--json`` always lists every one).
SHOWN = 20
#: The lost rules named in the size-cap finding's text (``--json`` lists every one).
LOST_NAMED = 5
#: The kinds of finding about the whole file: on an HTML page, the only ones the text output lists without ``--all``.
WHOLE_FILE = ("html-page", "past-size-cap", "cut-at-cap")
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")


def add_parser(commands: argparse._SubParsersAction[Any]) -> None:
    """The ``lint`` subcommand's arguments."""
    cmd = commands.add_parser("lint", help="what the parser ignored or tolerated (exit 0 when clean)")
    cmd.add_argument("robots", metavar="ROBOTS",
                     help="robots.txt file, - for stdin, or an http(s) URL (a site URL: its /robots.txt); "
                          + tdmrep_json_help())
    cmd.add_argument("--all", action="store_true",
                     help=f"list every finding (default: the first {SHOWN}; on an HTML page, those about the file)")
    cmd.add_argument("--json", action="store_true", help="machine-readable output (every finding)")
    cmd.set_defaults(run=run_lint)


def lint(body: bytes, max_bytes: int = MAX_BYTES, *, truncated: bool = False,
         content_type: str | None = None) -> list[Finding]:
    """Every finding of ``body``: first the whole-file ones (an HTML page), then each line's, in line order, from
    the matcher's per-line ``report`` (read exactly as ``parse`` reads it), then content past ``max_bytes``, at the
    line the cap falls in, and that line when the cap cuts it into something else (SPEC 4.4). ``truncated``:
    ``body`` is only the start of a longer source."""
    capped = report(body, max_bytes=max_bytes)
    findings = line_findings(capped.lines, body[:max_bytes])
    if looks_like_html(body, content_type):
        findings.insert(0, _html_finding(capped, capped.ignored_lines))
    if len(body) > max_bytes:
        findings.append(_past_cap_finding(body, max_bytes, capped, truncated))
        cut = cut_line_finding(body, max_bytes, capped, truncated)
        findings += [cut] if cut else []
    return findings


def _html_finding(capped: ParseReport, ignored: int) -> Finding:
    read = capped.valid_directives
    still = f"; {plural(read, 'line')} still read as directives" if read else ""
    return Finding(1, "html-page", f"this looks like an HTML page, not a robots.txt: {plural(ignored, 'line')} "
                                   f"ignored{still} (often a site's page served for a missing /robots.txt)")


def _past_cap_finding(body: bytes, max_bytes: int, capped: ParseReport, truncated: bool) -> Finding:
    """SPEC 4.4: how many bytes past the cap are ignored, and the rules lost with them."""
    ignored = len(body) - max_bytes
    size = f"more than {len(body) - 1}" if truncated else str(len(body))
    count = f"more than {ignored - 1}" if truncated else str(ignored)
    lost = lost_rules(body, max_bytes)
    message = (f"the file is {size} bytes, longer than the {max_bytes}-byte cap: from here on ({count} bytes) it "
               f"is ignored (SPEC 4.4); {_lost_in_words(lost, truncated)}")
    data = {"ignored_bytes": ignored, "ignored_bytes_exact": not truncated,
            "lost_rules": [{"line": line, "text": text} for line, text in lost]}
    return Finding(capped.last_line_seen, "past-size-cap", message, data)


def lost_rules(body: bytes, max_bytes: int) -> list[tuple[int, str]]:
    """(line number, text) of every allow/disallow line of a group that starts past ``max_bytes``: the matcher reads
    the whole ``body`` (no cap) to find them."""
    skip = bom_length(body)
    text = body[skip:]
    starts = [skip, *(skip + match.end() for match in _LINE_BREAK.finditer(text))]
    raw_lines = _LINE_BREAK.split(text)
    return [
        (line.line_num, raw_lines[line.line_num - 1].decode("utf-8", "replace").strip()[:100])
        for line in report(body, max_bytes=None).lines
        if line.kind in RULES and not line.before_user_agent and starts[line.line_num - 1] >= max_bytes
    ]


def _lost_in_words(lost: Sequence[tuple[int, str]], truncated: bool) -> str:
    if not lost:
        return "no rule is lost" + (" in what was read" if truncated else "")
    named = ", ".join(f"line {line} {text!r}" for line, text in lost[:LOST_NAMED])
    more = f", ... and {len(lost) - LOST_NAMED} more" if len(lost) > LOST_NAMED else ""
    return f"{plural(len(lost), 'rule')} lost past the cap: {named}{more}"


def _fetch_finding(robots: Robots) -> Finding:
    """No robots.txt body to lint: what the fetch's outcome means instead (SPEC 2.2)."""
    if robots.outcome is Outcome.DISALLOW_ALL:
        return Finding(0, "unavailable", "no robots.txt was read: crawlers disallow the whole origin until it can "
                                         "be fetched (SPEC 2.2)")
    return Finding(0, "no-robots-txt", "no robots.txt at this URL: crawlers allow everything (SPEC 2.2)")


def _exit_code(robots: Robots, findings: Sequence[Finding]) -> int:
    if robots.outcome is Outcome.DISALLOW_ALL:
        return EXIT_UNAVAILABLE
    return EXIT_FINDINGS if findings else EXIT_OK


def _summary(robots: Robots, findings: Sequence[Finding], shown: int) -> str:
    """The last line of the text output; "clean" only for a robots.txt body that was read."""
    if robots.outcome is not Outcome.RULES:
        return "nothing linted: the answer is not a robots.txt"
    if not findings:
        return "clean: nothing ignored"
    hidden = f" ({shown} shown; --all lists every one)" if shown < len(findings) else ""
    return f"{plural(len(findings), 'finding')}{hidden}"


def run_lint(args: argparse.Namespace) -> int:
    if is_tdmrep_name(args.robots):
        return run_tdmrep_lint(load_tdmrep(args.robots), args.json)
    robots = load(args.robots, READ_LIMIT)
    if not robots.origin and robots.outcome is Outcome.RULES and looks_like_tdmrep(robots.body):  # a file or stdin
        note = f"{robots.source} starts with '[', as a JSON array does: linted as a TDMRep file (tdmrep.json)"
        return run_tdmrep_lint(robots, args.json, note)
    if robots.outcome is Outcome.RULES:
        findings = lint(robots.body, truncated=robots.truncated, content_type=robots.content_type)
    else:
        findings = [_fetch_finding(robots)]
    code = _exit_code(robots, findings)
    if args.json:
        document = {
            "robots_txt": {"source": robots.source, "outcome": robots.outcome.value, "status": robots.status,
                           "redirects": robots.redirects, "detail": robots.detail},
            "notes": [robots.note] if robots.note else [],
            "findings": [finding.as_json() for finding in findings],
            "exit_code": code,
        }
        print(json.dumps(document, indent=2))
        return code
    if robots.note:
        print(robots.note)
    print(f"robots.txt {robots.source}: {robots.detail}")
    listed, rest = _listed(findings, args.all)
    for finding in listed:
        print(finding.as_text())
    if rest:
        print(rest)
    print(_summary(robots, findings, len(listed)))
    return code


def _listed(findings: Sequence[Finding], every: bool) -> tuple[Sequence[Finding], str]:
    """The findings the text output lists, and the line that stands for the others ("": none left out). ``every``
    (``--all``): all of them. An HTML page (``html-page`` first): its whole-file findings, the others counted by kind
    (a page's markup gives a finding or two per line, which say nothing the ``html-page`` finding does not); any
    other file: the first ``SHOWN``."""
    if every:
        return findings, ""
    if findings and findings[0].kind == "html-page":
        listed = [finding for finding in findings if finding.kind in WHOLE_FILE]
        counts = Counter(finding.kind for finding in findings if finding.kind not in WHOLE_FILE)
        kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(counts.items(), key=lambda item: (-item[1],
                                                                                                          item[0])))
        rest = f"... and {counts.total()} more about the page's lines, not listed for an HTML page: {kinds}"
        return listed, rest if counts else ""
    shown = min(SHOWN, len(findings))
    return findings[:shown], f"... and {len(findings) - shown} more" if shown < len(findings) else ""
