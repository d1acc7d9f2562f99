"""The part of a URL that rules are compared with (SPEC 7.1)."""

from __future__ import annotations

import re

_PATH_START = re.compile(r"[/?;]")
_COMMON = re.compile(r"[A-Za-z]+://[^/?;#]*(/[^#]*)|(/(?!/)[^#]*)")


def path_params_query(url: str) -> str:
    """Path, ``;params`` and ``?query`` of ``url``, always starting with ``/`` (Google's GetPathParamsQuery).

    Scheme, authority and ``#fragment`` are dropped; a URL without a path gives ``/``. ``url`` may be a full
    URL, a scheme-relative ``//host/path`` or just a path. Nothing is decoded or normalised: the caller
    passes the URL already percent-encoded, as Google's matcher expects.

    The two common shapes (a path not starting with ``//``; ``scheme://host/path`` with a letters-only
    scheme and a host free of ``/?;#``) take one regex match, as they are on every decision's path; every
    other URL goes through ``google_path_params_query``.
    """
    common = _COMMON.match(url)
    if common is not None:
        return common.group(common.lastindex or 0)
    return google_path_params_query(url)


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
