"""SPEC 1.1-1.4: origins, their normalisation and robots.txt URLs."""

from __future__ import annotations

import pytest

from scrapy_rep.robots.origin import NoOrigin, is_robots_url, origin_of


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("https://example.com/folder/file", "https://example.com"),  # SPEC 1.2 table row 1
        ("HTTPS://Example.COM/x", "https://example.com"),  # SPEC 1.3: scheme and host case-insensitive
        ("https://example.com:443/", "https://example.com"),  # SPEC 1.3: default port equals no port
        ("http://example.com:80/", "http://example.com"),
        ("https://example.com:8181/", "https://example.com:8181"),
        ("https://example.com:80/", "https://example.com:80"),  # 80 is not https's default
        ("http://example.com:443/", "http://example.com:443"),
        ("https://www.exämple.com/", "https://www.xn--exmple-cua.com"),  # SPEC 1.3: IDNA
        ("https://www.xn--exmple-cua.com/", "https://www.xn--exmple-cua.com"),
        ("https://212.96.82.21/a", "https://212.96.82.21"),  # SPEC 1.2: an IP host is its own origin
        ("http://[::1]:8080/a", "http://[::1]:8080"),
        ("http://[0:0::1]/a", "http://[::1]"),
        ("ftp://example.com/file", "ftp://example.com"),  # SPEC 1.2 table: ftp has a robots.txt location
        ("ftp://example.com:21/file", "ftp://example.com"),
        ("http://user:pw@example.com/", "http://example.com"),
    ],
)
def test_origin_normalisation_spec_1_3(url: str, origin: str) -> None:
    assert str(origin_of(url)) == origin
    assert origin_of(url).robots_url == origin + "/robots.txt"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("http://example.com/", "https://example.com/"),  # SPEC 1.3: http and https differ
        ("https://example.com/", "https://example.com:8181/"),
        ("https://example.com/", "https://other.example.com/"),
        ("https://www.example.com/", "https://shop.www.example.com/"),
        ("https://example.com/", "ftp://example.com/"),
    ],
)
def test_distinct_origins_spec_1_2(a: str, b: str) -> None:
    assert origin_of(a) != origin_of(b)


@pytest.mark.parametrize("url", ["data:,hello", "file:///etc/passwd", "s3://bucket/key", "mailto:a@b.c", "http:///x",
                                 "http://example.com:notaport/", "http://[/x", "https://a]/", "http://[::1/x"])
def test_urls_without_robots_location_spec_1_4(url: str) -> None:
    with pytest.raises(NoOrigin):
        origin_of(url)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.com/robots.txt", True),
        ("https://example.com/robots.txt?x=1", True),
        ("https://example.com/folder/robots.txt", False),  # SPEC 1.1: not a robots.txt location
        ("https://example.com/robots.txt/x", False),
    ],
)
def test_is_robots_url_spec_1_4(url: str, expected: bool) -> None:
    assert is_robots_url(url) is expected
