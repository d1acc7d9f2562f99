"""A test name resolver: every name under ``.example`` (any case, trailing dot or not, Unicode or punycode) is
127.0.0.1; every other name goes, unchanged, to the resolver that was installed before.

Why not Scrapy's ``TWISTED_DNS_RESOLVER`` (formerly ``DNS_RESOLVER``) setting: only ``CrawlerProcess`` installs that
resolver (``CrawlerProcessBase._setup_reactor``); the plain ``Crawler`` of ``tests.crawl.crawl`` (and any
``CrawlerRunner``) never does, and a resolver installed there is never uninstalled. The reactor is shared by the
whole test session, so ``loopback_names()`` installs this one for one test and then puts back both of the reactor's
resolvers (``nameResolver``, which Twisted's ``HostnameEndpoint`` and so Scrapy's HTTP/1.1 handler use, and the
simple ``resolver``) exactly as they were.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from twisted.internet import reactor
from twisted.internet.address import IPv4Address
from twisted.internet.interfaces import IAddress, IHostnameResolver, IHostResolution, IResolutionReceiver
from zope.interface import implementer

LOOPBACK = "127.0.0.1"


@implementer(IHostResolution)
class _Resolution:
    def __init__(self, name: str) -> None:
        self.name = name

    def cancel(self) -> None:
        """Answered at once: nothing to cancel."""


@implementer(IHostnameResolver)
class LoopbackNames:
    """Names under ``suffix`` resolve to 127.0.0.1 (recorded in ``asked``, as the client asked for them); the rest
    go to ``fallback``."""

    def __init__(self, fallback: IHostnameResolver, suffix: str = ".example") -> None:
        self.fallback = fallback
        self.suffix = suffix
        self.asked: list[str] = []

    def covers(self, name: str) -> bool:
        return name.lower().rstrip(".").endswith(self.suffix)

    def resolveHostName(  # Twisted's IHostnameResolver names
        self,
        resolutionReceiver: IResolutionReceiver,
        hostName: str,
        portNumber: int = 0,
        addressTypes: Sequence[type[IAddress]] | None = None,
        transportSemantics: str = "TCP",
    ) -> IHostResolution:
        if not self.covers(hostName):
            return self.fallback.resolveHostName(  # type: ignore[no-any-return]
                resolutionReceiver, hostName, portNumber, addressTypes, transportSemantics)
        self.asked.append(hostName)
        resolution = _Resolution(hostName)
        resolutionReceiver.resolutionBegan(resolution)
        if addressTypes is None or IPv4Address in addressTypes:
            resolutionReceiver.addressResolved(IPv4Address("TCP", LOOPBACK, portNumber))
        resolutionReceiver.resolutionComplete()
        return resolution


@contextmanager
def loopback_names(suffix: str = ".example") -> Iterator[LoopbackNames]:
    """Install ``LoopbackNames`` on the reactor for the block, then restore the reactor's own resolvers."""
    previous_simple = reactor.resolver  # type: ignore[attr-defined]
    previous = reactor.nameResolver  # type: ignore[attr-defined]
    names = LoopbackNames(previous, suffix)
    reactor.installNameResolver(names)  # type: ignore[attr-defined]
    try:
        yield names
    finally:
        reactor.installNameResolver(previous)  # type: ignore[attr-defined]
        reactor.resolver = previous_simple  # type: ignore[attr-defined]
