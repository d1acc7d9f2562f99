"""SPEC 4.4: only the first REP_MAX_SIZE bytes are used, enforced during the transfer and during decompression."""

from __future__ import annotations

import gzip
import logging
import zlib
from typing import Any

import pytest
import pytest_twisted

from scrapy_rep.robots.decoding import ACCEPT_ENCODING, DECODERS
from scrapy_rep.stores import Outcome
from tests.crawl import crawl, middleware
from tests.servers import Reply, gzip_bomb

CAP = 512_000


def padded(total: int) -> bytes:
    """A robots.txt whose first rule is inside the cap and whose second is far past it."""
    head = b"User-agent: *\nDisallow: /early\n"
    tail = b"\nDisallow: /late\n"
    return head + b"#" * (total - len(head) - len(tail)) + tail


@pytest_twisted.ensureDeferred
async def test_transfer_stops_at_the_cap_and_keeps_what_arrived_spec_4_4(sites: Any) -> None:
    site = sites()
    body = padded(20_000_000)
    site.route("/robots.txt", Reply(body=body, chunk=65_536, headers={"Content-Type": "text/plain"}))
    crawler_box: list[Any] = []
    result = await crawl([site.url("/early"), site.url("/late")], on_crawler=crawler_box.append)
    assert result.downloaded == [site.url("/late")]  # the rule past the cap is ignored, the one before obeyed
    assert site.sent["/robots.txt"] < len(body) // 2  # the transfer stopped; it did not run to the end
    entry = middleware(crawler_box[0]).origins[site.origin()].entry
    assert entry is not None and entry.outcome is Outcome.RULES and len(entry.body) == CAP
    assert result.stat("rep/robots/truncated") == 1 and result.stat("rep/robots/status/200") == 1


@pytest_twisted.ensureDeferred
async def test_a_gzip_bomb_is_not_inflated_past_the_cap_spec_4_4(sites: Any) -> None:
    site = sites()
    bomb = gzip_bomb(200 * CAP)  # ~100 MB inflated
    assert len(bomb) < CAP
    site.route("/robots.txt", Reply(body=bomb, headers={"Content-Encoding": "gzip"}))
    crawler_box: list[Any] = []
    result = await crawl([site.url("/bomb"), site.url("/fine")], on_crawler=crawler_box.append)
    assert result.downloaded == [site.url("/fine")]
    entry = middleware(crawler_box[0]).origins[site.origin()].entry
    assert entry is not None and entry.outcome is Outcome.RULES and len(entry.body) == CAP
    assert result.stat("rep/robots/truncated") == 1


RULES = b"User-agent: *\nDisallow: /private\n"
#: RULES compressed by brotli 1.2 and zstd (literals, so the test runs where those libraries are not installed).
BROTLI_RULES = b"\x0b\x10\x80User-agent: *\nDisallow: /private\n\x03"
ZSTD_RULES = b"(\xb5/\xfd !\t\x01\x00User-agent: *\nDisallow: /private\n"


@pytest.mark.parametrize(
    ("encoding", "body"),
    [
        ("gzip", gzip.compress(RULES)),
        ("deflate", zlib.compress(RULES)),
        ("deflate", zlib.compress(RULES)[2:-4]),  # raw deflate, as some servers send
        ("br", BROTLI_RULES),
        ("zstd", ZSTD_RULES),
        ("x-unknown", RULES),  # a coding no install decodes: the undecodable path runs everywhere
    ],
)
@pytest_twisted.ensureDeferred
async def test_compressed_robots_txt_is_decoded_when_it_can_be_spec_4_4(
    sites: Any, caplog: pytest.LogCaptureFixture, encoding: str, body: bytes
) -> None:
    """gzip and deflate always; br and zstd where their library is installed (and then advertised). Without it
    the coding is not advertised, and a server that sends it anyway gets an empty robots.txt, counted."""
    site = sites()
    site.route("/robots.txt", Reply(body=body, headers={"Content-Encoding": encoding}))
    result = await crawl([site.url("/private"), site.url("/public")])
    advertised = site.hits[0].headers["accept-encoding"].split(", ")
    assert advertised == ACCEPT_ENCODING.decode().split(", ")
    if encoding in DECODERS:
        assert encoding in advertised
        assert result.downloaded == [site.url("/public")]
        assert result.stat("rep/robots/undecodable") == 0
    else:
        assert encoding not in advertised
        assert sorted(result.downloaded) == [site.url("/private"), site.url("/public")]
        assert result.stat(f"rep/robots/undecodable/{encoding}") == 1
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "decode" in r.msg]
        assert len(warnings) == 1 and repr(encoding) in warnings[0]


def test_the_accepted_codings_are_scrapys_that_can_be_decoded() -> None:
    from scrapy.downloadermiddlewares.httpcompression import ACCEPTED_ENCODINGS

    assert ACCEPT_ENCODING.split(b", ") == [coding for coding in ACCEPTED_ENCODINGS if coding.decode() in DECODERS]
    assert {"gzip", "deflate"} <= set(DECODERS)


@pytest_twisted.ensureDeferred
async def test_rep_max_size_is_configurable_spec_4_4(sites: Any) -> None:
    site = sites()
    site.route("/robots.txt", Reply(body=b"User-agent: *\nDisallow: /a\n" + b"#" * 100 + b"\nDisallow: /b\n"))
    result = await crawl([site.url("/a"), site.url("/b")], REP_MAX_SIZE=100, REP_ALLOW_SMALL_MAX_SIZE=True)
    assert result.downloaded == [site.url("/b")]
