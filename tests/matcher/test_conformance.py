"""Every allowed/disallowed case of the shared conformance files (SPEC 4-7; Google's own test suite)."""

from __future__ import annotations

from typing import Any

import pytest

from scrapy_rep.matcher import parse

from ._shared import body_of, cases


@pytest.mark.parametrize("case", cases("google-robotstxt.json", "allowed_cases"))
def test_google_robotstxt_case(case: dict[str, Any]) -> None:
    """google/robotstxt robots_test.cc, case by case."""
    assert parse(body_of(case)).allowed(case["url"], case["user_agent"]) is case["allowed"]


@pytest.mark.parametrize("case", cases("spec-examples.json", "allowed_cases"))
def test_spec_example_case(case: dict[str, Any]) -> None:
    """The seed documents' examples as restated in SPEC 6-7."""
    assert parse(body_of(case)).allowed(case["url"], case["user_agent"]) is case["allowed"]
