"""Benchmark: scrapy_rep's matcher against Protego (Scrapy's default) and urllib.robotparser, same inputs, one process.

Run from the repository root: ``.venv/bin/python benchmarks/bench_matcher.py`` (``--quick`` for a shorter run).
Prints three tables (the crawler workload on ../shared/corpus/robots/, scaling with the number of rules,
adversarial wildcard patterns), the memory held per origin, and the ratios the project targets. scrapy_rep runs
twice: the full ``Robots`` (rule index built lazily at the first decision) and the compact form a crawler keeps per
origin (``Robots.compact(agent)``, its index built at its first decision). Figures are printed, never asserted. The
scaling and adversarial tables also time Google's C++ robotstxt library through its Python binding
(``jwm.robotstxt``, if installed): it has no parse-once API, so each of its decisions parses the whole file
("parse + decide per call").
``--json PATH`` also writes every table as JSON, with the run's context (date, machine, Python, command).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import sys
import time
import tracemalloc
import urllib.robotparser
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from itertools import cycle, islice
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _corpus import CORPUS, load_corpus, synthetic_robots, urls_for
from bench_broad import run_context
from protego import Protego

from scrapy_rep.matcher import HOT_RULES, AgentRules, Robots, _compact, parse
from scrapy_rep.matcher._urls import decision_path
from scrapy_rep.robotparser import RobotParser
from scrapy_rep.stores import Entry, Outcome

SEED = 20260101
URLS_PER_FILE = 200
SIZES = (10, 100, 1_000, 10_000)
URL = "https://example.com/some/page.html"
NAME = 22  # width of the parser column


@dataclass(frozen=True)
class Parser:
    """One implementation: how it parses a body and how it decides a list of URLs with a parsed file."""

    name: str
    parse: Callable[[bytes, str, str], Any]  # (raw bytes, the same decoded as text, agent) -> parsed file
    decide_all: Callable[[Any, Sequence[str], str], int]  # -> how many URLs were allowed


def _ours_decide(robots: Any, urls: Sequence[str], agent: str) -> int:
    allowed = robots.allowed
    return sum(1 for url in urls if allowed(url, agent))


def _compact_decide(form: AgentRules, urls: Sequence[str], _: str) -> int:
    allowed = form.allowed  # the agent was fixed by compact()
    return sum(1 for url in urls if allowed(url))


def _robotparser_decide(parser: RobotParser, urls: Sequence[str], agent: str) -> int:
    allowed = parser.allowed
    user_agent = agent.encode()  # as Scrapy's built-in middleware passes it: the User-Agent header's bytes
    return sum(1 for url in urls if allowed(url, user_agent))


def _protego_decide(robots: Any, urls: Sequence[str], agent: str) -> int:
    can_fetch = robots.can_fetch
    return sum(1 for url in urls if can_fetch(url, agent))


def _urllib_parse(_: bytes, text: str, __: str) -> urllib.robotparser.RobotFileParser:
    robots = urllib.robotparser.RobotFileParser()
    robots.parse(text.splitlines())
    return robots


def _urllib_decide(robots: Any, urls: Sequence[str], agent: str) -> int:
    can_fetch = robots.can_fetch
    return sum(1 for url in urls if can_fetch(agent, url))


# scrapy_rep reads bytes (as Scrapy hands them to a RobotParser); the others get text decoded beforehand, untimed.
# "scrapy_rep compact" parses and builds the compact form for the agent: a crawler does both when it adopts a file.
PARSERS = (
    Parser("scrapy_rep", lambda data, _, __: parse(data), _ours_decide),
    Parser("scrapy_rep compact", lambda data, _, agent: parse(data).compact(agent), _compact_decide),
    Parser("protego", lambda _, text, __: Protego.parse(text), _protego_decide),
    Parser("urllib", _urllib_parse, _urllib_decide),
)


def _google_parse(_: bytes, text: str, __: str) -> tuple[Any, str]:
    from jwm.robotstxt import googlebot

    return googlebot.RobotsMatcher(), text  # nothing parsed: each call parses the whole text again


def _google_decide(parsed: tuple[Any, str], urls: Sequence[str], agent: str) -> int:
    matcher, text = parsed
    allowed = matcher.OneAgentAllowedByRobots
    return sum(1 for url in urls if allowed(text, agent, url))


GOOGLE = Parser("google (parse+decide)", _google_parse, _google_decide)
try:
    import jwm.robotstxt.googlebot  # noqa: F401
except ImportError:  # Google's library not installed: the tables without it
    OTHERS: tuple[Parser, ...] = ()
else:
    OTHERS = (GOOGLE,)
#: The scaling and adversarial tables: PARSERS and Google's library (parse + decide per call), if installed.
ALL_PARSERS = (*PARSERS, *OTHERS)

# A library user's workload (parse, then a few URLs): the public API, Scrapy's RobotParser interface, and Protego.
LIBRARY_PARSERS = (
    PARSERS[0],
    Parser("scrapy_rep.RobotParser", lambda data, _, __: RobotParser(parse(data)), _robotparser_decide),
    PARSERS[2],
)
LIBRARY_URLS = 5


@dataclass
class CrawlerResult:
    parse_s: float
    first_s: float  # the decisions on freshly parsed files (the full Robots builds its rule index lazily here)
    steady_s: float  # the same decisions again
    decisions: int
    memory_per_file: float
    allowed: int

    @property
    def total_s(self) -> float:
        return self.parse_s + self.first_s


def bench_crawler(files: list[tuple[str, bytes]], agent: str, repeats: int, urls_per_file: int = URLS_PER_FILE,
                  parsers: Sequence[Parser] = PARSERS, memory: bool = True) -> dict[str, CrawlerResult]:
    """Parse each file, decide its URLs once (the first pass builds any lazy structure), then again.

    The parsers take turns file by file, so that a change in machine load touches all of them alike, and which one
    goes first rotates from file to file (the first to read a file's body and URLs reads them from memory, the
    others from the CPU caches: with scrapy_rep always first, its first-pass ratio in --quick runs was 5.6x where
    the rotation gives 6.4x); each phase
    of each file keeps its best time over ``repeats`` rounds, and the results are summed over the files. Every
    parsed file stays alive until the round ends, as in a crawler's cache. ``memory``: also measure what each
    parser holds per file (``_memory_per_file``; 0 if not).
    """
    rng = random.Random(SEED)
    texts = [body.decode("utf-8", "replace") for _, body in files]
    urls = [urls_for(site, body, rng, urls_per_file) for site, body in files]
    best = {parser.name: [[float("inf")] * 3 for _ in files] for parser in parsers}
    allowed = dict.fromkeys((parser.name for parser in parsers), 0)
    for _ in range(repeats):
        kept: list[Any] = []
        gc.collect()
        gc.disable()  # as timeit does: a collection would charge one parser for the objects of all three
        try:
            for i, ((_, body), text, batch) in enumerate(zip(files, texts, urls, strict=True)):
                turn = i % len(parsers)  # each parser goes first as often as the others: the first of a file
                for parser in (*parsers[turn:], *parsers[:turn]):  # meets its URLs and body cold in the CPU caches
                    start = time.perf_counter()
                    robots = parser.parse(body, text, agent)
                    parsed_at = time.perf_counter()
                    allowed[parser.name] += parser.decide_all(robots, batch, agent)
                    first_at = time.perf_counter()
                    parser.decide_all(robots, batch, agent)
                    steady_at = time.perf_counter()
                    kept.append(robots)
                    times = (parsed_at - start, first_at - parsed_at, steady_at - first_at)
                    best[parser.name][i] = [min(a, b) for a, b in zip(best[parser.name][i], times, strict=True)]
        finally:
            gc.enable()
        del kept
    decisions = sum(len(batch) for batch in urls)
    results = {}
    for parser in parsers:
        parse_s, first_s, steady_s = (sum(column) for column in zip(*best[parser.name], strict=True))
        held = _memory_per_file(parser, files, texts, urls, agent) if memory else 0.0
        allowed_once = allowed[parser.name] // repeats
        results[parser.name] = CrawlerResult(parse_s, first_s, steady_s, decisions, held, allowed_once)
    return results


def _memory_per_file(
    parser: Parser, files: list[tuple[str, bytes]], texts: list[str], urls: list[list[str]], agent: str
) -> float:
    """Bytes still allocated per file once every file is parsed and decided (caches and indexes included, so for
    the compact form the hot indexes of the last ``HOT_RULES`` rules)."""

    def parse_and_decide() -> list[Any]:
        parsed = [parser.parse(body, text, agent) for (_, body), text in zip(files, texts, strict=True)]
        for robots, batch in zip(parsed, urls, strict=True):
            parser.decide_all(robots, batch, agent)
        return parsed

    return _retained(parse_and_decide) / len(files)


def _retained(build: Callable[[], object]) -> int:
    """Bytes that tracemalloc still counts once ``build()`` has returned, its result alive."""
    gc.collect()
    tracemalloc.start()
    kept = build()  # alive until measured
    gc.collect()
    retained = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del kept
    return retained


@dataclass
class MemoryResult:
    per_origin: dict[str, float]  # bytes per origin of each way of holding it, the compact forms cold
    hot_rules: int  # rules in the built indexes of the hot forms, filled to the budget from the corpus
    hot_bytes: int  # what those indexes hold


@contextmanager
def _hot_budget(rules: int) -> Iterator[None]:
    """``_compact._HOT``'s budget set to ``rules`` meanwhile (0: only the newest form keeps its index)."""
    hot = _compact._HOT
    saved, hot.budget = hot.budget, rules
    try:
        yield
    finally:
        hot.budget = saved


