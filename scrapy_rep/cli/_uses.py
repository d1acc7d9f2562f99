"""The content uses a command decides for (``REP_CONTENT_USES``, config/uses.py): each ``--use`` value, else those the
Scrapy project around the working directory declares, exactly as the crawl validates them; and how robots.txt labels
of earlier AIPREF drafts are read (the project's ``REP_USAGE_LEGACY_LABELS``, default True).

Contract: ``declared_uses(values)`` never reads the network; a bad ``--use`` value, or a bad setting of the project
when it is read, is a ``UsageError`` naming it. ``Uses.refused(answer)`` is what the crawl refuses of an answer
(``requests.usage.refusals``): the statements that say ``n`` to a declared use, in the order the uses were declared.

# Decision: ``--use`` replaces the project's uses (it does not add to them), as ``-u`` replaces the project's token:
# the command then decides as another crawl would. The project's REP_USAGE_LEGACY_LABELS still applies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from scrapy_rep.config.uses import USES, UsesError, content_uses
from scrapy_rep.matcher import Statement
from scrapy_rep.requests.usage import refusals

from ._common import UsageError

if TYPE_CHECKING:
    from scrapy.settings import Settings


@dataclass(frozen=True, slots=True)
class Uses:
    """The declared uses (none: nothing is refused), whether legacy labels' ``n`` carry over, and a note saying where
    they came from when it was the project."""

    uses: tuple[str, ...] = ()
    legacy_labels: bool = True
    note: str = ""

    def refused(self, answer: dict[str, Statement]) -> tuple[Statement, ...]:
        """The statements of ``answer`` (use -> deciding statement) that refuse a declared use."""
        return tuple(refusals(self.uses, answer))


def declared_uses(values: list[str]) -> Uses:
    """The ``--use`` values (validated as REP_CONTENT_USES is), else the project's REP_CONTENT_USES, else none."""
    settings = _project_settings()
    legacy = True
    if settings is not None:
        try:
            legacy = settings.getbool("REP_USAGE_LEGACY_LABELS", True)
        except ValueError:
            raise UsageError("the Scrapy project here has REP_USAGE_LEGACY_LABELS="
                             f"{settings.get('REP_USAGE_LEGACY_LABELS')!r}: expected True or False") from None
    if values:
        try:
            return Uses(content_uses(values), legacy)
        except UsesError as exc:
            raise UsageError(f"--use: {exc.why}") from None
    if settings is None:
        return Uses((), legacy)
    try:
        uses = content_uses(settings.get("REP_CONTENT_USES"))
    except UsesError as exc:
        raise UsageError(f"the Scrapy project here has REP_CONTENT_USES={exc.value!r}: {exc.why}; pass --use USE") \
            from None
    note = ""
    if uses:
        note = (f"the Scrapy project here declares REP_CONTENT_USES {list(uses)}: a URL whose opt-outs refuse one is "
                "REFUSED, as its crawl refuses it; --use USE decides for other uses")
    return Uses(uses, legacy, note)


def use_help() -> str:
    """The ``--use`` help, shared by the commands that take it."""
    return (f"a use the crawl makes of what it downloads ({', '.join(USES)}; repeatable), as REP_CONTENT_USES: a URL "
            "whose opt-outs refuse one is REFUSED (exit 1, as a disallowed one); default: the REP_CONTENT_USES of the "
            "Scrapy project here, outside a project none")


def _project_settings() -> Settings | None:
    """The settings of the Scrapy project around the working directory (a ``scrapy.cfg`` here or above), or None."""
    from scrapy.utils.conf import closest_scrapy_cfg

    if not closest_scrapy_cfg():
        return None
    from scrapy.utils.project import get_project_settings

    return get_project_settings()
