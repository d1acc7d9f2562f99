"""What differs between the Scrapy versions the tests run on (2.13 to the latest), for assertions that name them.

Feature-detected, as the package does (``scrapy_rep._scrapy``): never by version strings.
"""

from __future__ import annotations

import scrapy.exceptions

#: Scrapy 2.15 wraps download failures in exceptions of its own; before, the failure is Twisted's exception, whose
#: class name is what ``rep/robots/exception/<name>`` shows.
_TWISTED_NAMES: dict[str, frozenset[str]] = {
    "CannotResolveHostError": frozenset({"DNSLookupError"}),
    "DownloadConnectionRefusedError": frozenset({"ConnectionRefusedError"}),
    "DownloadTimeoutError": frozenset({"TimeoutError"}),
    "DownloadFailedError": frozenset({"ResponseNeverReceived", "ResponseFailed"}),
    "ResponseDataLossError": frozenset({"ResponseFailed"}),
}


def error_names(name: str) -> frozenset[str]:
    """The exception names this Scrapy gives the failure that Scrapy 2.15+ names ``name``."""
    if hasattr(scrapy.exceptions, name) or name not in _TWISTED_NAMES:
        return frozenset({name})
    return _TWISTED_NAMES[name]
