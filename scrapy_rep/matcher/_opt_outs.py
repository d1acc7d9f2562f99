"""Machine-readable AI and TDM opt-outs from every source, as ``Statement``s, and their combination per use.

Sources: draft-ietf-aipref-attach-05 ("HTTP Content-Usage Header Field"), draft-ietf-aipref-vocab-08 ("Processing
Algorithm"; "Combining Preferences", §7.1), draft-romm-aipref-contentsignals-00 and contentsignals.org (Content-Signal;
Cloudflare sends it as a response header too), W3C TDMRep Final Community Group Report 2024-05-10 (file, header and
meta techniques, "Processing priority"), and the ``noai``/``noimageai`` robots directives (DeviantArt's proposal,
read by several crawlers; no specification).

Contract: each ``*_statements`` function turns what one source says about one response into statements ``use=y|n``
naming the source and where it said it; ``combine`` reduces statements from every source to one per use. Nothing
here raises on any input, reads a clock or does I/O; every input is read within the bounds below.

* robots.txt (``from_preference``): a ``Preference`` of ``Robots.usage`` as it is; a legacy label (``LEGACY_LABELS``)
  only when ``legacy_labels`` and it says ``n``: one statement per use of ``legacy_uses`` (``legacy`` names it).
* ``Content-Usage`` header (``header_statements``): its field lines joined with ", " (RFC 9110 5.3) and read as one
  Structured Fields Dictionary (``_sfdict``), as vocab-08 processes it; a value that is not a Dictionary states nothing.
  ``Content-Signal`` header: each field line read as a robots.txt Content-Signal line (``_usage.content_signal``).
* TDMRep (``tdm_statements``): one reservation per response, from the highest technique that gives a valid one:
  meta tag over header over the file's matching rule ("supercede"); it gives two statements, ``tdm`` and
  ``train-ai`` (training an AI model is text and data mining: 1 -> both n, 0 -> both y).
* ``noai`` / ``noimageai`` (``noai_statements``): ``train-ai=n``, as the robots meta tag or the X-Robots-Tag said it.
* ``combine``: per use, any ``n`` wins over every ``y`` (vocab-08 §7.1: "the most restrictive preference applies");
  among statements of the same answer the one kept is the least in a total order (source in the order the source
  constants are listed, then where, policy, legacy), so the result never depends on the order of the statements.

# Decision: a legacy label's ``y`` is not read as a ``y`` of a current use: only refusals carry over (a ``bots=y``
# says nothing of whether training in vocab-08's narrower sense was meant to be allowed; an ``n`` of a broader use
# refuses every use inside it).
# Decision: a statement cites one member (``Content-Usage: train-ai=n``, ``Content-Signal: ai-train=no``), not the
# whole field: a field may be long, and the member is what decided.
# Decision: several Content-Signal field lines combine as robots.txt lines do (``n`` over ``y``, whatever their
# order); within one line the last of a repeated key wins.
# Decision: within one TDMRep technique several valid values may appear (two meta tags, two header lines, or a
# header line "1, 0" combined by a proxy, split on commas): a 1 wins, the most restrictive reading.
# Decision: the tdm-policy given is that of the highest technique that has one, not only the deciding technique's
# ("At every step, the absence of tdm-reservation and tdm-policy MUST not reset current values"), and only with a
# reservation of 1 ("TDM Agents SHOULD NOT process tdm-policy" when it is 0); the first valid value of a technique.
# Decision: ``noimageai`` refuses training only when the response is an image: the directive is about the page's
# images, so on an HTML page it does not refuse the page's text (and the images, fetched on their own, carry their
# own X-Robots-Tag if any). ``noai`` refuses ``train-ai`` whatever the response.
# Bounds (hostile input): at most ``MAX_HEADER_VALUES`` values of each header and ``MAX_META_VALUES`` meta values are
# read, each header value up to ``MAX_HEADER_BYTES`` (a longer one is cut before its last, partial member).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice

from ._meta_tags import MAX_HEAD_BYTES, meta_contents
from ._sfdict import parse_dictionary
from ._tdmrep import TdmRule, policy_value, tdm_value
from ._usage import CONTENT_USAGE, LEGACY_LABELS, VOCABULARY, Preference, legacy_uses
from ._usage import content_signal as _signal_line

ROBOTS_TXT = "robots.txt"
CONTENT_USAGE_HEADER = "Content-Usage header"
CONTENT_SIGNAL_HEADER = "Content-Signal header"
TDMREP_FILE = "tdmrep.json"
TDM_HEADER = "tdm-reservation header"
TDM_META = "tdm-reservation meta tag"
ROBOTS_META = "robots meta tag"
X_ROBOTS_TAG = "X-Robots-Tag header"
TDM = "tdm"
TRAIN_AI = "train-ai"

MAX_HEADER_VALUES = 16
MAX_HEADER_BYTES = 8 * 1024
MAX_META_VALUES = 16

_SOURCES = (ROBOTS_TXT, CONTENT_USAGE_HEADER, CONTENT_SIGNAL_HEADER, TDMREP_FILE, TDM_HEADER, TDM_META, ROBOTS_META,
            X_ROBOTS_TAG)
_RANK = {source: rank for rank, source in enumerate(_SOURCES)}
_SIGNAL_OF_USE = {TRAIN_AI: "ai-train"}  # the Content-Signal key a use was read from (``aipref_use`` reversed)
_RESERVATION_NAMES = frozenset({"tdm-reservation"})
_POLICY_NAMES = frozenset({"tdm-policy"})
_TDM_NAME = re.compile(rb"tdm-", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Statement:
    """One source's answer for one use: ``use`` (``train-ai``, ``search``, ``tdm``, ``ai-input``...), ``allowed``
    (y/n), ``source`` (one of the source constants), ``where`` it said it, in words; ``policy``: the tdm-policy URL
    that goes with it; ``legacy``: the legacy label it was read from (``train-genai``...)."""

    use: str
    allowed: bool
    source: str
    where: str
    policy: str | None = None
    legacy: str | None = None

    def as_dict(self) -> dict[str, str]:
        """Plain JSON-able fields: use, value (y/n), source, where, and policy / legacy when set."""
        fields = {"use": self.use, "value": "y" if self.allowed else "n", "source": self.source, "where": self.where}
        if self.policy is not None:
            fields["policy"] = self.policy
        if self.legacy is not None:
            fields["legacy"] = self.legacy
        return fields

    def __str__(self) -> str:
        """``train-ai=n by Content-Usage header (Content-Usage: train-ai=n)``, then the tdm-policy if any."""
        text = f"{self.use}={'y' if self.allowed else 'n'} by {self.source} ({self.where})"
        return text if self.policy is None else f"{text}, tdm-policy {self.policy}"


def from_preference(preference: Preference, *, legacy_labels: bool) -> list[Statement]:
    """The statements of a robots.txt ``Preference`` (source ``robots.txt``, cited by ``Preference.where``)."""
    if not isinstance(preference, Preference):
        return []
    use, where = preference.use, preference.where
    if preference.source == CONTENT_USAGE and use in LEGACY_LABELS:
        return _legacy(use, preference.allowed, ROBOTS_TXT, where, legacy_labels)
    return [Statement(use, preference.allowed, ROBOTS_TXT, where)]


def header_statements(content_usage: Sequence[bytes], content_signal: Sequence[bytes], *,
                      legacy_labels: bool) -> list[Statement]:
    """The statements of a response's ``Content-Usage`` and ``Content-Signal`` header values (see the contract)."""
    statements: list[Statement] = []
    if not content_usage and not content_signal:
        return statements  # the common case: neither header (bench_opt_outs: what every response pays)
    usage = [value for value in _header_values(content_usage) if value.strip(b" \t")]
    members = parse_dictionary(b", ".join(usage)) if usage else None
    for label, token in (members or {}).items():
        if token not in ("y", "n"):
            continue
        where = f"Content-Usage: {label}={token}"
        if label in VOCABULARY:
            statements.append(Statement(label, token == "y", CONTENT_USAGE_HEADER, where))
        elif label in LEGACY_LABELS:
            statements += _legacy(label, token == "y", CONTENT_USAGE_HEADER, where, legacy_labels)
    for value in _header_values(content_signal):
        line = _signal_line(0, value)
        for preference in line.preferences if line is not None else ():
            key = _SIGNAL_OF_USE.get(preference.use, preference.use)
            where = f"Content-Signal: {key}={'yes' if preference.allowed else 'no'}"
            statements.append(Statement(preference.use, preference.allowed, CONTENT_SIGNAL_HEADER, where))
    return statements


