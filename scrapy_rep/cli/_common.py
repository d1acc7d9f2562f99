"""What every subcommand shares: the exit codes, the error prefix and the usage error, and the defaults the middleware
uses."""

from __future__ import annotations

from scrapy_rep import __version__
from scrapy_rep.config import Config

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_UNAVAILABLE = 3
EXIT_INTERNAL = 4

#: The product token of Scrapy's default ``USER_AGENT`` (SPEC 6.4): what a fresh Scrapy project identifies as.
DEFAULT_TOKEN = "Scrapy"
#: SPEC 4.4 and 2.2: the middleware's defaults for ``REP_MAX_SIZE`` and ``REP_MAX_REDIRECTS``.
MAX_BYTES = Config.max_size
MAX_REDIRECTS = Config.max_redirects
#: The most ``lint`` reads: past the cap, to count and name what the cap drops (real files are far smaller).
READ_LIMIT = 64 * 1024 * 1024
FETCH_TIMEOUT = 30.0
FETCH_USER_AGENT = f"scrapy-rep/{__version__} (robots.txt tester)"


#: How every error the CLI prints starts, whichever subcommand, usage (argparse's included), input or internal: one
#: line on stderr, ``scrapy-rep: error: MESSAGE`` (``error_line``).
ERROR_PREFIX = "scrapy-rep: error: "


def error_line(message: str) -> str:
    """The one line an error is printed as (``ERROR_PREFIX``); ``message`` names the subcommand where it helps."""
    return ERROR_PREFIX + message


class UsageError(Exception):
    """Bad input a user can fix: printed as one line (``error_line``), exit code 2."""


