"""The ``scrapy-rep`` console script: a robots.txt tester (``check``), a linter (``lint``), the demo (``demo``) and a
store inspector (``cache``: see ``cache.py`` for its exit codes; a store it cannot open is ``2``).

Exit codes (documented in docs/cli.md):

* ``0``: every URL allowed (``check``), a robots.txt read and nothing ignored (``lint``), every demo page went as
  robots.txt says (``demo``);
* ``1``: some URL disallowed, or refused for a declared content use (``check``), findings or no robots.txt or
  tdmrep.json at the URL (``lint``), a demo page did not go as robots.txt says;
* ``2``: usage or input error (bad arguments, missing file, unreadable URL);
* ``3``: robots.txt (or, for ``lint``, tdmrep.json) temporarily unavailable (5xx, 429 or network error: SPEC 2.2
  disallows the whole origin);
* ``4``: an internal error (a bug: the message names the exception).

Errors are one line on stderr, never a traceback, all with one prefix (``_common.ERROR_PREFIX``: ``scrapy-rep:
error:``), argparse's usage errors included. The top of the layout (docs/architecture.md): it may import any
room; nothing imports it.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from scrapy_rep import __version__

from . import cache, check, lint
from ._common import EXIT_INTERNAL, EXIT_USAGE, UsageError, error_line

__all__ = ["build_parser", "main"]


def run_demo(args: argparse.Namespace) -> int:
    """The demo lives in ``scrapy_rep.demo`` (imported here: Scrapy and the reactor are only needed for it)."""
    from scrapy_rep.demo.main import demo

    return demo(compare=args.compare, serve=args.serve)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr with the CLI's error prefix and exit code 2 (``EXIT_USAGE``);
    the subcommand is named by the hint (``try scrapy-rep check --help``)."""

    def error(self, message: str) -> Any:
        raise UsageError(f"{message} (try {self.prog} --help)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="scrapy-rep", description="robots.txt the way Google reads it: test, lint, demo.")
    parser.add_argument("--version", action="version", version=f"scrapy-rep {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    check.add_parser(commands)
    lint.add_parser(commands)
    cache.add_parser(commands)
    demo_cmd = commands.add_parser("demo", help="crawl a local demo site through the middleware and report")
    mode = demo_cmd.add_mutually_exclusive_group()
    mode.add_argument("--compare", action="store_true", help="also crawl with Scrapy's built-in middleware")
    mode.add_argument("--serve", action="store_true", help="only serve the demo site until Ctrl-C")
    demo_cmd.set_defaults(run=run_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Console-script entry point; returns the exit code."""
    try:
        args = build_parser().parse_args(argv)
        code: int = args.run(args)
    except UsageError as exc:
        print(error_line(str(exc)), file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. `scrapy-rep demo | head`: stop quietly, as a shell tool does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as exc:  # the contract is one line, never a traceback; this is a bug to report
        print(error_line(f"internal error (please report): {type(exc).__name__}: {exc}"), file=sys.stderr)
        return EXIT_INTERNAL
    return code


if __name__ == "__main__":
    sys.exit(main())
