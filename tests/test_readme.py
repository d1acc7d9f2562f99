"""README.md, the project's front page: its two commands come first, every Python block runs (and its settings pass
scrapy-rep's start-up validation), every ``scrapy-rep`` command line parses, and the settings and stats references
name exactly what the code reads and counts."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from scrapy import Spider
from scrapy.settings import Settings
from scrapy.utils.misc import load_object

from scrapy_rep import Addon, RobotsStartMiddleware
from scrapy_rep.cli import build_parser
from scrapy_rep.config import Config
from scrapy_rep.requests.page_directives import check_spider_middlewares
from scrapy_rep.robots.body import check_middlewares

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
BLOCKS: list[tuple[str, str]] = _BLOCK.findall(README)
PYTHON = [code for lang, code in BLOCKS if lang == "python"]
BASH = [code for lang, code in BLOCKS if lang == "bash"]


def run(code: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(compile(code, "README.md", "exec"), namespace)
    return namespace


def settings_of(namespace: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in namespace.items() if name.isupper()}


def test_the_two_commands_come_first() -> None:
    setup_and_demo = "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/scrapy-rep demo\n"
    assert BLOCKS[0] == ("bash", setup_and_demo)
    assert BLOCKS[1] == ("bash", "bash .ci/run\n")
    assert README.index("```") < README.index("\n## ")
    title, sentence = README[: README.index("```")].strip().splitlines()[::2]
    assert title == "# scrapy-rep" and sentence.startswith("A Scrapy plugin that obeys robots.txt")  # what it is


def test_sections_in_the_issues_order() -> None:
    order = [
        "What it is and why", "Install", "Activation", "Settings", "Request meta keys", "Stats",
        "Stores and scaling to many machines", "Running a fleet (scrapy-redis)", "Beside other Scrapy components",
        "AI usage and text-and-data-mining opt-outs", "Evidence: what robots.txt said when each page was fetched",
        "Page-level directives (robots meta tag, X-Robots-Tag) and Clean-param", "The CLI",
        "How decisions are logged", "Performance",
        "Reliability: hostile servers and files", "Compatibility", "FAQ", "Inside the package", "Licence",
    ]
    headings = re.findall(r"^## (.+)$", README, re.M)
    assert headings == order


@pytest.mark.parametrize("code", PYTHON, ids=[f"python-{i}" for i in range(len(PYTHON))])
def test_python_block_runs_and_its_settings_are_valid(code: str) -> None:
    namespace = run(code)
    settings = settings_of(namespace)
    for name in ("ADDONS", "DOWNLOADER_MIDDLEWARES"):
        for path in settings.get(name, {}):
            load_object(path)
    spiders = [v for v in namespace.values() if isinstance(v, type) and issubclass(v, Spider) and v is not Spider]
    for spider in spiders:
        settings.update(spider.custom_settings or {})
    if settings:
        Config.from_settings(Settings({"ROBOTSTXT_OBEY": True, **settings}))


def test_both_activations_pass_the_start_up_check() -> None:
    """The add-on block and the by-hand block each give a middleware set that RobotsMiddleware accepts."""
    (addon_block,) = [code for code in PYTHON if "ADDONS" in code]
    (manual_block,) = [code for code in PYTHON if "DOWNLOADER_MIDDLEWARES" in code]
    assert settings_of(run(addon_block))["ADDONS"] == {"scrapy_rep.Addon": 0}
    with_addon = Settings({"ROBOTSTXT_OBEY": True})
    Addon().update_settings(with_addon)
    manual = Settings({"ROBOTSTXT_OBEY": True, **settings_of(run(manual_block))})
    for settings in (with_addon, manual):
        check_middlewares(settings)
        check_spider_middlewares(settings, Config.from_settings(settings), RobotsStartMiddleware)


def test_every_scrapy_rep_command_line_parses() -> None:
    lines = [line.split("#")[0] for code in BASH for line in code.splitlines()]
    commands = [part.strip() for line in lines for part in re.split(r"&&|\|", line) if "scrapy-rep " in part]
    assert len(commands) >= 6
    for command in commands:
        argv = shlex.split(command)
        build_parser().parse_args(argv[1:])  # raises on a usage error


def test_the_settings_reference_names_exactly_the_settings_the_code_reads() -> None:
    read = set(re.findall(r'"(REP_[A-Z0-9_]+)"', (REPO / "scrapy_rep" / "config" / "settings.py").read_text()))
    documented = set(re.findall(r"^\| `(REP_[A-Z0-9_]+)` \|", README, re.M))
    assert documented == read


def test_the_stats_reference_names_every_stat_the_middleware_counts() -> None:
    source = "".join(path.read_text() for path in (REPO / "scrapy_rep").glob("*.py"))
    counted = {key.rstrip("/") for key in re.findall(r'f?"(rep/[a-z_/]+)', source)}
    stats_section = README.split("## Stats", 1)[1].split("\n## ", 1)[0]
    assert counted, "no stats found in the middleware"
    missing = {key for key in counted if key not in stats_section}
    assert not missing


def _table_rows(text: str) -> list[tuple[str, str]]:
    """(setting cell, default cell) of the settings table, in README's and docs/settings.md's form."""
    section = text.split("| setting | default |", 1)[1].split("\n\n", 1)[0]
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^\| ([^|]*`REP_[^|]*) \| ([^|]*) \|", section, re.M)]


def test_the_settings_defaults_agree_with_docs_settings_md() -> None:
    """README's table and docs/settings.md's give each setting the same default (rows may pair two settings)."""
    docs = (REPO / "docs" / "settings.md").read_text(encoding="utf-8")
    expected: dict[str, str] = {}
    for names_cell, defaults_cell in _table_rows(docs):
        names = re.findall(r"`(REP_[A-Z0-9_]+)`", names_cell)
        defaults = re.findall(r"`([^`]*)`", defaults_cell)
        if len(names) == len(defaults):  # REP_USER_AGENT's default is prose; its row is checked by name only
            expected.update(zip(names, defaults, strict=True))
    ours = {
        re.findall(r"`(REP_[A-Z0-9_]+)`", names_cell)[0]: re.findall(r"`([^`]*)`", defaults_cell)[0]
        for names_cell, defaults_cell in _table_rows(README)
    }
    assert len(expected) >= 20
    assert {name: ours.get(name) for name in expected} == expected
