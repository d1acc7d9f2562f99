"""Hostile servers and hostile robots.txt files, reproduced byte by byte on loopback and crawled through the real
middleware (issue 6; SPEC 2.2-2.3, 4). docs/reliability.md has the table of faults and outcomes.

Each test crawls an allowed page (/a) and a forbidden one (/private/x) of the faulty origin and asserts:
- the origin's resulting state (SPEC 2.2): rules obeyed, allow-all, or held (temporary full disallow);
- what became of its requests (``rep/`` stats, SPEC 8.2) and what the server saw (its request log);
- the process's peak memory growth during the crawl stays under ``MEMORY_BOUND`` (docs/reliability.md).

Held origins: the clock jumps past REP_HOLD_TIMEOUT once the crawl is idle, so held requests are dropped after hold
(retries are scheduled later than that: one robots.txt download per test).
"""

from __future__ import annotations

import random
from typing import Any

import pytest
import pytest_twisted

from scrapy_rep.robots.state import State
from scrapy_rep.stores import Outcome
from tests.faults.bombs import MIB, gzip_bomb, padded_robots
from tests.faults.harness import PAGES, RULES, FaultRun, crawl_fault
from tests.faults.rawserver import (
    Action,
    RawServer,
    endless,
    head,
    refused_origin,
    respond,
    send,
    silence,
    stream,
    trickle,
)

#: The documented bound on the process's peak RSS growth during one faulty origin's crawl (docs/reliability.md).
MEMORY_BOUND = 64 * MIB
#: 100,000 user-agent groups are parsed whole (REP_MAX_SIZE raised to 4 MB for that test): a larger bound.
MANY_GROUPS_MEMORY_BOUND = 256 * MIB

pytestmark = pytest.mark.slow


@pytest.fixture
def server() -> Any:
    started = RawServer().start()
    yield started
    started.stop()


def assert_memory(run: FaultRun, bound: int = MEMORY_BOUND) -> None:
    if run.memory.bytes is not None:
        print(f"peak RSS growth: {run.memory.mib:.1f} MiB")  # shown with pytest -s; docs/reliability.md
        assert run.memory.bytes < bound, f"peak RSS grew {run.memory.mib:.1f} MiB"


def assert_held_then_dropped(run: FaultRun, error: str) -> None:
    """SPEC 2.2/2.3: a network-class error without a cached copy is a temporary full disallow: nothing of the origin
    is sent, its requests are held, then dropped after REP_HOLD_TIMEOUT with their own stats key."""
    assert run.state.state is State.HOLDING
    assert run.state.entry is not None and run.state.entry.outcome is Outcome.DISALLOW_ALL
    run.assert_downloads({f"exception/{error}": 1})
    assert run.held_requests() == (0, 0, 2, 0)
    assert run.stat("rep/requests/dropped_after_hold/timeout") == 2
    assert_memory(run)


def assert_rules_obeyed(run: FaultRun, downloaded: list[str], forbidden: int = 1, memory_bound: int = MEMORY_BOUND
                        ) -> None:
    """SPEC 2.2: a 2xx body is parsed and obeyed (whatever it holds, SPEC 4.2-4.5)."""
    assert run.state.state is State.READY
    assert run.state.entry is not None and run.state.entry.outcome is Outcome.RULES
    assert sorted(run.result.downloaded) == sorted(run.origin + page for page in downloaded)
    assert run.stat("rep/requests/forbidden") == forbidden
    assert run.stat("rep/requests/dropped_after_hold") == 0
    assert_memory(run, memory_bound)


def assert_allow_all(run: FaultRun) -> None:
    """SPEC 2.2: no valid robots.txt (4xx, or a redirect chain that ends nowhere): full allow."""
    assert run.state.state is State.READY
    assert run.state.entry is not None and run.state.entry.outcome is Outcome.ALLOW_ALL
    assert sorted(run.result.downloaded) == sorted(run.origin + page for page in PAGES)
    assert (run.stat("rep/requests/allowed"), run.stat("rep/requests/forbidden")) == (2, 0)
    assert_memory(run)


