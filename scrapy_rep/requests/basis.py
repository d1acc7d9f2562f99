"""The basis of a checked request's decision, as plain data: ``meta["rep_basis"]`` (docs/evidence.md).

Every checked request gets one at its outcome: decided (decision.py: allowed or forbidden), passed through unchecked
(SPEC 1.4, ``dont_obey_robotstxt``) or dropped after waiting for its origin's robots.txt. It is what a pipeline copies
into an item (``item["rep_basis"] = response.meta["rep_basis"]``) to prove later what robots.txt said when the page
was fetched: the robots.txt copy's version (the SHA-256 of its body, the same in every process of a fleet), when and
from where it was fetched, what its outcome meant, the group and tokens obeyed, the deciding rule and its line (or
that none matched), the usage answer's sources and the tdmrep.json copy read. A forbidden request's ``IgnoreRequest``
carries it as ``basis`` too (``forbidden``). The decision log (REP_DECISION_LOG) writes the same dicts.

JSON-ready: strings, numbers, booleans, None, lists and dicts only; times in ISO 8601 UTC (``stores.iso``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.exceptions import IgnoreRequest

from ..robots.origin import ROBOTS_PATH
from ..robots.tdmrep import tdm_url
from ..stores import Outcome, iso
from .usage import SOURCES_KEY

if TYPE_CHECKING:
    from scrapy import Request

    from ..matcher import Verdict
    from ..robots.state import OriginState
    from ..stores import Entry

#: The request meta key (docs/meta-and-signals.md).
BASIS_KEY = "rep_basis"
ALLOWED, FORBIDDEN, PASSED_THROUGH, DROPPED = "allowed", "forbidden", "passed_through", "dropped"


def forbidden(message: str, basis: dict[str, Any]) -> IgnoreRequest:
    """The exception of a request robots.txt or an opt-out forbade: Scrapy's own ``IgnoreRequest`` (its class kept, so
    errbacks, ``failure.check`` and logs that name it work as with Scrapy's built-in), ``basis`` attached to it."""
    error = IgnoreRequest(message)
    error.basis = basis  # type: ignore[attr-defined]
    return error


def robots_txt(entry: Entry) -> dict[str, Any]:
    """What the entry a request was decided by says of its robots.txt: the copy's version (None: no copy), what its
    outcome means (``rules``, ``allow-all``, ``disallow-all``) and, while its fetches fail, since when."""
    version = entry.version
    failing = None
    if entry.first_failure_at is not None and entry.failures:
        failing = {"since": iso(entry.first_failure_at), "attempts": entry.failures, "last": entry.label}
    return {
        "url": entry.origin + ROBOTS_PATH,
        "version": None if version is None else version.id,
        "fetched_at": None if version is None else iso(version.fetched_at),
        "status": None if version is None else version.status,
        "final_url": None if version is None else version.url,
        "outcome": entry.outcome.value,
        "failing": failing,
    }


def tdmrep(state: OriginState | None) -> dict[str, Any] | None:
    """The origin's tdmrep.json copy read (REP_TDMREP), or None."""
    tdm = None if state is None else state.tdm
    if tdm is None:
        return None
    version = tdm.version
    return {
        "url": tdm_url(state.origin) if state is not None else None,
        "version": None if version is None else version.id,
        "fetched_at": None if version is None else iso(version.fetched_at),
        "status": None if version is None else version.status,
    }


def no_rules_reason(entry: Entry) -> str:
    """Why an entry without rules decides as it does (SPEC 2.2), in the words of the basis."""
    version = entry.version
    if entry.outcome is Outcome.ALLOW_ALL and version is not None:
        status = version.status if version.status is not None else "redirects that ended without a file"
        return f"robots.txt {status}: everything allowed"
    if entry.outcome is Outcome.ALLOW_ALL:
        return f"robots.txt unreachable since {iso(entry.first_failure_at or entry.fetched_at)} with no copy: " \
               "everything allowed"
    return f"robots.txt failing ({entry.label}) with no copy: everything held (a dry run sends it)"


def decided(request: Request, url: str, entry: Entry, tokens: tuple[str, ...], verdict: Verdict | None,
            decision: str, reason: str, refused_uses: list[str], enforced: bool, now: float,
            state: OriginState | None) -> dict[str, Any]:
    """The basis of a request decided by ``entry`` (``verdict``: the matcher's, None for an entry without rules), put
    in its meta and returned."""
    rule = None if verdict is None else verdict.rule
    group = None if verdict is None or verdict.group is None else str(verdict.group)
    basis = request.meta[BASIS_KEY] = {
        "url": url,
        "decision": decision,
        "checked_at": iso(now),
        "reason": reason,
        "refused_uses": refused_uses,
        "enforced": enforced,
        "tokens": list(tokens),
        "group": group,
        "rule": None if rule is None else {"line": rule.line, "directive": rule.directive, "value": rule.written},
        "robots_txt": robots_txt(entry),
        "usage": request.meta.get(SOURCES_KEY, {}),
        "tdmrep": tdmrep(state),
    }
    return basis


def unchecked(request: Request, decision: str, reason: str, now: float, entry: Entry | None = None, *,
              enforced: bool = True) -> dict[str, Any]:
    """The basis of a request passed through unchecked (``reason``: the pass-through stat's name), dropped after
    waiting or, in a dry run, sent undecided at REP_HOLD_TIMEOUT (``entry``: its origin's entry then, if any), put in
    its meta and returned."""
    basis = request.meta[BASIS_KEY] = {
        "url": request.url,
        "decision": decision,
        "checked_at": iso(now),
        "reason": reason,
        "refused_uses": [],
        "enforced": enforced,
        "tokens": [],
        "group": None,
        "rule": None,
        "robots_txt": None if entry is None else robots_txt(entry),
        "usage": {},
        "tdmrep": None,
    }
    return basis
