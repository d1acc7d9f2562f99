"""Sphinx extension: the reference parts generated from the code, so that the docs cannot disagree with it.

- ``{rep-settings}`` (docs/settings.md): the summary table of every ``REP_*`` setting, from
  ``scrapy_rep.config.settings.SETTINGS`` and the defaults of ``Config``'s fields, each row linking to the page's own
  ``### `REP_NAME``` section and summarised by that section's first sentence. A setting without a section, or a
  section naming no setting the code reads, is a build warning (an error under ``-W``).
- ``{rep-cli} [command]`` (docs/cli.md): one (sub)command of ``scrapy_rep.cli.build_parser()``: its usage line, its
  positional arguments and options with their help, choices and defaults (``cache list``: a subcommand of
  ``cache``; no argument: ``scrapy-rep`` itself). A command no page renders is a build warning.

The functions without Sphinx in their signature (``settings_table``, ``default_text``, ``cli_commands``...) are what
tests/test_docs_reference.py checks.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from scrapy_rep.cli import build_parser
from scrapy_rep.config import settings as settings_module
from scrapy_rep.config.settings import SETTINGS, Config
from scrapy_rep.config.uses import TDM_USES
from scrapy_rep.reporting.outcome_log import format_duration
from scrapy_rep.requests.parking import DEFAULT_MAX_PARKED

logger = logging.getLogger(__name__)

# -- settings ----------------------------------------------------------------------------------------------------

#: A setting's section: a level-3 heading naming it alone, "### `REP_CACHE_TTL`" (anchor ``rep_cache_ttl``).
SECTION = re.compile(r"^### `(REP_[A-Z0-9_]+)`[ \t]*$", re.M)
#: Any level-1 to level-3 heading (where a section's text ends).
_HEADING = re.compile(r"^#{1,3} ", re.M)
#: A code span (its text is kept whole when a sentence is cut).
_CODE = re.compile(r"`[^`]*`")
#: A parenthesis holding no other (masked from the inside out).
_PARENTHESES = re.compile(r"\([^()]*\)")

#: Settings whose ``Config`` field is not the name without ``REP_``, lower-cased.
FIELDS = {"REP_USER_AGENT": "user_agents", "REP_5XX_NOT_FOUND_HEURISTIC": "not_found_heuristic"}
#: Settings read into no field of their own: the default ``Config.from_settings`` reads them with.
UNFIELDED: dict[str, object] = {"REP_ALLOW_SMALL_MAX_SIZE": False, "REP_TDMREP": None}
#: What a default computed at start-up (or a ``None``) means, from the code's own constants.
NOTES = {
    "REP_USER_AGENT": "the product token of `ROBOTSTXT_USER_AGENT`, else of `USER_AGENT`",
    "REP_MAX_PARKED": f"{DEFAULT_MAX_PARKED:_}, or `CONCURRENT_REQUESTS` with scrapy-redis's scheduler",
    "REP_TDMREP": f"fetched when `REP_CONTENT_USES` names {' or '.join(f'`{use}`' for use in sorted(TDM_USES))}",
    "REP_CLOCK": "the running reactor",
    "REP_ROBOTS_REQUEST": "robots.txt requests sent as built",
    "REP_WARC": "off",
    "REP_DECISION_LOG": "off",
}


def field_name(setting: str) -> str | None:
    """The ``Config`` field ``setting`` is read into, or None (``UNFIELDED``)."""
    if setting in UNFIELDED:
        return None
    return FIELDS.get(setting, setting.removeprefix("REP_").lower())


def default_value(setting: str) -> object:
    """The default as the code holds it: the ``Config`` field's (``dataclasses.MISSING`` when it has none, as
    ``user_agents``), or ``UNFIELDED``'s."""
    name = field_name(setting)
    if name is None:
        return UNFIELDED[setting]
    fields = {field.name: field for field in dataclasses.fields(Config)}
    if name not in fields:
        raise LookupError(f"{setting}: no Config field {name!r} (map it in FIELDS or UNFIELDED)")
    return fields[name].default


def render_value(value: object) -> str:
    """A default as Markdown, written as it would be set: ``86400.0`` (seconds, with ``(24 h)``), ``512_000``..."""
    if isinstance(value, bool) or value is None:
        return f"`{value}`"
    if isinstance(value, float):  # every float setting is a duration, in seconds
        return f"`{value!r}` ({format_duration(value)})"
    if isinstance(value, int):
        return f"`{value:_}`" if value >= 10_000 else f"`{value}`"
    if isinstance(value, str):
        return f'`"{value}"`'
    return f"`{value!r}`"