def tdm_statements(file_rule: TdmRule | None, file_url: str, header_reservation: Sequence[bytes],
                   header_policy: Sequence[bytes], meta_reservation: Sequence[str],
                   meta_policy: Sequence[str]) -> list[Statement]:
    """The ``tdm`` and ``train-ai`` statements of TDMRep for one response: ``file_rule`` (``TdmRep.lookup``'s, None
    when no rule matched or there is no file) read from ``file_url``; the ``tdm-reservation`` / ``tdm-policy``
    header values; the meta tags' values (``tdm_meta``). [] when no technique gives a valid reservation."""
    if file_rule is None and not header_reservation and not meta_reservation:
        return []  # the common case: no technique states anything
    meta = _reserved(tdm_value(value) for value in islice(_texts(meta_reservation), MAX_META_VALUES))
    header = _reserved(tdm_value(item) for value in _header_values(header_reservation) for item in value.split(b","))
    policies = (_first_policy(islice(_texts(meta_policy), MAX_META_VALUES)), _first_policy(
        _header_values(header_policy)), file_rule.policy if isinstance(file_rule, TdmRule) else None)
    if meta is not None:
        source, reservation, where = TDM_META, meta, f'<meta name="tdm-reservation" content="{meta}">'
    elif header is not None:
        source, reservation, where = TDM_HEADER, header, f"tdm-reservation: {header}"
    elif isinstance(file_rule, TdmRule) and file_rule.reservation in (0, 1):
        source, reservation, where = TDMREP_FILE, file_rule.reservation, f"{file_rule.where} of {file_url}"
    else:
        return []
    policy = next((policy for policy in policies if policy is not None), None) if reservation == 1 else None
    return [Statement(use, reservation == 0, source, where, policy) for use in (TDM, TRAIN_AI)]


