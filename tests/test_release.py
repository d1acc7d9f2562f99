"""The release's metadata agrees with itself: CHANGELOG.md's newest version is the package's, pyproject.toml claims
what the project supports and links to the docs, and the changelog stays a user's changelog (docs/releasing.md)."""

from __future__ import annotations

import datetime
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from packaging.specifiers import SpecifierSet

import scrapy_rep

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10 has no tomllib: tomli is the same parser, where installed
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parent.parent
DOCS_URL = "https://scrapy-rep.readthedocs.io/"
CHANGELOG_URL = "https://scrapy-rep.readthedocs.io/en/latest/changelog.html"

#: A version heading: "## 0.2.0 - 2026-11-28", "## [0.2.0] - 2026-11-28", "## 0.1.0 - not published".
VERSION_HEADING = re.compile(r"^## \[?(?P<version>\d+\.\d+\.\d+\S*?)\]?(?: - (?P<when>.+))?$", re.MULTILINE)
PYTHON_CLASSIFIER = re.compile(r"^Programming Language :: Python :: (3\.\d+)$")


def changelog() -> str:
    return (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


def pyproject() -> dict[str, Any]:
    data: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return data


def newest_release(text: str) -> tuple[str, datetime.date]:
    """The first version heading's version and date; an AssertionError if it has no date ("## Unreleased" is no
    version heading: it may stand above it)."""
    heading = VERSION_HEADING.search(text)
    assert heading is not None, "CHANGELOG.md has no version heading ('## X.Y.Z - YYYY-MM-DD')"
    when = heading["when"] or ""
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", when), f"the newest version heading {heading[0]!r} has no date"
    return heading["version"], datetime.date.fromisoformat(when)


def claimed_pythons(classifiers: list[str]) -> list[tuple[int, ...]]:
    found = (PYTHON_CLASSIFIER.match(classifier) for classifier in classifiers)
    return sorted(tuple(int(part) for part in match[1].split(".")) for match in found if match)


def test_changelog_newest_version_is_the_package_version() -> None:
    version, date = newest_release(changelog())
    assert version == scrapy_rep.__version__, (
        f"CHANGELOG.md's newest version is {version}, scrapy_rep.__version__ is {scrapy_rep.__version__}: "
        "bump both (docs/releasing.md)")
    assert datetime.date(2026, 1, 1) <= date <= datetime.date.today() + datetime.timedelta(days=1)


def test_version_has_one_source() -> None:
    project = pyproject()
    assert "version" not in project["project"], "the version is dynamic: set it in scrapy_rep/__init__.py only"
    assert "version" in project["project"].get("dynamic", [])
    assert project["tool"]["hatch"]["version"]["path"] == "scrapy_rep/__init__.py"


def test_classifiers_name_the_framework_and_no_licence() -> None:
    classifiers = pyproject()["project"]["classifiers"]
    assert "Framework :: Scrapy" in classifiers
    assert "Typing :: Typed" in classifiers and (ROOT / "scrapy_rep" / "py.typed").is_file()
    # PEP 639: with a licence expression (license = "Apache-2.0") no License :: classifier may be given.
    assert not [classifier for classifier in classifiers if classifier.startswith("License ::")]
    assert len(set(classifiers)) == len(classifiers)


def test_python_classifiers_agree_with_requires_python() -> None:
    project = pyproject()["project"]
    requires = SpecifierSet(project["requires-python"])
    claimed = claimed_pythons(project["classifiers"])
    assert claimed, "no 'Programming Language :: Python :: 3.N' classifier"
    assert "Programming Language :: Python :: 3 :: Only" in project["classifiers"]
    for major, minor in claimed:
        assert requires.contains(f"{major}.{minor}.0"), f"Python {major}.{minor} claimed, requires-python {requires}"
    lowest = next(minor for minor in range(30) if requires.contains(f"3.{minor}.0"))
    assert claimed[0] == (3, lowest), f"requires-python allows 3.{lowest}, the classifiers start at {claimed[0]}"
    minors = [minor for _, minor in claimed]
    assert minors == list(range(minors[0], minors[-1] + 1)), f"a gap in the Python versions claimed: {minors}"
    assert pyproject()["tool"]["mypy"]["python_version"] == f"3.{lowest}", "mypy checks the oldest supported Python"


def test_newest_python_claimed_is_type_checked() -> None:
    """.ci/run type-checks the oldest and the newest Python the classifiers claim."""
    gate = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    loop = re.search(r"^for python in ([0-9. ]+); do", gate, re.MULTILINE)
    if loop is None:
        pytest.skip(".ci/run names no Python versions to type-check")
    checked = {tuple(int(part) for part in version.split(".")) for version in loop[1].split()}
    claimed = claimed_pythons(pyproject()["project"]["classifiers"])
    assert {claimed[0], claimed[-1]} <= checked, f"claimed {claimed}, .ci/run type-checks {sorted(checked)}"


def test_project_urls_lead_to_the_docs_and_the_changelog() -> None:
    urls = pyproject()["project"]["urls"]
    assert urls["Documentation"] == DOCS_URL
    assert urls["Changelog"] == CHANGELOG_URL
    assert (ROOT / "docs" / "changelog.md").is_file(), "the Changelog URL is the docs' changelog page"


def test_changelog_is_for_users() -> None:
    """No work diary: no issue numbers or sessions; and no relative links (PyPI and GitHub show the file too)."""
    text = changelog()
    diary = re.findall(r"\b(?:issues?|sessions?)\b[^\n]{0,40}", text, re.IGNORECASE)
    assert not diary, f"CHANGELOG.md reads as a work diary: {diary[:5]}"
    relative = [link for link in re.findall(r"\]\(([^)]+)\)", text) if not link.startswith(("https://", "http://"))]
    assert not relative, f"relative links in CHANGELOG.md break on PyPI: {relative}"
    versions = [heading["version"] for heading in VERSION_HEADING.finditer(text)]
    assert len(versions) == len(set(versions)), f"a version listed twice: {versions}"
