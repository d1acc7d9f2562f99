"""Which robots.txt groups the crawl obeys: its product token(s), read the way a site owner reads a User-Agent
(SPEC 6.3-6.4).

``REP_USER_AGENT`` (a token or an ordered list) wins, then ``ROBOTSTXT_USER_AGENT``, then ``USER_AGENT``. From a
full User-Agent string the token is the crawler's *own* product: browser and engine products (``Mozilla``,
``AppleWebKit``, ``Chrome``...) are skipped, and a ``(compatible; Name/x.y; ...)`` comment is looked into, so
``Mozilla/5.0 (compatible; newbiebot/1.0; +https://example.com/bot)`` obeys as ``newbiebot`` (as Scrapy's built-in
middleware with Protego does), not as ``Mozilla``. A User-Agent with no product of its own gives no token: the crawl
then obeys the ``*`` groups only (``tokens == ()``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from scrapy.settings import BaseSettings

from ..matcher import extract_user_agent, is_valid_user_agent

#: Products that name a browser, a rendering engine or a compatibility marker, never a crawler, compared
#: case-insensitively. Browsers send them in every User-Agent (``Mozilla/5.0 (...) AppleWebKit/537.36 (KHTML, like
#: Gecko) Chrome/120.0.0.0 Mobile Safari/537.36``) and bots copy them to be served the page browsers get; a robots.txt
#: group naming one of them would match every browser, so no site owner means a crawler by them. The major browsers'
#: own products are listed too (Edge ``Edg``/``EdgA``/``EdgiOS``, Opera ``OPR``, Samsung, iOS Chrome and Firefox,
#: Yandex, UC, Vivaldi); a browser missing here is read as a crawler's token: set ``REP_USER_AGENT`` then.
GENERIC_PRODUCTS = frozenset(
    name.lower()
    for name in (
        # compatibility markers and engines
        "Mozilla", "compatible", "like", "AppleWebKit", "WebKit", "KHTML", "Gecko", "Trident", "Presto", "Blink",
        "Goanna", "Version", "Mobile", "Safari",
        # browsers
        "Chrome", "Chromium", "HeadlessChrome", "CriOS", "Firefox", "FxiOS", "Edg", "Edge", "EdgA", "EdgiOS",
        "OPR", "Opera", "OPiOS", "MSIE", "IEMobile", "SamsungBrowser", "YaBrowser", "UCBrowser", "Vivaldi",
        "Brave", "DuckDuckGo", "SeaMonkey", "Epiphany", "Silk",
    )
)

#: A comment item that is one product and nothing else: ``Name`` or ``Name/version``, the name a valid token.
_PRODUCT_ITEM = re.compile(r"([A-Za-z_-]+)(?:/\S*)?")
#: A parenthesised comment (one level; nested parentheses are rare and treated as text) or a run of other text.
_PARTS = re.compile(r"\(([^()]*)\)?|([^(]+)")


def product_token(user_agent: str) -> str | None:
    """The crawler's own product token in ``user_agent`` (a full User-Agent string or a bare token), or None.

    Read left to right: a product outside parentheses gives its leading ``[A-Za-z_-]`` run (Google's
    ExtractUserAgent: ``examplebot/1.0`` and ``googlebot*`` give ``examplebot`` and ``googlebot``); inside a comment
    only an item that is a whole product counts (``Googlebot/2.1``; never ``Windows NT 10.0`` or ``Win64``), and in
    a comment without a ``compatible`` item only ``Name/version`` items count (``Applebot/0.1``; never
    ``Macintosh``). Generic products (``GENERIC_PRODUCTS``) are skipped; the first other product wins.
    """
    for match in _PARTS.finditer(user_agent):
        comment, text = match.groups()
        candidates = _comment_products(comment) if comment is not None else _text_products(text or "")
        for token in candidates:
            if token.lower() not in GENERIC_PRODUCTS:
                return token
    return None


def _text_products(text: str) -> list[str]:
    """The tokens of the products outside parentheses: each word's leading ``[A-Za-z_-]`` run, if any."""
    return [token for word in text.split() if (token := extract_user_agent(word))]


def _comment_products(comment: str) -> list[str]:
    """The tokens of the items of a ``(...)`` comment (separated by ``;`` or ``,``) that are whole products."""
    items = [item.strip() for item in re.split(r"[;,]", comment)]
    compatible = any(item.lower() == "compatible" for item in items)
    tokens = []
    for item in items:
        match = _PRODUCT_ITEM.fullmatch(item)
        if match and (compatible or "/" in item):
            tokens.append(match.group(1))
    return tokens


@dataclass(frozen=True)
class Tokens:
    """The product tokens the crawl obeys robots.txt as (``()``: only the ``*`` groups) and where they came from."""

    tokens: tuple[str, ...]
    #: ``"REP_USER_AGENT"``, ``"ROBOTSTXT_USER_AGENT 'x'"``, ``"USER_AGENT 'x'"``, or
    #: ``"no token of its own in USER_AGENT 'x'"`` (also for ``ROBOTSTXT_USER_AGENT``) when ``tokens`` is empty.
    source: str

    def summary(self) -> str:
        """One line for the start-up log: the tokens and where they came from, or what to set when there are none."""
        if not self.tokens:
            return (f"obeying robots.txt as [] (only the * groups): {self.source}; set REP_USER_AGENT to the "
                    "crawler's product token (or an ordered list of tokens) to obey the groups that name it")
        if self.source == "REP_USER_AGENT":
            return f"obeying robots.txt as {list(self.tokens)} (set by REP_USER_AGENT)"
        return f"obeying robots.txt as {list(self.tokens)} (the product token of {self.source})"


class InvalidToken(ValueError):
    """A ``REP_USER_AGENT`` entry that is not a product token; ``setting``, ``value`` and ``why`` say which."""

    def __init__(self, setting: str, value: Any, why: str) -> None:
        super().__init__(f"{setting}={value!r}: {why}")
        self.setting, self.value, self.why = setting, value, why


def tokens_from_settings(settings: BaseSettings) -> Tokens:
    """SPEC 6.3-6.4: ``REP_USER_AGENT`` as given, else the product token of ``ROBOTSTXT_USER_AGENT``, else of
    ``USER_AGENT``; ``Tokens((), "no token of its own in ...")`` when the one that applies has none. Raises
    ``InvalidToken`` for a ``REP_USER_AGENT`` entry that is not a valid product token."""
    configured = settings.get("REP_USER_AGENT")
    if configured:
        tokens = tuple(str(token).strip() for token in settings.getlist("REP_USER_AGENT"))
        for token in tokens:
            if not is_valid_user_agent(token):
                raise InvalidToken("REP_USER_AGENT", configured,
                                   f"{token!r} is not a valid product token (only letters, '-' and '_')")
        return Tokens(tokens, "REP_USER_AGENT")
    name = "ROBOTSTXT_USER_AGENT" if settings.get("ROBOTSTXT_USER_AGENT") else "USER_AGENT"
    value = settings.get(name)
    shown = f"{name} {str(value)!r}" if value else f"{name} {value!r}"
    found = product_token(str(value)) if value else None
    if found is None:
        return Tokens((), f"no token of its own in {shown}")
    return Tokens((found,), shown)