def bench_memory(files: list[tuple[str, bytes]], agent: str) -> MemoryResult:
    """What the middleware holds per origin (an ``Entry`` and the compact form, cold), its parts, and what Scrapy's
    built-in (a Protego) or the old state (an ``Entry`` and a full ``Robots`` after one decision) would hold; then
    the hot cache at its budget. Each object is made and decides one URL, as an adopted file does."""
    rng = random.Random(SEED)
    texts = [body.decode("utf-8", "replace") for _, body in files]
    firsts = [urls_for(site, body, rng, 1)[0] for site, body in files]

    def entry(site: str, body: bytes) -> Entry:
        return Entry(origin=f"https://{site}", outcome=Outcome.RULES, fetched_at=0.0, expires_at=1.0, body=body)

    def form(body: bytes, url: str) -> AgentRules:
        rules = parse(body).compact(agent)
        rules.allowed(url)
        return rules

    def full(body: bytes, url: str) -> Robots:
        robots = parse(body)
        robots.allowed(url, agent)
        return robots

    def protego(text: str, url: str) -> Protego:
        robots = Protego.parse(text)
        robots.can_fetch(url, agent)
        return robots

    kinds: dict[str, Callable[[str, bytes, str, str], tuple[object, ...]]] = {
        "entry + compact form": lambda site, body, _, url: (entry(site, body), form(body, url)),
        "compact form alone": lambda _, body, __, url: (form(body, url),),
        "entry alone": lambda site, body, _, __: (entry(site, body),),
        "Protego": lambda _, __, text, url: (protego(text, url),),
        "entry + full Robots": lambda site, body, _, url: (entry(site, body), full(body, url)),
    }
    inputs = [(site, body, text, url) for (site, body), text, url in zip(files, texts, firsts, strict=True)]
    per_origin = {}
    with _hot_budget(0):
        for name, make in kinds.items():
            per_origin[name] = _retained(lambda make=make: [obj for args in inputs for obj in make(*args)]) / len(files)
    return MemoryResult(per_origin, *_hot_cache([body for _, body in files], agent))


