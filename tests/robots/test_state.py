"""The per-origin state machine (SPEC 2.1-2.5): legal paths and illegal transitions."""

from __future__ import annotations

import itertools

import pytest

from scrapy_rep.robots.state import EVICTION_TRIES, TRANSITIONS, Event, IllegalTransition, OriginMap, OriginState, State


@pytest.mark.parametrize(
    ("events", "final"),
    [
        ([Event.FETCH_STARTED, Event.FETCH_SUCCEEDED], State.READY),  # SPEC 2.2 2xx/4xx
        ([Event.FETCH_STARTED, Event.FETCH_FAILED], State.HOLDING),  # SPEC 2.2 5xx: hold
        ([Event.FETCH_STARTED, Event.FETCH_FAILED, Event.RETRY_DUE, Event.FETCH_SUCCEEDED], State.READY),  # 2.5
        ([Event.FETCH_STARTED, Event.FETCH_SUCCEEDED, Event.EXPIRED, Event.FETCH_SUCCEEDED], State.READY),  # 3.1
        ([Event.FETCH_STARTED, Event.FETCH_SUCCEEDED, Event.EXPIRED, Event.FETCH_FAILED], State.HOLDING),
        ([Event.FETCH_STARTED, Event.FETCH_SUCCEEDED, Event.EVICTED], State.UNKNOWN),
    ],
)
def test_paths(events: list[Event], final: State) -> None:
    machine = OriginState("https://example.com")
    for event in events:
        machine.handle(event)
    assert machine.state is final


@pytest.mark.parametrize(("state", "event"), [
    pair for pair in itertools.product(State, Event) if pair not in TRANSITIONS
])
def test_every_other_transition_is_illegal(state: State, event: Event) -> None:
    machine = OriginState("https://example.com", state=state)
    with pytest.raises(IllegalTransition, match=event.value):
        machine.handle(event)
    assert machine.state is state


def test_one_fetch_at_a_time_spec_2_1() -> None:
    """A second FETCH_STARTED while fetching is a bug, not a second download."""
    machine = OriginState("https://example.com")
    machine.handle(Event.FETCH_STARTED)
    with pytest.raises(IllegalTransition):
        machine.handle(Event.FETCH_STARTED)


def ready(key: str) -> OriginState:
    state = OriginState(key)
    state.handle(Event.FETCH_STARTED)
    state.handle(Event.FETCH_SUCCEEDED)
    return state


def test_the_origin_map_forgets_the_least_recently_used_idle_origin() -> None:
    origins = OriginMap(bound=2)
    for key in ("a", "b"):
        origins[key] = ready(key)
    origins.used("a")  # a is hot: b is now the least recently used
    origins["c"] = ready("c")
    assert origins.evict() == ["b"]
    assert list(origins) == ["a", "c"]


def test_origins_in_use_are_kept_and_looked_at_a_bounded_number_of_times() -> None:
    origins = OriginMap(bound=1)
    for n in range(EVICTION_TRIES + 2):
        busy = OriginState(f"busy{n}")
        busy.handle(Event.FETCH_STARTED)  # fetching: in use
        origins[busy.origin] = busy
    origins["idle"] = ready("idle")
    assert origins.evict() == []  # only EVICTION_TRIES busy origins looked at: O(1), the bound passed meanwhile
    assert len(origins) == EVICTION_TRIES + 3
    assert list(origins)[-EVICTION_TRIES:] == [f"busy{n}" for n in range(EVICTION_TRIES)]  # moved to the back
    assert origins.evict() == ["idle"]  # the next call goes on from the front: two busy ones, then the idle one
