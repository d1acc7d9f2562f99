"""Coverage-guided fuzz target for the robots.txt parser and matcher (SPEC 4.5, 7; issue 6).

One input is a robots.txt body, optionally followed by ``SEPARATOR`` and newline-separated URLs. Without URLs the
target probes a fixed set plus URLs made from the body's own rule values, so plain robots.txt files (the shared
corpus) are good seeds. For every input it checks:

* ``parse`` and ``report`` never raise, whatever the bytes or size (SPEC 4.5), nor do ``crawl_delay``,
  ``clean_url`` over ``clean_params`` and the report's accessors;
* ``allowed`` returns a bool and agrees with ``explain`` and with the deciding rule's kind (SPEC 7.4);
* every decision equals Google's C++ library (jwm.robotstxt bindings), when installed, for ASCII URLs (what
  Scrapy sends: request URLs are percent-encoded), given the whole body (Google has no size cap).

Run (see fuzz/README.md)::

    .venv/bin/python fuzz/fuzz_matcher.py -max_total_time=600 fuzz/corpus ../shared/corpus/robots
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

SEPARATOR = b"\n\x00URLS\x00\n"
AGENTS = ("foobot", "googlebot", "googlebot-news", "x")
PROBES = ("/", "/a", "/index.html", "/a/b?c=d", "/%C3%A9", "/é", "http://example.com/x;p?q#f", "", "//h/p", "?q")
_RULE_VALUE = re.compile(rb"^[ \t]*(?:dis)?allow[ \t]*:?[ \t]*([^#\r\n]*)", re.IGNORECASE | re.MULTILINE)
_MAX_PROBED_RULES = 16

GoogleAllowed = Callable[[bytes, str, str], bool]


def split_input(data: bytes) -> tuple[bytes, list[str]]:
    """The body and the URLs to decide for one fuzz input."""
    body, sep, tail = data.partition(SEPARATOR)
    if sep:
        return body, tail.decode("utf-8", "replace").split("\n")
    derived = [m.group(1).decode("utf-8", "replace").strip() for m in _RULE_VALUE.finditer(body)]
    derived = derived[:_MAX_PROBED_RULES]
    return body, [*PROBES, *derived, *(v.replace("*", "x").rstrip("$") for v in derived)]


def load_google() -> GoogleAllowed | None:
    """Google's RobotsMatcher as an oracle, or None when jwm.robotstxt is not installed."""
    try:
        from jwm.robotstxt import googlebot
    except ImportError:
        return None

    def allowed(body: bytes, agent: str, url: str) -> bool:
        return bool(googlebot.RobotsMatcher().OneAgentAllowedByRobots(body, agent, url))

    return allowed


def check_one(data: bytes, google: GoogleAllowed | None) -> None:
    """Run every check on one input; raises AssertionError (a finding) when an invariant breaks."""
    from scrapy_rep.matcher import clean_url, parse, report

    body, urls = split_input(data)
    summary = report(body)
    assert summary.valid_directives + summary.unknown_directives <= summary.last_line_seen
    assert all(isinstance(sitemap, str) for sitemap in summary.sitemaps)
    capped = parse(body)
    whole = parse(body, max_bytes=None)
    for agent in AGENTS:
        delay = whole.crawl_delay(agent)
        assert delay is None or delay >= 0
    assert all(rule.params for rule in whole.clean_params)
    for url in urls:
        cleaned = clean_url(url, whole.clean_params)
        assert cleaned is None or (cleaned[1] and len(cleaned[0]) < len(url)), (body, url)
        for agent in AGENTS:
            verdict = whole.explain(url, agent)
            assert isinstance(str(verdict), str)
            allowed = whole.allowed(url, agent)
            assert type(allowed) is bool, (url, agent, allowed)
            assert verdict.allowed is allowed, (body, url, agent)
            assert verdict.rule is None or verdict.rule.allow is allowed, (body, url, agent, verdict)
            assert type(capped.allowed(url, agent)) is bool
            if google is not None and url.isascii():
                assert allowed is google(body, agent, url), ("differs from Google", body, url, agent, str(verdict))


def main() -> None:
    import atheris  # type: ignore[import-untyped]

    google = load_google()
    with atheris.instrument_imports(include=["scrapy_rep.matcher"]):
        import scrapy_rep.matcher  # noqa: F401

    def test_one_input(data: bytes) -> None:
        check_one(data, google)

    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