def default_text(setting: str) -> str:
    """The default column of ``setting``'s row (Markdown): the value, and what a computed one means."""
    value = default_value(setting)
    note = NOTES.get(setting)
    if value is dataclasses.MISSING:
        return note or "(computed at start-up)"
    return f"{render_value(value)}: {note}" if note else render_value(value)


def sections(markdown: str) -> dict[str, tuple[int, str]]:
    """Each setting section of the page: name -> (line number of its heading, its text up to the next heading)."""
    found: dict[str, tuple[int, str]] = {}
    for match in SECTION.finditer(markdown):
        rest = markdown[match.end():]
        end = _HEADING.search(rest)
        line = markdown.count("\n", 0, match.start()) + 1
        found.setdefault(match.group(1), (line, rest[: end.start()] if end else rest))
    return found


def first_sentence(text: str) -> str:
    """The first sentence of the first paragraph of ``text`` (a section's summary), on one line."""
    paragraph = " ".join(re.split(r"\n[ \t]*\n", text.strip(), maxsplit=1)[0].split())
    masked = _CODE.sub(lambda match: "x" * len(match.group()), paragraph)  # a '.' in code ends no sentence
    while (inner := _PARENTHESES.sub(lambda match: "x" * len(match.group()), masked)) != masked:  # nor in (...)
        masked = inner
    end = re.search(r"\.(\s|$)", masked)
    return paragraph[: end.start() + 1] if end else paragraph


def settings_table(markdown: str, page: str = "settings.md") -> tuple[str, list[tuple[int, str]]]:
    """The Markdown table of every setting of ``SETTINGS``, in the page's order (name linking to its section, default,
    summary), built for the page ``markdown`` (whose file name is ``page``), and its problems: (line, message) for
    each setting without a section, each section of a setting the code does not read, each setting with several
    sections, each section without a summary."""
    found = sections(markdown)
    problems = [(0, f"{name} (in scrapy_rep.config.settings.SETTINGS) has no '### `{name}`' section")
                for name in SETTINGS if name not in found]
    problems += [(line, f"the section {name} names no setting scrapy-rep reads (not in SETTINGS)")
                 for name, (line, _) in found.items() if name not in SETTINGS]
    headings = SECTION.findall(markdown)
    problems += [(found[name][0], f"{name} has {headings.count(name)} sections: document it once")
                 for name in found if headings.count(name) > 1]
    rows = ["| setting | default | what it is |", "|---|---|---|"]
    for name in [name for name in found if name in SETTINGS] + [name for name in SETTINGS if name not in found]:
        line, text = found.get(name, (0, ""))
        summary = first_sentence(text)
        if name in found and not summary:
            problems.append((line, f"the section {name} has no first sentence to summarise it"))
        cells = [f"[`{name}`]({page}#{name.lower()})", default_text(name), summary]
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows), problems


