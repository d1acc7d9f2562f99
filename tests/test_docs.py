"""Every code example of the documentation runs: each ``python`` block of README.md and docs/*.md is executed on its
own, and the settings it defines pass scrapy-rep's start-up validation; each ``scrapy-rep`` command line of a
``bash`` block parses with the CLI's own parser. Output, logs and fragments are ``text``/``console`` blocks.

The docs site itself is built with warnings as errors by .ci/run (``sphinx-build -W``), which checks every link."""

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
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_FENCE = re.compile(r"^(?P<fence>`{3,})(?P<lang>[\w-]*)[^\n]*\n(?P<code>.*?)^(?P=fence)\s*$", re.M | re.S)


def blocks(lang: str) -> list[tuple[str, str]]:
    """(page:line, code) of every fenced block in ``lang``."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in _FENCE.finditer(text):
            if match.group("lang") == lang:
                line = text.count("\n", 0, match.start()) + 1
                found.append((f"{page.relative_to(REPO)}:{line}", match.group("code")))
    return found


PYTHON = blocks("python")
BASH = blocks("bash")


def run(code: str, where: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "docs_example"}
    exec(compile(code, where, "exec"), namespace)
    return namespace


def settings_of(namespace: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in namespace.items() if name.isupper()}


def test_the_docs_have_examples() -> None:
    assert len(PAGES) > 10
    assert len(PYTHON) >= 10 and len(BASH) >= 5


@pytest.mark.parametrize(("where", "code"), PYTHON, ids=[where for where, _ in PYTHON])
def test_python_block_runs_and_its_settings_are_valid(where: str, code: str) -> None:
    namespace = run(code, where)
    settings = settings_of(namespace)
    for name in ("ADDONS", "DOWNLOADER_MIDDLEWARES", "SPIDER_MIDDLEWARES"):
        for path in settings.get(name, {}):
            load_object(path)
    spiders = [v for v in namespace.values() if isinstance(v, type) and issubclass(v, Spider) and v is not Spider]
    for spider in spiders:
        settings.update(spider.custom_settings or {})
    if settings:
        Config.from_settings(Settings({"ROBOTSTXT_OBEY": True, **settings}))


def test_both_activations_pass_the_start_up_check() -> None:
    """getting-started's add-on block and by-hand block each give a middleware set that the middlewares accept."""
    page = "docs/getting-started.md"
    (addon_block,) = [code for where, code in PYTHON if where.startswith(page) and "ADDONS" in code]
    (manual_block,) = [code for where, code in PYTHON if where.startswith(page) and "DOWNLOADER_MIDDLEWARES" in code]
    assert settings_of(run(addon_block, page))["ADDONS"] == {"scrapy_rep.Addon": 0}
    with_addon = Settings({"ROBOTSTXT_OBEY": True})
    Addon().update_settings(with_addon)
    manual = Settings({"ROBOTSTXT_OBEY": True, **settings_of(run(manual_block, page))})
    for settings in (with_addon, manual):
        check_middlewares(settings)
        check_spider_middlewares(settings, Config.from_settings(settings), RobotsStartMiddleware)


def _commands(code: str) -> list[str]:
    lines = [line.split(" #")[0] for line in code.replace("\\\n", " ").splitlines()]
    return [part.strip() for line in lines for part in re.split(r"&&|\||;", line)
            if re.match(r"\s*(\S*/)?scrapy-rep\s", part)]


COMMANDS = [(where, command) for where, code in BASH for command in _commands(code)]


def test_the_docs_show_commands() -> None:
    assert len(COMMANDS) >= 10


@pytest.mark.parametrize(("where", "command"), COMMANDS, ids=[f"{w} {c}" for w, c in COMMANDS])
def test_scrapy_rep_command_line_parses(where: str, command: str) -> None:
    argv = shlex.split(command)
    try:
        build_parser().parse_args(argv[1:])
    except SystemExit as stop:  # argparse: 2 on a usage error, 0 after printing --help or --version
        assert stop.code == 0, f"{where}: {command}"
