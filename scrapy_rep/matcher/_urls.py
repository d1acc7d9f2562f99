"""The part of a URL that rules are compared with (SPEC 7.1)."""

from __future__ import annotations

import re

_PATH_START = re.compile(r"[/?;]")


def path_params_query(url: str) -> str:
    """Path, ``;params`` and ``?query`` of ``url``, always starting with ``/`` (Google's GetPathParamsQuery).

    Scheme, authority and ``#fragment`` are dropped; a URL without a path gives ``/``. ``url`` may be a full
    URL, a scheme-relative ``//host/path`` or just a path. Nothing is decoded or normalised: the caller
    passes the URL already percent-encoded, as Google's matcher expects.

    The two common shapes (a path; ``scheme://host/path`` with a letters-only scheme and a plain host) take
    a short cut on the decision path; every other URL goes through ``google_path_params_query``.
    """
    if url[:1] == "/" and url[1:2] != "/":
        hash_pos = url.find("#")
        return url if hash_pos < 0 else url[:hash_pos]
    scheme_end = url.find("://")
    if scheme_end > 0 and url[:scheme_end].isalpha():
        slash = url.find("/", scheme_end + 3)
        host = url[scheme_end + 3 : slash]
        if slash > 0 and "?" not in host and ";" not in host and "#" not in host:
            hash_pos = url.find("#", slash)
            return url[slash:] if hash_pos < 0 else url[slash:hash_pos]
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
