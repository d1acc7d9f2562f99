"""The WARC archive of every robots.txt copy the crawl used (REP_WARC; reporting/warc_archive.py): real crawls against
local servers, the files read back with warcio's ArchiveIterator and checked with its own command-line tools."""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from scrapy.crawler import Crawler
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler
from warcio.archiveiterator import ArchiveIterator

import scrapy_rep
from scrapy_rep.reporting import warc_archive
from scrapy_rep.reporting.warc_archive import ArchiveFiles, WarcArchive
from scrapy_rep.reporting.warc_records import CrawlInfo, Records
from scrapy_rep.stores import Version, iso
from tests.crawl import crawl
from tests.servers import Site, gzipped, robots

RULES = "User-agent: *\nDisallow: /private\n"
MIN_BYTES = 65_536


class Adoptions:
    """The versions the crawl adopted, from the signal the archive is written from."""

    def __init__(self) -> None:
        self.versions: list[Version] = []

    def connect(self, crawler: Crawler) -> None:
        crawler.signals.connect(self.adopted, signal=scrapy_rep.robots_version_adopted)

    def adopted(self, version: Version) -> None:
        self.versions.append(version)


def read(path: Path) -> list[dict[str, Any]]:
    """Every record of ``path``: its type, WARC headers, HTTP headers (or None) and content, digests checked."""
    records = []
    with path.open("rb") as stream:
        for record in ArchiveIterator(stream, check_digests=True):
            content = record.content_stream().read()
            assert record.digest_checker.passed is not False, record.digest_checker.problems
            records.append({"type": record.rec_type, "warc": dict(record.rec_headers.headers),
                            "http": record.http_headers, "content": content})
    return records


def fields(record: dict[str, Any]) -> dict[str, str]:
    """The ``name: value`` lines of a warcinfo or metadata record."""
    lines = record["content"].decode("utf-8").splitlines()
    return dict(line.split(": ", 1) for line in lines)


