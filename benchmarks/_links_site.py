"""The site of ``bench_links``: many origins behind one loopback proxy port (``tests.broad.origins.OriginsProxy``'s
way), each a home page ``/`` linking to a few same-origin pages, some of them forbidden by the origin's robots.txt.

``plan`` reads the robots.txt corpus (``../shared/corpus/robots/``, else ``tests.broad.origins.BUILTIN_ROBOTS``),
keeps the files whose rules allow ``/`` to the token (scrapy-rep's matcher, Google's reading), and gives each kept file
``links`` link paths: forbidden ones made concrete from its Disallow patterns (``*`` -> ``x``, a final ``$`` dropped,
a few suffixes for more), allowed ones random (``_corpus.random_path``), each verified with the matcher. The forbidden
ones are shared out so that about ``share`` of all links are forbidden: a file without a usable Disallow rule gives
none, a file with some gives more. Every path is in the form Scrapy requests it when a page links to it
(``response.follow``), so the proxy sees exactly that path. Protego's verdicts (Scrapy's built-in parser) are kept
beside the matcher's: where the two disagree, the ``builtin`` crawl downloads other pages than a ``rep`` crawl.

Origin ``n`` (``site-NNNNN.test``) serves kept file ``n % len(files)``. Its ``/`` and each of its links answer the same
small HTML page, which links to every link of the file (duplicates of what was seen: Scrapy's dupefilter drops them),
so a crawl of an origin is 1 home page + its allowed links (+ its forbidden links without robots.txt).
"""

from __future__ import annotations

import html
import json
import random
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from scrapy import Request
from twisted.web.http import Request as TwistedRequest

from benchmarks._corpus import random_path
from tests.broad.origins import _DISALLOW, PAGE_HEADERS, ROBOTS_HEADERS, OriginsProxy, robots_bodies

if TYPE_CHECKING:
    from scrapy_rep.matcher import AgentRules

#: Suffixes that make more than one forbidden path of a Disallow pattern (each verified forbidden).
SUFFIXES = ("", "x", "/x.html", "?id=7", "/a/b")


@dataclass
class Origin:
    """A kept robots.txt file and the links its origins' pages carry."""

    body: bytes
    allowed: list[str]  # forbidden by neither reading
    forbidden: list[str]  # forbidden for the token by the matcher
    candidates: list[str]  # forbidden paths the file offers, before the share-out
    protego_home: bool  # whether Protego allows "/" (if not, the built-in middleware crawls nothing of the origin)
    protego_forbids: set[str]  # links Protego forbids (a matcher-allowed one among them: a disagreement)
    page: bytes = b""