def _built(form: AgentRules) -> AgentRules:
    """``form`` after enough decisions to build its index (its first ``COLD_DECISIONS`` scan the packed patterns)."""
    for _ in range(_compact.COLD_DECISIONS + 1):
        form.allowed(URL)
    return form


def _hot_cache(bodies: list[bytes], agent: str) -> tuple[int, int]:
    """(rules, bytes) of the hot indexes at the budget: forms are made from ``bodies`` (round and round) until the
    oldest let their index go; the bytes are what tracemalloc sees freed when all of them let it go. A file with more
    rules than a tenth of the budget is left out: alone it would take the whole budget (a form over it stays built)."""
    hot = _compact._HOT
    tiny = parse(b"User-agent: *\nDisallow: /private\n")

    def let_go() -> None:
        with _hot_budget(0):
            _built(tiny.compact(agent))  # the newest built form: every other lets its index go

    let_go()
    gc.collect()
    tracemalloc.start()
    forms = []
    for body in islice(cycle(bodies), hot.budget):  # enough: each form with rules adds one rule or more
        form = parse(body).compact(agent)
        size = len(form.rules())
        if size > hot.budget // 10:
            continue
        before = hot.rules
        forms.append(_built(form))
        if hot.rules < before + size:  # older forms let their index go: the budget is full
            break
    rules = hot.rules
    gc.collect()
    filled = tracemalloc.get_traced_memory()[0]
    let_go()
    gc.collect()
    freed = filled - tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return rules, freed


