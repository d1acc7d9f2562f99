"""Content codings of robots.txt bodies, undone with the size cap (SPEC 4.4) so a decompression bomb is never
inflated past it.

gzip and deflate are always decoded (zlib). ``br`` and ``zstd`` are optional, as in Scrapy: ``br`` when ``brotli``
(or ``brotlicffi``) >= 1.2 is importable, ``zstd`` when ``compression.zstd`` (Python 3.14), ``backports.zstd`` or
``zstandard`` is. ``ACCEPT_ENCODING``, sent with robots requests, names only the codings that both this module can
decode and Scrapy's own HttpCompressionMiddleware accepts on this install, so a robots request advertises what a
page request of the same crawl advertises, and never a coding that could not be decoded. A response in a coding
that cannot be decoded is an empty robots.txt (SPEC 4.4: the bytes cannot be read), counted by the body middleware.
"""

from __future__ import annotations

import importlib
import zlib
from collections.abc import Callable
from io import BytesIO
from typing import Any

from .._scrapy import SCRAPY_ACCEPTED_ENCODINGS

Decoder = Callable[[bytes, int], bytes]


def _inflate(body: bytes, max_size: int, wbits: int) -> bytes:
    decompressor = zlib.decompressobj(wbits)
    try:
        return decompressor.decompress(body, max_size)
    except zlib.error:
        return b""


def _deflate(body: bytes, max_size: int) -> bytes:
    # zlib-wrapped as the RFC says, or raw deflate as some servers send.
    return _inflate(body, max_size, zlib.MAX_WBITS) or _inflate(body, max_size, -zlib.MAX_WBITS)


def _first_module(*names: str) -> Any:
    """The first of the modules that imports, else None."""
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


def _brotli_decoder() -> Decoder | None:
    brotli = _first_module("brotli", "brotlicffi")
    # Scrapy too requires brotli >= 1.2 (``can_accept_more_data``) before it accepts br.
    if brotli is None or not hasattr(brotli.Decompressor, "can_accept_more_data"):
        return None

    def unbrotli(body: bytes, max_size: int) -> bytes:
        decompressor = brotli.Decompressor()
        out = b""
        try:
            chunk = decompressor.process(body, output_buffer_limit=max_size)
            while chunk and len(out) < max_size:
                out += chunk
                if decompressor.is_finished():
                    break
                chunk = decompressor.process(b"", output_buffer_limit=max_size - len(out))
        except brotli.error:
            pass
        return out[:max_size]

    return unbrotli


def _zstd_decoder() -> Decoder | None:
    zstd = _first_module("compression.zstd", "backports.zstd")
    if zstd is not None:
        def open_stream(body: bytes) -> Any:
            return zstd.ZstdFile(BytesIO(body))
    else:
        zstandard = _first_module("zstandard")
        if zstandard is None:
            return None

        def open_stream(body: bytes) -> Any:
            return zstandard.ZstdDecompressor().stream_reader(BytesIO(body), read_across_frames=True)

    def unzstd(body: bytes, max_size: int) -> bytes:
        out = b""
        try:
            stream = open_stream(body)
            while len(out) < max_size:
                chunk = stream.read(max_size - len(out))
                if not chunk:
                    break
                out += chunk
        except Exception:  # any library's "corrupt stream": keep what decoded cleanly
            pass
        return out[:max_size]

    return unzstd


def _available() -> dict[str, Decoder]:
    decoders: dict[str, Decoder] = {
        "gzip": lambda body, cap: _inflate(body, cap, 16 + zlib.MAX_WBITS),
        "x-gzip": lambda body, cap: _inflate(body, cap, 16 + zlib.MAX_WBITS),
        "deflate": _deflate,
        "identity": lambda body, cap: body[:cap],
    }
    for name, decoder in (("br", _brotli_decoder()), ("zstd", _zstd_decoder())):
        if decoder is not None:
            decoders[name] = decoder
    return decoders


DECODERS: dict[str, Decoder] = _available()

#: The Accept-Encoding of robots requests: Scrapy's accepted codings that this module decodes, in Scrapy's order.
ACCEPT_ENCODING: bytes = b", ".join(
    coding for coding in SCRAPY_ACCEPTED_ENCODINGS if coding.decode("latin-1").lower() in DECODERS
)


def bounded_decode(body: bytes, encodings: list[str], max_size: int) -> tuple[bytes, str | None]:
    """Undo ``Content-Encoding`` (``encodings`` as listed in the header, applied in order) producing at most
    ``max_size`` bytes. Returns the body and None, or b"" and the first coding that cannot be decoded. A truncated
    or corrupt stream yields what decoded cleanly."""
    for encoding in reversed(encodings):
        decoder = DECODERS.get(encoding)
        if decoder is None:
            return b"", encoding
        body = decoder(body, max_size)
    return body[:max_size], None
