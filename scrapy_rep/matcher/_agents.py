"""User-agent tokens as Google's matcher reads them (SPEC 5.6, 6.3, 6.4)."""

from __future__ import annotations

import re

_PRODUCT_TOKEN = re.compile(r"[A-Za-z_-]*")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def extract_user_agent(value: str) -> str:
    """The product token of ``value``: its leading run of ``[A-Za-z_-]`` (Google's ExtractUserAgent).

    ``googlebot/1.2`` and ``googlebot*`` both give ``googlebot``; a value starting with any other
    character gives the empty string.
    """
    match = _PRODUCT_TOKEN.match(value)
    return match.group() if match else ""


def is_valid_user_agent(token: str) -> bool:
    """Whether ``token`` is a non-empty product token made only of ``[A-Za-z_-]`` (IsValidUserAgentToObey)."""
    return bool(token) and extract_user_agent(token) == token


def ascii_lower(text: str) -> str:
    """``text`` with only A-Z lower-cased: Google compares agents case-insensitively in ASCII only.

    ``str.lower`` would also fold non-ASCII letters (the Kelvin sign becomes ``k``), which Google never does.
    """
    return text.lower() if text.isascii() else text.translate(_ASCII_LOWER)
