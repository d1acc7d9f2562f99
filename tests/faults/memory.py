"""The process's peak resident memory during a block of code (Linux: VmHWM, reset through /proc/self/clear_refs).

Peak RSS sees every allocation (Python, C extensions, socket buffers) at no cost, unlike tracemalloc, which slows a
crawl several-fold and misses C allocations. Where the peak cannot be reset the measure is None and tests skip the
memory assertion.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")
MIB = 1 << 20


def _kib(field: str) -> int:
    match = re.search(rf"^{field}:\s+(\d+) kB", _STATUS.read_text(), re.MULTILINE)
    assert match is not None
    return int(match.group(1))


@dataclass
class PeakGrowth:
    """Bytes by which the peak RSS rose above the RSS at the start of the block (None: not measurable here)."""

    bytes: int | None = None

    @property
    def mib(self) -> float | None:
        return None if self.bytes is None else self.bytes / MIB


@contextmanager
def peak_rss_growth() -> Iterator[PeakGrowth]:
    growth = PeakGrowth()
    try:
        _CLEAR_REFS.write_text("5")  # resets VmHWM to the current RSS (Linux >= 4.0)
        start = _kib("VmRSS")
    except OSError:
        yield growth
        return
    yield growth
    growth.bytes = (_kib("VmHWM") - start) * 1024