def bench_scaling(agent: str, budget_s: float) -> dict[str, dict[int, float]]:
    """ns per decision (steady state, parse excluded) for synthetic files of each size in SIZES."""
    results: dict[str, dict[int, float]] = {parser.name: {} for parser in ALL_PARSERS}
    for size in SIZES:
        rng = random.Random(SEED + size)
        text = synthetic_robots(size, rng)
        urls = urls_for("example.com", text.encode(), rng, URLS_PER_FILE)
        for parser in ALL_PARSERS:
            robots = parser.parse(text.encode(), text, agent)
            parser.decide_all(robots, urls[:1], agent)  # warm: builds lazy structures
            run = partial(parser.decide_all, robots, urls, agent)
            results[parser.name][size] = _ns_per_call(run, len(urls), budget_s)
    return results


ADVERSARIAL = (
    ("/*a*a*a*a*a*a*a*a*a*a*b  vs /a{5000}", "/*a*a*a*a*a*a*a*a*a*a*b", "/" + "a" * 5000),
    ("/*a*a*a*a*a*a*a*a*a*ab$  vs /a{5000}", "/*a*a*a*a*a*a*a*a*a*ab$", "/" + "a" * 5000),
    ("/(*a){100}*b             vs /a{5000}", "/" + "*a" * 100 + "*b", "/" + "a" * 5000),
    ("/*a{50}b                 vs /a{5000}", "/*" + "a" * 50 + "b", "/" + "a" * 5000),
    ("/*ab*ab*ab*ab*ab*ab*c    vs /(ab){2500}", "/*ab*ab*ab*ab*ab*ab*c", "/" + "ab" * 2500),
)


def bench_adversarial(agent: str, budget_s: float) -> list[tuple[str, dict[str, tuple[float, bool]]]]:
    """µs per decision for one rule with a hostile pattern against a long path (a guarded single run first)."""
    rows = []
    for label, pattern, path in ADVERSARIAL:
        text = f"User-agent: *\nDisallow: {pattern}\n"
        row = {}
        for parser in ALL_PARSERS:
            robots = parser.parse(text.encode(), text, agent)
            start = time.perf_counter()
            allowed = parser.decide_all(robots, [path], agent) == 1
            once = time.perf_counter() - start
            run = partial(parser.decide_all, robots, [path], agent)
            per_call = once * 1e9 if once > budget_s else _ns_per_call(run, 1, budget_s)
            row[parser.name] = (per_call / 1e3, allowed)
        rows.append((label, row))
    return rows