class SettingsTable(SphinxDirective):
    """``{rep-settings}``: the settings summary table of the page it stands in."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        source = Path(self.env.doc2path(self.env.docname))
        self.env.note_dependency(settings_module.__file__)
        table, problems = settings_table(source.read_text(encoding="utf-8"), source.name)
        for line, message in problems:
            logger.warning(message, location=(self.env.docname, line or self.lineno), type="rep", subtype="settings")
        container = nodes.container(classes=["rep-settings"])
        self.state.nested_parse(StringList(table.splitlines(), source=str(source)), self.content_offset, container)
        return [container]


# -- CLI ---------------------------------------------------------------------------------------------------------


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def cli_commands(parser: argparse.ArgumentParser | None = None, path: str = "") -> Iterator[
        tuple[str, argparse.ArgumentParser]]:
    """Every command of the CLI, the top level first (``""``), then ``check``, ..., ``cache list``, ..."""
    parser = parser or build_parser()
    yield path, parser
    for name, sub in _subparsers(parser).items():
        yield from cli_commands(sub, f"{path} {name}".strip())


def cli_options(command: str) -> set[str]:
    """The option strings (``--json``, ``-u``...) of ``command`` (``"cache list"``); KeyError if no such command."""
    parser = dict(cli_commands())[command]
    return {flag for action in parser._actions for flag in action.option_strings}


def usage(parser: argparse.ArgumentParser) -> str:
    """The usage line(s), wrapped at 100 columns whatever the terminal."""
    formatter = argparse.HelpFormatter(parser.prog, width=100)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return formatter.format_help().strip()


def described_actions(parser: argparse.ArgumentParser) -> list[tuple[str, list[tuple[str, str]]]]:
    """(group title, [(invocation, description)]) for the positional arguments and the options of ``parser``; the
    description is the help text, then a default the help does not already state (the choices are in the
    invocation)."""
    formatter = argparse.HelpFormatter(parser.prog, width=100)
    groups: list[tuple[str, list[tuple[str, str]]]] = [("Positional arguments", []), ("Options", [])]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                groups[0][1].append((choice.dest, choice.help or ""))
            continue
        if action.help == argparse.SUPPRESS:
            continue
        text = (action.help or "").replace("%(prog)s", parser.prog)
        if action.default not in (None, False, [], argparse.SUPPRESS) and "default" not in text:
            text += f"; default: {action.default}"
        invocation = formatter._format_action_invocation(action)
        groups[0 if not action.option_strings else 1][1].append((invocation, text))
    return [group for group in groups if group[1]]


class CliReference(SphinxDirective):
    """``{rep-cli} cache list``: one command's usage and arguments, generated from the parser."""

    has_content = False
    optional_arguments = 1
    final_argument_whitespace = True

    def run(self) -> list[nodes.Node]:
        command = " ".join(self.arguments)
        self.env.note_dependency(build_parser.__code__.co_filename)
        commands = dict(cli_commands())
        if command not in commands:
            logger.warning(f"rep-cli: no command {command!r} (known: {', '.join(map(repr, commands))})",
                           location=(self.env.docname, self.lineno), type="rep", subtype="cli")
            return []
        _rendered(self.env).setdefault(self.env.docname, set()).add(command)
        parser = commands[command]
        result: list[nodes.Node] = [nodes.literal_block(text := usage(parser), text, language="text")]
        for title, actions in described_actions(parser):
            result.append(nodes.rubric(text=title))
            items = nodes.definition_list()
            for invocation, description in actions:
                items += nodes.definition_list_item(
                    "", nodes.term("", "", nodes.literal(text=invocation)),
                    nodes.definition("", nodes.paragraph("", "", *_help_nodes(description))))
            result.append(items)
        return [nodes.container("", *result, classes=["rep-cli"])]


#: An option named in a help text (shown as code, and so never typeset as a dash).
_OPTION = re.compile(r"(?<![\w-])(--?[a-z][a-z-]*)")


def _help_nodes(text: str) -> list[nodes.Node]:
    """A help text as text and literal nodes, each option it names a literal."""
    parts = _OPTION.split(text)
    return [nodes.literal(text=part) if index % 2 else nodes.Text(part) for index, part in enumerate(parts) if part]


def _rendered(env: BuildEnvironment) -> dict[str, set[str]]:
    """docname -> the commands its ``{rep-cli}`` directives render (kept in the environment)."""
    if not hasattr(env, "rep_cli_rendered"):
        env.rep_cli_rendered = {}  # type: ignore[attr-defined]
    rendered: dict[str, set[str]] = env.rep_cli_rendered  # type: ignore[attr-defined]
    return rendered


def _purge(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    _rendered(env).pop(docname, None)


def _merge(app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment) -> None:
    _rendered(env).update({name: _rendered(other)[name] for name in docnames if name in _rendered(other)})


def _check_cli_coverage(app: Sphinx, env: BuildEnvironment) -> None:
    """Every command of the CLI is rendered by a ``{rep-cli}`` somewhere (checked once all pages are read)."""
    rendered = set().union(*_rendered(env).values())
    if not rendered:  # no page uses the directive (a partial build): nothing to compare
        return
    for command, _ in cli_commands():
        if command not in rendered:
            name = f"scrapy-rep {command}".strip()
            logger.warning(f"rep-cli: the command {name!r} has no {{rep-cli}} reference", type="rep", subtype="cli")


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("rep-settings", SettingsTable)
    app.add_directive("rep-cli", CliReference)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("env-check-consistency", _check_cli_coverage)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
