"""The decision log (REP_DECISION_LOG, scrapy_rep/reporting/decision_log.py, docs/evidence.md): one JSON
line per checked request, written in batches, rotated by size without overwriting anything, closed by a line of the
crawl's ``rep/`` stats; an I/O error stops the log, never the crawl. Real files; time from a ``task.Clock``; the
last test is a real crawl whose log, read back, counts what its stats count."""

from __future__ import annotations

import json
import logging
import os
import re
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from scrapy import Request, Spider, signals
from scrapy.crawler import Crawler
from scrapy.utils.test import get_crawler
from twisted.internet.task import Clock

from scrapy_rep.config import Config
from scrapy_rep.config.evidence import MIN_FILE_BYTES
from scrapy_rep.reporting.decision_log import BATCH_LINES, FLUSH_SECONDS, DecisionLog
from scrapy_rep.stores import iso
from tests.crawl import ListSpider, crawl
from tests.servers import robots

DOCS = Path(__file__).resolve().parents[2] / "docs" / "evidence.md"
STATS_DOCS = DOCS.with_name("stats.md")
LOGGER = "scrapy_rep.middleware"
NAME = "decisions.jsonl"
#: 2026-11-28T13:41:33Z: the clock's time, so that the rotated files' names are known.
NOW = 1_795_873_293.0
STAMP = "20261128T134133Z"


def basis(n: int, decision: str = "allowed") -> dict[str, Any]:
    """A basis of the shape requests/basis.py builds."""
    return {
        "url": f"https://example.com/a/{n}?c=1", "decision": decision, "checked_at": "2026-11-28T13:41:33.123Z",
        "reason": "no rule of the 'examplebot' group (line 5) matches", "refused_uses": [], "enforced": True,
        "tokens": ["examplebot"], "group": "the 'examplebot' group (line 5)", "rule": None,
        "robots_txt": {"url": "https://example.com/robots.txt", "version": "ab" * 32,
                       "fetched_at": "2026-11-28T13:40:02.517Z", "status": 200,
                       "final_url": "https://example.com/robots.txt", "outcome": "rules", "failing": None},
        "usage": {}, "tdmrep": None,
    }


def opened(tmp_path: Path, clock: Clock, path: Path | None = None, **settings: Any) -> tuple[DecisionLog, Crawler]:
    crawler = get_crawler(Spider, {"ROBOTSTXT_OBEY": True, "REP_DECISION_LOG": str(path or tmp_path / NAME),
                                   "REP_CLOCK": lambda: clock, "MEMUSAGE_ENABLED": False,
                                   "TELNETCONSOLE_ENABLED": False, **settings})
    return DecisionLog.from_crawler(crawler, Config.from_settings(crawler.settings)), crawler


def stop(crawler: Crawler) -> None:
    """What the engine sends when the crawl ends (MemoryUsage and, on Scrapy 2.13, TelnetConsole, whose handlers need
    a started crawl, are off)."""
    crawler.signals.send_catch_log(signals.engine_stopped)


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="ascii").splitlines()]


def stat(crawler: Crawler, name: str) -> Any:
    assert crawler.stats is not None
    return crawler.stats.get_value(name)


def rep_stats(crawler: Crawler) -> dict[str, Any]:
    assert crawler.stats is not None
    return {name: value for name, value in crawler.stats.get_stats().items() if name.startswith("rep/")}


