"""Sphinx configuration of scrapy-rep's documentation (MyST Markdown; built with warnings as errors by .ci/run).

Build it: ``.venv/bin/pip install -e ".[docs]" && .venv/bin/sphinx-build -W --keep-going -b html docs docs/_build/html``
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))  # the reference directives, generated from the code
sys.path.insert(0, str(DOCS.parent))  # scrapy_rep itself, for a build from a checkout without installing it

from scrapy_rep import __version__  # noqa: E402

project = "scrapy-rep"
author = "the scrapy-rep developers"
copyright = "2026, the scrapy-rep developers"  # noqa: A001 (Sphinx's name)
version = release = __version__

extensions = ["myst_parser", "rep_reference"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 4  # [text](page.md#a-heading) links, checked at build time
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "README.md"]
suppress_warnings: list[str] = []
nitpicky = False

html_theme = "furo"
html_title = f"scrapy-rep {release}"
html_static_path = ["_static"]
