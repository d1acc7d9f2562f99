"""Which robots.txt groups a request obeys: the crawl's tokens, or its own ``User-Agent`` header's (SPEC 6.3-6.4).

Scrapy documents ROBOTSTXT_USER_AGENT as: "If None, the User-Agent header you are sending with the request or the
USER_AGENT setting (in that order) will be used". So when neither ``REP_USER_AGENT`` nor ``ROBOTSTXT_USER_AGENT`` is
set (``Config.agent_per_request``), a request that carries its own ``User-Agent`` header (a spider's
``headers={"User-Agent": ...}``, or a downloader middleware before scrapy-rep's that sets one) obeys that header's
product token, read as the crawl's own is (``config.tokens.product_token``: a browser-style header with no product of
its own obeys the ``*`` groups); a request without one, or with USER_AGENT itself, obeys the crawl's tokens. Either
setting makes one identity for the whole crawl, as before.

Bounded, and O(1) per decision:

- a header's token is read once (an LRU of ``HEADERS`` header values, ~260 KiB at most: a crawl rotating hundreds of
  User-Agent strings reads each once; browser ones all give ``()``, the ``*`` groups; one past the cache, ~7 µs);
- the crawl's tokens decide from the form every origin keeps (``OriginState.rules``); any other token's decision
  form (``AgentRules``) of an origin is made the first time a request of that origin presents it, from the entry's
  body (a parse of the file), and kept in one crawl-wide LRU of ``FORMS`` (origin, tokens) pairs. A crawl that
  presents T tokens to O origins builds T x O forms once while they fit; past ``FORMS`` pairs, a pair used again
  after it was let go is parsed again (the cost of one robots.txt parse, ``rep/user_agent/forms_built``).
"""

from __future__ import annotations

from collections import OrderedDict
from functools import lru_cache
from typing import TYPE_CHECKING

from .._scrapy import user_agent_header
from ..config.tokens import product_token
from ..matcher import AgentRules, parse

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.statscollectors import StatsCollector

    from ..config import Config
    from ..stores import Entry

#: Decision forms kept for tokens other than the crawl's, all origins together (a form is ~0.7 KiB on the corpus).
FORMS = 1024
#: User-Agent header values whose token is remembered.
HEADERS = 1024


class RequestAgents:
    """The tokens a request obeys, and the decision form of an origin's entry for them; see the module docstring."""

    def __init__(self, config: Config, stats: StatsCollector) -> None:
        self.default = config.user_agents
        self.per_request = config.agent_per_request
        self.max_size = config.max_size
        self.stats = stats
        self._default_header = config.default_user_agent.encode() if config.default_user_agent else None
        self._forms: OrderedDict[tuple[str, tuple[str, ...]], tuple[Entry, AgentRules]] = OrderedDict()

    def tokens(self, request: Request) -> tuple[str, ...]:
        """The tokens ``request`` obeys: its own ``User-Agent`` header's product token when the crawl decides per
        request and the header is not USER_AGENT's (``()``: it has none, the ``*`` groups), else the crawl's."""
        if not self.per_request:
            return self.default
        header = user_agent_header(request)
        if header is None or header == self._default_header:
            return self.default
        return _tokens_of(header)

    def decision_form(self, request: Request, entry: Entry,
                      rules: AgentRules | None) -> tuple[tuple[str, ...], AgentRules | None]:
        """(the tokens ``request`` obeys, ``entry``'s decision form for them), from ``rules``, the origin's form for
        the crawl's tokens (``count``: a request with a header of its own decided by them)."""
        tokens = self.tokens(request)
        if tokens is self.default:
            return tokens, rules
        return tokens, self.rules(tokens, entry, rules)

    def count(self, tokens: tuple[str, ...]) -> None:
        """A request decided by ``tokens``: one with a header of its own counted under ``rep/user_agent/own_header``."""
        if tokens is not self.default:
            self.stats.inc_value("rep/user_agent/own_header")

    def rules(self, tokens: tuple[str, ...], entry: Entry, rules: AgentRules | None) -> AgentRules | None:
        """The decision form of ``entry`` for ``tokens``: ``rules`` (the origin's, for the crawl's tokens) when they
        are the crawl's or the entry has no rules; else the kept form, made from the entry's body when missing or
        made from an older entry."""
        if rules is None or tokens == self.default:
            return rules
        key = (entry.origin, tokens)
        kept = self._forms.get(key)
        if kept is not None and kept[0] is entry:
            self._forms.move_to_end(key)
            return kept[1]
        form = parse(entry.body, max_bytes=self.max_size).compact(tokens)
        self.stats.inc_value("rep/user_agent/forms_built")
        self._forms[key] = (entry, form)
        self._forms.move_to_end(key)
        while len(self._forms) > FORMS:
            self._forms.popitem(last=False)
        return form


@lru_cache(maxsize=HEADERS)
def _tokens_of(header: bytes) -> tuple[str, ...]:
    """The product token of a ``User-Agent`` header (Scrapy's headers are bytes; read as UTF-8, leniently)."""
    token = product_token(header.decode("utf-8", errors="replace").strip())
    return (token,) if token is not None else ()


def shown(tokens: tuple[str, ...]) -> str:
    """``tokens`` as the log lines name them: ``['newbiebot']``, or ``[] (only the * groups)``."""
    return f"{list(tokens)}" if tokens else "[] (only the * groups)"