def _ns_per_call(run: Callable[[], object], calls: int, budget_s: float) -> float:
    """ns per call of the best of several timed runs of ``run`` (each making ``calls`` calls) within a budget."""
    best = float("inf")
    deadline = time.perf_counter() + budget_s
    rounds = 0
    while rounds < 3 or time.perf_counter() < deadline:
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
        rounds += 1
        if rounds >= 3 and best > budget_s:
            break
    return best * 1e9 / calls


def bench_path_extraction(files: list[tuple[str, bytes]], repeats: int) -> float:
    """ns per URL of scrapy_rep's URL-to-path step alone (``decision_path``, part of every decision), timed as the
    crawler workload is (same URLs, best per file of ``repeats`` rounds, GC paused)."""
    rng = random.Random(SEED)
    batches = [urls_for(site, body, rng, URLS_PER_FILE) for site, body in files]
    best = [float("inf")] * len(batches)
    gc.disable()
    try:
        for _ in range(repeats):
            for i, batch in enumerate(batches):
                start = time.perf_counter()
                for url in batch:
                    decision_path(url)
                best[i] = min(best[i], time.perf_counter() - start)
    finally:
        gc.enable()
    return sum(best) * 1e9 / sum(len(batch) for batch in batches)


def print_crawler(results: dict[str, CrawlerResult], files: int, title: str = "Crawler workload",
                  urls: int = URLS_PER_FILE) -> None:
    print(f"\n{title}: {files} corpus files, {urls} URLs each (per file, best of the rounds)")
    print(
        f"{'parser':<{NAME}} {'parse ms':>9} {'µs/file':>8} {'decide ms':>10} {'ns/dec':>8} {'steady ns/dec':>14} "
        f"{'total ms':>9} {'KiB/file':>9} {'allowed':>8}"
    )
    for name, r in results.items():
        print(
            f"{name:<{NAME}} {r.parse_s * 1e3:9.1f} {r.parse_s * 1e6 / files:8.1f} {r.first_s * 1e3:10.1f} "
            f"{r.first_s * 1e9 / r.decisions:8.0f} {r.steady_s * 1e9 / r.decisions:14.0f} {r.total_s * 1e3:9.1f} "
            f"{r.memory_per_file / 1024:9.1f} {r.allowed:8d}"
        )


def print_scaling(results: dict[str, dict[int, float]]) -> None:
    print("\nScaling: ns per decision (steady state), synthetic files, 80% plain prefixes / 20% wildcards"
          + ("; google: parse + decide per call (no parse-once API)" if OTHERS else ""))
    print(f"{'parser':<{NAME}}" + "".join(f"{size:>10,}" for size in SIZES) + f"{'10k/10':>10}")
    for name, row in results.items():
        growth = row[SIZES[-1]] / row[SIZES[0]]
        print(f"{name:<{NAME}}" + "".join(f"{row[size]:10.0f}" for size in SIZES) + f"{growth:9.1f}x")


def print_adversarial(rows: list[tuple[str, dict[str, tuple[float, bool]]]]) -> None:
    print("\nAdversarial wildcards: µs per decision (allowed?); urllib ignores wildcards, so its answers differ")
    print(f"{'case':<40}" + "".join(f"{parser.name:>22}" for parser in ALL_PARSERS))
    for label, row in rows:
        print(f"{label:<40}"
              + "".join(f"{row[p.name][0]:15.1f} ({'y' if row[p.name][1] else 'n'})  " for p in ALL_PARSERS))


