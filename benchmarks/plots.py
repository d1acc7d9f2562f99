"""The performance page's plots, from the benchmarks' own JSON output.

Run from the repository root: ``.venv/bin/python -m benchmarks.plots`` (or ``python benchmarks/plots.py``;
``--results DIR``, default ``benchmarks/results``; ``--out DIR``, default ``docs/_static/perf``). It reads every
``*.json`` in the results directory that a benchmark wrote with ``--json PATH``:

- ``bench_broad`` runs (one per origin count, ``--pages 1``): ``broad-throughput.svg`` (responses/s against
  origins, one line per mode, each mode's best round; and each mode's over ``off``'s of the same round, the median
  of the rounds), ``broad-memory.svg`` (peak RSS, and what each mode holds per
  origin over the ``off`` anchor, against origins; the median of the rounds) and ``broad-cpu.svg`` (CPU ms per
  response against origins);
- the newest ``bench_matcher`` run: ``matcher-scaling.svg`` (ns per decision against rules per file, log-log).

The output is deterministic (no date in the SVG, a fixed hash salt, text kept as text), so regenerating from the
same JSON changes nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
OUT = ROOT / "docs" / "_static" / "perf"

#: The broad crawl's modes, in legend order, and how the plots name them.
MODES = {
    "off": "off (ROBOTSTXT_OBEY = False, the anchor)",
    "builtin": "Scrapy's built-in (Protego)",
    "rep": "scrapy-rep, memory store",
    "rep-sqlite": "scrapy-rep, SQLite store",
    "rep-redis": "scrapy-rep, Redis store",
    "rep-notags": "scrapy-rep, memory store, no page directives",
    "rep-redis-slow": "scrapy-rep, Redis store +2 ms each way",
}
STYLES: dict[str, dict[str, Any]] = {
    "off": {"color": "0.45", "linestyle": "--", "marker": "o"},
    "builtin": {"color": "tab:orange", "marker": "s"},
    "rep": {"color": "tab:blue", "marker": "^"},
    "rep-sqlite": {"color": "tab:green", "marker": "v"},
    "rep-redis": {"color": "tab:red", "marker": "D"},
}
#: The matcher's implementations in the scaling plot (the compact form, the same matcher, is left out).
MATCHERS = {
    "scrapy_rep": "scrapy-rep",
    "protego": "Protego (Scrapy's built-in)",
    "urllib": "urllib.robotparser",
    "google (parse+decide)": "Google's robotstxt (C++; parse + decide per call)",
}
MATCHER_STYLES: dict[str, dict[str, Any]] = {
    "scrapy_rep": {"color": "tab:blue", "marker": "^"},
    "protego": {"color": "tab:orange", "marker": "s"},
    "urllib": {"color": "tab:purple", "marker": "x"},
    "google (parse+decide)": {"color": "tab:green", "marker": "o", "linestyle": "--"},
}


class ResultsError(ValueError):
    """A results file is missing a field a plot needs (or holds no usable run)."""


def need(data: Mapping[str, Any], key: str, where: str) -> Any:
    """``data[key]``, or a ResultsError naming the file and the field."""
    if not isinstance(data, Mapping) or key not in data:
        raise ResultsError(f"{where}: missing field {key!r} (rerun the benchmark with --json)")
    return data[key]


def load(results: Path) -> list[tuple[str, dict[str, Any]]]:
    """Every results file, as (its name, its JSON), sorted by name."""
    runs = []
    for path in sorted(results.glob("*.json")):
        data = json.loads(path.read_text())
        need(data, "benchmark", path.name)
        runs.append((path.name, data))
    return runs


def sweep(runs: Sequence[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    """The ``bench_broad`` runs of the sweep: one page per origin at the default concurrency (64), the collector as
    CPython sets it; of two runs of the same number of origins, the newer. Other runs (``@slow`` modes, another
    concurrency, ``--no-gc``) are the page's other figures, not the plots'."""
    newest: dict[int, tuple[str, str, dict[str, Any]]] = {}
    for name, data in runs:
        if data["benchmark"] != "bench_broad":
            continue
        args = need(data, "args", name)
        where = f"{name}: args"
        if (need(args, "pages", where), need(args, "concurrency", where)) != (1, 64) or args.get("no_gc") \
                or args.get("gc_threshold") or "@" in need(args, "modes", where):
            continue
        date = str(need(need(data, "context", name), "date", f"{name}: context"))
        origins = need(args, "origins", where)
        if origins not in newest or date > newest[origins][1]:
            newest[origins] = (name, date, data)
    return [(name, data) for name, _, data in (newest[origins] for origins in sorted(newest))]


def broad_series(runs: Sequence[tuple[str, dict[str, Any]]]) -> dict[str, dict[str, list[tuple[int, float]]]]:
    """From the ``bench_broad`` runs of one page per origin, per figure and mode, (origins, value) sorted by origins:
    ``responses_per_s`` and ``cpu_ms_per_response`` of the mode's best round (as the benchmark's table prints them),
    ``peak_rss_mb`` (median of the rounds) and ``kib_per_origin`` (that median over ``off``'s, per origin)."""
    series: dict[str, dict[str, list[tuple[int, float]]]] = {
        figure: {}
        for figure in ("responses_per_s", "vs_off", "cpu_ms_per_response", "peak_rss_mb", "kib_per_origin")
    }
    for name, data in sweep(runs):
        origins = data["args"]["origins"]
        rounds: dict[str, list[float]] = {}
        by_round: dict[int, dict[str, float]] = {}  # per round, each mode's responses/s
        for n, crawl in enumerate(need(data, "rounds", name)):
            where = f"{name}: rounds[{n}]"
            mode = need(crawl, "mode", where)
            rounds.setdefault(mode, []).append(need(crawl, "peak_rss_mb", where))
            by_round.setdefault(need(crawl, "round", where), {})[mode] = need(crawl, "responses_per_s", where)
        for mode in rounds:
            ratios = [modes[mode] / modes["off"] for modes in by_round.values() if mode in modes and "off" in modes]
            if ratios and mode != "off":
                series["vs_off"].setdefault(mode, []).append((origins, statistics.median(ratios)))
        for n, best in enumerate(need(data, "modes", name)):
            where = f"{name}: modes[{n}]"
            mode = need(best, "mode", where)
            for figure in ("responses_per_s", "cpu_ms_per_response"):
                series[figure].setdefault(mode, []).append((origins, float(need(best, figure, where))))
            rss = statistics.median(rounds.get(mode) or [need(best, "peak_rss_mb", where)])
            series["peak_rss_mb"].setdefault(mode, []).append((origins, rss))
            if "off" in rounds and mode != "off":
                over = (rss - statistics.median(rounds["off"])) * 1024 / origins
                series["kib_per_origin"].setdefault(mode, []).append((origins, over))
    if not series["responses_per_s"]:
        raise ResultsError("no bench_broad run with --pages 1 in the results (run benchmarks.bench_broad --json)")
    return {figure: {mode: sorted(points) for mode, points in by_mode.items()} for figure, by_mode in series.items()}


def matcher_run(runs: Sequence[tuple[str, dict[str, Any]]]) -> tuple[str, dict[str, Any]]:
    """The newest ``bench_matcher`` run (by its context's date)."""
    matchers = [(name, data) for name, data in runs if data["benchmark"] == "bench_matcher"]
    if not matchers:
        raise ResultsError("no bench_matcher run in the results (run benchmarks/bench_matcher.py --json)")
    return max(matchers, key=lambda run: str(need(need(run[1], "context", run[0]), "date", f"{run[0]}: context")))


def context_line(runs: Sequence[tuple[str, dict[str, Any]]]) -> str:
    """The machine, software and dates of ``runs``, for a figure's footnote."""
    contexts = [need(data, "context", name) for name, data in runs]
    for (name, _), context in zip(runs, contexts, strict=True):
        for key in ("date", "cpus", "python", "scrapy"):
            need(context, key, f"{name}: context")
    dates = sorted({context["date"][:10] for context in contexts})
    cpus = sorted({str(context["cpus"]) for context in contexts})
    pythons = sorted({context["python"] for context in contexts})
    scrapys = sorted({context["scrapy"] for context in contexts})
    return (f"{'/'.join(cpus)} CPUs (shared), Python {'/'.join(pythons)}, Scrapy {'/'.join(scrapys)}; "
            f"measured {', '.join(dates)}; regenerate: python -m benchmarks.plots")


def _figure(title: str) -> tuple[Figure, Axes]:
    figure, axes = plt.subplots(figsize=(7.5, 4.6))
    axes.set_title(title, fontsize=11)
    axes.grid(True, which="major", alpha=0.35)
    return figure, axes


def _save(figure: Figure, footnote: str, path: Path) -> Path:
    figure.text(0.01, 0.01, footnote, fontsize=7, color="0.35")
    figure.tight_layout(rect=(0, 0.04, 1, 1))
    figure.savefig(path, format="svg", metadata={"Date": None})
    plt.close(figure)
    return path


def _plain_ticks(axes: Axes, ticks: Sequence[int]) -> None:
    """The x axis (log scale) labelled at ``ticks`` only, as plain numbers (1,000 rather than 10³)."""
    axes.set_xticks(list(ticks))
    axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))
    axes.xaxis.set_minor_formatter(NullFormatter())


