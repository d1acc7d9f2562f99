"""The opt-in WARC archive of every robots.txt copy the crawl used (REP_WARC, REP_WARC_MAX_BYTES; docs/evidence.md).

``WarcArchive`` receives the ``robots_version_adopted`` signal (``adopted``) and writes each version adopted as WARC
records (``warc_records``): downloaded here, the request, response and metadata; read from the store, a resource and
its metadata, once per version per run. ``ArchiveFiles`` names the files and never overwrites one; a file is closed
once it has passed REP_WARC_MAX_BYTES, and the next copy starts a new one, with its own ``warcinfo`` first.

Records are written on the reactor thread (a few KB each), kept in memory and handed to the OS every
``FLUSH_RECORDS`` records or ``FLUSH_BYTES`` bytes, when a file is closed and at spider close (a file closed is
fsynced). An I/O error (disk full, a path that cannot be created) is logged once at ERROR and counted under
``rep/warc/errors``; archiving stops, the crawl goes on. Stats: ``rep/warc/records``, ``rep/warc/files`` and
``rep/warc/bytes`` (handed to the OS).
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from scrapy import signals

from ..config.redis_target import redact
from .adopted import robots_version_adopted

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

    from ..config import Config
    from ..stores import Version
    from .warc_records import Records

#: The documented logger of every middleware line (docs/stats.md), whichever module writes it.
logger = logging.getLogger("scrapy_rep.middleware")

#: A REP_WARC ending in one of these names a file (case aside); anything else, a directory.
FILE_SUFFIXES = (".warc.gz", ".warc")
#: Records kept in memory before they are handed to the OS (sooner once they hold FLUSH_BYTES).
FLUSH_RECORDS = 100
FLUSH_BYTES = 1 << 20
#: Copies read from the store remembered (a 64-bit hash each, in two generations of half as many): a version read
#: again is archived again only after SEEN_MAX / 2 to SEEN_MAX other store reads.
SEEN_MAX = 100_000


class ArchiveFiles:
    """The archive's file names. ``target`` names a file (``.warc.gz``: a gzip member per record; ``.warc``: plain),
    the first one, followed by ``<stem>-00001.warc.gz``, ``-00002``...; or a directory (created if missing) of
    ``scrapy-rep-robots-<UTC time>-<pid>-00000.warc.gz``, ``-00001``... A name already taken is skipped for the
    next number: no file is ever overwritten."""

    def __init__(self, target: str, now: float, pid: int) -> None:
        self.target = target
        path = Path(target)
        suffix = next((end for end in FILE_SUFFIXES if path.name.lower().endswith(end)), None)
        if suffix is None:
            self.directory = path
            self.stem = f"scrapy-rep-robots-{time.strftime('%Y%m%d%H%M%S', time.gmtime(now))}-{pid}"
            self.suffix = ".warc.gz"
            self._first: str | None = None
        else:
            self.directory = path.parent
            cut = len(path.name) - len(suffix)
            self.stem, self.suffix = path.name[:cut], path.name[cut:]
            self._first = path.name
        self.gzip = self.suffix.lower() == ".warc.gz"
        self._number = 0

    def name(self, number: int) -> str:
        """The file name of the ``number``-th file (0: the first)."""
        if number == 0 and self._first is not None:
            return self._first
        return f"{self.stem}-{number:05d}{self.suffix}"

    def open_next(self) -> tuple[str, BinaryIO]:
        """Create the next file (exclusively: a name taken is skipped); its name and the file, open for writing.
        Raises ``OSError``."""
        self.directory.mkdir(parents=True, exist_ok=True)
        while True:
            name = self.name(self._number)
            self._number += 1
            try:
                return name, open(self.directory / name, "xb")  # closed by WarcArchive
            except FileExistsError:
                continue


class WarcArchive:
    """Writes each robots.txt version the crawl adopts to the archive's files (see the module docstring)."""

    def __init__(self, files: ArchiveFiles, records: Records, max_bytes: int, stats: StatsCollector,
                 now: Callable[[], float]) -> None:
        self.files = files
        self.records = records
        self.max_bytes = max_bytes
        self.stats = stats
        self.now = now
        self._file: BinaryIO | None = None
        self._warcinfo_id = ""
        self._size = 0  # bytes of the open file, pending ones included
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._stopped = False
        self._seen: set[int] = set()
        self._older: set[int] = set()

    @classmethod
    def from_crawler(cls, crawler: Crawler, config: Config) -> WarcArchive:
        """The archive of ``config.warc``, connected to ``robots_version_adopted`` and ``spider_closed``. Scrapy's
        signals hold their receivers weakly: the caller keeps the archive for the crawl's lifetime."""
        from .warc_records import CrawlInfo, Records  # warcio, the optional extra: imported only when REP_WARC is set

        assert config.warc is not None and crawler.stats is not None
        now = config.clock.seconds if config.clock is not None else time.time
        files = ArchiveFiles(config.warc, now(), os.getpid())
        spider = getattr(crawler.spider, "name", None) or getattr(crawler.spidercls, "name", None) or ""
        info = CrawlInfo(str(spider), config.user_agents, store_label(config), config.default_user_agent)
        archive = cls(files, Records(files.gzip, info), config.warc_max_bytes, crawler.stats, now)
        crawler.signals.connect(archive.adopted, signal=robots_version_adopted)
        crawler.signals.connect(archive.close, signal=signals.spider_closed)
        return archive

    def adopted(self, origin: str, url: str, version: Version, outcome: str, body: bytes, source: str,
                response: Response | None = None, **_: Any) -> None:
        """``robots_version_adopted`` handler: archive the version (a copy read from the store once per run)."""
        from .warc_records import Copy

        if self._stopped or (response is None and not self._first_read(origin, version)):
            return
        copy = Copy(origin, url, version, outcome, body, source, response)
        try:
            if self._file is None:
                self._open()
            self._add(self.records.capture(copy, self._warcinfo_id))
            if self._size >= self.max_bytes:
                self._close_file()
        except OSError as exc:
            self._fail(exc)

    def close(self) -> None:
        """``spider_closed`` handler: write what is pending and close the file; nothing is archived after."""
        if self._stopped:
            return
        self._stopped = True
        try:
            self._close_file()
        except OSError as exc:
            self._fail(exc)

    def _first_read(self, origin: str, version: Version) -> bool:
        """Whether this store read of ``version`` (its id and fetch time) for ``origin`` is the run's first, as far
        as the reads remembered tell (``SEEN_MAX``): keyed by a 64-bit hash (a collision, odds about 3 in 10^10 among
        SEEN_MAX keys, would skip a copy)."""
        key = hash((origin, version))
        if key in self._seen or key in self._older:
            return False
        if len(self._seen) >= SEEN_MAX // 2:
            self._older, self._seen = self._seen, set()
        self._seen.add(key)
        return True

    def _open(self) -> None:
        name, self._file = self.files.open_next()
        self.stats.inc_value("rep/warc/files")
        self._size = 0
        self._warcinfo_id, warcinfo = self.records.warcinfo(name, self.now())
        self._add([warcinfo])

    def _add(self, records: list[bytes]) -> None:
        for record in records:
            self._pending.append(record)
            self._pending_bytes += len(record)
            self._size += len(record)
        if len(self._pending) >= FLUSH_RECORDS or self._pending_bytes >= FLUSH_BYTES:
            self._flush()

    def _flush(self) -> None:
        if self._file is None or not self._pending:
            return
        self._file.write(b"".join(self._pending))
        self._file.flush()
        self.stats.inc_value("rep/warc/records", len(self._pending))
        self.stats.inc_value("rep/warc/bytes", self._pending_bytes)
        self._pending, self._pending_bytes = [], 0

    def _close_file(self) -> None:
        if self._file is None:
            return
        self._flush()
        os.fsync(self._file.fileno())
        self._file.close()
        self._file = None

    def _fail(self, exc: OSError) -> None:
        """Stop archiving after an I/O error: said once at ERROR, counted; the crawl goes on."""
        self._stopped = True
        self._pending, self._pending_bytes = [], 0
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None
        self.stats.inc_value("rep/warc/errors")
        logger.error("scrapy-rep: the WARC archive cannot be written (REP_WARC %s: %s); robots.txt copies are no "
                     "longer archived, the crawl goes on", self.files.target, exc)


def store_label(config: Config) -> str:
    """The store as the records name it, without its password: REP_STORE, and for ``redis`` (scrapy-redis's
    settings) the server and the setting it came from."""
    label = redact(config.store)
    target = config.redis
    if target is None:
        return label
    params = target.params
    server = redact(target.url) if target.url else f"{params.get('host', 'localhost')}:{params.get('port', 6379)}"
    return f"{label} ({server}, from {target.source})"
