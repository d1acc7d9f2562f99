"""Google's own C++ library (jwm.robotstxt bindings of google/robotstxt) as a test oracle.

Both sides get the same input: a body (str as UTF-8, or bytes) and URLs as str. Skips when the
test-only dependency is missing.
"""

from __future__ import annotations

from typing import Any

import pytest

googlebot: Any = pytest.importorskip("jwm.robotstxt.googlebot")

from scrapy_rep.matcher import LineMetadata, escape_pattern, parse_lines  # noqa: E402
from scrapy_rep.matcher._parser import parse_directives  # noqa: E402

Event = tuple[Any, ...]
_FLAGS = ("is_empty", "has_comment", "is_comment", "has_directive", "is_acceptable_typo", "is_line_too_long",
          "is_missing_colon_separator")


def google_allowed(body: bytes | str, user_agent: str, url: str) -> bool:
    """Google's RobotsMatcher::OneAgentAllowedByRobots."""
    return bool(googlebot.RobotsMatcher().OneAgentAllowedByRobots(body, user_agent, url))


class _GoogleRecorder(googlebot.RobotsParseHandler):  # type: ignore[misc]
    """Records Google's parse callbacks as comparable tuples."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[Event] = []

    def HandleRobotsStart(self) -> None:
        pass

    def HandleRobotsEnd(self) -> None:
        pass

    def HandleUserAgent(self, line: int, value: str) -> None:
        self.events.append(("user-agent", line, value))

    def HandleAllow(self, line: int, value: str) -> None:
        self.events.append(("allow", line, value))

    def HandleDisallow(self, line: int, value: str) -> None:
        self.events.append(("disallow", line, value))

    def HandleSitemap(self, line: int, value: str) -> None:
        self.events.append(("sitemap", line, value))

    def HandleUnknownAction(self, line: int, key: str, value: str) -> None:
        self.events.append(("unknown", line, key, value))

    def ReportLineMetadata(self, line: int, meta: Any) -> None:
        self.events.append(("meta", line, *(getattr(meta, flag) for flag in _FLAGS)))


class _OurRecorder:
    """Records our parser's callbacks in the same shape (values escaped where Google escapes them)."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def user_agent(self, line: int, value: bytes) -> None:
        self.events.append(("user-agent", line, value.decode("utf-8")))

    def allow(self, line: int, value: bytes) -> None:
        self.events.append(("allow", line, escape_pattern(value)))

    def disallow(self, line: int, value: bytes) -> None:
        self.events.append(("disallow", line, escape_pattern(value)))

    def sitemap(self, line: int, value: bytes) -> None:
        self.events.append(("sitemap", line, value.decode("utf-8")))

    def unknown(self, line: int, key: bytes, value: bytes) -> None:
        self.events.append(("unknown", line, key.decode("utf-8"), escape_pattern(value)))

    def line_metadata(self, line: int, metadata: LineMetadata) -> None:
        self.events.append(("meta", line, *(getattr(metadata, flag) for flag in _FLAGS)))


def google_events(body: str) -> list[Event]:
    """Google's ParseRobotsTxt callbacks for ``body`` (valid UTF-8 text: the bindings hand values back as str)."""
    recorder = _GoogleRecorder()
    googlebot.ParseRobotsTxt(body, recorder)
    return recorder.events


def our_directive_events(body: bytes) -> list[Event]:
    """The directive callbacks of our metadata-free parser (``Robots``'s) for ``body``."""
    recorder = _OurRecorder()
    parse_directives(body, recorder)
    return recorder.events


def our_events(body: str) -> list[Event]:
    """Our parser's callbacks for the same body (no size cap: Google has none)."""
    recorder = _OurRecorder()
    parse_lines(body.encode("utf-8"), recorder)
    return recorder.events
