"""Typed reads of settings, each malformed value a ``ConfigError`` naming the setting (settings.py, evidence.py)."""

from __future__ import annotations

from scrapy.settings import BaseSettings

from .errors import ConfigError


class Reader:
    """Typed reads that turn every malformed value into a ``ConfigError`` naming the setting."""

    def __init__(self, settings: BaseSettings) -> None:
        self.settings = settings

    def seconds(self, name: str, default: float, *, minimum: float) -> float:
        value = self.settings.get(name, default)
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ConfigError(name, value, "expected a number of seconds") from None
        if isinstance(value, bool) or not number >= minimum or number == float("inf"):
            raise ConfigError(name, value, f"expected a finite number of seconds >= {minimum:g}")
        return number

    def integer(self, name: str, default: int, *, minimum: int) -> int:
        value = self.settings.get(name, default)
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise ConfigError(name, value, "expected an integer") from None
        if isinstance(value, bool) or (isinstance(value, float) and value != number) or number < minimum:
            raise ConfigError(name, value, f"expected an integer >= {minimum}")
        return number

    def boolean(self, name: str, default: bool) -> bool:
        value = self.settings.get(name, default)
        try:
            return self.settings.getbool(name, default)
        except ValueError:
            raise ConfigError(name, value, "expected True or False") from None