def run_docs_example(directory: Path, monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """The docs' reading-back example, run in ``directory``; its ``counts``."""
    blocks = [block for block in re.findall(r"^```python\n(.*?)^```", DOCS.read_text(encoding="utf-8"), re.M | re.S)
              if "decisions.jsonl" in block and "counts" in block]
    assert len(blocks) == 1
    monkeypatch.chdir(directory)
    namespace: dict[str, Any] = {}
    exec(compile(blocks[0], str(DOCS), "exec"), namespace)
    counts: Counter[str] = namespace["counts"]
    return counts


def test_a_batch_is_written_when_full_and_the_rest_at_the_end(tmp_path: Path) -> None:
    log, crawler = opened(tmp_path, Clock())
    path = tmp_path / NAME
    for n in range(BATCH_LINES - 1):
        log.decided(basis(n))
    assert path.read_bytes() == b"" and stat(crawler, "rep/decision_log/lines") == 0
    log.decided(basis(BATCH_LINES - 1))
    assert [line["url"] for line in lines(path)] == [basis(n)["url"] for n in range(BATCH_LINES)]
    assert stat(crawler, "rep/decision_log/lines") == BATCH_LINES
    log.decided(basis(BATCH_LINES))
    assert len(lines(path)) == BATCH_LINES  # in memory until the next batch or the end
    stop(crawler)
    written = lines(path)
    assert [line["type"] for line in written] == ["decision"] * (BATCH_LINES + 1) + ["close"]
    assert written[-2]["url"] == basis(BATCH_LINES)["url"]
    assert stat(crawler, "rep/decision_log/lines") == BATCH_LINES + 1 and stat(crawler, "rep/decision_log/files") == 1


def test_a_slow_crawl_writes_its_batch_every_flush_seconds(tmp_path: Path) -> None:
    clock = Clock()
    log, _ = opened(tmp_path, clock)
    log.decided(basis(0))
    clock.advance(FLUSH_SECONDS - 0.5)
    log.decided(basis(1))
    assert (tmp_path / NAME).read_bytes() == b""
    clock.advance(0.5)
    log.decided(basis(2))
    assert [line["url"] for line in lines(tmp_path / NAME)] == [basis(n)["url"] for n in range(3)]
    log.decided(basis(3))  # the next window starts at that write
    assert len(lines(tmp_path / NAME)) == 3


def test_a_line_is_the_basis_as_it_was_when_decided(tmp_path: Path) -> None:
    """The dict may be the request's meta entry: a spider or UsageMiddleware changing it later does not reach the
    log, at any depth."""
    log, crawler = opened(tmp_path, Clock())
    decided = basis(0)
    log.decided(decided)
    decided["decision"] = "forbidden"
    decided["robots_txt"]["version"] = "changed"
    decided["usage"]["train-ai"] = {"value": "n"}
    stop(crawler)
    assert lines(tmp_path / NAME)[0] == {"type": "decision", **basis(0)}


def test_the_lines_read_back_as_the_bases_they_were(tmp_path: Path) -> None:
    odd = {**basis(0), "url": "https://bücher.example/ä?q=\"x\"&r=\\n\n\t\u2028😀\ud800", "reason": "",
           "tokens": [], "rule": {"line": 2, "directive": "Disallow", "value": "/*.pdf$"}, "ratio": 0.25,
           "big": 2**70, "nested": {"list": [1, None, True, {"a": []}]}}
    log, crawler = opened(tmp_path, Clock())
    log.decided(odd)
    log.decided({**basis(1), "spider's own": b"bytes", "tuple": (1, 2)})  # not JSON-ready: repr / a list
    stop(crawler)
    raw = (tmp_path / NAME).read_bytes()
    assert raw.isascii() and raw.count(b"\n") == 3 and raw.endswith(b"\n")
    first, second, close = lines(tmp_path / NAME)
    assert first == {"type": "decision", **odd}
    assert second == {"type": "decision", **basis(1), "spider's own": "b'bytes'", "tuple": [1, 2]}
    assert close["type"] == "close"


def test_the_close_line_holds_every_rep_stat_and_ends_the_file(tmp_path: Path) -> None:
    clock = Clock()
    clock.advance(NOW + 0.25)
    log, crawler = opened(tmp_path, clock)
    assert crawler.stats is not None
    crawler.stats.set_value("rep/requests/checked", 2)
    crawler.stats.set_value("rep/requests/forbidden", 1)
    crawler.stats.set_value("downloader/request_count", 9)  # not a rep/ stat: not in the line
    log.decided(basis(0))
    log.decided(basis(1, "forbidden"))
    stop(crawler)
    close = lines(tmp_path / NAME)[-1]
    assert close == {"type": "close", "time": "2026-11-28T13:41:33.250Z", "stats": {
        "rep/decision_log/files": 1, "rep/decision_log/lines": 2, "rep/requests/checked": 2,
        "rep/requests/forbidden": 1}}
    assert close["stats"] == rep_stats(crawler) and close["time"] == iso(clock.seconds())
    stop(crawler)  # closed once
    log.decided(basis(2))  # after the end: nothing
    assert len(lines(tmp_path / NAME)) == 3


def rotated(tmp_path: Path) -> list[Path]:
    """The rotated files, in the order they were written."""
    found = [path for path in tmp_path.iterdir() if path.name.startswith(f"{NAME}.")]
    return sorted(found, key=lambda path: (path.name.split(".")[-2], int(path.name.split(".")[-1])))


def test_rotation_spreads_the_lines_over_files_in_order_and_overwrites_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """At the smallest REP_DECISION_LOG_MAX_BYTES, 1,500 lines (~0.9 MB) make ~15 files, none past the limit. A file
    of an earlier run at the log's path is appended to, and one already named as the first rotated file is kept."""
    caplog.set_level(logging.INFO, logger=LOGGER)
    earlier = json.dumps({"type": "close", "time": "2026-11-27T10:00:00.000Z", "stats": {}}) + "\n"
    (tmp_path / NAME).write_text(earlier)
    taken = tmp_path / f"{NAME}.{STAMP}.1"
    taken.write_text(earlier)
    clock = Clock()
    clock.advance(NOW)
    log, crawler = opened(tmp_path, clock, REP_DECISION_LOG_MAX_BYTES=MIN_FILE_BYTES)
    decisions = ["allowed", "forbidden", "allowed", "passed_through", "dropped"]
    for n in range(1500):
        log.decided(basis(n, decisions[n % 5]))
    stop(crawler)

    assert taken.read_text() == earlier
    files = [*rotated(tmp_path)[1:], tmp_path / NAME]
    assert [path.name for path in files[:2]] == [f"{NAME}.{STAMP}.2", f"{NAME}.{STAMP}.3"]
    assert 10 < len(files) < 20 and all(path.stat().st_size <= MIN_FILE_BYTES for path in files)
    read = [line for path in files for line in lines(path)]
    assert read[0] == json.loads(earlier) and read[-1]["type"] == "close"
    assert [line["url"] for line in read[1:-1]] == [basis(n)["url"] for n in range(1500)]
    assert lines(tmp_path / NAME)[-1] == read[-1]  # the close line, in the current file, the only one
    assert stat(crawler, "rep/decision_log/files") == len(files) == read[-1]["stats"]["rep/decision_log/files"]
    assert stat(crawler, "rep/decision_log/lines") == 1500
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Decision log: ")]
    assert len(said) == len(files) - 1 and f"rotated to {tmp_path / NAME}.{STAMP}.2 " in said[0]
    assert run_docs_example(tmp_path, monkeypatch) == Counter(decisions[n % 5] for n in range(1500))


def test_an_unwritable_path_is_one_error_and_the_crawl_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log, crawler = opened(tmp_path, Clock(), path=tmp_path)  # a directory
    for n in range(BATCH_LINES + 1):
        log.decided(basis(n))
    stop(crawler)
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and errors[0].startswith(f"Decision log: cannot open {tmp_path} (IsADirectoryError: ")
    assert stat(crawler, "rep/decision_log/errors") == 1 and stat(crawler, "rep/decision_log/files") is None
    assert stat(crawler, "rep/decision_log/lines") == 0 and list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full, where every write fails")
def test_a_failed_write_stops_the_log_with_one_error(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    log, crawler = opened(tmp_path, Clock(), path=Path("/dev/full"))
    assert stat(crawler, "rep/decision_log/files") == 1
    for n in range(3 * BATCH_LINES):
        log.decided(basis(n))
    stop(crawler)
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and errors[0].startswith("Decision log: cannot write /dev/full (OSError: ")
    assert stat(crawler, "rep/decision_log/errors") == 1 and stat(crawler, "rep/decision_log/lines") == 0


class MixedSpider(ListSpider):
    """``urls``, then a request that does not obey robots.txt and a data: URL (both passed through)."""

    def __init__(self, unchecked: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.unchecked = unchecked

    async def start(self) -> AsyncIterator[Any]:
        async for request in super().start():
            yield request
        yield Request(self.unchecked, meta={"dont_obey_robotstxt": True}, errback=self.failure)
        yield Request("data:,hello", errback=self.failure)


@pytest_twisted.ensureDeferred
async def test_a_crawls_decision_log_counts_what_its_stats_count(
    sites: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC 8.2: the decision lines by ``decision`` are the crawl's rep/requests/ counts, their sum its checked
    requests; the close line holds the crawl's rep/ stats as the crawl ended."""
    site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /private\n"))
    urls = [site.url("/a"), site.url("/b"), site.url("/private/x"), site.url("/private/y")]
    result = await crawl(urls, spider=MixedSpider, spider_kwargs={"unchecked": site.url("/private/z")},
                         REP_DECISION_LOG=str(tmp_path / NAME))
    written = lines(tmp_path / NAME)
    assert [line["type"] for line in written] == ["decision"] * 6 + ["close"]
    counts = Counter(line["decision"] for line in written[:-1])
    assert counts == Counter({"allowed": 2, "forbidden": 2, "passed_through": 2})
    assert counts == {name: result.stat(f"rep/requests/{name}") for name in counts}
    assert counts.total() == result.stat("rep/requests/checked") == result.stat("rep/decision_log/lines")
    assert written[-1]["stats"] == {name: value for name, value in result.stats.items() if name.startswith("rep/")}
    by_url = {line["url"]: line for line in written[:-1]}
    assert by_url[site.url("/private/x")]["rule"]["value"] == "/private"
    assert by_url["data:,hello"]["reason"] == "no_robots_location"
    assert by_url[site.url("/private/z")]["reason"] == "dont_obey_robotstxt"
    assert run_docs_example(tmp_path, monkeypatch) == counts
    result.assert_accounted()


def test_the_docs_name_every_stat_and_constant(tmp_path: Path) -> None:
    """The docs' figures are the module's: the batch, the flush interval; docs/stats.md names its stats."""
    text = DOCS.read_text(encoding="utf-8")
    assert f"{BATCH_LINES:,} lines" in text and f"{FLUSH_SECONDS:g} s" in text
    log, crawler = opened(tmp_path, Clock())
    log.decided(basis(0))
    stop(crawler)
    stats = STATS_DOCS.read_text(encoding="utf-8")
    assert all(f"`{name}`" in stats for name in rep_stats(crawler) if name.startswith("rep/decision_log/"))
    assert "`rep/decision_log/errors`" in stats
