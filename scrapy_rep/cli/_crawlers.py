"""The crawler a command decides as (SPEC 6.3, 6.4): each ``-u``/``--user-agent`` value, else the crawl of the Scrapy
project around the working directory (its REP_USER_AGENT, else the product token of its USER_AGENT, exactly as the
middleware reads them), else a fresh Scrapy project's ``Scrapy``."""

from __future__ import annotations

from dataclasses import dataclass

from scrapy_rep.config.tokens import InvalidToken, product_token, tokens_from_settings
from scrapy_rep.matcher import is_valid_user_agent

from ._common import DEFAULT_TOKEN, UsageError


@dataclass(frozen=True, slots=True)
class Crawler:
    """The ordered product tokens one crawler obeys as (empty: only the ``*`` groups), and how they were derived
    from what the user wrote (``note``: empty when the value was the tokens themselves)."""

    tokens: tuple[str, ...]
    note: str = ""

    @property
    def label(self) -> list[str]:
        """How the crawler is shown: its tokens, or ``["*"]``."""
        return list(self.tokens) or ["*"]


def crawler_of(value: str) -> Crawler:
    """``a,b`` is one crawler with the ordered tokens a then b (SPEC 6.3); any other value is a full User-Agent,
    obeyed as its product token (``config.tokens.product_token``), or by the ``*`` groups when it has none."""
    tokens = tuple(token.strip() for token in value.split(",") if token.strip())
    if not tokens:
        raise UsageError(f"empty --user-agent value: {value!r}")
    if all(is_valid_user_agent(token) for token in tokens):  # SPEC 6.4, as REP_USER_AGENT is validated
        return Crawler(tokens)
    token = product_token(value)
    if token is None:
        return Crawler((), f"{value!r} has no product token of its own: obeying the '*' group")
    return Crawler((token,), f"obeying as {token!r} (the product token of {value!r})")


def crawlers_of(values: list[str]) -> list[Crawler]:
    """The crawlers of the ``-u`` values given, else the one crawler of ``default_crawler``."""
    return [crawler_of(value) for value in values] or [default_crawler()]


def default_crawler() -> Crawler:
    """Without ``-u``: inside a Scrapy project (a ``scrapy.cfg`` here or above), the tokens its crawl obeys, with a
    note saying which and why; elsewhere ``Scrapy`` (the product token of Scrapy's default USER_AGENT)."""
    from scrapy.utils.conf import closest_scrapy_cfg

    if not closest_scrapy_cfg():
        return Crawler((DEFAULT_TOKEN,))
    from scrapy.utils.project import get_project_settings

    try:
        tokens = tokens_from_settings(get_project_settings())
    except InvalidToken as exc:
        raise UsageError(f"the Scrapy project here has {exc}; pass -u TOKEN") from None
    return Crawler(tokens.tokens, f"the Scrapy project here: {tokens.summary()}; -u TOKEN decides as another crawler")