def as_followed(path: str) -> str:
    """``path`` as Scrapy requests it when a page of ``http://h.test/`` links to it (``response.follow``)."""
    parts = urlsplit(Request(urljoin("http://h.test/", path)).url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def links_of(body: bytes, rules: AgentRules, links: int, rng: random.Random) -> tuple[list[str], list[str]]:
    """Up to ``links`` allowed paths (random) and up to ``links`` forbidden ones (from the Disallow patterns) for a
    file of rules ``rules``, all distinct, none ``/`` nor ``/robots.txt``, each as Scrapy requests it."""
    seen = {"/", "/robots.txt"}

    def fresh(path: str) -> str | None:
        if "#" in path or path.startswith("//") or not path.startswith("/"):
            return None
        sent = as_followed(path)
        if sent in seen or as_followed(sent) != sent:
            return None
        seen.add(sent)
        return sent

    patterns = list(dict.fromkeys(m.group(1).decode("utf-8", "replace") for m in _DISALLOW.finditer(body)))
    rng.shuffle(patterns)
    forbidden: list[str] = []
    for suffix in SUFFIXES:  # every pattern once, then every pattern with the next suffix...
        for pattern in patterns:
            base = pattern.rstrip("$").replace("*", "x")
            path = fresh(("" if base.startswith("/") else "/") + base + suffix)
            if path is not None and not rules.allowed(f"http://h.test{path}"):
                forbidden.append(path)
            if len(forbidden) >= links:
                break
        if len(forbidden) >= links:
            break
    allowed: list[str] = []
    for _ in range(20 * links):
        if len(allowed) >= links:
            break
        path = fresh(random_path(rng))
        if path is not None and rules.allowed(f"http://h.test{path}"):
            allowed.append(path)
    return allowed, forbidden


def plan(token: str, links: int, share: float, origins: int, seed: int = 7) -> tuple[list[Origin], str, int]:
    """The kept files with their links (``share`` of all links of ``origins`` origins forbidden, as near as the
    files allow), the corpus's description and how many of its files were dropped (``/`` forbidden)."""
    from protego import Protego

    from scrapy_rep.matcher import parse

    bodies, source = robots_bodies()
    kept: list[Origin] = []
    for index, body in enumerate(bodies):
        rules = parse(body).compact((token,))
        if not rules.allowed("http://h.test/"):
            continue
        allowed, candidates = links_of(body, rules, links, random.Random(seed * 1_000_003 + index))
        kept.append(Origin(body, allowed, [], candidates, True, set()))
    # the share-out: the same quota of forbidden links for every file that has enough, raised until `share` of
    # the links of `origins` origins is reached; the last step given to as few files as reach it
    weights = [origins // len(kept) + (i < origins % len(kept)) for i in range(len(kept))]
    target = share * links * origins

    def forbidden_links(quota: int) -> int:
        return sum(w * min(quota, len(o.candidates)) for w, o in zip(weights, kept, strict=True))

    quota = 0
    while quota < links and forbidden_links(quota + 1) < target:
        quota += 1
    total = forbidden_links(quota)
    for weight, origin in zip(weights, kept, strict=True):
        more = int(total < target and len(origin.candidates) > quota)
        total += weight * more
        origin.forbidden = origin.candidates[: quota + more]
        origin.allowed = origin.allowed[: links - len(origin.forbidden)]
        robots = Protego.parse(origin.body.decode("utf-8-sig", errors="ignore"))  # as Scrapy decodes it
        origin.protego_home = robots.can_fetch("http://h.test/", token)
        origin.protego_forbids = {p for p in origin.allowed + origin.forbidden
                                  if not robots.can_fetch(f"http://h.test{p}", token)}
        anchors = "".join(f'<a href="{html.escape(p)}">link</a>\n' for p in origin.allowed + origin.forbidden)
        origin.page = f"<html><body>\n{anchors}</body></html>\n".encode()
    return kept, source, len(bodies) - len(kept)


def expected(kept: list[Origin], origins: int) -> dict[str, Any]:
    """What each mode should download of ``origins`` origins, and the readings' disagreements."""
    figures: Counter[str] = Counter()
    for n in range(origins):
        origin = kept[n % len(kept)]
        links = origin.allowed + origin.forbidden
        figures["links"] += len(links)
        figures["forbidden_links"] += len(origin.forbidden)
        figures["off"] += 1 + len(links)
        figures["rep"] += 1 + len(origin.allowed)
        if origin.protego_home:
            figures["builtin"] += 1 + sum(p not in origin.protego_forbids for p in links)
            figures["builtin_forbidden"] += sum(p not in origin.protego_forbids for p in origin.forbidden)
        else:
            figures["protego_forbids_home"] += 1
        figures["protego_forbids_allowed"] += len(origin.protego_forbids & set(origin.allowed))
        figures["protego_allows_forbidden"] += len(set(origin.forbidden) - origin.protego_forbids)
    return dict(figures)


class LinksProxy(OriginsProxy):
    """``OriginsProxy`` serving the planned pages: robots.txt, ``/`` and the links of origin n's file."""

    def __init__(self, kept: list[Origin]) -> None:
        super().__init__([origin.body for origin in kept])
        self.kept = kept
        self.sets = [(set(o.allowed), set(o.forbidden)) for o in kept]
        self.served: Counter[str] = Counter()  # distinct pages per kind, not cleared by /_hits: the fleet's progress
        self.seen: set[tuple[str, str]] = set()
        self.reported: Counter[str] = Counter()  # what /_hits last reported of it
        self.examples: list[str] = []  # forbidden pages served since /_hits

    def render_GET(self, request: TwistedRequest) -> bytes:
        if request.uri == b"/_hits":
            return self._summary(request)
        if request.uri == b"/_served":
            return self._answer(request, 200, {}, json.dumps(self.served).encode())
        target = self.target(request)
        if target is None:
            return self._answer(request, 404, {}, b"not an origin of this proxy")
        host_header, path, n = target
        index = n % len(self.kept)
        allowed, forbidden = self.sets[index]
        kind = ("robots" if path == "/robots.txt" else "home" if path == "/" else "allowed" if path in allowed
                else "forbidden" if path in forbidden else "unknown")
        if (host_header, path) not in self.seen:
            self.seen.add((host_header, path))
            self.served[kind] += 1
        if kind == "forbidden":
            self.examples.append(host_header + path)
        if kind == "robots":
            return self._answer(request, 200, ROBOTS_HEADERS, self.kept[index].body)
        if kind == "unknown":
            return self._answer(request, 404, {}, b"no such page")
        return self._answer(request, 200, PAGE_HEADERS, self.kept[index].page)

    def _summary(self, request: TwistedRequest) -> bytes:
        """``OriginsProxy``'s summary (robots.txt per origin...) and, since the last one: distinct pages of each kind,
        the pages served more than once (``repeated``: downloads past a page's first), a few examples of each."""
        counts = Counter(hit for hit in self.hits if hit[1] != "/robots.txt")
        summary: dict[str, Any] = json.loads(super()._summary(request))  # clears hits
        summary.update({key: self.served[key] - self.reported[key] for key in ("home", "allowed", "forbidden",
                                                                               "unknown")})
        summary["repeated"] = sum(n - 1 for n in counts.values())
        summary["repeated_examples"] = [f"{h}{p} x{n}" for (h, p), n in counts.items() if n > 1][:5]
        summary["forbidden_examples"] = self.examples[:5]  # which forbidden pages were downloaded
        self.reported, self.examples = Counter(self.served), []
        self.seen.clear()  # the next crawl's pages are new again
        body = json.dumps(summary).encode()
        request.setHeader(b"Content-Length", str(len(body)).encode())  # type: ignore[no-untyped-call]
        return body


def serve(token: str, links: int, share: float, origins: int) -> None:
    """Child process: plans the site, prints the proxy's URL and the plan's figures as one JSON line, serves."""
    from twisted.internet import reactor

    kept, source, dropped = plan(token, links, share, origins)
    proxy = LinksProxy(kept).start()
    print(json.dumps({"proxy": proxy.proxy_url, "source": source, "files": len(kept), "dropped": dropped,
                      "expected": expected(kept, origins)}), flush=True)
    running: Any = reactor
    running.run()