def print_memory(result: MemoryResult, files: int) -> None:
    print(f"\nMemory per origin: what tracemalloc still counts, {files} corpus files, after one decision each")
    print("(entry: scrapy_rep.stores.Entry, body compressed; compact forms cold: only the newest keeps its index)")
    for name, size in result.per_origin.items():
        target = "   (target <= 3 KiB per origin)" if name == "entry + compact form" else ""
        print(f"  {name:<22} {size / 1024:6.2f} KiB{target}")
    print(
        f"  + {result.hot_bytes / 2**20:.1f} MiB for the whole process, at most HOT_RULES = {HOT_RULES:,} rules: the "
        f"hot indexes ({result.hot_rules:,} rules measured, {result.hot_bytes / max(result.hot_rules, 1):.0f} "
        "bytes per rule)"
    )


def ratios(crawler: dict[str, CrawlerResult] | None, library: dict[str, CrawlerResult] | None,
           scaling: dict[str, dict[int, float]]) -> dict[str, float]:
    """The figures ``print_ratios`` prints, by name (Protego's time over scrapy_rep's; growth: 10k rules over 10)."""
    out: dict[str, float] = {}
    if crawler:
        ours, theirs, form = crawler["scrapy_rep"], crawler["protego"], crawler["scrapy_rep compact"]
        out |= {"first_pass": theirs.first_s / ours.first_s, "steady": theirs.steady_s / ours.steady_s,
                "whole_workload": theirs.total_s / ours.total_s, "parse": theirs.parse_s / ours.parse_s,
                "compact_first_pass": theirs.first_s / form.first_s, "compact_steady": theirs.steady_s / form.steady_s,
                "compact_whole_workload": theirs.total_s / form.total_s}
    if library:
        for name in ("scrapy_rep", "scrapy_rep.RobotParser"):
            out[f"library_{name}"] = library["protego"].total_s / library[name].total_s
    for name, row in scaling.items():
        out[f"growth_{name}"] = row[SIZES[-1]] / row[SIZES[0]]
    return out


def crawler_json(results: dict[str, CrawlerResult], files: int) -> dict[str, Any]:
    """A crawler-workload table as JSON: per parser, the columns ``print_crawler`` prints."""
    return {"files": files, "parsers": {name: {
        "parse_ms": r.parse_s * 1e3, "us_per_file": r.parse_s * 1e6 / files, "decide_ms": r.first_s * 1e3,
        "ns_per_decision": r.first_s * 1e9 / r.decisions, "steady_ns_per_decision": r.steady_s * 1e9 / r.decisions,
        "total_ms": r.total_s * 1e3, "kib_per_file": r.memory_per_file / 1024, "allowed": r.allowed,
        "decisions": r.decisions} for name, r in results.items()}}


def print_ratios(crawler: dict[str, CrawlerResult] | None, library: dict[str, CrawlerResult] | None,
                 scaling: dict[str, dict[int, float]]) -> None:
    print("\nRatios (scrapy_rep vs Protego; higher is better except growth)")
    if crawler:
        ours, theirs = crawler["scrapy_rep"], crawler["protego"]
        print(f"  decisions, first pass (incl. lazy index): {theirs.first_s / ours.first_s:6.1f}x   "
              "(target >= 5x, aim 10x)")
        print(f"  decisions, steady state:                  {theirs.steady_s / ours.steady_s:6.1f}x   (target >= 6x)")
        print(f"  whole workload (parse + all decisions):   {theirs.total_s / ours.total_s:6.1f}x   (target >= 3x)")
        print(f"  parse:                                    {theirs.parse_s / ours.parse_s:6.1f}x   (target >= 1.5x)")
        form = crawler["scrapy_rep compact"]
        print("  compact form (parse + compact at adoption):")
        print(f"    decisions from the first one (index built at the first): {theirs.first_s / form.first_s:6.1f}x")
        print(f"    decisions, steady state:                                {theirs.steady_s / form.steady_s:6.1f}x")
        print(f"    whole workload (parse + compact + all decisions):       {theirs.total_s / form.total_s:6.1f}x")
    if library:
        theirs = library["protego"]
        print(f"  library use, parse + {LIBRARY_URLS} decisions per file (whole workload; no target):")
        for name in ("scrapy_rep", "scrapy_rep.RobotParser"):
            print(f"    {name + ':':<52} {theirs.total_s / library[name].total_s:6.1f}x")
    for name in ("scrapy_rep", "scrapy_rep compact"):
        row = scaling[name]
        growth = row[SIZES[-1]] / row[SIZES[0]]
        print(f"  growth 10k/10 rules, {name + ':':<21}{growth:6.1f}x   (target <= 3x)")
    row = scaling["protego"]
    print(f"  growth 10k/10 rules, Protego:             {row[SIZES[-1]] / row[SIZES[0]]:6.1f}x")


