"""``scrapy-rep lint`` on a TDMRep file (``/.well-known/tdmrep.json``, W3C TDM Reservation Protocol): what a crawl
reading it ignores or cannot read, and the rules it does read.

Which sources are TDMRep files (``is_tdmrep_name``, ``looks_like_tdmrep``): a file or URL whose name ends with
``tdmrep.json`` (a URL is then fetched as given, with robots.txt's fetch semantics, as the crawl fetches it), and a
file or stdin whose first byte after any BOM and blanks is ``[`` (a JSON array: no robots.txt starts so).

Findings (``Finding``, line 0: the file as a whole; JSON has no line the parser could name): each problem
``matcher.parse_tdmrep`` reports, as ``tdmrep-malformed`` (an entry skipped, a value unset or read leniently) or
``tdmrep-unreadable`` (not UTF-8, not JSON: no rule is read, and a crawl leaves the origin's TDM reservation unknown);
``not-tdmrep`` for an answer that is not JSON at all (a crawl reads it as no file); ``past-size-cap`` when the file is
longer than the cap (a crawl reads only its start, which is what is linted); ``no-tdmrep-json`` (4xx, a dead-end
redirect) and ``unavailable`` (5xx, 429, network error) for a fetch that gives no file. Exit codes as for robots.txt:
``0`` a file read and nothing to say, ``1`` findings, ``3`` unavailable.

# Decision: for a URL the name decides, not the content: a site URL's robots.txt starting with ``[`` is still linted
# as the robots.txt crawlers read it; only a file or stdin is recognised by its content.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from urllib.parse import urlsplit

from scrapy_rep.matcher import TDMREP_PATH, TdmRep, TdmRule, parse_tdmrep, starts_like_json
from scrapy_rep.reporting.outcome_log import plural
from scrapy_rep.stores import Outcome

from ._common import EXIT_FINDINGS, EXIT_OK, EXIT_UNAVAILABLE, MAX_BYTES, READ_LIMIT
from ._fetch import Robots, fetch, load
from ._lint_lines import Finding

_BLANKS = b"\xef\xbb\xbf \t\r\n"


def is_tdmrep_name(source: str) -> bool:
    """Whether ``source`` (a path or an http(s) URL) names a TDMRep file: its name ends with ``tdmrep.json``."""
    path = urlsplit(source).path if source.startswith(("http://", "https://")) else source
    return path.endswith("tdmrep.json")


def looks_like_tdmrep(body: bytes) -> bool:
    """A body whose first byte after any BOM and blanks is ``[``: a JSON array, as a TDMRep file is."""
    return body.lstrip(_BLANKS)[:1] == b"["


def load_tdmrep(source: str) -> Robots:
    """``source`` read as ``lint`` reads a robots.txt (``_fetch.load``), but a URL is fetched as given (its origin's
    robots.txt is not), with a note when it is not at ``TDMREP_PATH``, where crawlers look."""
    if not source.startswith(("http://", "https://")):
        return load(source, READ_LIMIT)
    note = "" if urlsplit(source).path == TDMREP_PATH else (
        f"{source} is not at {TDMREP_PATH}, where crawlers look: read as given")
    return replace(fetch(source, READ_LIMIT), note=note)


def lint_tdmrep(body: bytes, max_bytes: int = MAX_BYTES, *, truncated: bool = False) -> tuple[list[Finding], TdmRep]:
    """The findings of a TDMRep ``body`` and the rules a crawl reads from it (its first ``max_bytes`` bytes)."""
    findings = []
    if not starts_like_json(body):
        return [Finding(0, "not-tdmrep", "this is not JSON (an HTML page served for a missing file?): a crawl reads "
                                         "it as no file, which states no TDM reservation")], TdmRep()
    if len(body) > max_bytes:
        size = f"more than {len(body) - 1}" if truncated else str(len(body))
        findings.append(Finding(0, "past-size-cap", f"the file is {size} bytes, longer than the {max_bytes}-byte cap: "
                                                    f"a crawl reads only its first {max_bytes} bytes (linted below)"))
    rules = parse_tdmrep(body[:max_bytes])
    kind = "tdmrep-unreadable" if rules.unreadable else "tdmrep-malformed"
    unknown = "; a crawl leaves the origin's TDM reservation unknown (tdm and train-ai refused)" if rules.unreadable \
        else ""
    findings += [Finding(0, kind, problem + unknown) for problem in rules.problems]
    return findings, rules


def _fetch_finding(answer: Robots) -> Finding:
    """No file to lint: what the fetch's outcome means to a crawl instead."""
    if answer.outcome is Outcome.DISALLOW_ALL:
        return Finding(0, "unavailable", "no tdmrep.json was read: a crawl leaves the origin's TDM reservation unknown "
                                         "until it can be (tdm and train-ai refused)")
    return Finding(0, "no-tdmrep-json", "no tdmrep.json at this URL: a crawl reads no TDM reservation")


_READINGS = {1: "TDM rights reserved", 0: "not reserved"}


def _reading(rule: TdmRule) -> str:
    return "unset" if rule.reservation is None else _READINGS[rule.reservation]


def rules_summary(rules: TdmRep) -> str:
    """``3 rules read: TDM rights reserved for "/papers/*" (entry 1, tdm-policy https://...); not reserved for ...``."""
    if not rules.rules:
        return "0 rules read: no TDM reservation stated for any path"
    parts: dict[str, list[str]] = {}
    for rule in rules.rules:
        policy = f", tdm-policy {rule.policy}" if rule.policy else ""
        parts.setdefault(_reading(rule), []).append(f"{json.dumps(rule.location)} (entry {rule.index + 1}{policy})")
    said = "; ".join(f"{reading} for {', '.join(where)}" for reading, where in parts.items())
    return f"{plural(len(rules.rules), 'rule')} read: {said}"


def _detail(answer: Robots) -> str:
    if answer.outcome is not Outcome.RULES:
        what = "no file" if answer.outcome is Outcome.ALLOW_ALL else "unavailable"
        return f"{answer.said}: {what}"
    size = f"more than {len(answer.body) - 1} bytes" if answer.truncated else plural(len(answer.body), "byte")
    return f"{answer.said}, {size}" if answer.said else size


def run_tdmrep_lint(answer: Robots, as_json: bool, note: str = "") -> int:
    """Lint the TDMRep file ``answer`` holds (or say why there is none) and print it; the exit code."""
    if answer.outcome is Outcome.RULES:
        findings, rules = lint_tdmrep(answer.body, truncated=answer.truncated)
    else:
        findings, rules = [_fetch_finding(answer)], TdmRep()
    code = _exit_code(answer, findings)
    notes = [text for text in (answer.note, note) if text]
    read = answer.outcome is Outcome.RULES and not any(f.kind == "not-tdmrep" for f in findings)
    if as_json:
        document = {
            "tdmrep_json": {"source": answer.source, "outcome": answer.outcome.value, "status": answer.status,
                            "redirects": answer.redirects, "detail": _detail(answer)},
            "notes": notes,
            "findings": [finding.as_json() for finding in findings],
            "rules": [{"entry": rule.index + 1, "location": rule.location, "tdm-reservation": rule.reservation,
                       "tdm-policy": rule.policy} for rule in rules.rules],
            "reserved": [rule.location for rule in rules.rules if rule.reservation == 1],
            "exit_code": code,
        }
        print(json.dumps(document, indent=2))
        return code
    for text in notes:
        print(text)
    print(f"tdmrep.json {answer.source}: {_detail(answer)}")
    for finding in findings:
        print(finding.as_text())
    if read and not rules.unreadable:
        print(rules_summary(rules))
    print(_summary(read, findings))
    return code


def _summary(read: bool, findings: Sequence[Finding]) -> str:
    if not read:
        return "nothing linted: the answer is not a TDMRep file"
    return f"{plural(len(findings), 'finding')}" if findings else "clean: nothing ignored"


def _exit_code(answer: Robots, findings: Sequence[Finding]) -> int:
    if answer.outcome is Outcome.DISALLOW_ALL:
        return EXIT_UNAVAILABLE
    return EXIT_FINDINGS if findings else EXIT_OK


def tdmrep_json_help() -> str:
    """What ``lint``'s help says of TDMRep files."""
    return ("a file or URL named *tdmrep.json (a URL is fetched as given), or a file or stdin starting with '[', is "
            "linted as a TDMRep file (W3C TDM Reservation Protocol): each problem a crawl meets reading it "
            "(tdmrep-malformed, tdmrep-unreadable, not-tdmrep, past-size-cap) and the rules it reads")

