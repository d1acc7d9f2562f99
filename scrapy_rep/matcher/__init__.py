"""Google-faithful robots.txt parsing and matching (SPEC 4-7).

``parse(body)`` gives a ``Robots`` that answers ``allowed(url, user_agent)`` exactly as Google's reference
library (google/robotstxt) does, ``explain`` says which rule of which group decided (``Verdict.reason``),
``compact(user_agent)`` keeps only what deciding for one crawler needs (``AgentRules``, what a broad crawl holds per
origin), and ``report(body)`` gives the per-line parse results the way Google's RobotsParsingReporter does (for the
linter). ``usage`` gives the usage preferences (AIPREF Content-Usage, Cloudflare Content-Signal) that apply to an
allowed URL. ``Robots.clean_params`` holds Yandex's Clean-param rules, read file-wide, and ``clean_url`` (or
``AgentRules.clean``) drops the query parameters they list from a URL. ``robots_tags`` reads a response's page-level
directives (robots meta tags and X-Robots-Tag headers, as Google reads them) into ``RobotsTags``. Every message that
shows a line of robots.txt (crawl log, close report, CLI) words it with ``cite``. ``diff_robots`` (per group:
``GroupDiff``) and ``diff_rules`` (per crawler: ``RuleDiff``) say what changed between two versions of a file, as rules.

AI and TDM opt-outs: ``VOCABULARY`` is draft-ietf-aipref-vocab-08's labels, ``LEGACY_LABELS`` those of its earlier
drafts (``IMPLIES_TRAINING`` and ``legacy_uses``: what a legacy ``n`` also refuses). ``parse_tdmrep`` reads the TDMRep
file at ``TDMREP_PATH`` into a ``TdmRep`` of ``TdmRule``s (``TdmRep.lookup`` gives a path's rule), ``tdm_value`` a
tdm-reservation header or meta value. Each source's opt-outs become ``Statement``s (``use``: ``TDM``, ``TRAIN_AI``,
``search``...; ``source``: ``ROBOTS_TXT``, ``CONTENT_USAGE_HEADER``, ``CONTENT_SIGNAL_HEADER``, ``TDMREP_FILE``,
``TDM_HEADER``, ``TDM_META``, ``ROBOTS_META``, ``X_ROBOTS_TAG``): ``from_preference`` (robots.txt),
``header_statements`` (Content-Usage and Content-Signal headers), ``tdm_statements`` (TDMRep's file, header and meta
tag, ``tdm_meta`` reading the tags) and ``noai_statements`` (``noai``/``noimageai``); ``combine`` keeps one per use,
the most restrictive, whatever their order.

The room is pure: it imports nothing of the project, of Scrapy or of Twisted, does no I/O and reads no clock
(tests/test_layout.py). Its modules are private and re-exported here.
"""

from ._agents import extract_user_agent, is_valid_user_agent
from ._clean_param import CleanParam, clean_url
from ._compact import COLD_DECISIONS, HOT_RULES, AgentRules
from ._diff import DirectiveLine, GroupDiff, RuleDiff, diff_robots, diff_rules
from ._escape import Body, escape_pattern
from ._opt_outs import (
    CONTENT_SIGNAL_HEADER,
    CONTENT_USAGE_HEADER,
    ROBOTS_META,
    ROBOTS_TXT,
    TDM,
    TDM_HEADER,
    TDM_META,
    TDMREP_FILE,
    TRAIN_AI,
    X_ROBOTS_TAG,
    Statement,
    combine,
    from_preference,
    header_statements,
    noai_statements,
    page_statements,
    tdm_meta,
    tdm_statements,
    unknown_reservation,
    with_page,
)
from ._parser import MAX_BYTES, MAX_LINE_BYTES, Key, LineMetadata, ParseHandler, parse_lines
from ._report import UNUSED_KEYS, LineKind, ParsedLine, ParseReport, ignored_lines, report
from ._robots import Robots, parse
from ._robots_tags import NO_TAGS, RobotsTags, is_unavailable, robots_tags
from ._rules import AgentGroup, Rule, cite
from ._tdmrep import TDMREP_PATH, TdmRep, TdmRule, parse_tdmrep, starts_like_json, tdm_value
from ._urls import path_params_query
from ._usage import IMPLIES_TRAINING, LEGACY_LABELS, VOCABULARY, Preference, aipref_use, legacy_uses, usage_problems
from ._verdict import UserAgent, Verdict

__all__ = [
    "COLD_DECISIONS",
    "CONTENT_SIGNAL_HEADER",
    "CONTENT_USAGE_HEADER",
    "HOT_RULES",
    "IMPLIES_TRAINING",
    "LEGACY_LABELS",
    "MAX_BYTES",
    "MAX_LINE_BYTES",
    "NO_TAGS",
    "ROBOTS_META",
    "ROBOTS_TXT",
    "TDM",
    "TDMREP_FILE",
    "TDMREP_PATH",
    "TDM_HEADER",
    "TDM_META",
    "TRAIN_AI",
    "UNUSED_KEYS",
    "VOCABULARY",
    "X_ROBOTS_TAG",
    "AgentGroup",
    "AgentRules",
    "Body",
    "CleanParam",
    "DirectiveLine",
    "GroupDiff",
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
    "RuleDiff",
    "Statement",
    "TdmRep",
    "TdmRule",
    "UserAgent",
    "Verdict",
    "aipref_use",
    "cite",
    "clean_url",
    "combine",
    "diff_robots",
    "diff_rules",
    "escape_pattern",
    "extract_user_agent",
    "from_preference",
    "header_statements",
    "ignored_lines",
    "is_unavailable",
    "is_valid_user_agent",
    "legacy_uses",
    "noai_statements",
    "page_statements",
    "parse",
    "parse_lines",
    "parse_tdmrep",
    "path_params_query",
    "report",
    "robots_tags",
    "starts_like_json",
    "tdm_meta",
    "tdm_statements",
    "tdm_value",
    "unknown_reservation",
    "usage_problems",
    "with_page",
]
