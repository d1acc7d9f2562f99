"""Fixtures for running ``scrapy-rep`` as a user would: the installed console script, in a subprocess."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from twisted.internet import threads

REPO = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).parent / "scrapy-rep"
_ORIGIN_LINE = re.compile(r"^\s+(\w+)\s+(http://127\.0\.0\.1:\d+)\s")


def run_cli(*args: str, stdin: str | bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``scrapy-rep ARGS...``; the result's stdout/stderr are text."""
    if not SCRIPT.exists():
        pytest.fail(f"the scrapy-rep console script is not installed at {SCRIPT}: pip install -e .")
    data = stdin.encode() if isinstance(stdin, str) else stdin
    done = subprocess.run(
        [str(SCRIPT), *args], input=data, capture_output=True, cwd=cwd or REPO, timeout=120, check=False
    )
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


async def run_cli_beside(*args: str) -> subprocess.CompletedProcess[str]:
    """``run_cli`` in a thread, so that the reactor keeps serving the ``tests.servers.Site``s the command fetches
    from (inside a ``pytest_twisted.ensureDeferred`` test)."""
    done: subprocess.CompletedProcess[str] = await threads.deferToThread(run_cli, *args)
    return done


@pytest.fixture(scope="package")
def demo_site() -> Iterator[dict[str, str]]:
    """``scrapy-rep demo --serve`` in a subprocess: origin name -> base URL. Stopped (SIGTERM) after the tests."""
    if not SCRIPT.exists():
        pytest.fail(f"the scrapy-rep console script is not installed at {SCRIPT}: pip install -e .")
    process = subprocess.Popen(
        [str(SCRIPT), "demo", "--serve"], stdout=subprocess.PIPE, text=True, cwd=REPO,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stdout is not None
    urls: dict[str, str] = {}
    for line in process.stdout:  # the listing is printed once every origin listens
        if line.startswith("Try"):
            break
        match = _ORIGIN_LINE.match(line)
        if match:
            urls[match.group(1)] = match.group(2)
    try:
        assert urls, "demo --serve printed no origins"
        yield urls
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
