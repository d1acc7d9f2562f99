"""The one error of a bad setting, raised by every reader of the room."""

from __future__ import annotations

from typing import Any


class ConfigError(ValueError):
    """A ``REP_*`` (or related Scrapy) setting has a value the middleware cannot obey."""

    def __init__(self, name: str, value: Any, why: str) -> None:
        super().__init__(f"{name}={value!r}: {why}")
        self.setting = name
