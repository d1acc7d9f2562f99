"""The WARC records (ISO 28500, WARC/1.1) of the robots.txt archive (``warc_archive``), each serialized on its own:
one gzip member per record in a ``.warc.gz`` file, as web archives write them.

A copy downloaded here is a ``request``, a ``response`` and a ``metadata`` record (as Common Crawl archives its
robots.txt captures); a copy read from the store, or a download that ended without an HTTP response (a redirect chain
past REP_MAX_REDIRECTS, a loop), is a ``resource`` record and its ``metadata``. Every file starts with ``warcinfo``.

Digests are SHA-256 in lowercase hex (``sha256:<hex>``, the encoding archives use for SHA-256; warcio reads any): the
payload digest of a copy whose body is kept in full is its version id. Scrapy has already undone the content coding
of a response's body (gzip, br...): the body written is the decoded one, its ``Content-Encoding`` and
``Transfer-Encoding`` headers are left out and ``Content-Length`` is the written body's; the ``metadata`` record's
``http-headers-rewritten`` field keeps the values received. Imports warcio (the optional ``warc`` extra).
"""

from __future__ import annotations

import hashlib
import http.client
import importlib.metadata
import io
import socket
import uuid
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy.utils.httpobj import urlparse_cached
from warcio.statusandheaders import StatusAndHeaders  # type: ignore[import-untyped]
from warcio.warcwriter import WARCWriter  # type: ignore[import-untyped]

from ..robots.fetch import ROBOTS_META_KEY
from ..stores import iso

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.http import Response

    from ..stores import Version

WARC_VERSION = "WARC/1.1"
#: The headers of a response that describe the bytes on the wire, not the decoded body written: left out, and
#: Content-Length set to the body's.
WIRE_HEADERS = frozenset({"content-length", "content-encoding", "transfer-encoding"})
FIELDS_TYPE = "application/warc-fields"


def digest(data: bytes) -> str:
    """A WARC digest of ``data``: ``sha256:`` and its SHA-256 in lowercase hex."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def software() -> str:
    """``scrapy-rep/<version> warcio/<version>``, as the installed distributions say (the package's
    ``__version__`` is the same number, in the room above this one)."""
    return " ".join(f"{name}/{_version(name)}" for name in ("scrapy-rep", "warcio"))


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True)
class CrawlInfo:
    """What the records say about the crawl: its spider's name, the product tokens obeyed, the store (named
    without its password) and its USER_AGENT setting."""

    spider: str
    tokens: tuple[str, ...]
    store: str
    user_agent: str | None = None


@dataclass(frozen=True)
class Copy:
    """One adopted robots.txt version, as the ``robots_version_adopted`` signal gives it."""

    origin: str
    url: str
    version: Version
    outcome: str
    body: bytes
    source: str
    response: Response | None


#: zlib's level for each record's gzip member. warcio's own gzip=True uses 9, which was 55 % of a copy's 0.33 ms: on
#: 300 of the corpus's robots.txt files (6.3 KB on average) level 9 takes 214 µs for 1,222 bytes, level 6 80 µs for
#: 1,251 (2.4 % more), level 1 37 µs for 1,430.
GZIP_LEVEL = 6


class Records:
    """Builds and serializes records; ``gzip``: each record a gzip member of its own (``.warc.gz``)."""

    def __init__(self, gzip: bool, info: CrawlInfo) -> None:
        self.info = info
        self.gzip = gzip
        self._buffer = io.BytesIO()
        self._writer = WARCWriter(self._buffer, gzip=False, warc_version=WARC_VERSION)  # gzipped here: GZIP_LEVEL

    def warcinfo(self, filename: str, now: float) -> tuple[str, bytes]:
        """The first record of file ``filename``: its record id and bytes."""
        record_id = _record_id()
        fields = _fields({
            "software": software(), "format": "WARC File Format 1.1",
            "conformsTo": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
            "isPartOf": self.info.spider, "hostname": socket.gethostname(),
            "http-header-user-agent": self.info.user_agent,
            "description": "robots.txt copies a scrapy-rep crawl decided by (docs/evidence.md)",
        })
        headers = {"WARC-Record-ID": record_id, "WARC-Filename": filename, "WARC-Date": iso(now),
                   "WARC-Block-Digest": digest(fields)}
        return record_id, self._serialized("", "warcinfo", fields, None, headers, FIELDS_TYPE)

    def capture(self, copy: Copy, warcinfo_id: str) -> list[bytes]:
        """The records of ``copy``: request, response and metadata when it was downloaded here, else resource and
        metadata."""
        date = iso(copy.version.fetched_at)
        main_id = _record_id()
        common = {"WARC-Date": date, "WARC-Warcinfo-ID": warcinfo_id}
        records, fields = [], self._facts(copy)
        response = copy.response
        if response is not None:
            http_headers, rewritten = _response_headers(response)
            if rewritten:
                fields["http-headers-rewritten"] = "; ".join(rewritten)
            request = response.request
            if request is not None:
                records.append(self._serialized(
                    request.url, "request", _request_body(request), _request_headers(request),
                    {"WARC-Record-ID": _record_id(), **common, "WARC-Concurrent-To": main_id}, None))
            target = response.url
            main = {"WARC-Record-ID": main_id, **common}
            if getattr(response, "ip_address", None) is not None:
                main["WARC-IP-Address"] = str(response.ip_address)
            if _reached_cap(response):
                main["WARC-Truncated"] = "length"
            records.append(self._serialized(target, "response", response.body, http_headers, main, None))
        else:
            target = copy.url
            records.append(self._serialized(target, "resource", copy.body, None,
                                            {"WARC-Record-ID": main_id, **common}, "text/plain"))
        records.append(self._serialized(target, "metadata", _fields(fields), None,
                                        {"WARC-Record-ID": _record_id(), **common, "WARC-Concurrent-To": main_id},
                                        FIELDS_TYPE))
        return records

    def _facts(self, copy: Copy) -> dict[str, Any]:
        """What scrapy-rep knew of ``copy``: the ``metadata`` record's fields."""
        version = copy.version
        return {
            "origin": copy.origin, "robots-url": copy.url, "final-url": version.url, "status": version.status,
            "fetched-at": iso(version.fetched_at), "version-id": version.id, "kept-bytes": len(copy.body),
            "outcome": copy.outcome, "source": copy.source, "store": self.info.store,
            "product-tokens": ", ".join(self.info.tokens) or "*",
        }

    def _serialized(self, uri: str, record_type: str, payload: bytes, http_headers: StatusAndHeaders | None,
                    warc_headers: dict[str, str], content_type: str | None) -> bytes:
        """One record's bytes (a gzip member when gzipped), with SHA-256 block and payload digests."""
        head = b"" if http_headers is None else http_headers.to_ascii_bytes()
        headers = {"WARC-Type": record_type, **warc_headers, "WARC-Block-Digest": digest(head + payload)}
        if record_type != "warcinfo":
            headers["WARC-Payload-Digest"] = digest(payload)
        record = self._writer.create_warc_record(
            uri, record_type, payload=io.BytesIO(payload), length=len(payload), warc_content_type=content_type or "",
            warc_headers_dict=headers, http_headers=http_headers)
        self._writer.write_record(record)
        data = self._buffer.getvalue()
        self._buffer.seek(0)
        self._buffer.truncate()
        if self.gzip:  # a gzip member per record, as warcio's own gzip=True writes, at GZIP_LEVEL
            member = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, zlib.MAX_WBITS + 16)
            data = member.compress(data) + member.flush()
        return data