# -- network-class faults: held, then dropped (SPEC 2.2 "network errors", 2.3) ---------------------------------------


@pytest_twisted.ensureDeferred
async def test_connection_refused_holds_then_drops_spec_2_2() -> None:
    run = await crawl_fault(refused_origin())
    assert_held_then_dropped(run, "DownloadConnectionRefusedError")


HELD_FAULTS: dict[str, tuple[Action, str]] = {
    "accept then silence": (silence(), "DownloadTimeoutError"),
    # 1 byte per second of a valid response: still incomplete when DOWNLOAD_TIMEOUT (1 s) fires.
    "slow trickle": (trickle(head(length=len(RULES)) + RULES, 1.0), "DownloadTimeoutError"),
    "reset mid-headers": (send(b"HTTP/1.1 200 OK\r\nContent-Type: text/pl", "reset"), "DownloadFailedError"),
    "reset mid-body": (send(head(length=5000) + RULES, "reset"), "DownloadFailedError"),
    "truncated chunked encoding": (
        send(head(headers={"Transfer-Encoding": "chunked"}) + b"%x\r\n%s\r\n8\r\n# trunc" % (len(RULES), RULES)),
        "ResponseDataLossError",
    ),
    "invalid status line": (send(b"HTTP/1.1 OK-ish\r\n\r\n" + RULES), "DownloadFailedError"),
    "Content-Length larger than the body": (send(head(length=5000) + RULES), "ResponseDataLossError"),
}


@pytest.mark.parametrize("fault", list(HELD_FAULTS))
@pytest_twisted.ensureDeferred
async def test_network_class_faults_hold_then_drop_spec_2_2_2_3(server: RawServer, fault: str) -> None:
    action, error = HELD_FAULTS[fault]
    server.route("/robots.txt", action)
    run = await crawl_fault(server.origin())
    assert_held_then_dropped(run, error)
    assert server.paths() == ["/robots.txt"]  # nothing of the origin was sent


@pytest_twisted.ensureDeferred
async def test_a_fault_then_a_good_robots_txt_releases_the_held_requests_spec_2_3(server: RawServer) -> None:
    """SPEC 2.3/2.5: held requests are released, not lost, when the retry finds a robots.txt."""
    server.route("/robots.txt", send(head(length=5000) + RULES, "reset"), respond(RULES))
    clock_steps: list[Any] = []
    run = await crawl_fault(server.origin(), REP_ERROR_RETRY_DELAY=60, REP_ERROR_RETRY_MAX_DELAY=60,
                            phases=[(lambda: clock_steps[0].advance(60), [])], clock=_recording_clock(clock_steps))
    assert_rules_obeyed(run, ["/a"])
    run.assert_downloads({"exception/DownloadFailedError": 1, "status/200": 1})
    assert server.paths()[:2] == ["/robots.txt", "/robots.txt"] and server.paths()[2:] == ["/a"]


def _recording_clock(box: list[Any]) -> Any:
    from twisted.internet.task import Clock

    clock = Clock()
    box.append(clock)
    return clock


# -- oversized and endless bodies: the cap holds during the transfer (SPEC 4.4) ----------------------------------------


@pytest_twisted.ensureDeferred
async def test_endless_body_is_cut_at_the_cap_and_obeyed_spec_4_4(server: RawServer) -> None:
    server.route("/robots.txt", endless(head(headers={"Content-Type": "text/plain"}) + RULES))
    run = await crawl_fault(server.origin())
    assert_rules_obeyed(run, ["/a"])
    assert run.robots_downloads() == {"status/200": 1}
    assert run.stat("rep/robots/truncated") == 1


@pytest_twisted.ensureDeferred
async def test_ten_megabyte_robots_txt_stops_at_the_cap_spec_4_4(server: RawServer) -> None:
    """Rules past 512,000 bytes are ignored (``Disallow: /a`` at the end), and the transfer stops early."""
    size = 10_000_000
    server.route("/robots.txt", stream(head(length=size), padded_robots(RULES, size, tail=b"Disallow: /a\n")))
    run = await crawl_fault(server.origin())
    assert_rules_obeyed(run, ["/a"])
    assert run.stat("rep/robots/truncated") == 1
    assert server.bytes_sent < size  # the client hung up long before the end


