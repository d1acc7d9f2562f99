"""The settings of content uses and their opt-outs: ``REP_CONTENT_USES``, ``REP_TDMREP``, ``REP_USAGE_LEGACY_LABELS``
and ``REP_USAGE_DISCOVERY`` (docs/settings.md; docs/opt-outs.md says what each source means).

A use is named as the sources state it: ``train-ai`` and ``search`` (draft-ietf-aipref-vocab-08), ``tdm`` (text and
data mining, what a TDMRep reservation refuses; AI training is text and data mining, so declaring ``train-ai`` makes
the crawl read TDMRep too) and ``ai-input`` (Cloudflare's Content-Signal). Cloudflare's ``ai-train`` is taken as
``train-ai``. A label earlier AIPREF drafts had and vocab-08 dropped is refused with what replaced it: a crawl naming
one would otherwise obey nothing for it, silently.
"""

from __future__ import annotations

import re
from typing import Any

from ..matcher import LEGACY_LABELS, TDM, TRAIN_AI, aipref_use

#: The uses ``REP_CONTENT_USES`` may name (after ``aipref_use``: ``ai-train`` is ``train-ai``).
USES = (TRAIN_AI, "search", TDM, "ai-input")
#: The uses that are text and data mining: declaring one makes the crawl fetch each origin's tdmrep.json.
TDM_USES = frozenset({TDM, TRAIN_AI})
_USE_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")
#: What replaced each dropped AIPREF label, for the start-up error.
_INSTEAD = {"train-genai": TRAIN_AI, "genai": TRAIN_AI, "ai": TRAIN_AI}


class UsesError(ValueError):
    """A bad value of one of this module's settings: (setting, value, why), raised as a ``ConfigError``."""

    def __init__(self, setting: str, value: Any, why: str) -> None:
        super().__init__(why)
        self.setting, self.value, self.why = setting, value, why


def content_uses(value: Any) -> tuple[str, ...]:
    """REP_CONTENT_USES: a list of use names (or one comma-separated string), each one of ``USES``."""
    if value is None or value == "":
        return ()
    names = value.split(",") if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not all(isinstance(name, str) for name in names):
        raise UsesError("REP_CONTENT_USES", value, "expected a list of use names, e.g. ['train-ai']")
    uses: list[str] = []
    for name in (name.strip().lower() for name in names):
        if not _USE_NAME.fullmatch(name):
            raise UsesError("REP_CONTENT_USES", value, f"{name!r} is not a use name (letters, digits and '-', "
                            "e.g. 'train-ai', 'search')")
        use = aipref_use(name)
        if use in LEGACY_LABELS and use not in USES:
            instead = _INSTEAD.get(use)
            hint = f"; name {instead!r} instead" if instead else ""
            raise UsesError("REP_CONTENT_USES", value, f"{name!r} was dropped from the AIPREF vocabulary "
                            f"({LEGACY_LABELS[use]}): no site can state it any more, so the crawl would obey nothing "
                            f"for it{hint} (the uses: {', '.join(USES)})")
        if use not in USES:
            raise UsesError("REP_CONTENT_USES", value, f"{name!r} is not a use any opt-out states (the uses: "
                            f"{', '.join(USES)})")
        uses.append(use)
    return tuple(dict.fromkeys(uses))


def fetches_tdmrep(value: Any, uses: tuple[str, ...]) -> bool:
    """REP_TDMREP: None (the default) fetches each origin's tdmrep.json when ``uses`` names a TDM use; True always
    (reported without enforcing); False never (start-up says so when a TDM use is declared: reporting.startup)."""
    if value is None:
        return bool(TDM_USES.intersection(uses))
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, str)) and str(value).strip().lower() in ("0", "1", "true", "false"):
        return str(value).strip().lower() in ("1", "true")
    raise UsesError("REP_TDMREP", value, "expected True, False or None (None: fetched when REP_CONTENT_USES names "
                    f"{' or '.join(sorted(TDM_USES))})")
