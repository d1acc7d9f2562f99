"""The TDMRep well-known file ``/.well-known/tdmrep.json``: its rules, and which one applies to a path.

Source: W3C TDM Reservation Protocol (TDMRep), Final Community Group Report 2024-05-10
(w3.org/community/reports/tdmrep/CG-FINAL-tdmrep-20240510/), "TDM File on the Origin Server" and "tdm-reservation".

Contract: ``parse_tdmrep(body)`` reads the file (bytes as downloaded; the caller caps their size) into a ``TdmRep``:
its rules in array order, each an object with a ``location`` (a path pattern), a ``tdm-reservation`` (1: TDM rights
reserved, 0: not) and an optional ``tdm-policy`` URL, and the problems met, in words, for lint and the crawl log.
The file is read as far as it is valid and what is not is said: an invalid entry is skipped, a bad value is unset.
``TdmRep.lookup(path)`` gives the first rule whose location matches ``path`` ("The most specific match is the first
in sequence"), or None ("If no match is found, ... tdm-reservation is unset"). ``tdm_value`` reads one header or meta
value. Nothing here raises, whatever the input; parsing is linear in the body (``json``) and at most ``MAX_RULES``
entries are read; a lookup costs O(rules * len(pattern) * len(path)) at worst (``Shape.matches``).

Location matching: the spec reuses robots.txt's pattern syntax (``*``: any sequence, a final ``$``: the end) and asks,
"for the sake of interoperability", for Google's reading of it; so a location is matched as an Allow/Disallow pattern
is (``_pattern``, after ``_escape.escape_pattern``): case-sensitive, against the path and query as sent.

# Decision: a location without ``*`` or ``$`` is a prefix match, as in robots.txt: "the match evaluates positively if
# and only if the end of the path from the rule is reached before a difference in octets is encountered", and the
# spec's own examples ("/" for every file, "/directory-a/" for the files under it) only work as prefixes.
# Decision: percent-escapes are not decoded before comparing (Google's reading, which the spec defers to; the spec's
# own RFC 3986 sentence would decode escaped unreserved characters); but a ``%24`` or ``%2A`` in a location matches a
# literal ``$`` or ``*`` of the path (the spec's example: ``/path/foo-%24`` matches ``/path/foo-$``): both sides are
# compared with these two characters escaped.
# Decision: ``tdm-reservation`` must be the integer 0 or 1, as the spec's JSON writes it; the strings "0" and "1"
# (the header's and meta tag's form) are read as the integers and said; booleans, other numbers and other strings
# are protocol errors: the rule is kept with its reservation unset ("MUST consider that tdm-reservation is unset").
# Decision: an entry that is not an object, or has no string ``location`` (or an empty one), is skipped: there is no
# path it could apply to. A location that starts with neither "/" nor "*" is kept as written and said: it matches no
# path. ``tdm-policy`` is kept only when it is a string that looks like an absolute URI (``scheme:...``); it is never
# fetched here.
# Bounds (hostile input): at most ``MAX_RULES`` entries are read (the rest ignored, and said); locations and policies
# over ``MAX_TEXT_CHARS`` are dropped; at most ``MAX_PROBLEMS`` problems are listed (then how many more there were);
# nesting too deep for ``json`` is a problem, not a crash.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ._escape import escape_pattern
from ._pattern import Shape, shape_of

TDMREP_PATH = "/.well-known/tdmrep.json"
MAX_RULES = 1_000
MAX_TEXT_CHARS = 2_048
MAX_PROBLEMS = 20

_ABSOLUTE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:\S")
"""An absolute URI's start (RFC 3986 scheme, colon, something): what a tdm-policy value must look like."""
_RESERVATIONS: dict[str, int] = {"0": 0, "1": 1}