def tdm_meta(body: bytes) -> tuple[list[str], list[str]]:
    """(tdm-reservation values, tdm-policy values) of the ``<meta name=.. content=..>`` tags of ``body``'s head, in
    document order (``_meta_tags.meta_contents``: bounded, linear), at most ``MAX_META_VALUES`` of each."""
    if not isinstance(body, (bytes, bytearray)) or not body or not _mentions_tdm(body):
        return [], []
    return (list(islice(meta_contents(body, _RESERVATION_NAMES), MAX_META_VALUES)),
            list(islice(meta_contents(body, _POLICY_NAMES), MAX_META_VALUES)))


def _mentions_tdm(body: bytes | bytearray) -> bool:
    """Whether the head may hold a TDMRep meta tag: ``tdm-`` in any case before the first ``</head`` or ``<body`` (as
    written; else within ``MAX_HEAD_BYTES``), where ``meta_contents`` stops at the latest. A few µs on a page without
    one, instead of two scans of its head's meta tags (bench_opt_outs)."""
    ends = [found for found in (body.find(b"</head", 0, MAX_HEAD_BYTES), body.find(b"<body", 0, MAX_HEAD_BYTES))
            if found >= 0]
    return _TDM_NAME.search(body, 0, max(ends) if ends else MAX_HEAD_BYTES) is not None


def noai_statements(directives_from_meta: Collection[str], directives_from_header: Collection[str], *,
                    image: bool) -> list[Statement]:
    """``train-ai=n`` for ``noai`` (and ``noimageai`` when ``image``: the response is an image) among the robots meta
    tags' directives and the X-Robots-Tag's (``RobotsTags.from_meta`` / ``from_header``: lower-cased names)."""
    names = ("noai", "noimageai") if image else ("noai",)
    statements = []
    for directives, source, form in ((directives_from_meta, ROBOTS_META, '<meta content="{}">'),
                                     (directives_from_header, X_ROBOTS_TAG, "X-Robots-Tag: {}")):
        for name in names:
            if _holds(directives, name):
                statements.append(Statement(TRAIN_AI, False, source, form.format(name)))
    return statements


