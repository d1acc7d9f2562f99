"""Real servers and helpers for the store tests: a redis-server on a free loopback port, a runner for
coroutines, and the worker that the multi-process SQLite test runs in each process."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import zlib
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from scrapy_rep.stores import Entry, Outcome, Store, open_store

T = TypeVar("T")

#: Upper bound for anything the tests wait for (server start, lease lapse); reaching it fails the test.
DEADLINE = 10.0


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on a fresh asyncio loop in its own thread, independent of any reactor the test session runs."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def entry(origin: str, *, fetched_at: float = 1000.0, ttl: float = 86400.0, **kw: Any) -> Entry:
    """A rules entry for ``origin`` with a small robots.txt body."""
    kw.setdefault("body", b"User-agent: *\nDisallow: /private\n")
    kw.setdefault("status", 200)
    return Entry(origin=origin, outcome=Outcome.RULES, fetched_at=fetched_at, expires_at=fetched_at + ttl, **kw)


def current_form(stored: Entry, **changes: Any) -> bytes:
    """``stored``'s record as the persistent stores write it (``_codec``), with ``changes`` to its JSON fields."""
    record = json.dumps(stored.to_record() | changes).encode()
    return b"\x01" + record + b"\n" + stored.packed_body


def old_form(stored: Entry, **changes: Any) -> bytes:
    """``stored``'s record as the stores wrote it before 2026-11-27: the JSON with the body in base64, zlib level 1."""
    record = stored.to_record() | {"body": base64.b64encode(stored.body).decode()} | changes
    return zlib.compress(json.dumps(record).encode(), 1)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class RedisServer:
    """A real ``redis-server`` process on 127.0.0.1 with its files in ``directory``; nothing is persisted."""

    def __init__(self, directory: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise FileNotFoundError("redis-server")
        self.binary = binary
        self.directory = directory
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start on ``self.port`` (again, after ``kill``) and wait until it answers PING."""
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.directory),
             "--save", "", "--appendonly", "no", "--logfile", str(self.directory / "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + DEADLINE
        while not self.ping():
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.process.returncode}: {self.log()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not answer PING within {DEADLINE} s: {self.log()}")
            time.sleep(0.01)  # polling readiness, bounded by the deadline

    def ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def pause(self) -> None:
        """Freeze the server: it keeps accepting connections but never answers (a hung Redis)."""
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGCONT)

    def log(self) -> str:
        path = self.directory / "redis.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""


def race_for_leases(uri: str, holder: str, origins: list[str], barrier: Any) -> list[str]:
    """Run in a separate process: after all processes pass ``barrier``, try to take each origin's lease and,
    when granted, write an entry naming this holder. Returns the origins this process won."""

    async def race() -> list[str]:
        store = open_store(uri)
        won = []
        barrier.wait()
        for origin in origins:
            if await store.acquire_lease(origin, holder, ttl=3600):
                await store.put(entry(origin, error=holder))
                won.append(origin)
        await store.close()
        return won

    return asyncio.run(race())


def race_for_lookups(uri: str, holder: str, origins: list[str], barrier: Any) -> list[str]:
    """Run in a separate process: after all processes pass ``barrier``, look each origin up as a crawler does
    (``lookup``) and, when it grants the lease, store an entry naming this holder and release the lease
    (``put_and_release``). Returns the origins this process won."""

    async def race() -> list[str]:
        store = open_store(uri)
        won = []
        barrier.wait()
        for origin in origins:
            found, leased = await store.lookup(origin, holder, ttl=3600)
            if leased:
                assert found is None
                await store.put_and_release(entry(origin, error=holder), holder)
                won.append(origin)
        await store.close()
        return won

    return asyncio.run(race())


class Backend:
    """How a test opens a store of one kind, and writes a raw record behind its back."""

    def __init__(self, name: str, uri: str, write_raw: Callable[[str, bytes], None] | None) -> None:
        self.name = name
        self.uri = uri
        self._write_raw = write_raw

    def open(self, clock: Callable[[], float] = lambda: 1000.0) -> Store:
        """Call inside the coroutine that uses the store (the Redis client binds to the running loop)."""
        return open_store(self.uri, max_origins=1000, clock=clock)

    def write_raw(self, origin: str, data: bytes) -> None:
        assert self._write_raw is not None, f"the {self.name} store keeps objects, not records"
        self._write_raw(origin, data)