def _broad_lines(axes: Axes, by_mode: Mapping[str, list[tuple[int, float]]]) -> None:
    for mode in sorted(by_mode, key=lambda mode: list(MODES).index(mode) if mode in MODES else len(MODES)):
        points = by_mode[mode]
        axes.plot([x for x, _ in points], [y for _, y in points], label=MODES.get(mode, mode),
                  **STYLES.get(mode, {"marker": "."}))
    axes.set_xscale("log")
    _plain_ticks(axes, sorted({x for points in by_mode.values() for x, _ in points}))
    axes.set_xlabel("origins (one page each)")


def _pair(title: str, left: Mapping[str, list[tuple[int, float]]], left_label: str) -> tuple[Figure, Axes]:
    """Two panels: ``left``'s lines from zero, with the legend; the right one, gridded, is the caller's."""
    figure, (axes, right) = plt.subplots(1, 2, figsize=(10, 4.6))
    figure.suptitle(title, fontsize=11)
    _broad_lines(axes, left)
    axes.set_ylabel(left_label)
    axes.set_ylim(bottom=0)
    axes.grid(True, alpha=0.35)
    axes.legend(fontsize=7)
    right.grid(True, alpha=0.35)
    return figure, right


def plot_broad(runs: Sequence[tuple[str, dict[str, Any]]], out: Path) -> list[Path]:
    series = broad_series(runs)
    footnote = context_line(sweep(runs))
    written = []

    figure, ratios = _pair("Broad crawl: throughput against origins", series["responses_per_s"],
                           "responses/s (robots.txt included), best round")
    _broad_lines(ratios, series["vs_off"])
    ratios.set_ylabel("responses/s over off's in the same round (median)")
    ratios.axhline(1, color="0.45", linestyle="--", linewidth=0.8)
    ratios.set_ylim(bottom=0)
    written.append(_save(figure, footnote, out / "broad-throughput.svg"))

    figure, axes = _figure("Broad crawl: CPU per response against origins")
    _broad_lines(axes, series["cpu_ms_per_response"])
    axes.set_ylabel("CPU ms per response, best round")
    axes.set_ylim(bottom=0)
    axes.legend(fontsize=8)
    written.append(_save(figure, footnote, out / "broad-cpu.svg"))

    figure, per_origin = _pair("Broad crawl: memory against origins", series["peak_rss_mb"],
                               "peak RSS, MB (median of the rounds)")
    _broad_lines(per_origin, series["kib_per_origin"])
    per_origin.set_ylabel("KiB per origin over off's peak RSS")
    per_origin.axhline(0, color="0.45", linewidth=0.8)
    written.append(_save(figure, footnote, out / "broad-memory.svg"))
    return written