def warcio(*args: str) -> subprocess.CompletedProcess[str]:
    """warcio's command-line tool (the ``warcio`` script's module) on this interpreter; it must succeed."""
    done = subprocess.run([sys.executable, "-m", "warcio.cli", *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, (done.stdout, done.stderr)
    return done


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def noise(size: int, seed: int) -> bytes:
    """A robots.txt of ``size`` bytes whose comments gzip cannot shrink much (so that a few fill a file)."""
    lines, made = [RULES.encode()], len(RULES)
    counter = 0
    while made < size:
        line = b"# " + base64.b64encode(hashlib.sha512(f"{seed}/{counter}".encode()).digest()) + b"\n"
        lines.append(line)
        made += len(line)
        counter += 1
    return b"".join(lines)[:size]


@pytest_twisted.ensureDeferred
async def test_a_download_is_archived_as_request_response_and_metadata(sites: Any, tmp_path: Path) -> None:
    site: Site = sites()
    site.route("/robots.txt", robots(RULES))
    path = tmp_path / "robots.warc.gz"
    adoptions = Adoptions()
    result = await crawl([site.url("/a"), site.url("/private")], on_crawler=adoptions.connect, REP_WARC=str(path))
    assert result.downloaded == [site.url("/a")]
    [version] = adoptions.versions
    warcinfo, request, response, metadata = records = read(path)
    assert [record["type"] for record in records] == ["warcinfo", "request", "response", "metadata"]

    info = fields(warcinfo)
    assert info["software"].startswith(f"scrapy-rep/{scrapy_rep.__version__} warcio/")
    assert (info["isPartOf"], info["format"]) == ("list", "WARC File Format 1.1")
    assert warcinfo["warc"]["WARC-Filename"] == "robots.warc.gz"
    assert all(record["warc"]["WARC-Warcinfo-ID"] == warcinfo["warc"]["WARC-Record-ID"] for record in records[1:])

    robots_url = site.url("/robots.txt")
    assert request["warc"]["WARC-Target-URI"] == robots_url
    assert request["http"].protocol == "GET" and request["http"].statusline == "/robots.txt HTTP/1.1"
    assert request["http"].get_header("User-Agent") == "TestBot/1.0 (+https://example.invalid/bot)"
    assert request["http"].get_header("Host") == f"127.0.0.1:{site.port_number}"
    assert request["warc"]["WARC-Concurrent-To"] == response["warc"]["WARC-Record-ID"]
    assert metadata["warc"]["WARC-Concurrent-To"] == response["warc"]["WARC-Record-ID"]

    assert response["warc"]["WARC-Target-URI"] == robots_url
    assert response["http"].get_statuscode() == "200" and response["content"] == RULES.encode()
    assert response["warc"]["WARC-Payload-Digest"] == sha256(RULES.encode()) == f"sha256:{version.id}"
    assert response["warc"]["WARC-IP-Address"] == "127.0.0.1"
    assert {record["warc"]["WARC-Date"] for record in records[1:]} == {iso(version.fetched_at)}
    assert fields(metadata) == {
        "origin": site.origin(), "robots-url": robots_url, "final-url": robots_url, "status": "200",
        "fetched-at": iso(version.fetched_at), "version-id": version.id, "kept-bytes": str(len(RULES)),
        "outcome": "rules", "source": "downloaded", "store": "memory", "product-tokens": "TestBot"}

    assert (result.stat("rep/warc/records"), result.stat("rep/warc/files")) == (4, 1)
    assert result.stat("rep/warc/bytes") == path.stat().st_size and not result.stat("rep/warc/errors")
    index = warcio("index", "-f", "warc-type,warc-target-uri,http:status", str(path)).stdout
    assert f'"warc-type": "response", "warc-target-uri": "{robots_url}", "http:status": "200"' in index
    warcio("check", "-v", str(path))


@pytest_twisted.ensureDeferred
async def test_a_gzip_encoded_robots_txt_is_archived_decoded(sites: Any, tmp_path: Path) -> None:
    """Scrapy decoded the body: it is written decoded, without Content-Encoding, with its own Content-Length; the
    length received is kept in the metadata record."""
    site: Site = sites()
    reply = gzipped(RULES.encode())
    site.route("/robots.txt", reply)
    path = tmp_path / "robots.warc"  # plain, not gzipped per record
    await crawl([site.url("/a")], REP_WARC=str(path))
    assert path.read_bytes().startswith(b"WARC/1.1\r\n")
    _, _, response, metadata = read(path)
    assert response["content"] == RULES.encode()
    assert response["http"].get_header("Content-Encoding") is None
    assert response["http"].get_header("Content-Length") == str(len(RULES))
    assert response["warc"]["WARC-Payload-Digest"] == sha256(RULES.encode())
    assert fields(metadata)["http-headers-rewritten"] == f"Content-Length: {len(reply.body)}"
    warcio("check", str(path))


@pytest_twisted.ensureDeferred
async def test_files_rotate_past_the_size_and_none_is_overwritten(sites: Any, tmp_path: Path) -> None:
    """Three origins whose robots.txt alone passes REP_WARC_MAX_BYTES: a file each, each with its warcinfo; the
    names already taken are skipped, their files left as they were."""
    taken = {tmp_path / "robots.warc.gz": b"an earlier run's", tmp_path / "robots-00001.warc.gz": b"another's"}
    for name, content in taken.items():
        name.write_bytes(content)
    servers = [sites() for _ in range(3)]
    bodies = {}
    for number, site in enumerate(servers):
        bodies[site.url("/robots.txt")] = body = noise(100_000, number)
        site.route("/robots.txt", robots(body.decode()))
    result = await crawl([site.url("/a") for site in servers], REP_WARC=str(tmp_path / "robots.warc.gz"),
                         REP_WARC_MAX_BYTES=MIN_BYTES, CONCURRENT_REQUESTS=1)
    assert {name: name.read_bytes() for name in taken} == taken
    written = sorted(set(tmp_path.iterdir()) - set(taken))
    assert [name.name for name in written] == [f"robots-0000{number}.warc.gz" for number in (2, 3, 4)]
    archived = {}
    for name in written:
        assert name.stat().st_size >= MIN_BYTES
        records = read(name)
        assert [record["type"] for record in records] == ["warcinfo", "request", "response", "metadata"]
        assert records[0]["warc"]["WARC-Filename"] == name.name
        archived[records[2]["warc"]["WARC-Target-URI"]] = records[2]["content"]
        warcio("check", str(name))
    assert archived == bodies
    assert (result.stat("rep/warc/files"), result.stat("rep/warc/records")) == (3, 12)
    assert result.stat("rep/warc/bytes") == sum(name.stat().st_size for name in written)


@pytest_twisted.ensureDeferred
async def test_a_copy_read_from_the_store_is_a_resource_record(sites: Any, tmp_path: Path) -> None:
    """A second crawl on the same SQLite store reads the version from it: a resource record of the body as stored,
    with the same version id, and its metadata naming the source and the store."""
    site: Site = sites()
    site.route("/robots.txt", robots(RULES))
    store = f"sqlite:///{tmp_path / 'robots.db'}"
    first, second = Adoptions(), Adoptions()
    await crawl([site.url("/a")], on_crawler=first.connect, REP_STORE=store, REP_WARC=str(tmp_path / "first"))
    result = await crawl([site.url("/b")], on_crawler=second.connect, REP_STORE=store,
                         REP_WARC=str(tmp_path / "second"))
    assert site.hits_for("/robots.txt") == 1 and first.versions == second.versions
    [path] = (tmp_path / "second").iterdir()
    assert path.name.startswith("scrapy-rep-robots-") and path.name.endswith(f"-{os.getpid()}-00000.warc.gz")
    warcinfo, resource, metadata = read(path)
    assert (warcinfo["type"], resource["type"], metadata["type"]) == ("warcinfo", "resource", "metadata")
    version = first.versions[0]
    assert resource["warc"]["WARC-Target-URI"] == site.url("/robots.txt")
    assert resource["warc"]["Content-Type"] == "text/plain" and resource["content"] == RULES.encode()
    assert resource["warc"]["WARC-Payload-Digest"] == f"sha256:{version.id}"
    assert resource["warc"]["WARC-Date"] == iso(version.fetched_at)
    assert metadata["warc"]["WARC-Concurrent-To"] == resource["warc"]["WARC-Record-ID"]
    facts = fields(metadata)
    assert (facts["source"], facts["store"], facts["version-id"]) == ("store", store, version.id)
    assert result.stat("rep/warc/records") == 3
    warcio("check", str(path))


@pytest_twisted.ensureDeferred
async def test_an_unwritable_archive_is_one_error_and_the_crawl_goes_on(
    sites: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "a-file").write_text("not a directory")
    site: Site = sites()
    site.route("/robots.txt", robots(RULES))
    urls = [site.url("/a"), site.url("/b", host="localhost")]  # two origins: two copies to archive
    with caplog.at_level(logging.ERROR, logger="scrapy_rep.middleware"):
        result = await crawl(urls, REP_WARC=str(tmp_path / "a-file" / "robots.warc.gz"))
    assert sorted(result.downloaded) == sorted(urls)
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].startswith("scrapy-rep: the WARC archive cannot be written (REP_WARC ")
    assert result.stat("rep/warc/errors") == 1
    assert (result.stat("rep/warc/files"), result.stat("rep/warc/records")) == (0, 0)


def test_file_names_and_the_names_already_taken(tmp_path: Path) -> None:
    named = ArchiveFiles(str(tmp_path / "out" / "Robots.WARC.GZ"), 0.0, 42)
    assert (named.gzip, [named.name(n) for n in range(3)]) == (
        True, ["Robots.WARC.GZ", "Robots-00001.WARC.GZ", "Robots-00002.WARC.GZ"])
    plain = ArchiveFiles(str(tmp_path / "robots.warc"), 0.0, 42)
    assert (plain.gzip, plain.name(1)) == (False, "robots-00001.warc")
    directory = ArchiveFiles(str(tmp_path / "archive"), 1_700_000_000.5, 42)
    assert (directory.gzip, directory.name(0), directory.name(12)) == (
        True, "scrapy-rep-robots-20231114221320-42-00000.warc.gz", "scrapy-rep-robots-20231114221320-42-00012.warc.gz")
    (tmp_path / "archive").mkdir()
    (tmp_path / "archive" / directory.name(1)).write_bytes(b"taken")
    opened = [directory.open_next() for _ in range(2)]
    for _, file in opened:
        file.close()
    assert [name for name, _ in opened] == [directory.name(0), directory.name(2)]
    assert (tmp_path / "archive" / directory.name(1)).read_bytes() == b"taken"


def store_copy(archive: WarcArchive, number: int, body: bytes, fetched_at: float = 1000.0) -> None:
    origin = f"https://o{number}.example"
    version = Version.of(body, fetched_at, 200, f"{origin}/robots.txt")
    archive.adopted(origin, f"{origin}/robots.txt", version, "rules", body, "store", None)


def test_rotation_and_store_reads_archived_once(tmp_path: Path) -> None:
    """Copies read from the store (no crawl needed: the handler is called as the signal calls it). A file closes
    once past the size, the next copy opens the next; the same version of an origin read twice is archived once, a
    version fetched at another time again."""
    stats = MemoryStatsCollector(get_crawler())
    files = ArchiveFiles(str(tmp_path), 0.0, 7)
    archive = WarcArchive(files, Records(True, CrawlInfo("unit", ("bot",), "memory")), MIN_BYTES, stats,
                          lambda: 0.0)
    for number in range(20):
        store_copy(archive, number, noise(10_000, number))
    store_copy(archive, 3, noise(10_000, 3))  # read again: not archived
    store_copy(archive, 3, noise(10_000, 3), fetched_at=2000.0)  # another version
    archive.close()
    store_copy(archive, 99, b"")  # after close: nothing
    paths = sorted(tmp_path.iterdir())
    assert [path.name for path in paths] == [files.name(n) for n in range(len(paths))] and len(paths) >= 3
    targets = []
    for path in paths:
        records = read(path)
        assert records[0]["type"] == "warcinfo"
        assert [record["type"] for record in records[1:]] == ["resource", "metadata"] * ((len(records) - 1) // 2)
        targets += [record["warc"]["WARC-Target-URI"] for record in records if record["type"] == "resource"]
    for path in paths[:-1]:
        assert path.stat().st_size >= MIN_BYTES  # closed once past the size, not before
        assert path.stat().st_size < MIN_BYTES + 12_000  # ... by the copy that passed it
    assert targets == [f"https://o{n}.example/robots.txt" for n in [*range(20), 3]]
    assert stats.get_value("rep/warc/records") == len(paths) + 2 * 21
    assert stats.get_value("rep/warc/files") == len(paths)


def test_the_store_reads_remembered_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With room for 4 (two generations of 2): o0 read again three reads later is not archived again; read again
    once the two generations have turned over, it is."""
    monkeypatch.setattr(warc_archive, "SEEN_MAX", 4)
    stats = MemoryStatsCollector(get_crawler())
    archive = WarcArchive(ArchiveFiles(str(tmp_path / "a.warc"), 0.0, 7), Records(False, CrawlInfo("unit", (), "m")),
                          MIN_BYTES, stats, lambda: 0.0)
    for number in [0, 1, 2, 3, 0, 4, 5, 6, 7, 0]:
        store_copy(archive, number, b"User-agent: *\n")
    archive.close()
    targets = [record["warc"]["WARC-Target-URI"] for record in read(tmp_path / "a.warc")
               if record["type"] == "resource"]
    assert targets == [f"https://o{n}.example/robots.txt" for n in [0, 1, 2, 3, 4, 5, 6, 7, 0]]


@pytest_twisted.ensureDeferred
async def test_a_redirected_copy_and_a_404_are_archived_as_received(sites: Any, tmp_path: Path) -> None:
    """The final response of a redirect chain is archived under its own URL (the hops are not); a 404 keeps the
    body the server sent, while the version (allow-all) is that of the empty body."""
    moved: Site = sites()
    moved.route("/robots.txt", robots("", status=301, headers={"Location": "/robots-v2.txt"}))
    moved.route("/robots-v2.txt", robots(RULES))
    missing: Site = sites()
    path = tmp_path / "robots.warc.gz"
    await crawl([moved.url("/a"), missing.url("/a")], REP_WARC=str(path), CONCURRENT_REQUESTS=1)
    records = read(path)
    assert [record["type"] for record in records] == ["warcinfo", *["request", "response", "metadata"] * 2]
    by_origin = {fields(records[n + 2])["origin"]: (records[n], records[n + 1], records[n + 2])
                 for n in (1, 4)}
    request, response, metadata = by_origin[moved.origin()]
    assert request["warc"]["WARC-Target-URI"] == response["warc"]["WARC-Target-URI"] == moved.url("/robots-v2.txt")
    assert request["http"].statusline == "/robots-v2.txt HTTP/1.1" and response["content"] == RULES.encode()
    facts = fields(metadata)
    assert (facts["robots-url"], facts["final-url"]) == (moved.url("/robots.txt"), moved.url("/robots-v2.txt"))
    _, response, metadata = by_origin[missing.origin()]
    assert response["http"].get_statuscode() == "404" and response["content"] == b"nope"
    facts = fields(metadata)
    assert (facts["outcome"], facts["kept-bytes"], facts["status"]) == ("allow-all", "0", "404")
    assert facts["version-id"] == hashlib.sha256(b"").hexdigest()
    warcio("check", str(path))