@dataclass(frozen=True, slots=True)
class TdmRule:
    """One entry of tdmrep.json: ``index`` (0-based in the array), ``location`` as written, ``reservation`` (1, 0, or
    None when absent or not 0/1: unset) and ``policy`` (the tdm-policy URL as written, or None)."""

    index: int
    location: str
    reservation: int | None
    policy: str | None = None

    @property
    def where(self) -> str:
        """``entry 1 (location "/papers/*")``: 1-based, for people."""
        return f"entry {self.index + 1} (location {json.dumps(self.location, ensure_ascii=False)})"


@dataclass(frozen=True, slots=True)
class TdmRep:
    """The rules of a tdmrep.json file in array order, and the problems met reading it (see the module's contract)."""

    rules: tuple[TdmRule, ...] = ()
    problems: tuple[str, ...] = ()
    #: The body is not a JSON document at all (not UTF-8, not JSON, nested too deeply): nothing could be read.
    unreadable: bool = False
    _shapes: tuple[Shape, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_shapes", tuple(_shape(rule.location) for rule in self.rules))

    def lookup(self, path: str) -> TdmRule | None:
        """The first rule whose location matches ``path`` (the URL's path and query, percent-encoded as sent)."""
        if not isinstance(path, str):
            return None
        subject = _escape_specials(path)
        for rule, shape in zip(self.rules, self._shapes, strict=True):
            if shape.matches(subject):
                return rule
        return None


def tdm_value(value: str | bytes | None) -> int | None:
    """A ``tdm-reservation`` header or meta value: ``0`` or ``1`` (surrounding whitespace ignored) as an int; anything
    else None (a protocol error: unset)."""
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value[:65]).decode("ascii", "replace")
    if not isinstance(value, str) or len(value) > 64:
        return None
    return _RESERVATIONS.get(value.strip())


def starts_like_json(body: bytes) -> bool:
    """Whether ``body`` starts, after any BOM and blanks, as a JSON array or object does: what a TDMRep file may be.
    A body that does not (an HTML page served for every path) is no TDMRep file at all."""
    return body.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"[", b"{")


def parse_tdmrep(body: bytes) -> TdmRep:
    """The rules of a tdmrep.json ``body`` and the problems met; never raises (see the module's contract)."""
    problems = _Problems()
    document = _load(body, problems)
    if document is _UNREADABLE:
        return TdmRep((), problems.result(), unreadable=True)
    if not isinstance(document, list):
        problems.add(f"the file is a JSON {_kind(document)}, not an array of rules ([{{...}}, ...]): "
                     "no rule is read")
        return TdmRep((), problems.result())
    if len(document) > MAX_RULES:
        problems.add(f"{len(document)} entries: only the first {MAX_RULES} are read")
    rules = []
    for index, entry in enumerate(document[:MAX_RULES]):
        rule = _rule(index, entry, problems)
        if rule is not None:
            rules.append(rule)
    return TdmRep(tuple(rules), problems.result())


class _Problems:
    """The problems met, up to ``MAX_PROBLEMS``, then a count of the rest."""

    __slots__ = ("found", "more")

    def __init__(self) -> None:
        self.found: list[str] = []
        self.more = 0

    def add(self, message: str) -> None:
        if len(self.found) < MAX_PROBLEMS:
            self.found.append(message)
        else:
            self.more += 1

    def result(self) -> tuple[str, ...]:
        if self.more:
            return (*self.found, f"... and {self.more} more problems")
        return tuple(self.found)


_UNREADABLE = object()


def _load(body: bytes, problems: _Problems) -> Any:
    """The JSON document of ``body``, or ``_UNREADABLE`` with a problem said (not UTF-8, not JSON, nested too deep)."""
    try:
        text = body if isinstance(body, str) else bytes(body).decode("utf-8-sig")
    except (UnicodeDecodeError, TypeError, ValueError) as error:
        problems.add(f"the file is not UTF-8 ({_short(error)}): no rule is read")
        return _UNREADABLE
    try:
        return json.loads(text)
    except RecursionError:
        problems.add("the file nests arrays or objects too deeply to be read: no rule is read")
    except ValueError as error:  # json.JSONDecodeError, and Python's limit on an integer's digits
        problems.add(f"the file is not JSON ({_short(error)}): no rule is read")
    return _UNREADABLE


