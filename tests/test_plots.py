"""benchmarks/plots.py: the performance page's plots, regenerated from the committed benchmark JSON."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from benchmarks import plots

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
SVGS = ("broad-throughput.svg", "broad-cpu.svg", "broad-memory.svg", "matcher-scaling.svg")


def test_plots_from_the_committed_results(tmp_path: Path) -> None:
    written = plots.main(["--results", str(RESULTS), "--out", str(tmp_path)])
    assert sorted(path.name for path in written) == sorted(SVGS)
    texts = {name: (tmp_path / name).read_text() for name in SVGS}
    for name in ("broad-throughput.svg", "broad-cpu.svg", "broad-memory.svg"):
        for mode in ("off", "builtin", "rep", "rep-sqlite", "rep-redis"):
            assert plots.MODES[mode] in texts[name], (name, mode)  # the legend's text (kept as text)
    for parser in ("scrapy_rep", "protego", "urllib", "google (parse+decide)"):
        assert plots.MATCHERS[parser] in texts["matcher-scaling.svg"], parser
    assert "parse + decide per call" in texts["matcher-scaling.svg"]
    assert "python -m benchmarks.plots" in texts["broad-throughput.svg"]


def test_deterministic(tmp_path: Path) -> None:
    plots.main(["--results", str(RESULTS), "--out", str(tmp_path / "a")])
    plots.main(["--results", str(RESULTS), "--out", str(tmp_path / "b")])
    for name in SVGS:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def _copy_with(tmp_path: Path, name: str, edit: object) -> Path:
    """The committed results in tmp_path/results, the file whose name starts with ``name`` passed through ``edit``."""
    results = tmp_path / "results"
    shutil.copytree(RESULTS, results)
    path = next(path for path in sorted(results.glob("*.json")) if path.name.startswith(name))
    data = json.loads(path.read_text())
    edit(data)  # type: ignore[operator]
    path.write_text(json.dumps(data))
    return results


@pytest.mark.parametrize(
    ("name", "edit", "message"),
    [
        ("broad", lambda data: data["modes"][0].pop("responses_per_s"), "missing field 'responses_per_s'"),
        ("broad", lambda data: data["rounds"][0].pop("peak_rss_mb"), "missing field 'peak_rss_mb'"),
        ("broad", lambda data: data.pop("context"), "missing field 'context'"),
        ("matcher", lambda data: data.pop("scaling"), "missing field 'scaling'"),
        ("matcher", lambda data: data["scaling"].pop("rules"), "missing field 'rules'"),
    ],
)
def test_missing_field(tmp_path: Path, name: str, edit: object, message: str) -> None:
    results = _copy_with(tmp_path, name, edit)
    with pytest.raises(plots.ResultsError, match=message) as raised:
        plots.main(["--results", str(results), "--out", str(tmp_path / "out")])
    assert ".json" in str(raised.value)  # names the file


def test_no_runs(tmp_path: Path) -> None:
    with pytest.raises(plots.ResultsError, match="no bench_broad run"):
        plots.main(["--results", str(tmp_path), "--out", str(tmp_path / "out")])