def page_statements(content_usage: Sequence[bytes], content_signal: Sequence[bytes], tdm_reservation: Sequence[bytes],
                    tdm_policy: Sequence[bytes], html: bytes | None, directives_from_meta: Collection[str],
                    directives_from_header: Collection[str], *, image: bool, legacy_labels: bool) -> list[Statement]:
    """Every statement a response makes of itself: its Content-Usage and Content-Signal headers, TDMRep's headers and
    (``html``: the body of an HTML response, else None) meta tags, and ``noai``/``noimageai`` among the robots
    directives that address the crawler (``RobotsTags.from_meta`` / ``from_header``)."""
    reservations, policies = tdm_meta(html) if html is not None else ([], [])
    return [*header_statements(content_usage, content_signal, legacy_labels=legacy_labels),
            *tdm_statements(None, "", tdm_reservation, tdm_policy, reservations, policies),
            *noai_statements(directives_from_meta, directives_from_header, image=image)]


def with_page(before: Iterable[Statement], page: Sequence[Statement]) -> list[Statement]:
    """The statements of a response: those known before its download (robots.txt, the origin's tdmrep.json) and the
    page's own; TDMRep's precedence: a page's own reservation (header or meta tag) replaces the file's."""
    if any(statement.source in (TDM_HEADER, TDM_META) for statement in page):
        before = [statement for statement in before if statement.source != TDMREP_FILE]
    return [*before, *page]


def unknown_reservation(where: str) -> list[Statement]:
    """A tdmrep.json that could not be read (``where`` says why): the reservation unknown, read as refusing both TDM
    uses (never as "no reservation")."""
    return [Statement(use, False, TDMREP_FILE, where) for use in (TDM, TRAIN_AI)]


def combine(statements: Iterable[Statement]) -> dict[str, Statement]:
    """One statement per use, uses sorted: an ``n`` over any ``y``, then the least in ``_order`` (see the contract)."""
    kept: dict[str, Statement] = {}
    for statement in statements:
        if not isinstance(statement, Statement):
            continue
        current = kept.get(statement.use)
        if current is None or _order(statement) < _order(current):
            kept[statement.use] = statement
    return {use: kept[use] for use in sorted(kept)}


def _order(statement: Statement) -> tuple[bool, int, str, str, bool, str, bool, str]:
    """A total order of the statements of one use: ``n`` first, then source rank, where, policy (set first), legacy."""
    return (statement.allowed, _RANK.get(statement.source, len(_RANK)), statement.source, statement.where,
            statement.policy is None, statement.policy or "", statement.legacy is not None, statement.legacy or "")


def _legacy(label: str, allowed: bool, source: str, where: str, legacy_labels: bool) -> list[Statement]:
    """The statements of a legacy ``label``: its refusal, read as a refusal of each of its current uses."""
    if not legacy_labels or allowed:
        return []
    return [Statement(use, False, source, where, legacy=label) for use in legacy_uses(label)]


def _header_values(values: Sequence[bytes] | bytes | str | None) -> Iterator[bytes]:
    """Up to ``MAX_HEADER_VALUES`` values as bytes, each cut to ``MAX_HEADER_BYTES`` (before its last, partial
    member); a lone value is taken as one value, anything that is not bytes or text is skipped."""
    if values is None:
        return
    if isinstance(values, (bytes, bytearray, str)):
        values = [values]  # type: ignore[list-item]
    try:
        items = list(islice(values, MAX_HEADER_VALUES))
    except TypeError:
        return
    for value in items:
        if isinstance(value, str):
            value = value.encode("utf-8", "replace")
        if not isinstance(value, (bytes, bytearray)):
            continue
        if len(value) > MAX_HEADER_BYTES:
            value = value[:MAX_HEADER_BYTES]
            value = value[:max(value.rfind(b","), 0)]
        yield bytes(value)


def _texts(values: Sequence[str] | None) -> Iterator[str]:
    """The str items of ``values`` (meta contents); anything else skipped."""
    if isinstance(values, str):
        yield values
        return
    try:
        for value in values or ():
            if isinstance(value, str):
                yield value
    except TypeError:
        return


def _reserved(values: Iterable[int | None]) -> int | None:
    """The reservation of one technique's values: 1 when any valid value is 1, else 0 when one is 0, else None."""
    found = None
    for value in values:
        if value == 1:
            return 1
        if value == 0:
            found = 0
    return found


def _first_policy(values: Iterable[str | bytes]) -> str | None:
    return next((policy for policy in map(policy_value, values) if policy is not None), None)


def _holds(directives: Collection[str], name: str) -> bool:
    """Whether the directive names ``directives`` hold ``name`` (a lone str is one name)."""
    if isinstance(directives, str):
        return directives == name
    try:
        return name in directives
    except TypeError:
        return False
