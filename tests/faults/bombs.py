"""Hostile bodies generated as streams, never held whole in memory (issue 6).

``gzip_bomb`` yields a valid gzip stream that inflates to ``size`` bytes (1 GiB by default) in about 1 MB. It is
built from one compressed MiB of zeros repeated: after a full flush a deflate compressor forgets its history, so
compressing the same MiB again gives the same bytes, and consecutive copies form one valid stream.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator

MIB = 1 << 20
GIB = 1 << 30


def gzip_bomb(prefix: bytes, size: int = GIB) -> Iterator[bytes]:
    """A gzip stream of ``prefix`` followed by zero bytes, ``size`` bytes in all once inflated (a multiple of 1 MiB)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    first = prefix + bytes(MIB - len(prefix))
    yield compressor.compress(first) + compressor.flush(zlib.Z_FULL_FLUSH)
    zeros = bytes(MIB)
    block = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    crc = zlib.crc32(zeros, zlib.crc32(first))
    for _ in range(size // MIB - 1):
        yield block
    for _ in range(size // MIB - 2):
        crc = zlib.crc32(zeros, crc)  # only reached when a client reads the whole bomb
    yield b"\x03\x00" + struct.pack("<II", crc, size & 0xFFFFFFFF)  # an empty final block, then the gzip trailer


def padded_robots(head: bytes, size: int, tail: bytes = b"", line: bytes = b"# padding\n") -> Iterator[bytes]:
    """``head``, then comment lines up to ``size`` bytes, then ``tail``, in chunks of about 64 KiB."""
    yield head
    remaining = size - len(head) - len(tail)
    chunk = line * (65_536 // len(line))
    while remaining > 0:
        piece = chunk[:remaining]
        remaining -= len(piece)
        yield piece
    yield tail
