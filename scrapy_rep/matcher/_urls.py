"""The part of a URL that rules are compared with (SPEC 7.1)."""

from __future__ import annotations

import re

_PATH_START = re.compile(r"[/?;]")
_COMMON = re.compile(r"[A-Za-z]+://[^/?;#]*(/[^#]*)")
# The origin of the common full-URL shape, up to and including the slash that starts its path: whatever follows,
# the path of any URL that starts with such an origin starts at that slash (``_COMMON`` reads no further).
_ORIGIN = re.compile(r"[A-Za-z]+://[^/?;#]*/")


def path_params_query(url: str) -> str:
    """Path, ``;params`` and ``?query`` of ``url``, always starting with ``/`` (Google's GetPathParamsQuery).

    Scheme, authority and ``#fragment`` are dropped; a URL without a path gives ``/``. ``url`` may be a full
    URL, a scheme-relative ``//host/path`` or just a path. Nothing is decoded or normalised: the caller
    passes the URL already percent-encoded, as Google's matcher expects.

    The two common shapes take a short cut: a path not starting with ``//`` is itself up to its fragment (no regex
    over it: paths can be long), ``scheme://host/path`` with a letters-only scheme and a host free of ``/?;#`` takes
    one regex match; every other URL goes through ``google_path_params_query``.
    """
    if url[:1] == "/" and url[1:2] != "/":
        return url.partition("#")[0]
    common = _COMMON.match(url)
    if common is not None:
        return common.group(1)
    return google_path_params_query(url)


# The origin of the last full URL ``decision_path`` saw: a crawler decides runs of URLs of one site (every decision
# of a ``Robots`` is for one site), and each of them then costs a ``startswith`` and a slice, not a regex match.
# Any string that ``_ORIGIN`` matches whole will do until a real one is seen. Replaced as a whole: concurrent
# callers can only make each other miss it. Contract for the per-decision methods that inline this fast path (a
# call less per decision): a URL that starts with it and holds no ``#`` nor NUL has the path
# ``url[len(recent_origin) - 1 :]`` (the origin itself holds no ``#``); any other URL goes to ``decision_path``.
recent_origin = "http://-/"


def decision_path(url: str) -> str:
    """SPEC 7.1: the path the rules see, as ``path_params_query`` gives it. Google extension: it ends at a NUL
    (Google passes a C string)."""
    global recent_origin
    origin = recent_origin
    if url.startswith(origin):
        path = url[len(origin) - 1 :]
    elif (found := _ORIGIN.match(url)) is not None:
        recent_origin = origin = found.group()
        path = url[len(origin) - 1 :]
    else:
        path = path_params_query(url)
    if "#" in path:
        path = path[: path.index("#")]
    if "\0" in path:
        path = path[: path.index("\0")]
    return path


def google_path_params_query(url: str) -> str:
    """GetPathParamsQuery step by step, for any URL (``path_params_query`` short-cuts the common ones)."""
    search_start = 2 if url[:2] == "//" else 0
    early = _PATH_START.search(url, search_start)
    protocol_end = url.find("://", search_start)
    if protocol_end < 0 or (early is not None and early.start() < protocol_end):
        # Google extension: "://" after the first "/", "?" or ";" does not end a scheme.
        protocol_end = search_start
    else:
        protocol_end += 3
    start = _PATH_START.search(url, protocol_end)
    if start is None:
        return "/"
    path_start = start.start()
    hash_pos = url.find("#", search_start)
    if 0 <= hash_pos < path_start:
        return "/"
    path = url[path_start:] if hash_pos < 0 else url[path_start:hash_pos]
    return path if path[0] == "/" else "/" + path
