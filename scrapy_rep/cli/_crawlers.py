"""``-u``/``--user-agent`` values: the crawler each one names (SPEC 6.3, 6.4)."""

from __future__ import annotations

from dataclasses import dataclass

from scrapy_rep.config.tokens import product_token
from scrapy_rep.matcher import is_valid_user_agent

from ._common import UsageError


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
