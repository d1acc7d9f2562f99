"""The robots ``<meta>`` tags of an HTML document's head: a bounded, linear scan of the body's first bytes.

Source: Google's "Robots meta tag, data-nosnippet, and X-Robots-Tag specifications"
(developers.google.com/search/docs/crawling-indexing/robots-meta-tag): the tag goes in the ``<head>``; "Both the name
and the content attributes are case-insensitive". Tags and attributes are read as the HTML tokenizer reads them
(WHATWG HTML 13.2.5): attribute order is free, values are double-quoted, single-quoted or unquoted, whitespace (new
lines too) separates attributes, a quoted value may hold ``>``.

Contract: ``meta_contents(body, names)`` yields the ``content`` value (str, entities unescaped) of every
``<meta name=N content=...>`` of the head whose ``N`` (stripped, lower-cased) is in ``names``, in document order. It
reads ``body[:MAX_HEAD_BYTES]`` at most and stops earlier at ``</head`` or ``<body``; it decodes and lower-cases only
the meta tags themselves (never the head as a whole), so its cost is linear in the head and independent of the body's
size. It never raises.

Skipped like the HTML tokenizer does: ``<!-- comments -->``, and the text of ``<script>``, ``<style>``, ``<title>``
and ``<textarea>`` (a ``<meta>`` or ``</head>`` written inside them is text, not a tag).

# Decision: a meta tag inside ``<noscript>`` counts, as for an HTML parser with scripting disabled (a crawler that
# runs no script; the more restrictive reading).

# Decision: the scan stops at the first ``</head`` or ``<body``, not where the HTML parser would close the head
# implicitly (at the first element that cannot be in a head, ``<div>`` for instance): the tags Google documents are in
# the head, and a page's head is what authors mark as one.
# Decision: anything unterminated within the bound (a comment, a raw-text element, a tag, a quoted value) ends the
# scan; what follows it would be inside it.
# Decision: a trailing "/" of an unquoted value is dropped (``<meta name=robots content=noindex/>`` means noindex;
# HTML would read "noindex/").
# Decision: the document is read as UTF-8 (invalid bytes replaced); a UTF-16 page has no robots meta tag.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from functools import lru_cache

MAX_HEAD_BYTES = 64 * 1024
"""The scan reads no further than this into the body. A head holding a robots meta tag is short (the tags are near
the top); bounding the read makes the cost per response constant (a few tens of µs) whatever the body's size, and a
page whose head runs past 64 KiB (inline styles or scripts) before its robots tag is rare."""

_TOKEN = re.compile(
    rb"<(?:(!--)|(?:(meta)|(/head|body)|(script|style|title|textarea))(?=[\s/>]))", re.IGNORECASE)
"""What the scan stops at: a comment, a meta tag, the end of the head, a raw-text element (groups 1 to 4)."""
_CLOSE = {name: re.compile(rb"</" + name + rb"(?=[\s/>])", re.IGNORECASE)
          for name in (b"script", b"style", b"title", b"textarea")}
_ATTRIBUTE = re.compile(rb"""[\s/]*([^\s/>][^\s/>=]*)\s*(?:=\s*("[^"]*"|'[^']*'|[^\s>"'][^\s>]*|))?""")
"""One attribute: name, then an optional value (quoted, unquoted, or empty when a quote is left open)."""
_SKIP = re.compile(rb"[\s/]*")
_QUICK_TAG = re.compile(rb"""[^>"'=]*(?:=(?:"[^"]*"|'[^']*')?[^>"'=]*)*>""")
"""The rest of a tag, up to its ">", when every quote opens a value right after its "=" (the fast path of
``_meta_attributes``: one match per tag). Unrolled (no quantified alternative can match where another does), so a
failure costs one pass; then the exact attribute-by-attribute reading decides.

# Decision: the fast path reads a quote right after any "=" as opening a value; HTML does not within an unquoted value
# (``content=a="b>c"``, a parse error), where the tag's end may differ. Only a tag that names none of the crawler's
# names is ever skipped by it."""


def meta_contents(body: bytes, names: frozenset[str]) -> Iterator[str]:
    """The content of each meta tag of the head named one of ``names`` (lower-cased); see the module's contract."""
    limit = min(len(body), MAX_HEAD_BYTES)
    needles = _needles(names)
    pos = 0
    while True:
        match = _TOKEN.search(body, pos, limit)
        if match is None:
            return
        comment, meta, end, raw = match.groups()
        if comment is not None:
            close = body.find(b"-->", match.end(), limit)
            if close < 0:
                return
            pos = close + 3
        elif meta is not None:
            tag = _meta_attributes(body, match.end(), limit, needles)
            if tag is None:
                return
            pos, name, content = tag
            if name is not None and content is not None and name in names:
                yield content
        elif end is not None:
            return
        else:
            closing = _CLOSE[raw.lower()].search(body, match.end(), limit)
            if closing is None:
                return
            pos = closing.end()


def _meta_attributes(body: bytes, pos: int, limit: int,
                     needles: re.Pattern[bytes]) -> tuple[int, str | None, str | None] | None:
    """(position after the tag, name lower-cased and stripped, content) of the meta tag whose attributes start at
    ``pos``; name and content are None when absent or when the tag cannot be one of ``needles``. None when the tag
    does not end before ``limit``."""
    if body.find(b">", pos, limit) < 0:
        return None  # no tag can end before the bound (one fast pass instead of two regex passes)
    whole = _QUICK_TAG.match(body, pos, limit)
    if whole is not None:  # the common case: decide relevance before reading attributes
        end = whole.end()
        if needles.search(body, pos, end) is None:
            return end, None, None
    start = pos
    attributes: list[tuple[bytes, bytes | None]] = []
    while True:
        match = _ATTRIBUTE.match(body, pos, limit)
        if match is None:
            skipped = _SKIP.match(body, pos, limit)  # always matches (maybe empty)
            pos = skipped.end() if skipped is not None else pos
            break
        value = match.group(2)
        pos = match.end()
        if value == b"" and body[pos:pos + 1] in (b'"', b"'"):
            return None  # a quote left open: the rest of the bounded head is inside the value
        attributes.append((match.group(1), value))
    if pos >= limit or body[pos] != 0x3E:  # ">"
        return None
    end = pos + 1
    if needles.search(body, start, pos) is None:
        return end, None, None
    name = content = None
    for key, value in attributes:  # the first of a repeated attribute wins (HTML drops the others)
        key = key.lower()
        if key == b"name" and name is None:
            name = _text(value).strip().lower()
        elif key == b"content" and content is None:
            content = _text(value)
    return end, name, content


@lru_cache(maxsize=64)
def _needles(names: frozenset[str]) -> re.Pattern[bytes]:
    """Finds any of ``names`` in a tag's bytes, whatever their case: most meta tags (charset, viewport, Open Graph)
    are dismissed by one search, without decoding their attributes."""
    return re.compile(b"|".join(re.escape(name.encode("utf-8", "replace")) for name in sorted(names)), re.IGNORECASE)


def _text(value: bytes | None) -> str:
    """An attribute value as text: quotes removed, decoded, entities unescaped (only when it holds ``&``)."""
    if not value:
        return ""
    if value[:1] in (b'"', b"'"):
        value = value[1:-1]
    elif value.endswith(b"/"):
        value = value[:-1]  # Decision above: content=noindex/
    text = value.decode("utf-8", "replace")
    return html.unescape(text) if "&" in text else text
