"""TLS for the test servers: a self-signed certificate made in the test, and a ``Site`` that serves https.

Scrapy does not verify server certificates by default (``ScrapyClientContextFactory``), so a certificate made here
for the test host names is enough for a real https crawl on loopback. The key is an EC P-256 key (instant to make,
where RSA takes tens of milliseconds); nothing is cached between tests.
"""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Iterable

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from OpenSSL import SSL
from twisted.internet import reactor
from twisted.internet.interfaces import IListeningPort, IOpenSSLContextFactory
from twisted.protocols.policies import WrappingFactory
from twisted.web import server
from zope.interface import implementer

from tests.servers import Reply, Site


def self_signed(hostnames: Iterable[str]) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    """A new key and a self-signed certificate for ``hostnames`` (DNS names) and 127.0.0.1."""
    names = list(hostnames)
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0] if names else "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    san = [x509.DNSName(name) for name in names] + [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(san), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return key, certificate


@implementer(IOpenSSLContextFactory)
class ServerContext:
    """The server side's OpenSSL context factory for ``reactor.listenSSL`` (``getContext``), holding the
    ``cryptography`` key and certificate directly (Twisted's ``CertificateOptions`` would pass pyOpenSSL ``X509`` /
    ``PKey`` objects, which pyOpenSSL deprecates)."""

    def __init__(self, hostnames: Iterable[str]) -> None:
        self.key, self.certificate = self_signed(hostnames)

        self._context: SSL.Context | None = None

    def getContext(self) -> SSL.Context:  # Twisted's IOpenSSLContextFactory name
        if self._context is None:
            context = SSL.Context(SSL.TLS_SERVER_METHOD)
            context.use_certificate(self.certificate)
            context.use_privatekey(self.key)
            context.check_privatekey()
            self._context = context
        return self._context


class TLSSite(Site):
    """A ``Site`` serving https (``url()`` and ``origin()`` give https URLs) with a self-signed certificate for
    ``hostnames``."""

    scheme = "https"

    def __init__(self, hostnames: Iterable[str] = ("localhost",), default: Reply | None = None,
                 robots_default: Reply | None = None) -> None:
        super().__init__(default=default, robots_default=robots_default)
        self.tls = ServerContext(hostnames)

    def _listen(self, port: int) -> IListeningPort:
        # Wrapped: a factory offering ALPN protocols (server.Site offers h2, http/1.1) makes Twisted before 26 set
        # them on the context after a connection was made from it, which pyOpenSSL 25+ refuses (every handshake
        # fails). HTTP/1.1 without ALPN is what Scrapy's client speaks anyway.
        listening: IListeningPort = reactor.listenSSL(  # type: ignore[attr-defined]
            port, WrappingFactory(server.Site(self)), self.tls, interface="127.0.0.1")
        return listening
