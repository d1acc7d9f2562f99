"""The web's real shapes of an origin, end to end (SPEC 1.2, 1.3, 2.2): https with a real TLS server, http and https of
one host, a robots.txt redirected from http to https, an internationalised host name, upper case, a trailing dot, an
explicit non-default port and explicit default ports (80, 443).

Real Scrapy crawls against Twisted servers on 127.0.0.1 (``tests.servers.Site``; ``tests.tls.TLSSite`` with a
self-signed certificate made in the test); the test names (``*.example``) resolve to 127.0.0.1 through
``tests.resolver.loopback_names`` for the test only. What the plugin did is read at the servers: which Host asked
for what, how many robots.txt downloads each origin cost, which pages were never requested.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import pytest_twisted
from twisted.internet.address import IPv4Address
from twisted.web.http import Request as TwistedRequest

from scrapy_rep.robots.origin import origin_of
from tests.crawl import crawl
from tests.resolver import LoopbackNames, loopback_names
from tests.servers import Reply, Site, redirect, robots
from tests.tls import TLSSite

IDN = "xn--bcher-kva.example"  # bücher.example


@pytest.fixture
def names() -> Iterator[LoopbackNames]:
    """``*.example`` is 127.0.0.1 for this test; the reactor's resolvers are put back afterwards."""
    with loopback_names() as installed:
        yield installed


def host_name(request: TwistedRequest) -> str:
    """The Host header's name, without the port (``site.example.:8080`` -> ``site.example.``)."""
    host = request.getHeader("host") or ""
    name, _, port = host.rpartition(":")
    return name if port.isdigit() else host


def robots_by_host(files: dict[str, str]) -> Callable[[TwistedRequest], Reply]:
    """A robots.txt route answering each Host name with its own file (a 404 for any other name)."""

    def reply(request: TwistedRequest) -> Reply:
        text = files.get(host_name(request))
        return robots(text) if text is not None else Reply(status=404)

    return reply


def pages_at(site: Site) -> set[str]:
    """The paths other than robots.txt the site was asked for."""
    return {hit.path for hit in site.hits if hit.path != "/robots.txt"}


def hosts_at(site: Site) -> set[str]:
    return {hit.host for hit in site.hits}


def forbidden(result: Any) -> set[str]:
    assert {kind for _, kind in result.failed} <= {"IgnoreRequest"}, result.failed
    return {url for url, _ in result.failed}


# -- http and https ----------------------------------------------------------------------------------------------


@pytest_twisted.ensureDeferred
async def test_http_and_https_of_one_host_are_two_origins_each_obeying_its_own_file_spec_1_2_1_3(
        names: LoopbackNames, serve: Callable[..., Any]) -> None:
    """``http://site.example`` and ``https://site.example`` (a real TLS server): two robots.txt downloads, each file
    obeyed by its own scheme only. On free ports the two servers differ by port too (the crawl on ports 80 and 443,
    where only the scheme differs, is ``test_default_ports...`` below, skipped where those cannot be bound), so the
    scheme alone is pinned here by ``origin_of``."""
    assert origin_of("http://site.example/x") != origin_of("https://site.example/x")
    assert str(origin_of("http://site.example/x")) == "http://site.example"
    assert str(origin_of("https://site.example/x")) == "https://site.example"
    plain = serve(Site())
    plain.route("/robots.txt", robots("User-agent: *\nDisallow: /h\n"))
    tls = serve(TLSSite(hostnames=["site.example"]))
    tls.route("/robots.txt", robots("User-agent: *\nDisallow: /s\n"))
    urls = [site.url(path, host="site.example") for site in (plain, tls) for path in ("/h/1", "/s/1", "/ok")]
    result = await crawl(urls)
    assert sorted(result.downloaded) == sorted([plain.url("/s/1", host="site.example"),
                                                plain.url("/ok", host="site.example"),
                                                tls.url("/h/1", host="site.example"),
                                                tls.url("/ok", host="site.example")])
    assert forbidden(result) == {plain.url("/h/1", host="site.example"), tls.url("/s/1", host="site.example")}
    assert plain.hits_for("/robots.txt") == tls.hits_for("/robots.txt") == 1
    assert result.stat("rep/robots/downloads") == 2
    assert pages_at(plain) == {"/s/1", "/ok"} and pages_at(tls) == {"/h/1", "/ok"}
    assert hosts_at(tls) == {f"site.example:{tls.port_number}"}  # the https requests really reached the TLS server
    assert result.stat("downloader/response_count") == 6
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_a_robots_txt_redirected_from_http_to_https_is_obeyed_for_the_http_origin_spec_2_2(
        names: LoopbackNames, serve: Callable[..., Any]) -> None:
    """``http://site.example:P1/robots.txt`` answers 301 to ``https://site.example:P2/robots.txt``: that body
    governs the http origin (SPEC 2.2, "obeyed for the *original* origin"). The https origin is another origin with
    its own entry: it downloads the same file for itself (no copy is lent across origins), so the TLS server serves
    robots.txt twice, once per origin, and the http server once."""
    tls = serve(TLSSite(hostnames=["site.example"]))
    tls.route("/robots.txt", robots("User-agent: *\nDisallow: /b\n"))
    plain = serve(Site())
    plain.route("/robots.txt", redirect(tls.url("/robots.txt", host="site.example")))
    urls = [site.url(path, host="site.example") for site in (plain, tls) for path in ("/a", "/b")]
    result = await crawl(urls)
    assert sorted(result.downloaded) == sorted([plain.url("/a", host="site.example"),
                                                tls.url("/a", host="site.example")])
    assert forbidden(result) == {plain.url("/b", host="site.example"), tls.url("/b", host="site.example")}
    assert plain.hits_for("/robots.txt") == 1
    assert tls.hits_for("/robots.txt") == 2  # the redirect's hop for http, and https's own download
    assert result.stat("rep/robots/downloads") == 2
    assert pages_at(plain) == {"/a"} and pages_at(tls) == {"/a"}
    result.assert_accounted()