@pytest_twisted.ensureDeferred
async def test_one_gib_gzip_bomb_is_never_inflated_past_the_cap_spec_4_4(server: RawServer) -> None:
    """A 1 GiB gzip stream (about 1 MB on the wire) beginning with the rules: inflated only up to the cap."""
    headers = {"Content-Type": "text/plain", "Content-Encoding": "gzip"}
    server.route("/robots.txt", stream(head(headers=headers), gzip_bomb(RULES)))
    run = await crawl_fault(server.origin())
    assert_rules_obeyed(run, ["/a"])
    assert run.robots_downloads() == {"status/200": 1}


# -- redirects (SPEC 2.2 "3xx") ---------------------------------------------------------------------------------------


def redirect(location: str) -> Action:
    return respond(b"", "301 Moved Permanently", {"Location": location})


@pytest_twisted.ensureDeferred
async def test_redirect_loop_is_a_404_spec_2_2(server: RawServer) -> None:
    server.route("/robots.txt", redirect("/b")).route("/b", redirect("/robots.txt"))
    run = await crawl_fault(server.origin())
    assert_allow_all(run)
    assert run.state.entry is not None and run.state.entry.error == "RedirectLoop"
    assert server.paths()[:2] == ["/robots.txt", "/b"]


@pytest.mark.parametrize(
    ("location", "error"),
    [
        ("ftp://127.0.0.1/robots.txt", "BadRedirect"),
        ("data:text/plain,User-agent:%20*%0ADisallow:%20/", "BadRedirect"),
        ("file:///etc/passwd", "BadRedirect"),
        ("https:///robots.txt", "BadRedirect"),  # no host
        # Same scheme and no host: urljoin (RFC 3986 5.2.2's non-strict reading) resolves these against the robots.txt
        # URL itself, so they end as a loop. Either way the chain ends without a robots.txt.
        ("http:///robots.txt", "RedirectLoop"),
        ("http://", "RedirectLoop"),
    ],
)
@pytest_twisted.ensureDeferred
async def test_redirects_to_unfetchable_urls_are_a_404_spec_2_2(server: RawServer, location: str, error: str) -> None:
    """A robots.txt redirect to another scheme or to a URL with no host ends the chain: 404 semantics, allow all."""
    server.route("/robots.txt", redirect(location))
    run = await crawl_fault(server.origin())
    assert_allow_all(run)
    assert run.state.entry is not None and run.state.entry.error == error


@pytest_twisted.ensureDeferred
async def test_redirect_to_an_unparsable_url_is_a_404_spec_2_2(server: RawServer) -> None:
    """A Location urlsplit cannot parse ends the chain like any dead-end redirect (it used to escape as a ValueError
    and hold the origin as a failed fetch)."""
    server.route("/robots.txt", redirect("http://[/robots.txt"))
    run = await crawl_fault(server.origin())
    assert_allow_all(run)
    assert run.state.entry is not None and run.state.entry.error == "BadRedirect"


@pytest_twisted.ensureDeferred
async def test_503_with_a_garbage_retry_after_holds_and_retries_spec_2_5(server: RawServer) -> None:
    """A Retry-After the policy cannot read (bytes 0xB2: a Latin-1 superscript digit, see test_policy_properties)
    must still leave the origin held with a retry scheduled, never stuck or allowed."""
    server.route("/robots.txt", send(head("503 Service Unavailable", {"Retry-After": "\xb2"}, 0)))
    run = await crawl_fault(server.origin())
    assert run.state.state is State.HOLDING  # SPEC 2.2/2.5: held, with a retry scheduled (unreadable Retry-After)
    assert run.held_requests() == (0, 0, 2, 0)


# -- hostile robots.txt bodies (SPEC 4.1-4.5) -----------------------------------------------------------------------


def robots_file(body: bytes, content_type: str = "text/plain") -> Action:
    return respond(body, headers={"Content-Type": content_type})


