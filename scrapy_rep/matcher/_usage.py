"""Usage preferences in robots.txt: IETF AIPREF ``Content-Usage`` rules and Cloudflare ``Content-Signal`` lines.

Sources: draft-ietf-aipref-attach-05 (section "Robots Exclusion Protocol Content-Usage Rule"),
draft-ietf-aipref-vocab-08 (its labels train-ai and search, "Processing Algorithm", "Combining Preferences" §7.1) and
the labels of its earlier drafts (-01 to -04, ``LEGACY_LABELS``), draft-romm-aipref-contentsignals-00 (the three
Content-Signal labels; robots.txt syntax as on contentsignals.org).

Google's parser ignores both keys: they never change an allow/disallow decision or the grouping of lines.

* ``Content-Usage: [path] pref``: ``pref`` is a Structured Fields Dictionary (``_sfdict``); a label of the vocabulary
  (or a legacy label) with the Token ``y``/``n`` allows/disallows that use; other values and unknown labels state
  nothing. The path uses Allow/Disallow's pattern syntax and escaping (SPEC 7.2, 7.3). For a URL, the matching rule
  with the longest path (in bytes, escaped) applies, all of its preferences; matching rules of that same length
  combine, ``n`` over ``y`` (the draft says so for identical paths; equal-length different patterns are combined the
  same way).
* ``Content-Signal: key=yes|no, ...``: no path, applies to every URL the group allows. Keys and values are compared
  case-insensitively; ``ai-train`` is reported as ``train-ai``, ``search`` as ``search``, ``ai-input`` as itself;
  other keys and values are ignored. Within a line a repeated key: the last wins. Several lines combine, ``no`` over
  ``yes``.
* Both sources together, for the same use: the most restrictive wins (vocab "Combining Preferences"); so does the
  earliest line among preferences with the same answer (the one reported).
* Preferences apply only to URLs the agent may crawl (attach-05: "no preferences are implied for resources that are
  disallowed"); the groups are those of SPEC 6 (``Robots._select``).

Departures and choices where the drafts are silent or disagree:

# Draft extension: a Content-Usage value that does not start with "/" has no path and applies to the whole site,
# with priority 0 (shorter than any path, so ``/ train-ai=y`` beats it); attach-05 requires a path.
# Draft extension: a Content-Usage or Content-Signal line before the first user-agent line is ignored, as rules are
# (SPEC 6.1; attach-05 adds Content-Usage "to the set of potential rules that can be included in a Group").
# Google extension: a usage line between user-agent lines does not end them (Google's grouping is kept, so decisions
# are unchanged); attach-05 makes it a rule, which would.
# Draft extension: a Content-Usage line whose preference is not a Dictionary (or is empty) is dropped, rather than
# kept as a rule stating nothing that would hide a shorter path's preferences.
# Draft extension: the labels earlier vocab drafts had and vocab-08 dropped (``LEGACY_LABELS``) are kept as
# preferences under their own name (reports can name them; ``usage_problems`` says they are legacy), not as unknown
# labels stating nothing. ``legacy_uses`` says which current uses a legacy ``n`` also refuses (``IMPLIES_TRAINING``);
# the reading itself (only refusals carry over) is ``_opt_outs.from_preference``'s. ``ai-input`` is not mapped to
# ``ai-use`` nor ``inference``: the drafts do not declare them equivalent.
# Decision: a legacy ``n`` refuses train-ai only for the labels whose use includes training (``IMPLIES_TRAINING``,
# whose docstring says why each); ``tdm`` refuses TDMRep's ``tdm`` use as well (the same category: EU 2019/790).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

from ._escape import escape_bytes
from ._pattern import Shape, shape_of
from ._rules import AgentGroup, cite
from ._sfdict import parse_dictionary

CONTENT_USAGE = "Content-Usage"
CONTENT_SIGNAL = "Content-Signal"
VOCABULARY = frozenset({"train-ai", "search"})
"""The usage labels of draft-ietf-aipref-vocab-08 (case-sensitive, as Structured Fields keys)."""
LEGACY_LABELS: dict[str, str] = {
    "tdm": "draft-ietf-aipref-vocab-01, Text and Data Mining",
    "ai": "draft-ietf-aipref-vocab-01, AI Training",
    "genai": "draft-ietf-aipref-vocab-01, Generative AI Training",
    "inference": "draft-ietf-aipref-vocab-01, AI Inference",
    "all": "draft-ietf-aipref-vocab-02, Automated Processing",
    "ai-use": "draft-ietf-aipref-vocab-02, AI Use",
    "train-genai": "draft-ietf-aipref-vocab-02 to -03, Generative AI Training",
    "bots": "draft-ietf-aipref-vocab-03 to -04, Automated Processing",
    "ai-output": "draft-ietf-aipref-vocab-04, AI Output",
}
"""Labels of earlier vocab drafts that vocab-08 no longer has -> where they were (checked against the drafts' tags in
github.com/ietf-wg-aipref/drafts), with the category's title. Still found in robots.txt files and headers."""
IMPLIES_TRAINING = frozenset({"all", "bots", "tdm", "ai", "genai", "train-genai"})
"""The legacy labels whose ``n`` also refuses vocab-08's train-ai (training a model that generates synthetic content).

Each names a use that includes that training: ``all``/``bots`` (Automated Processing) and ``tdm`` "encompass all the
subsequent categories", training among them; ``ai`` (AI Training) is a superset of it; ``genai``/``train-genai``
(Generative AI Training) is what vocab-08's train-ai defines. Not ``ai-use``, ``inference`` (content as input to a
trained model) nor ``ai-output`` (content used to generate outputs; the training it mentions is only what producing
those outputs needs): they are about using AI, not about training one, and refusing them says nothing of training."""
_LEGACY_TDM = ("tdm", "train-ai")  # vocab-01's tdm is TDMRep's use too (text and data mining, EU 2019/790 art. 2(2))
_LEGACY_TRAINING = ("train-ai",)
SIGNALS = frozenset({"ai-train", "search", "ai-input"})
"""The Content-Signal keys (draft-romm-aipref-contentsignals-00, Table 1); others are ignored."""
_AIPREF_OF_SIGNAL = {"ai-train": "train-ai"}  # "search" is the same label in both; "ai-input" has no equivalent

