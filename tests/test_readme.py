"""README.md, the project's landing page: what it is, its two commands first, under 250 lines, and every link into the
documentation site names a page and a heading that docs/ has. (Its code blocks run in tests/test_docs.py; the
references it used to hold, settings, stats and CLI, are docs/'s and tests/test_docs_reference.py checks them.)"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from myst_parser.slugs import github_slugify as slug  # the anchors myst_heading_anchors gives the docs' headings

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
DOCS_SITE = "https://scrapy-rep.readthedocs.io/en/latest/"
_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def anchors(page: Path) -> set[str]:
    """Every heading anchor of a docs page (a repeated heading gets -1, -2 ...) and its explicit ``(label)=``s."""
    text = re.sub(r"^(`{3,}).*?^\1", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)  # not in code blocks
    found: set[str] = set()
    seen: Counter[str] = Counter()
    for title in re.findall(r"^#{1,6} +(.+?) *$", text, re.M):
        base = slug(title)
        found.add(base if not seen[base] else f"{base}-{seen[base]}")
        seen[base] += 1
    found.update(re.findall(r"^\(([\w-]+)\)=$", text, re.M))
    return found


def test_the_two_commands_come_first() -> None:
    setup_and_demo = "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/scrapy-rep demo\n"
    blocks = _BLOCK.findall(README)
    assert blocks[0] == ("bash", setup_and_demo)
    assert blocks[1] == ("bash", "bash .ci/run\n")
    assert README.index("```") < README.index("\n## ")
    title, sentence = README[: README.index("```")].strip().splitlines()[::2]
    assert title == "# scrapy-rep" and sentence.startswith("A Scrapy plugin that obeys robots.txt")  # what it is


def test_a_landing_page_under_250_lines() -> None:
    assert len(README.splitlines()) < 250
    headings = re.findall(r"^## (.+)$", README, re.M)
    assert headings == [
        "What it is and why", "Install", "Minimal configuration", "The five things most users need", "Documentation",
        "Licence",
    ]
    assert len(re.findall(r"^\*\*\d\. ", README, re.M)) == 5


def test_every_link_into_the_docs_names_a_page_and_a_heading_they_have() -> None:
    links = re.findall(re.escape(DOCS_SITE) + r"([\w-]+)\.html(?:#([\w-]+))?", README)
    pages = {page for page, _ in links}
    assert len(pages) >= 12, pages
    for page, anchor in links:
        source = REPO / "docs" / f"{page}.md"
        assert source.is_file(), f"{page}.html: no docs/{page}.md"
        if anchor:
            assert anchor in anchors(source), f"{page}.html#{anchor}: no such heading in docs/{page}.md"
    for target in re.findall(r"\]\(((?!https?:)[^)#]+)", README):
        assert (REPO / target).exists(), target


def test_every_page_of_the_docs_is_linked_from_the_readme() -> None:
    linked = set(re.findall(re.escape(DOCS_SITE) + r"([\w-]+)\.html", README))
    pages = {page.stem for page in (REPO / "docs").glob("*.md")} - {"index"}
    assert pages <= linked, sorted(pages - linked)
