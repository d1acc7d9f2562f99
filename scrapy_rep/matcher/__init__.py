"""Google-faithful robots.txt parsing and matching (SPEC 4-7).

``parse(body)`` gives a ``Robots`` that answers ``allowed(url, user_agent)`` exactly as Google's reference
library (google/robotstxt) does, ``explain`` says which rule of which group decided (``Verdict.reason``),
``compact(user_agent)`` keeps only what deciding for one crawler needs (``AgentRules``, what a broad crawl holds per
origin), and ``report(body)`` gives the per-line parse results the way Google's RobotsParsingReporter does (for the
linter). ``usage`` gives the usage preferences (AIPREF Content-Usage, Cloudflare Content-Signal) that apply to an
allowed URL. ``Robots.clean_params`` holds Yandex's Clean-param rules, read file-wide, and ``clean_url`` (or
``AgentRules.clean``) drops the query parameters they list from a URL. ``robots_tags`` reads a response's page-level
directives (robots meta tags and X-Robots-Tag headers, as Google reads them) into ``RobotsTags``. Every message that
shows a line of robots.txt (crawl log, close report, CLI) words it with ``cite``.

The room is pure: it imports nothing of the project, of Scrapy or of Twisted, does no I/O and reads no clock
(tests/test_layout.py). Its modules are private and re-exported here.
"""

from ._agents import extract_user_agent, is_valid_user_agent
from ._clean_param import CleanParam, clean_url
from ._compact import COLD_DECISIONS, HOT_RULES, AgentRules
from ._escape import Body, escape_pattern
from ._parser import MAX_BYTES, MAX_LINE_BYTES, Key, LineMetadata, ParseHandler, parse_lines
from ._report import UNUSED_KEYS, LineKind, ParsedLine, ParseReport, ignored_lines, report
from ._robots import Robots, parse
from ._robots_tags import NO_TAGS, RobotsTags, is_unavailable, robots_tags
from ._rules import AgentGroup, Rule, cite
from ._urls import path_params_query
from ._usage import Preference, aipref_use, usage_problems
from ._verdict import UserAgent, Verdict

__all__ = [
    "COLD_DECISIONS",
    "HOT_RULES",
    "MAX_BYTES",
    "MAX_LINE_BYTES",
    "NO_TAGS",
    "UNUSED_KEYS",
    "AgentGroup",
    "AgentRules",
    "Body",
    "CleanParam",
    "Key",
    "LineKind",
    "LineMetadata",
    "ParseHandler",
    "ParseReport",
    "ParsedLine",
    "Preference",
    "Robots",
    "RobotsTags",
    "Rule",
    "UserAgent",
    "Verdict",
    "aipref_use",
    "cite",
    "clean_url",
    "escape_pattern",
    "extract_user_agent",
    "ignored_lines",
    "is_unavailable",
    "is_valid_user_agent",
    "parse",
    "parse_lines",
    "path_params_query",
    "report",
    "robots_tags",
    "usage_problems",
]