_BLANK = re.compile(rb"[ \t]+")
_ANSWERS = {b"yes": True, b"no": False}


def legacy_uses(label: str) -> tuple[str, ...]:
    """The uses a legacy ``label``'s ``n`` also refuses: ``tdm`` -> ("tdm", "train-ai"), the other labels of
    ``IMPLIES_TRAINING`` -> ("train-ai",), any other label -> ()."""
    if label == "tdm":
        return _LEGACY_TDM
    return _LEGACY_TRAINING if label in IMPLIES_TRAINING else ()


def aipref_use(name: str) -> str:
    """The use ``name`` (lower-cased) stands for in the AIPREF vocabulary: a Content-Signal key where the vocabularies
    correspond (``ai-train`` -> ``train-ai``), else ``name`` itself (``search``, ``ai-input``, ``train-ai``)."""
    lowered = name.lower()
    return _AIPREF_OF_SIGNAL.get(lowered, lowered)


@dataclass(frozen=True, slots=True)
class Preference:
    """A stated preference for one use, and the line that stated it.

    ``use``: the AIPREF label (``train-ai``, ``search``...) or the Content-Signal key as written, lower-cased
    (``ai-input``); ``allowed``: y/yes; ``source``: ``Content-Usage`` or ``Content-Signal``; ``written``: that line's
    value as written; ``group``: the group of the crawler it was looked up for (set by ``UsageIndex``; not compared),
    so that messages cite the line as rules are cited (``cite``): ``where``.
    """

    use: str
    allowed: bool
    line: int
    source: str
    written: str
    group: AgentGroup | None = field(default=None, compare=False)

    @property
    def where(self) -> str:
        """``line 5 (Content-Usage: /ai-ok/ train-ai=y) of the 'bot' group (line 1)``."""
        return cite(self.line, self.source, self.written, self.group)

    def __str__(self) -> str:
        """``train-ai=y by line 5 (Content-Usage: /ai-ok/ train-ai=y) of the 'bot' group (line 1)``."""
        return f"{self.use}={'y' if self.allowed else 'n'} by {self.where}"


@dataclass(frozen=True, slots=True)
class UsageLine:
    """A usable Content-Usage or Content-Signal line of a group: its escaped path pattern ("" for none) and the
    preferences it states (possibly none: a rule that states nothing still applies to its paths)."""

    source: str
    pattern: str
    preferences: tuple[Preference, ...]


def content_usage(line: int, value: bytes) -> UsageLine | None:
    """The rule of a ``Content-Usage`` line's ``value`` (stripped, comment removed); None when it is unusable."""
    path, pref = _split_path(value)
    members = parse_dictionary(pref) if pref else None
    if members is None:
        return None
    written = value.decode("utf-8", "replace")
    preferences = tuple(Preference(key, token == "y", line, CONTENT_USAGE, written)
                        for key, token in members.items() if _known(key) and token in ("y", "n"))
    return UsageLine(CONTENT_USAGE, "" if path is None else escape_bytes(path), preferences)


def content_signal(line: int, value: bytes) -> UsageLine | None:
    """The preferences of a ``Content-Signal`` line's ``value``; None when it states none."""
    answers: dict[str, bool] = {}
    for key, answer in _signal_items(value):
        if key in SIGNALS and answer is not None:
            use = aipref_use(key)
            answers.pop(use, None)  # a repeated key: the last wins
            answers[use] = answer
    if not answers:
        return None
    written = value.decode("utf-8", "replace")
    return UsageLine(CONTENT_SIGNAL, "", tuple(Preference(use, allowed, line, CONTENT_SIGNAL, written)
                                               for use, allowed in answers.items()))


def _known(label: str) -> bool:
    """Whether ``label`` states a preference: a label of vocab-08 or of an earlier draft."""
    return label in VOCABULARY or label in LEGACY_LABELS


