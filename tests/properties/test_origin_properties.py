"""Properties of origin normalisation on arbitrary URLs (SPEC 1.1-1.4; issue 6)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_rep.robots.origin import DEFAULT_PORTS, NoOrigin, Origin, is_robots_url, origin_of

schemes = st.sampled_from(["http", "https", "ftp", "HTTP", "Https", "data", "file", "s3", "", "mailto"])
ascii_hosts = st.from_regex(r"[A-Za-z0-9]([A-Za-z0-9-]{0,20}[A-Za-z0-9])?(\.[A-Za-z0-9]{1,10}){0,3}", fullmatch=True)
hosts = st.one_of(ascii_hosts, st.text(max_size=20), st.ip_addresses().map(str),
                  st.ip_addresses(v=6).map(lambda ip: f"[{ip}]"))
ports = st.one_of(st.none(), st.integers(0, 70_000).map(str), st.text(max_size=6))
arbitrary_urls = st.one_of(
    st.text(max_size=80),
    st.builds(lambda scheme, host, port, path: f"{scheme}://{host}{'' if port is None else ':' + port}{path}",
              schemes, hosts, ports, st.text(max_size=20)),
)


def origin_or_none(url: str) -> Origin | None:
    """The origin of ``url``, or None when it has none (``NoOrigin``; any other exception fails the test)."""
    try:
        return origin_of(url)
    except NoOrigin:
        return None


@settings(max_examples=1000, deadline=None)
@given(url=arbitrary_urls)
def test_origin_of_raises_only_no_origin_and_is_idempotent_spec_1_3(url: str) -> None:
    """Any URL gives an ``Origin`` or ``NoOrigin`` (nothing else escapes); normalising a normalised origin, or its
    robots.txt URL, gives the same origin (one cache key per origin, SPEC 1.3)."""
    origin = origin_or_none(url)
    if origin is None:
        return
    assert origin.scheme in DEFAULT_PORTS
    assert origin.port != DEFAULT_PORTS[origin.scheme]
    assert origin_of(str(origin)) == origin
    assert origin_of(origin.robots_url) == origin
    assert is_robots_url(origin.robots_url)
    assert str(origin_of(str(origin))) == str(origin)


@settings(max_examples=500, deadline=None)
@given(scheme=st.sampled_from(sorted(DEFAULT_PORTS)), host=ascii_hosts, path=st.text(max_size=20))
def test_case_and_default_port_do_not_make_new_origins_spec_1_3(scheme: str, host: str, path: str) -> None:
    """SPEC 1.3: scheme and host are case-insensitive; the scheme's default port equals no port."""
    plain = origin_of(f"{scheme}://{host}/{path}")
    assert origin_of(f"{scheme.upper()}://{host.upper()}/{path}") == plain
    assert origin_of(f"{scheme}://{host}:{DEFAULT_PORTS[scheme]}/{path}") == plain
    assert origin_of(f"{scheme}://{host}:8181/{path}") != plain


@settings(max_examples=300, deadline=None)
@given(host=ascii_hosts, path=st.text(max_size=20))
def test_http_and_https_are_different_origins_spec_1_3(host: str, path: str) -> None:
    assert origin_of(f"http://{host}/{path}") != origin_of(f"https://{host}/{path}")


@pytest.mark.parametrize("url", ["http://[/x", "A://[", "https://a]/", "http://[::1/x"])
def test_malformed_authority_raises_no_origin_spec_1_4(url: str) -> None:
    """SPEC 1.4 / origin_of's contract: a URL without a usable origin raises ``NoOrigin``, which the middleware
    turns into a pass-through (a bare ValueError would escape ``process_request``'s ``except NoOrigin``)."""
    with pytest.raises(NoOrigin):
        origin_of(url)
