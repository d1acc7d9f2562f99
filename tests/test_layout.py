"""The package's shape (docs/architecture.md): rooms by role, imports one way, no cycle, small modules.

Read from the source with ``ast`` (every import: module level, inside functions and under TYPE_CHECKING alike), so a
local import cannot hide a cycle or a layering violation.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import scrapy_rep

PACKAGE = Path(scrapy_rep.__file__).parent

#: The rooms of ``scrapy_rep`` (its top-level modules and packages), lowest first. A module may import its own room
#: and the rooms of lower layers, never a room of its own layer or above. ``__init__`` is the package's front door.
LAYERS: tuple[frozenset[str], ...] = tuple(frozenset(layer) for layer in (
    {"matcher", "_scrapy"},  # pure parser and matcher; every Scrapy internal
    {"config", "robotparser"},  # settings read once; Scrapy's ROBOTSTXT_PARSER interface over the matcher
    {"stores"},
    {"robots"},  # one origin's robots.txt
    {"reporting"},  # what the crawl is told
    {"requests"},  # a request's journey
    {"middleware"},  # the coordinator
    {"addon"},
    {"__init__"},
    {"demo"},
    {"cli"},
))
RANK = {room: rank for rank, layer in enumerate(LAYERS) for room in layer}
#: A module over this many lines is asking to be split (the developers' guide says ~350).
MAX_LINES = 350


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(("scrapy_rep", *parts))] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> Iterator[tuple[str, int]]:
    """The ``scrapy_rep`` modules ``name`` imports, with the line of each import."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "scrapy_rep":
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "scrapy_rep":
                continue
            for alias in node.names:  # ``from . import x``: x may be a submodule
                submodule = f"{target}.{alias.name}"
                yield (submodule if submodule in MODULES else target), node.lineno


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


GRAPH = {name: sorted(set(_imports(name, path))) for name, path in MODULES.items()}


def test_every_module_is_in_a_room() -> None:
    """A new top-level module or package joins the table above on purpose (and docs/architecture.md with it)."""
    assert sorted({_room(name) for name in MODULES} - set(RANK)) == []


def test_imports_go_one_way() -> None:
    assert _violations(GRAPH) == []


def test_the_matcher_imports_nothing_of_the_project_scrapy_or_twisted() -> None:
    outside = []
    for name, path in MODULES.items():
        if _room(name) != "matcher":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            roots = [alias.name for alias in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            outside += [f"{name}: {root}" for root in roots if root.split(".")[0] in ("scrapy", "twisted")]
    assert outside == []


def test_no_import_cycle() -> None:
    edges = {name: {target for target, _ in targets if target != name} for name, targets in GRAPH.items()}
    assert _cycle(edges) is None


def test_the_checks_can_fail() -> None:
    """A cycle, an upward import and an import between rooms of one layer are found when present; the walk sees
    relative, absolute and function-level imports."""
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
    assert _violations({
        "scrapy_rep.stores._base": [("scrapy_rep.robots.state", 3)],  # up
        "scrapy_rep.matcher._robots": [("scrapy_rep._scrapy", 5), ("scrapy_rep.matcher._parser", 6)],  # sideways
        "scrapy_rep.requests.waiting": [("scrapy_rep.robots.state", 7)],  # down: fine
    }) == ["scrapy_rep.stores._base line 3 imports scrapy_rep.robots.state",
           "scrapy_rep.matcher._robots line 5 imports scrapy_rep._scrapy"]
    waiting_log = {target for target, _ in GRAPH["scrapy_rep.reporting.waiting_log"]}
    assert {"scrapy_rep.robots.state", "scrapy_rep.reporting.outcome_log"} <= waiting_log  # relative, both levels
    assert "scrapy_rep.demo.main" in {target for target, _ in GRAPH["scrapy_rep.cli"]}  # inside a function


def _violations(graph: dict[str, list[tuple[str, int]]]) -> list[str]:
    return [
        f"{name} line {line} imports {target}"
        for name, targets in graph.items()
        for target, line in targets
        if _room(target) != _room(name) and RANK[_room(target)] >= RANK[_room(name)]
    ]


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_stay_small(name: str) -> None:
    lines = len(MODULES[name].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{name} has {lines} lines: split it by what it holds"


def test_the_front_door_is_short() -> None:
    """``ls scrapy_rep/`` shows the rooms: a handful of entries besides the private ones."""
    public = sorted(p.name for p in PACKAGE.iterdir() if not p.name.startswith(("_", ".")) and p.name != "py.typed")
    assert public == ["addon.py", "cli", "config", "demo", "matcher", "middleware.py", "reporting", "requests",
                      "robotparser.py", "robots", "stores"]


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``edges`` as a path that ends where it starts, or None (depth-first, iterative)."""
    done: set[str] = set()
    for start in sorted(edges):
        if start in done:
            continue
        path, on_path = [start], {start}
        stack = [iter(sorted(edges.get(start, ())))]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
                done.add(path[-1])
                on_path.discard(path.pop())
            elif nxt in on_path:
                return [*path[path.index(nxt):], nxt]
            elif nxt not in done:
                path.append(nxt)
                on_path.add(nxt)
                stack.append(iter(sorted(edges.get(nxt, ()))))
    return None