def _split_path(value: bytes) -> tuple[bytes | None, bytes]:
    """(path or None, preference) of a Content-Usage value: a path starts with "/" and ends at SP or HTAB."""
    if value[:1] != b"/":
        return None, value
    parts = _BLANK.split(value, maxsplit=1)
    return parts[0], parts[1] if len(parts) == 2 else b""


def _signal_items(value: bytes) -> Iterator[tuple[str, bool | None]]:
    """(lower-cased key, answer or None when not yes/no) for each ``key=value`` item; items without ``=`` skipped."""
    for item in value.split(b","):
        key, equals, answer = item.partition(b"=")
        if equals:
            yield key.strip().lower().decode("utf-8", "replace"), _ANSWERS.get(answer.strip().lower())


def merge(into: dict[str, Preference], preference: Preference) -> None:
    """Add ``preference`` to ``into`` (use -> Preference): ``n`` beats ``y``; on equal answers the earliest line."""
    current = into.get(preference.use)
    if current is None or (current.allowed, current.line) > (preference.allowed, preference.line):
        into[preference.use] = preference


class UsageIndex:
    """The usage lines of one group selection, ready to answer paths.

    Contract: ``lookup(path)`` returns the effective preferences (use -> Preference) of an allowed ``path``: those of
    the longest matching Content-Usage rules, combined with every Content-Signal line; cost O(number of Content-Usage
    rules), each match O(len(pattern) * len(path)) at worst (``Shape.matches``). With a ``group`` (the crawler's, for
    which the lines were selected), the preferences it returns carry it: copied once here, never per lookup.
    """

    __slots__ = ("_rules", "_signals")

    def __init__(self, lines: Iterable[UsageLine], group: AgentGroup | None = None) -> None:
        rules: list[tuple[int, Shape, tuple[Preference, ...]]] = []
        self._signals: dict[str, Preference] = {}
        for line in lines:
            preferences = line.preferences
            if group is not None:
                preferences = tuple(replace(preference, group=group) for preference in preferences)
            if line.source == CONTENT_USAGE:
                rules.append((len(line.pattern), shape_of(line.pattern), preferences))
            else:
                for preference in preferences:
                    merge(self._signals, preference)
        rules.sort(key=lambda rule: rule[0], reverse=True)
        self._rules = rules

    def lookup(self, path: str) -> dict[str, Preference]:
        found: dict[str, Preference] = {}
        longest = -1
        for priority, shape, preferences in self._rules:
            if priority < longest:
                break  # only the matching rules of the greatest length apply
            if shape.matches(path):
                longest = priority
                for preference in preferences:
                    merge(found, preference)
        for preference in self._signals.values():
            merge(found, preference)
        return found


def usage_problems(key: str, value: str) -> list[tuple[str, str]]:
    """(kind, message) for what makes a Content-Usage or Content-Signal ``value`` (partly) ignored; for lint."""
    if key.lower() == "content-signal":
        return list(_signal_problems(value.encode("utf-8")))
    path, pref = _split_path(value.encode("utf-8"))
    members = parse_dictionary(pref) if pref else None
    if members is None:
        why = "no preference after the path" if path is not None and not pref else (
            "the preference is not a Structured Fields dictionary (RFC 9651), e.g. 'train-ai=n, search=y'")
        return [("usage-malformed", f"Content-Usage: {value}: {why}: the line is ignored")]
    problems = []
    for label, token in members.items():
        if label in LEGACY_LABELS:
            problems.append(("usage-legacy-label", legacy_message("Content-Usage", label)))
        if not _known(label):
            problems.append(("usage-unknown-key", f"Content-Usage: unknown usage label {label!r}: ignored "
                                                  f"(known: {', '.join(sorted(VOCABULARY))})"))
        elif token not in ("y", "n"):
            problems.append(("usage-value", f"Content-Usage: {label} must be y or n: its preference is unknown"))
    return problems


def legacy_message(source: str, label: str) -> str:
    """What a legacy ``label`` in a ``source`` (``Content-Usage``) is said to be, for lint and the crawl log."""
    uses = legacy_uses(label)
    how = f"read as {' and '.join(f'{use}=n' for use in uses)} when it says n" if uses else "not read as any use"
    history = LEGACY_LABELS.get(label, "an earlier draft")
    return (f"{source}: {label!r} was dropped from the AIPREF vocabulary ({history}); vocab-08 knows train-ai and "
            f"search: reported, and {how} (REP_USAGE_LEGACY_LABELS)")


def _signal_problems(value: bytes) -> Iterator[tuple[str, str]]:
    for item in (item.strip() for item in value.split(b",")):
        key, equals, _ = item.partition(b"=")
        text = item.decode("utf-8", "replace")
        if not equals or not key.strip():
            yield "usage-malformed", f"Content-Signal: {text!r} is not 'key=yes|no': ignored"
    for name, answer in _signal_items(value):
        if name not in SIGNALS:
            yield "usage-unknown-key", (f"Content-Signal: unknown signal {name!r}: ignored "
                                        f"(known: {', '.join(sorted(SIGNALS))})")
        elif answer is None:
            yield "usage-value", f"Content-Signal: {name} must be yes or no: ignored"
