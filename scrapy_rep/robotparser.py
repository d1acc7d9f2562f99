"""``scrapy_rep.RobotParser``: the matcher behind Scrapy's ``RobotParser`` interface.

With ``ROBOTSTXT_PARSER = "scrapy_rep.RobotParser"`` Scrapy's built-in RobotsTxtMiddleware decides with Google's
matching (SPEC 4-7) but keeps its own fetch semantics. ``RobotsMiddleware`` sends instances of it with Scrapy's
``robots_parsed`` signal, so handlers get ``allowed``, ``crawl_delay`` and ``sitemaps``.

Google's matcher compares rules with a URL its caller has already percent-encoded; here this parser is that caller:
``allowed`` takes any URL (an IRI such as ``/wiki/Käyttäjä:`` too) and decides on it as Scrapy's ``Request`` sends
it.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from scrapy.robotstxt import RobotParser as ScrapyRobotParser
from w3lib.url import safe_url_string

from .matcher import Robots, extract_user_agent, parse

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from typing_extensions import Self


class RobotParser(ScrapyRobotParser):
    """A parsed robots.txt answering for any user agent; a full User-Agent string counts by its product token
    (SPEC 6.4).

    ``allowed`` decides on the URL as Scrapy's ``Request`` makes it (w3lib's ``safe_url_string``: non-ASCII
    characters as UTF-8 ``%XX``, ``|``, ``^``, spaces and the like escaped, existing ``%xx`` escapes kept as
    written, the host in IDNA), so a raw ``/wiki/Käyttäjä:`` is forbidden by ``Disallow: /wiki/Käyttäjä:`` and by
    ``Disallow: /wiki/K%C3%A4ytt%C3%A4j%C3%A4:`` alike. ``self.robots`` (the matcher) does not encode: called
    directly, it takes a URL already percent-encoded, as Google's matcher does.
    """

    def __init__(self, robots: Robots) -> None:
        self.robots = robots

    @classmethod
    def from_crawler(cls, crawler: Crawler, robotstxt_body: bytes) -> Self:
        return cls(parse(robotstxt_body))

    def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
        """Whether ``user_agent`` may fetch ``url`` as Scrapy's ``Request`` would send it (see the class); bytes
        are read as UTF-8, an invalid byte as its ``%XX``. Never raises for a malformed URL: one that
        ``safe_url_string`` refuses (a lone surrogate, a port out of range; ``Request`` refuses it too) is decided
        as given."""
        return self.robots.allowed(url_to_match(url), _token(user_agent))

    def crawl_delay(self, user_agent: str | bytes) -> float | None:
        return self.robots.crawl_delay(_token(user_agent))

    @property
    def sitemaps(self) -> list[str]:
        """SPEC 5.5: the file's sitemap URLs, as written."""
        return list(self.robots.sitemaps)


# The characters that w3lib's safe_url_string leaves as they are in a path and a query (RFC 3986's unreserved and
# reserved characters less "[", "]" and "'", and "%", which it never re-escapes). A path, or a URL of the common
# shape scheme://authority/path, made only of them keeps its path and query, hence its decision, once made safe (only
# its scheme's or host's case, its port's spelling or its fragment can change; a property test checks it), given:
# a first "?" that starts a non-empty query (safe_url_string drops an empty one: "/a?" becomes "/a"); no ";" in the
# authority (the matcher's path would start there, in a host safe_url_string lower-cases); a path not starting with
# "//" (a host, then). Such a URL, the common case, is decided as given: a regex match, not a call that costs several
# times the decision itself.
_SAFE = r"A-Za-z0-9\-._~:/@!$&()*+,;=%"  # and "?", "#": placed by the pattern
_PATH = rf"/[{_SAFE}#]*(?:\?[{_SAFE}?][{_SAFE}?#]*)?"
_sent_as_is = re.compile(rf"[A-Za-z][A-Za-z0-9+.\-]*://[A-Za-z0-9\-._~:@!$&()*+,=%]*(?:{_PATH})?|(?!//){_PATH}").fullmatch


def url_to_match(url: str | bytes) -> str:
    """``url`` as the matcher takes it: encoded as Scrapy's ``Request`` encodes it (``url_as_sent``), its escapes
    upper-cased (``upper_escapes``). What ``RobotParser.allowed`` and ``scrapy-rep check`` decide on."""
    return upper_escapes(url_as_sent(url))


def url_to_decide(request: Request) -> str:
    """The URL ``RobotsMiddleware`` decides ``request`` on: ``request.url``, which Scrapy has percent-encoded, unless
    ``meta["verbatim_url"]`` (newer Scrapy; 2.19 has it) kept it as written: then ``url_as_sent(request.url)``, as
    Google's matcher expects an encoded URL from its caller."""
    url = request.url
    if not url.isascii() or request.meta.get("verbatim_url"):
        url = url_as_sent(url)
    return upper_escapes(url)


_LOWER_ESCAPE = re.compile(r"%(?:[a-f][0-9A-Fa-f]|[0-9A-F][a-f])")
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


def upper_escapes(url: str) -> str:
    """SPEC 7.2: percent-escapes compare case-insensitively in their hex digits. The matcher upper-cases a pattern's
    and takes the URL as its caller encoded it (as Google's does); Scrapy keeps a URL's escapes as written, so the
    caller upper-cases them (RFC 3986 6.2.2.1): ``/wiki/%c3%a4`` is decided as ``/wiki/%C3%A4``, which
    ``Disallow: /wiki/ä`` forbids. A URL without a lower-case escape is returned as it is."""
    if "%" not in url or _LOWER_ESCAPE.search(url) is None:
        return url
    return _ESCAPE.sub(lambda escape: escape.group().upper(), url)


def url_as_sent(url: str | bytes) -> str:
    """``url`` percent-encoded as Scrapy's ``Request`` encodes it (``safe_url_string``, UTF-8), or as given when
    that would not change its path nor query, or when ``safe_url_string`` refuses it."""
    if isinstance(url, bytes) and url.isascii():
        url = url.decode("ascii")
    if isinstance(url, str) and _sent_as_is(url) is not None:
        return url
    try:
        return safe_url_string(url)  # bytes: UTF-8, an invalid byte percent-encoded as itself
    except (ValueError, UnicodeError):  # a port out of range, a bad IPv6 literal; a lone surrogate
        return _text(url)


def _text(value: str | bytes) -> str:
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else value


# Scrapy asks with the same User-Agent (its ROBOTSTXT_USER_AGENT, else the request's header) on every request: the
# token is read from it once, not per decision. Bounded: a cache, not a registry of every agent ever seen.
@functools.lru_cache(maxsize=64)
def _token(user_agent: str | bytes) -> str:
    return extract_user_agent(_text(user_agent).strip())
