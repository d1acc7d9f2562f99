"""What deciding per request's User-Agent costs (requests/agents.py; docs/decisions.md), against the
decision itself and Protego's ``can_fetch`` measured in the same run:

- reading a request's tokens: with neither REP_USER_AGENT nor ROBOTSTXT_USER_AGENT set, a request without a header of
  its own and one with; with REP_USER_AGENT set (one identity: nothing read); a header the cache no longer holds (a
  crawl rotating more than 1,024 User-Agent strings reads each one's token again);
- picking the decision form: the origin's own (the crawl's token) and a kept one (another token);
- making another token's form of an origin (a parse of its robots.txt, then ``compact``), over the shared corpus:
  what a pair past the 1,024 kept costs when it comes back.

Prints µs per call and ratios; asserts nothing. Run from the repository root:
``.venv/bin/python -m benchmarks.bench_agents`` (``--calls 200000``).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from protego import Protego
from scrapy import Request
from scrapy.utils.test import get_crawler

from benchmarks._corpus import load_corpus
from scrapy_rep.config import Config
from scrapy_rep.matcher import MAX_BYTES, parse
from scrapy_rep.requests import agents as agents_module
from scrapy_rep.requests.agents import RequestAgents
from scrapy_rep.stores import Entry, Outcome

BROWSER = (b"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 "
           b"Safari/537.36")
ROBOTS = b"User-agent: imagebot\nDisallow: /pages/\n\nUser-agent: *\nDisallow: /private/\nAllow: /\n"
URL = "https://site.example/images/cat.jpg"


def per_call(action: Callable[[], object], calls: int) -> float:
    """µs per call, best of three runs of ``calls``."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        for _ in range(calls):
            action()
        best = min(best, time.perf_counter() - started)
    return best / calls * 1e6


def agents(**settings: object) -> RequestAgents:
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True, "USER_AGENT": "examplebot/1.0", **settings})
    assert crawler.stats is not None
    return RequestAgents(Config.from_settings(crawler.settings), crawler.stats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200_000)
    args = parser.parse_args()
    calls = args.calls
    per_request, one_identity = agents(), agents(REP_USER_AGENT="examplebot")
    plain, own = Request(URL), Request(URL, headers={"User-Agent": "Mozilla/5.0 (compatible; imagebot/2.0)"})
    entry = Entry("https://site.example", Outcome.RULES, 0.0, 1e12, body=ROBOTS)
    form = parse(ROBOTS).compact(per_request.default)
    per_request.rules(("imagebot",), entry, form)  # kept from now on
    protego = Protego.parse(ROBOTS.decode())
    token_of = agents_module._tokens_of.__wrapped__  # a crawl rotating more headers than the cache holds

    anchors = {"decision (AgentRules.allowed)": per_call(lambda: form.allowed(URL), calls),
               "Protego can_fetch": per_call(lambda: protego.can_fetch(URL, "imagebot"), calls)}
    rows = {
        "tokens: one identity (REP_USER_AGENT)": per_call(lambda: one_identity.tokens(own), calls),
        "tokens: per request, no header of its own": per_call(lambda: per_request.tokens(plain), calls),
        "tokens: per request, a header of its own": per_call(lambda: per_request.tokens(own), calls),
        "tokens: a header past the last 1,024 (browser)": per_call(lambda: token_of(BROWSER), calls // 10),
        "form: the crawl's token": per_call(lambda: per_request.decision_form(plain, entry, form), calls),
        "form: another token's, kept": per_call(lambda: per_request.decision_form(own, entry, form), calls),
    }
    decision = anchors["decision (AgentRules.allowed)"]
    for name, micros in {**anchors, **rows}.items():
        print(f"{name:45} {micros:7.3f} µs  {micros / decision:5.2f}x a decision")

    bodies = [body for _, body in load_corpus()]
    if not bodies:
        print("another token's form made: ../shared/corpus/robots not found, skipped")
        return
    made = []
    for body in bodies:
        started = time.perf_counter()
        parse(body, max_bytes=MAX_BYTES).compact(("otherbot",))
        made.append((time.perf_counter() - started) * 1e6)
    made.sort()
    print(f"another token's form made (parse + compact), {len(made)} corpus files: median "
          f"{statistics.median(made):.0f} µs, mean {statistics.mean(made):.0f} µs, 99th percentile "
          f"{made[int(len(made) * 0.99)]:.0f} µs ({statistics.median(made) / decision:,.0f}x a decision, median)")


if __name__ == "__main__":
    main()