def plot_matcher(runs: Sequence[tuple[str, dict[str, Any]]], out: Path) -> list[Path]:
    name, data = matcher_run(runs)
    scaling = need(data, "scaling", name)
    rules = need(scaling, "rules", f"{name}: scaling")
    parsers = need(scaling, "parsers", f"{name}: scaling")
    figure, axes = _figure("Matcher: time per decision against rules per file")
    for parser in (parser for parser in MATCHERS if parser in parsers):
        values = parsers[parser]
        if len(values) != len(rules):
            raise ResultsError(f"{name}: scaling: {parser!r} has {len(values)} values for {len(rules)} sizes")
        axes.plot(rules, values, label=MATCHERS[parser], **MATCHER_STYLES[parser])
    if not any(parser in parsers for parser in MATCHERS):
        raise ResultsError(f"{name}: scaling: none of the parsers {', '.join(MATCHERS)}")
    axes.set_xscale("log")
    _plain_ticks(axes, rules)
    axes.set_yscale("log")
    axes.grid(True, which="minor", alpha=0.12)
    axes.set_xlabel("rules in the file (synthetic: 80% plain prefixes, 20% wildcards)")
    axes.set_ylabel("ns per decision")
    axes.legend(fontsize=8)
    return [_save(figure, context_line([(name, data)]), out / "matcher-scaling.svg")]


def main(argv: Sequence[str] | None = None) -> list[Path]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--results", type=Path, default=RESULTS, help="the benchmarks' JSON (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=OUT, help="where the SVGs go (default: %(default)s)")
    args = parser.parse_args(argv)
    plt.rcParams.update({"svg.hashsalt": "scrapy-rep", "svg.fonttype": "none", "font.size": 9})
    runs = load(args.results)
    args.out.mkdir(parents=True, exist_ok=True)
    written = [*plot_broad(runs, args.out), *plot_matcher(runs, args.out)]
    for path in written:
        print(path)
    return written


if __name__ == "__main__":
    main()
