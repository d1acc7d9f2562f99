"""The settings that name code or objects: REP_CLOCK (the injected clock) and REP_ROBOTS_REQUEST (a hook)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, cast

from scrapy import Request
from scrapy.utils.misc import load_object

from .errors import ConfigError

#: REP_ROBOTS_REQUEST's type: gets each robots.txt request (each hop), returns the Request to send.
RobotsRequestHook = Callable[[Request], Request]


class Clock(Protocol):
    """What the middleware needs of time: Twisted's ``IReactorTime`` subset (a reactor or ``task.Clock``)."""

    def seconds(self) -> float: ...

    def callLater(self, delay: float, callable: Callable[..., Any], *args: Any, **kw: Any) -> Any: ...


def clock_setting(value: Any) -> Clock | None:
    """An IReactorTime provider, or a zero-argument callable returning one. Scrapy deep-copies settings, which
    would copy a clock object given directly; a callable (``lambda: clock``) survives the copy as itself."""
    if value is None:
        return None
    clock = value if _is_clock(value) else value() if callable(value) else None
    if _is_clock(clock):
        return cast(Clock, clock)
    raise ConfigError("REP_CLOCK", value, "expected an IReactorTime provider such as twisted.internet.task.Clock "
                      "(or a callable returning one)")


def robots_request_setting(value: Any) -> RobotsRequestHook | None:
    """REP_ROBOTS_REQUEST: a callable, or the import path of one, loaded now so a typo fails at start-up."""
    if value is None or value == "":
        return None
    hook = value
    if isinstance(value, str):
        try:
            hook = load_object(value)
        except (ImportError, AttributeError, NameError, ValueError) as exc:
            raise ConfigError("REP_ROBOTS_REQUEST", value, f"cannot be loaded ({type(exc).__name__}: {exc}); expected "
                              "the import path of a callable, 'package.module.function'") from None
    if not callable(hook):
        raise ConfigError("REP_ROBOTS_REQUEST", value, f"not callable ({type(hook).__name__}); expected a callable "
                          "taking the robots.txt Request and returning the Request to send, or its import path")
    return cast(RobotsRequestHook, hook)


def _is_clock(value: Any) -> bool:
    return callable(getattr(value, "seconds", None)) and callable(getattr(value, "callLater", None))