@pytest_twisted.ensureDeferred
async def test_default_ports_http_80_and_https_443_spec_1_2_1_3(
        names: LoopbackNames, serve: Callable[..., Any]) -> None:
    """On ports 80 and 443 (skipped where they cannot be bound): ``http://site.example`` and
    ``https://site.example`` differ by scheme only and are two origins; ``:80`` and ``:443`` written out are the
    same origins as without (SPEC 1.3), one robots.txt download each. Twisted leaves the default port out of the
    Host header, so the servers see ``site.example`` either way: the plugin alone tells the forms apart."""
    assert origin_of("http://site.example:80/x") == origin_of("http://site.example/x")
    assert origin_of("https://site.example:443/x") == origin_of("https://site.example/x")
    assert origin_of("https://site.example:80/x") != origin_of("http://site.example:80/x")
    plain = serve(Site(), 80)
    tls = serve(TLSSite(hostnames=["site.example"]), 443)
    plain.route("/robots.txt", robots("User-agent: *\nDisallow: /x\n"))
    tls.route("/robots.txt", robots("User-agent: *\nDisallow: /y\n"))
    allowed = ["http://site.example/y/1", "http://site.example:80/y/2",
               "https://site.example/x/1", "https://site.example:443/x/2"]
    disallowed = ["http://site.example:80/x/1", "http://site.example/x/2",
                  "https://site.example:443/y/1", "https://site.example/y/2"]
    result = await crawl(disallowed + allowed)
    assert sorted(result.downloaded) == sorted(allowed)
    assert forbidden(result) == set(disallowed)
    assert plain.hits_for("/robots.txt") == tls.hits_for("/robots.txt") == 1
    assert result.stat("rep/robots/downloads") == 2
    assert pages_at(plain) == {"/y/1", "/y/2"} and pages_at(tls) == {"/x/1", "/x/2"}
    assert hosts_at(plain) == hosts_at(tls) == {"site.example"} == set(names.asked)
    result.assert_accounted()


# -- host names and ports ----------------------------------------------------------------------------------------

#: Each Host name its own robots.txt on one port, so a file obeyed for the wrong name shows.
FILES = {
    IDN: "User-agent: *\nDisallow: /one\n",
    "site.example": "User-agent: *\nDisallow: /two\n",
    "site.example.": "User-agent: *\nDisallow: /three\n",
}
PATHS = ("/one", "/two", "/three")


@pytest.mark.parametrize(
    "forms",
    [
        # SPEC 1.3: an internationalised name is its punycode; Unicode case folds too. (Scrapy's Request already
        # writes the URL with the punycode, lower-case host and scheme, so the crawl shows the end-to-end result and
        # the origin_of checks below pin the plugin's own normalisation of the forms.)
        pytest.param({"bücher.example": IDN, IDN: IDN, "BÜCHER.example": IDN, "XN--BCHER-KVA.EXAMPLE": IDN},
                     id="idn"),
        pytest.param({"SITE.EXAMPLE": "site.example", "site.example": "site.example", "Site.Example": "site.example"},
                     id="upper-case"),
        # A trailing dot is not one of SPEC 1.3's equivalences (nor the URL Standard's: "site.example." is another
        # host and another origin to a browser); Scrapy and Twisted keep it in the URL and the Host header, so the
        # server may answer the two names differently. Each is its own origin, obeying the file served to it.
        pytest.param({"site.example.": "site.example.", "SITE.EXAMPLE.": "site.example.",
                      "site.example": "site.example"}, id="trailing-dot"),
    ],
)
@pytest_twisted.ensureDeferred
async def test_host_name_forms_on_a_non_default_port_spec_1_3(
        names: LoopbackNames, serve: Callable[..., Any], forms: dict[str, str]) -> None:
    """Every written form of a name reaches the server as its one canonical Host name with the explicit port; each
    canonical name is one origin: one robots.txt download, its own file obeyed, every form's disallowed pages never
    requested and the others requested."""
    site = serve(Site())
    site.route("/robots.txt", robots_by_host(FILES))
    port = site.port_number
    hosts = set(forms.values())
    assert origin_of(f"http://site.example:{port}/") != origin_of("http://site.example/")  # an explicit port counts
    for form, host in forms.items():
        assert str(origin_of(f"HTTP://{form}:{port}/")) == str(origin_of(f"http://{form}:{port}/")) == \
            f"http://{host}:{port}"
    # Scheme case too (SPEC 1.3): a form with capitals is written with ``HTTP://``.
    urls = {(form, path): f"{'http' if form == form.lower() else 'HTTP'}://{form}:{port}{path}/{index}"
            for index, form in enumerate(forms) for path in PATHS}
    result = await crawl(list(urls.values()))
    wanted = {(host, f"{path}/{index}") for index, (form, host) in enumerate(forms.items()) for path in PATHS
              if f"Disallow: {path}\n" not in FILES[host]}
    assert {(hit.host, hit.path) for hit in site.hits if hit.path != "/robots.txt"} == {
        (f"{host}:{port}", path) for host, path in wanted}
    assert hosts_at(site) == {f"{host}:{port}" for host in hosts}  # the Host header: canonical, port and all
    assert set(names.asked) == hosts  # and the name looked up
    for host in hosts:
        assert site.hits_for("/robots.txt", host=host) == 1, host
    assert result.stat("rep/robots/downloads") == len(hosts)
    assert len(result.downloaded) == len(wanted)
    assert len(forbidden(result)) == len(urls) - len(wanted) == len(forms)
    result.assert_accounted()


