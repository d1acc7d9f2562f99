"""A ``Robots`` caches what it selects and builds per agent (SPEC 6.2/6.3), bounded, and shares it with threads."""

from __future__ import annotations

import gc
import sys
import threading
import tracemalloc
from collections.abc import Iterator

import pytest

from scrapy_rep.matcher import Robots, parse

BODY = b"""\
user-agent: alphabot
disallow: /alpha
user-agent: betabot
disallow: /beta
content-usage: train-ai=n
user-agent: *
disallow: /all
allow: /all/open
"""


def expected(agent: str, path: str) -> bool:
    """What BODY says, written out: alphabot and betabot have their own groups, every other agent the ``*`` one."""
    if agent == "alphabot":
        return not path.startswith("/alpha")
    if agent == "betabot":
        return not path.startswith("/beta")
    return not path.startswith("/all") or path.startswith("/all/open")


def agents(count: int) -> Iterator[str]:
    """Distinct agents, every tenth one named by BODY, as a service deciding for arbitrary User-Agents sees them."""
    for i in range(count):
        yield ("alphabot", "betabot")[i // 10 % 2] if i % 10 == 0 else f"crawler{i}"


def retained_by(robots: Robots, count: int) -> int:
    """Bytes that ``robots`` still holds after deciding and explaining for ``count`` distinct agents."""
    gc.collect()
    tracemalloc.start()
    try:
        for agent in agents(count):
            assert robots.allowed("/all/x", agent) is expected(agent, "/all/x")
            assert robots.explain("/beta", agent).allowed is expected(agent, "/beta")
            robots.usage("/x", agent)
        gc.collect()
        return tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()


def test_a_file_asked_for_many_agents_does_not_grow_without_limit() -> None:
    """Ten thousand distinct agents cost what two hundred do: the per-agent caches are bounded, answers unchanged."""
    few = retained_by(parse(BODY), 200)
    many = retained_by(parse(BODY), 10_000)
    assert many < few + 64 * 1024, (few, many)  # unbounded, 10,000 agents keep ~1 MB of keys and entries


def test_a_sequence_of_tokens_is_selected_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """SPEC 6.3: a list of tokens decides as its first token any group names; after its first decision the
    selection is not made again (a list is cached under its tuple), and it answers as the tuple does."""
    robots = parse(BODY)
    selections = []
    select = Robots._select

    def counting(self: Robots, user_agent: object) -> object:
        selections.append(user_agent)
        return select(self, user_agent)  # type: ignore[arg-type]

    monkeypatch.setattr(Robots, "_select", counting)
    tokens = ["nobody", "betabot"]
    assert [robots.allowed(path, tokens) for path in ("/beta", "/all", "/beta/x")] == [False, True, False]
    assert robots.allowed("/beta", tuple(tokens)) is False
    assert len(selections) == 1


def test_readers_in_threads_get_the_answers_of_one_thread() -> None:
    """Threads deciding for more agents than a file keeps (so caches are emptied while others read them) each get
    exactly the single-threaded answers; nothing is torn or lost."""
    robots = parse(BODY)
    paths = ["/alpha", "/beta/x", "/all", "/all/open/1", "/other"]
    failures: list[tuple[str, str]] = []
    start = threading.Barrier(4)

    def work(offset: int) -> None:
        start.wait()
        for agent in agents(400):
            agent = f"{agent}-{offset}" if agent.startswith("crawler") else agent
            for path in paths:
                if robots.allowed(path, agent) is not expected(agent, path):
                    failures.append((agent, path))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert failures == []
