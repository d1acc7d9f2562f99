"""Loading the read-only shared material (../shared) that several matcher tests use."""

from __future__ import annotations

import base64
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
CONFORMANCE = SHARED / "conformance"
CORPUS = SHARED / "corpus" / "robots"


def require(path: Path) -> Path:
    """``path``, or skip the calling test cleanly when the shared material is absent."""
    if not path.exists():
        pytest.skip(f"../shared not found: {path}")
    return path


@cache
def conformance(name: str) -> dict[str, Any]:
    """A conformance file's content, or an empty one when ../shared is absent (tests then skip)."""
    path = CONFORMANCE / name
    if not path.exists():
        return {}
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def cases(name: str, kind: str, function: str | None = None) -> list[Any]:
    """pytest params for the ``kind`` cases of conformance file ``name`` (ids from the case ids).

    With ../shared absent, one param that skips, so the test reports why instead of vanishing.
    """
    found = [case for case in conformance(name).get(kind, []) if function in (None, case.get("function"))]
    if not found:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"../shared not found: {CONFORMANCE / name}"))]
    return [pytest.param(case, id=case["id"]) for case in found]


def body_of(case: dict[str, Any], key: str = "robots_txt") -> bytes | str:
    """A case's body: the text, or the bytes from ``*_base64`` when the body is not valid UTF-8."""
    if case.get(key) is None:
        return base64.b64decode(case[f"{key}_base64"])
    text: str = case[key]
    return text
