"""The opt-in decision log (REP_DECISION_LOG, docs/evidence.md): one JSON line per checked request, and
one last line with the crawl's ``rep/`` stats.

- A decision line is ``{"type": "decision", **basis}``, the request's basis (requests/basis.py) serialised when
  ``decided`` is called: a later change to the dict (or to a dict inside it: ``usage`` is the request's meta entry)
  does not reach the log. Compact JSON, ASCII only (``ensure_ascii``), so a line's length in characters is its size
  in bytes; a value that is not JSON (the contract excludes it) is written as its ``repr``.
- Buffered: the lines are kept in memory and written, in one ``write`` and flushed to the OS, when the batch holds
  ``BATCH_LINES`` lines, when a decision comes ``FLUSH_SECONDS`` or more after the last write, and at the end. A
  process crash loses at most the batch in memory; no ``fsync`` (a machine crash may lose what the OS had not
  written).
- Rotated: a line that would take the file past ``max_bytes`` goes to a new file, the full one renamed
  ``<name>.<UTC time>.<n>`` (``decisions.jsonl.20261128T134133Z.1``: the time of the rotation, ``n`` the first
  number not taken); nothing is overwritten or deleted. A file is at most ``max_bytes`` unless one line is larger. An
  existing file is appended to.
- At ``engine_stopped`` (after every ``spider_closed`` handler, so that the drops at close are decided and every
  ``rep/`` stat is final): the batch, then ``{"type": "close", "time": ..., "stats": {every rep/ stat}}``; the file
  is closed.
- An I/O error: one ERROR, ``rep/decision_log/errors``, nothing more is logged; the crawl goes on.

Stats: ``rep/decision_log/lines`` (decision lines written), ``rep/decision_log/files`` (files written to, the rotated
ones included), ``rep/decision_log/errors``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

from scrapy import signals

from ..stores import iso

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from ..config import Clock, Config

#: The documented logger of every middleware line (docs/stats.md), whichever module writes it.
logger = logging.getLogger("scrapy_rep.middleware")

#: A batch is written when it holds this many lines (~0.6 MB of typical lines) ...
BATCH_LINES = 1000
#: ... or when a decision comes this long (seconds, on the crawl's clock) after the last write: a slow crawl's log
#: does not lag by more.
FLUSH_SECONDS = 10.0

STAT_LINES = "rep/decision_log/lines"
STAT_FILES = "rep/decision_log/files"
STAT_ERRORS = "rep/decision_log/errors"

_encode = json.JSONEncoder(separators=(",", ":"), default=repr).encode


class DecisionLog:
    """Writes the decision lines of the module docstring to ``path``; ``decided`` per checked request."""

    def __init__(self, path: str, max_bytes: int, stats: StatsCollector, clock: Clock) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.stats = stats
        self.clock = clock
        self._lines: list[str] = []  # the batch: encoded lines, no newline
        self._file: IO[bytes] | None = None
        self._size = 0  # the current file's size in bytes
        self._stopped = False  # closed, or an I/O error: nothing more is logged
        self._rotated = "", 0  # the last rotated file's time and number
        self._due = clock.seconds() + FLUSH_SECONDS  # a decision from then on writes the batch
        stats.inc_value(STAT_LINES, 0)
        self._guard("open", self._open)

    @classmethod
    def from_crawler(cls, crawler: Crawler, config: Config) -> DecisionLog:
        """The log of ``config.decision_log`` (set), its file opened now; closed at the crawler's ``engine_stopped``,
        whose handler is held by a weak reference: the caller keeps the log."""
        assert config.decision_log is not None and crawler.stats is not None
        log = cls(config.decision_log, config.decision_log_max_bytes, crawler.stats, config.time())
        crawler.signals.connect(log.close, signal=signals.engine_stopped)
        return log

    def decided(self, basis: dict[str, Any]) -> None:
        """One checked request's final outcome; ``basis`` (JSON-ready, with ``url``, ``decision``, ``checked_at``)
        is serialised now."""
        if self._stopped:
            return
        self._lines.append(_encode({"type": "decision", **basis}))
        if len(self._lines) >= BATCH_LINES or self.clock.seconds() >= self._due:
            self._guard("write", self._flush)

    def close(self) -> None:
        """Write the batch and the close line, close the file (idempotent)."""
        if self._stopped:
            return
        if self._guard("write", self._flush) and self._guard("write", self._write_close):
            self._guard("close", self._close_file)
        self._stopped = True

    # -- writing ------------------------------------------------------------------------------------------------

    def _flush(self) -> None:
        lines, self._lines = self._lines, []
        self._due = self.clock.seconds() + FLUSH_SECONDS
        if not lines:
            return
        data = "\n".join(lines) + "\n"
        if self._fits(len(data)):
            self._put(data, len(lines))
        else:  # line by line: each file ends before the line that would take it past max_bytes
            chunk: list[str] = []
            size = self._size
            for line in lines:
                if size and size + len(line) + 1 > self.max_bytes:
                    if chunk:
                        self._put("\n".join(chunk) + "\n", len(chunk))
                        chunk = []
                    self._rotate()
                    size = 0
                chunk.append(line)
                size += len(line) + 1
            self._put("\n".join(chunk) + "\n", len(chunk))

    def _write_close(self) -> None:
        line = self._close_line()
        if not self._fits(len(line) + 1):
            self._rotate()  # before the stats are read: the close line counts the file it is in
            line = self._close_line()
        self._put(line + "\n", 0)

    def _close_line(self) -> str:
        stats = {name: value for name, value in sorted(self.stats.get_stats().items()) if name.startswith("rep/")}
        return _encode({"type": "close", "time": iso(self.clock.seconds()), "stats": stats})

    def _fits(self, size: int) -> bool:
        return not self._size or self._size + size <= self.max_bytes

    def _put(self, data: str, decisions: int) -> None:
        """Write ``data`` (``decisions`` decision lines) to the current file and hand it to the OS."""
        file = cast("IO[bytes]", self._file)
        file.write(data.encode("ascii"))
        file.flush()
        self._size += len(data)
        if decisions:
            self.stats.inc_value(STAT_LINES, decisions)

    # -- files ---------------------------------------------------------------------------------------------------

    def _open(self) -> None:
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, "ab")  # noqa: SIM115  # kept open until close or rotation
        self._size = os.fstat(self._file.fileno()).st_size
        self.stats.inc_value(STAT_FILES)

    def _close_file(self) -> None:
        file, self._file = self._file, None
        if file is not None:
            file.close()

    def _rotate(self) -> None:
        self._close_file()
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(self.clock.seconds()))
        number = self._rotated[1] + 1 if stamp == self._rotated[0] else 1
        while os.path.lexists(f"{self.path}.{stamp}.{number}"):
            number += 1
        os.rename(self.path, f"{self.path}.{stamp}.{number}")
        self._rotated = stamp, number
        logger.info("Decision log: %s rotated to %s.%s.%d (REP_DECISION_LOG_MAX_BYTES = %d)", self.path, self.path,
                    stamp, number, self.max_bytes)
        self._open()

    def _guard(self, doing: str, step: Callable[[], None]) -> bool:
        """Run ``step``; on an I/O error: one ERROR, counted, the log stopped. Whether it succeeded."""
        try:
            step()
        except OSError as exc:
            logger.error("Decision log: cannot %s %s (%s: %s): no more decisions are logged, the crawl goes on",
                         doing, self.path, type(exc).__name__, exc)
            self.stats.inc_value(STAT_ERRORS)
            self._stopped = True
            self._lines = []
            with contextlib.suppress(OSError):  # the error is already said
                self._close_file()
            return False
        return True