# -- the test resolver itself ------------------------------------------------------------------------------------


class _Receiver:
    def __init__(self) -> None:
        self.addresses: list[Any] = []
        self.complete = False

    def resolutionBegan(self, resolution: Any) -> None:
        pass

    def addressResolved(self, address: Any) -> None:
        self.addresses.append(address)

    def resolutionComplete(self) -> None:
        self.complete = True


class _Fallback:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def resolveHostName(self, *args: Any) -> str:
        self.calls.append(args)
        return "delegated"


def test_the_test_resolver_answers_example_names_delegates_the_rest_and_is_uninstalled() -> None:
    """The resolver must not leak into other tests: every other name goes unchanged to the previous resolver, and
    the reactor's own resolvers are back once the block ends."""
    from twisted.internet import reactor

    fallback = _Fallback()
    names = LoopbackNames(fallback)  # type: ignore[arg-type]
    receiver = _Receiver()
    names.resolveHostName(receiver, "SITE.EXAMPLE.", 8443)  # type: ignore[arg-type]
    assert receiver.addresses == [IPv4Address("TCP", "127.0.0.1", 8443)] and receiver.complete
    other = _Receiver()
    assert names.resolveHostName(other, "example.org", 80, None, "TCP") == "delegated"  # type: ignore[arg-type]
    assert fallback.calls == [(other, "example.org", 80, None, "TCP")] and not other.addresses
    before = (reactor.resolver, reactor.nameResolver)  # type: ignore[attr-defined]
    with loopback_names() as installed:
        assert reactor.nameResolver is installed  # type: ignore[attr-defined]
        assert installed.fallback is before[1]
    assert (reactor.resolver, reactor.nameResolver) == before  # type: ignore[attr-defined]


@pytest_twisted.ensureDeferred
async def test_a_verbatim_url_is_decided_as_scrapy_would_encode_it(sites: Any) -> None:
    """``meta["verbatim_url"]`` (Scrapy 2.19: the URL kept as written, not percent-encoded): decided on its encoded
    form, as Google's matcher expects from its caller, so a raw non-ASCII or ``|`` path is forbidden by the rule that
    names its encoded form (or its raw one: rules are encoded when parsed)."""
    site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /wiki/Käyttäjä:\nDisallow: /a%7Cb\n"))
    urls = [site.url("/wiki/Käyttäjä:Foo"), site.url("/wiki/K%C3%A4ytt%C3%A4j%C3%A4:Bar"), site.url("/a|b"),
            site.url("/wiki/Main")]
    result = await crawl(urls, spider_kwargs={"meta": {"verbatim_url": True}})
    assert site.paths() == ["/robots.txt", "/wiki/Main"]
    assert result.stat("rep/requests/forbidden") == 3
    assert sorted(kind for _, kind in result.failed) == ["IgnoreRequest"] * 3


@pytest_twisted.ensureDeferred
async def test_lower_case_escapes_in_a_url_are_matched_by_the_rule_spec_7_2(sites: Any) -> None:
    """SPEC 7.2: ``%c3%a4`` equals ``%C3%A4``. Scrapy sends a URL's escapes as written, so a link written with
    lower-case escapes must still be forbidden by the rule (written raw or encoded) that names the same page."""
    site = sites()
    site.route("/robots.txt", robots("User-agent: *\nDisallow: /wiki/Käyttäjä:\nDisallow: /a%7Cb\n"))
    urls = [site.url("/wiki/K%c3%a4ytt%c3%a4j%c3%a4:Foo"), site.url("/a%7cb"), site.url("/wiki/%4dain")]
    result = await crawl(urls)
    assert site.paths() == ["/robots.txt", "/wiki/%4dain"]
    assert result.stat("rep/requests/forbidden") == 2