@pytest_twisted.ensureDeferred
async def test_html_robots_txt_uses_only_its_valid_lines_spec_4_2(server: RawServer) -> None:
    """A soft-404 HTML page served as robots.txt: no valid line, nothing disallowed (its markup is ignored)."""
    html = b"<!DOCTYPE html>\n<html><head><title>Not found</title></head>\n<body><p>Disallow: /</p>\n</body></html>\n"
    server.route("/robots.txt", robots_file(html, "text/html"))
    run = await crawl_fault(server.origin())
    assert_rules_obeyed(run, list(PAGES), forbidden=0)


@pytest_twisted.ensureDeferred
async def test_html_robots_txt_with_valid_lines_obeys_them_spec_4_2(server: RawServer) -> None:
    html = b"<html><body>\nUser-agent: *\nDisallow: /private\n</body></html>"
    server.route("/robots.txt", robots_file(html, "text/html"))
    run = await crawl_fault(server.origin())
    assert_rules_obeyed(run, ["/a"])


@pytest_twisted.ensureDeferred
async def test_utf16_robots_txt_has_no_valid_lines_spec_4_1(server: RawServer) -> None:
    """SPEC 4.1: the file is UTF-8. In UTF-16 every other byte is NUL, which ends a line for Google's parser: nothing
    valid remains, so nothing is disallowed (Google's library decides the same)."""
    server.route("/robots.txt", robots_file("User-agent: *\nDisallow: /\n".encode("utf-16")))
    run = await crawl_fault(server.origin())
    assert_rules_obeyed(run, list(PAGES), forbidden=0)


@pytest_twisted.ensureDeferred
async def test_latin1_robots_txt_percent_encodes_its_bytes_spec_4_3_7_2(server: RawServer) -> None:
    """SPEC 4.3/7.2: a Latin-1 byte in a pattern is compared as its percent-escape (``\\xe9`` as ``%E9``)."""
    server.route("/robots.txt", robots_file(b"# r\xe9gles\nUser-agent: *\nDisallow: /caf\xe9\nDisallow: /private\n"))
    run = await crawl_fault(server.origin(), pages=("/a", "/caf%E9", "/caf%C3%A9", "/private/x"))
    assert_rules_obeyed(run, ["/a", "/caf%C3%A9"], forbidden=2)


@pytest_twisted.ensureDeferred
async def test_binary_garbage_robots_txt_never_raises_spec_4_5(server: RawServer) -> None:
    garbage = random.Random(6).randbytes(300_000)
    server.route("/robots.txt", robots_file(garbage, "application/octet-stream"))
    run = await crawl_fault(server.origin())
    assert_rules_obeyed(run, list(PAGES), forbidden=0)


@pytest_twisted.ensureDeferred
async def test_one_two_megabyte_line_spec_4_4(server: RawServer) -> None:
    """Rules before a 2 MB line are obeyed; the line is cut at the cap; a rule after it is past the cap."""
    body = RULES + b"Disallow: /" + b"x" * (2 * MIB) + b"\nDisallow: /a\n"
    server.route("/robots.txt", robots_file(body))
    run = await crawl_fault(server.origin())
    assert_rules_obeyed(run, ["/a"])
    assert run.stat("rep/robots/truncated") == 1


@pytest_twisted.ensureDeferred
async def test_one_hundred_thousand_user_agent_groups_spec_6_2(server: RawServer) -> None:
    """100,000 groups for other crawlers, then ours (REP_MAX_SIZE raised so that all of them are parsed)."""
    groups = b"".join(b"User-agent: bot%d\nDisallow: /a\n" % i for i in range(100_000))
    body = groups + b"User-agent: TestBot\nDisallow: /private\n"
    server.route("/robots.txt", robots_file(body))
    run = await crawl_fault(server.origin(), REP_MAX_SIZE=4_000_000)
    assert len(body) < 4_000_000
    assert_rules_obeyed(run, ["/a"], memory_bound=MANY_GROUPS_MEMORY_BOUND)
