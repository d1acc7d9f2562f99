"""The per-origin robots.txt state machine: the one place that says which state follows which (SPEC 2.1-2.4).

States (what the middleware does with a request of the origin):

    UNKNOWN     no entry in this process yet              -> start a fetch, park the request
    FETCHING    first fetch (or store read) in flight      -> park the request
    READY       a usable entry (rules / allow-all, fresh)  -> decide at once
    REFRESHING  entry expired, re-fetch in flight          -> park the request (the new copy decides it)
    HOLDING     temporary full disallow, retry scheduled   -> park the request (SPEC 2.3)

Events and transitions (anything not in ``TRANSITIONS`` raises ``IllegalTransition``):

    UNKNOWN    --FETCH_STARTED-->   FETCHING
    FETCHING   --FETCH_SUCCEEDED--> READY        (usable entry, including a stale copy kept on error, SPEC 2.4)
    FETCHING   --FETCH_FAILED-->    HOLDING      (5xx/429/network error and no usable copy, SPEC 2.2)
    READY      --EXPIRED-->         REFRESHING   (TTL passed, SPEC 3.1)
    REFRESHING --FETCH_SUCCEEDED--> READY
    REFRESHING --FETCH_FAILED-->    HOLDING
    HOLDING    --RETRY_DUE-->       FETCHING     (back-off elapsed, SPEC 2.5)
    READY      --EVICTED-->         UNKNOWN      (in-process map bounded; the store may still hold the entry)

Parked requests are the ``waiters`` of an origin; they are released (or dropped) by the middleware on every
transition into READY or HOLDING.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ..matcher import AgentRules
from ..stores import Entry


class State(str, Enum):
    UNKNOWN = "unknown"
    FETCHING = "fetching"
    READY = "ready"
    REFRESHING = "refreshing"
    HOLDING = "holding"


class Event(str, Enum):
    FETCH_STARTED = "fetch_started"
    FETCH_SUCCEEDED = "fetch_succeeded"
    FETCH_FAILED = "fetch_failed"
    EXPIRED = "expired"
    RETRY_DUE = "retry_due"
    EVICTED = "evicted"


TRANSITIONS: dict[tuple[State, Event], State] = {
    (State.UNKNOWN, Event.FETCH_STARTED): State.FETCHING,
    (State.FETCHING, Event.FETCH_SUCCEEDED): State.READY,
    (State.FETCHING, Event.FETCH_FAILED): State.HOLDING,
    (State.READY, Event.EXPIRED): State.REFRESHING,
    (State.REFRESHING, Event.FETCH_SUCCEEDED): State.READY,
    (State.REFRESHING, Event.FETCH_FAILED): State.HOLDING,
    (State.HOLDING, Event.RETRY_DUE): State.FETCHING,
    (State.READY, Event.EVICTED): State.UNKNOWN,
}

#: The fetch a waiting request starts, by its origin's state: the first one, or the refresh of an expired entry (a
#: READY origin whose request waits has expired). In the other states a fetch is in flight or a retry scheduled.
FETCH_ON_ARRIVAL = {State.UNKNOWN: Event.FETCH_STARTED, State.READY: Event.EXPIRED}


class IllegalTransition(RuntimeError):
    """An event that the current state does not accept: a bug in the caller, never a network condition."""


@dataclass(eq=False, slots=True)
class OriginState:
    """One origin's machine plus what the middleware keeps beside it: the entry in effect, its robots.txt's decision
    form for the crawl's tokens (``rules``, a matcher ``AgentRules``; None when the entry has no rules), the parked
    requests' waiters and the scheduled retry call; with REP_TDMREP, its tdmrep.json entry and parsed file
    (tdmrep.py). ``fresh_until``: when the first of the entries in effect expires (the middleware's fast path)."""

    origin: str
    state: State = State.UNKNOWN
    entry: Entry | None = None
    rules: AgentRules | None = None
    waiters: dict[Any, Any] = field(default_factory=dict)  # waiter Deferred -> its request; O(1) removal
    retry_call: Any = None
    robots_response: Any = None  # spider_robots.Kept: status and headers for spiders' own requests (memory)
    tdm: Entry | None = None
    tdm_rules: Any = None  # matcher.TdmRep of ``tdm``'s body, None when it has none
    fresh_until: float = 0.0

    def handle(self, event: Event) -> State:
        """Apply ``event``; returns the new state or raises ``IllegalTransition``."""
        try:
            self.state = TRANSITIONS[(self.state, event)]
        except KeyError:
            raise IllegalTransition(f"{self.origin}: {event.value} not allowed in state {self.state.value}") from None
        return self.state


#: Origins in use looked at (and moved to the back) per eviction at most: the bound may be passed meanwhile.
EVICTION_TRIES = 8


class OriginMap(OrderedDict[str, OriginState]):
    """The origins held in process, least recently used first, at most ``bound`` of them (REP_MEMORY_MAX_ORIGINS).

    ``used`` marks an origin's last use; ``evict`` forgets least recently used origins while more than ``bound`` are
    held, each only if idle and READY (its entry stays in the store). Both are O(1): an origin in use found first
    (fetching, holding requests) goes to the back instead, at most EVICTION_TRIES times per call.
    """

    def __init__(self, bound: int) -> None:
        super().__init__()
        self.bound = bound

    def used(self, key: str) -> None:
        self.move_to_end(key)

    def evict(self) -> list[str]:
        """The origins forgotten."""
        forgotten: list[str] = []
        for _ in range(EVICTION_TRIES):
            if len(self) <= self.bound:
                break
            key, state = self.popitem(last=False)
            if state.state is not State.READY or state.waiters:
                self[key] = state  # in use: kept, now the most recently used
                continue
            state.handle(Event.EVICTED)
            forgotten.append(key)
        return forgotten