def main(argv: list[str] | None = None) -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--quick", action="store_true", help="300 corpus files, one run, short budgets")
    options.add_argument("--files", type=int, default=None, help="use only the first N corpus files")
    options.add_argument("--agent", default="examplebot", help="the user agent deciding (default: examplebot)")
    options.add_argument("--json", metavar="PATH", help="also write every table as JSON to PATH")
    args = options.parse_args(argv)
    began = time.perf_counter()
    context = run_context("benchmarks/bench_matcher.py", argv)
    out: dict[str, Any] = {"benchmark": "bench_matcher", "context": context,
                           "args": {"quick": args.quick, "files": args.files, "agent": args.agent}}
    repeats, budget = (1, 0.05) if args.quick else (3, 0.3)
    print(f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs; agent {args.agent!r}")

    files = load_corpus()
    limit = args.files or (300 if args.quick else None)
    files = files[:limit] if limit else files
    crawler = library = None
    if files:
        crawler = bench_crawler(files, args.agent, repeats)
        print_crawler(crawler, len(files))
        extraction = bench_path_extraction(files, repeats)
        steady = crawler["scrapy_rep"].steady_s * 1e9 / crawler["scrapy_rep"].decisions
        print(
            f"  of a scrapy_rep decision, URL -> path (decision_path as a call; allowed() inlines its fast path): "
            f"{extraction:.0f} ns ({extraction / steady:.0%} of the steady decision)"
        )
        memory = bench_memory(files, args.agent)
        print_memory(memory, len(files))
        library = bench_crawler(files, args.agent, repeats, LIBRARY_URLS, LIBRARY_PARSERS, memory=False)
        print_crawler(library, len(files), "Library use (parse, then a few URLs; no memory measured)", LIBRARY_URLS)
        out |= {"crawler": {**crawler_json(crawler, len(files)), "urls_per_file": URLS_PER_FILE,
                            "decision_path_ns": extraction},
                "memory": {"kib_per_origin": {name: size / 1024 for name, size in memory.per_origin.items()},
                           "hot_rules_budget": HOT_RULES, "hot_rules": memory.hot_rules,
                           "hot_mib": memory.hot_bytes / 2**20},
                "library": {**crawler_json(library, len(files)), "urls_per_file": LIBRARY_URLS}}
    else:
        print(f"\nCrawler workload skipped: corpus not found at {CORPUS}")
    scaling = bench_scaling(args.agent, budget)
    print_scaling(scaling)
    adversarial = bench_adversarial(args.agent, budget)
    print_adversarial(adversarial)
    print_ratios(crawler, library, scaling)
    if args.json:
        out |= {
            "scaling": {"unit": "ns per decision", "rules": list(SIZES), "urls": URLS_PER_FILE,
                        "parse_per_call": [parser.name for parser in OTHERS],
                        "parsers": {name: [row[size] for size in SIZES] for name, row in scaling.items()}},
            "adversarial": {"unit": "µs per decision", "cases": [
                {"case": " ".join(label.split()), "parsers": {name: {"us": us, "allowed": allowed}
                                                              for name, (us, allowed) in row.items()}}
                for label, row in adversarial]},
            "ratios": ratios(crawler, library, scaling), "seconds": time.perf_counter() - began}
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