def _rule(index: int, entry: object, problems: _Problems) -> TdmRule | None:
    """The rule of array element ``index``, or None (skipped, said) when it cannot be one."""
    name = f"entry {index + 1}"
    if not isinstance(entry, dict):
        problems.add(f"{name} is a JSON {_kind(entry)}, not an object: skipped")
        return None
    location = entry.get("location")
    if not isinstance(location, str) or not location:
        why = "no location" if location is None else ("an empty location" if location == "" else
                                                       f"a location that is a JSON {_kind(location)}, not a string")
        problems.add(f"{name} has {why}: skipped")
        return None
    if len(location) > MAX_TEXT_CHARS:
        problems.add(f"{name} has a location over {MAX_TEXT_CHARS} characters: skipped")
        return None
    rule = TdmRule(index, location, None, None)
    if location[0] not in "/*":
        problems.add(f"{rule.where}: a location starts with '/' or '*' (a path pattern); this one matches no path")
    reservation = _reservation(entry, rule.where, problems)
    policy = _policy(entry, rule.where, problems)
    return TdmRule(index, location, reservation, policy)


def _reservation(entry: dict[str, object], where: str, problems: _Problems) -> int | None:
    if "tdm-reservation" not in entry:
        problems.add(f"{where} has no tdm-reservation: unset")
        return None
    value = entry["tdm-reservation"]
    if isinstance(value, int) and not isinstance(value, bool) and value in (0, 1):
        return value
    if isinstance(value, str) and value in _RESERVATIONS:
        problems.add(f"{where}: tdm-reservation is the string {value!r}: read as the number {value}")
        return _RESERVATIONS[value]
    problems.add(f"{where}: tdm-reservation must be 0 or 1, not {_shown(value)}: unset (a protocol error)")
    return None


def _policy(entry: dict[str, object], where: str, problems: _Problems) -> str | None:
    if "tdm-policy" not in entry or entry["tdm-policy"] is None:
        return None
    value = entry["tdm-policy"]
    policy = policy_value(value) if isinstance(value, str) else None
    if policy is not None:
        return policy
    problems.add(f"{where}: tdm-policy must be an absolute URL, not {_shown(value)}: ignored")
    return None


def policy_value(value: str | bytes | None) -> str | None:
    """A tdm-policy value (file, header or meta) stripped, when it looks like an absolute URL; else None."""
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value[:MAX_TEXT_CHARS + 1]).decode("utf-8", "replace")
    if not isinstance(value, str) or len(value) > MAX_TEXT_CHARS:
        return None
    value = value.strip()
    return value if _ABSOLUTE.match(value) else None


def _shape(location: str) -> Shape:
    """The robots.txt shape of ``location``: escaped as an Allow/Disallow pattern, a ``$`` before the end escaped."""
    pattern = escape_pattern(location)
    anchored = pattern.endswith("$")
    inner = _escape_specials(pattern[:-1] if anchored else pattern, keep_star=True)
    return shape_of(inner + "$" if anchored else inner)


def _escape_specials(text: str, keep_star: bool = False) -> str:
    """``text`` with ``$`` (and ``*`` unless ``keep_star``) written ``%24`` / ``%2A`` (upper case, as escaped)."""
    if "$" in text:
        text = text.replace("$", "%24")
    if not keep_star and "*" in text:
        text = text.replace("*", "%2A")
    return text


def _kind(value: object) -> str:
    """The JSON type of a decoded value, for messages."""
    if isinstance(value, bool) or value is None:
        return "literal"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return "string" if isinstance(value, str) else "number"


def _shown(value: object) -> str:
    """A decoded JSON value as it would be written, shortened for a message."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (ValueError, TypeError, RecursionError):
        text = _kind(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _short(error: Exception) -> str:
    text = str(error)
    return text if len(text) <= 80 else text[:77] + "..."