def _record_id() -> str:
    return f"<urn:uuid:{uuid.uuid4()}>"


def _fields(fields: dict[str, Any]) -> bytes:
    """``application/warc-fields``: a ``name: value`` line per field set (None left out), on one line each."""
    lines = (f"{name}: {_one_line(value)}\r\n" for name, value in fields.items() if value is not None)
    return "".join(lines).encode("utf-8")


def _one_line(value: Any) -> str:
    return " ".join(str(value).splitlines())


def _request_headers(request: Request) -> StatusAndHeaders:
    """The request as sent: method, path and query, its headers (the downloader middlewares' included) and the
    Host header the HTTP client adds."""
    parts = urlparse_cached(request)
    target = (parts.path or "/") + (f";{parts.params}" if parts.params else "") + (
        f"?{parts.query}" if parts.query else "")
    headers = _header_list(request.headers)
    if not any(name.lower() == "host" for name, _ in headers):
        headers.insert(0, ("Host", parts.netloc.rpartition("@")[2]))
    return StatusAndHeaders(f"{request.method} {target} HTTP/1.1", headers, is_http_request=True)


def _request_body(request: Request) -> bytes:
    return bytes(request.body or b"")


def _response_headers(response: Response) -> tuple[StatusAndHeaders, list[str]]:
    """The status line and headers written for ``response``'s decoded body, and the received values of the headers
    left out or replaced (``WIRE_HEADERS``; a Content-Length equal to the body's is not a change)."""
    body_length = str(len(response.body))
    kept, rewritten = [], []
    for name, value in _header_list(response.headers):
        if name.lower() not in WIRE_HEADERS:
            kept.append((name, value))
        elif name.lower() != "content-length" or value.strip() != body_length:
            rewritten.append(f"{name}: {value}")
    kept.append(("Content-Length", body_length))
    reason = http.client.responses.get(response.status, "")
    return StatusAndHeaders(f"{response.status} {reason}", kept, protocol="HTTP/1.1"), rewritten


def _header_list(headers: Any) -> list[tuple[str, str]]:
    """Scrapy ``Headers`` as (name, value) pairs, one per value, decoded as Latin-1 (warcio writes a non-ASCII value
    %-encoded, RFC 8187)."""
    return [(bytes(name).decode("latin-1"), bytes(value).decode("latin-1"))
            for name, values in headers.items() for value in values]


def _reached_cap(response: Response) -> bool:
    """The body reached REP_MAX_SIZE: the crawl read no further (WARC-Truncated: length)."""
    request = response.request
    cap = None if request is None else request.meta.get(ROBOTS_META_KEY)
    return cap is not None and len(response.body) >= cap
