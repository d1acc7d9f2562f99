"""``scrapy-rep check``: files, stdin and URLs (the demo site, served by ``scrapy-rep demo --serve``), exit codes."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import NoReturn

import pytest

from scrapy_rep.cli import check as check_command
from scrapy_rep.cli import main
from scrapy_rep.cli._common import ERROR_PREFIX, EXIT_INTERNAL

from .conftest import run_cli

ROBOTS = """\
User-agent: *
Disallow: /private/
Allow: /private/press-kit

User-agent: examplebot
Disallow: /members/
"""


def write(tmp_path: Path, text: str | bytes) -> str:
    path = tmp_path / "robots.txt"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return str(path)


def test_file_disallowed_url_names_the_deciding_rule_and_exits_1(tmp_path: Path) -> None:
    done = run_cli("check", write(tmp_path, ROBOTS), "https://example.com/private/x", "/private/press-kit")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[1] == ("DISALLOWED  https://example.com/private/x  [Scrapy]  line 2 (Disallow: /private/) of the '*' "
                        "group (line 1)")
    assert lines[2] == ("ALLOWED     /private/press-kit  [Scrapy]  line 3 (Allow: /private/press-kit) of the '*' group "
                        "(line 1)")


def test_all_allowed_exits_0_and_says_when_no_rule_matches(tmp_path: Path) -> None:
    done = run_cli("check", write(tmp_path, ROBOTS), "/public", "/")
    assert done.returncode == 0
    assert done.stdout.count("no rule of the '*' group (line 1) matches") == 2


NEWBIE = """\
User-agent: *
Disallow: /

# our friends
User-agent: newbiebot
Disallow: /private/

User-agent: newbiebot
Disallow: /drafts/
"""


def test_the_group_that_decided_is_named(tmp_path: Path) -> None:
    """Issue 25: which group decided: the crawler's token's groups (merged, SPEC 6.2; '*' not used), their user-agent
    line, the rule in the words of the crawl log (matcher.cite); no group at all is said too."""
    path = write(tmp_path, NEWBIE)
    done = run_cli("check", path, "/private/x", "/drafts/x", "/public", "-u", "newbiebot", "-u", "otherbot")
    assert done.stdout.splitlines()[1:] == [
        "DISALLOWED  /private/x  [newbiebot]  line 6 (Disallow: /private/) of the 'newbiebot' group (line 5)",
        "DISALLOWED  /private/x  [otherbot]  line 2 (Disallow: /) of the '*' group (line 1)",
        "DISALLOWED  /drafts/x  [newbiebot]  line 9 (Disallow: /drafts/) of the 'newbiebot' group (line 8)",
        "DISALLOWED  /drafts/x  [otherbot]  line 2 (Disallow: /) of the '*' group (line 1)",
        "ALLOWED     /public  [newbiebot]  no rule of the 'newbiebot' groups (lines 5, 8) matches",
        "DISALLOWED  /public  [otherbot]  line 2 (Disallow: /) of the '*' group (line 1)",
    ]
    result = json.loads(run_cli("check", path, "/drafts/x", "-u", "NewbieBot", "--json").stdout)["results"][0]
    assert result["rule"] == {"type": "disallow", "pattern": "/drafts/", "line": 9, "group_line": 8}
    assert result["group"] == {"user_agent": "newbiebot", "lines": [5, 8]}
    nobody = run_cli("check", write(tmp_path, "User-agent: a\nDisallow: /\n"), "/x", "-u", "b")
    assert nobody.returncode == 0 and nobody.stdout.splitlines()[1] == "ALLOWED     /x  [b]  no group names 'b' or '*'"


def test_stdin(tmp_path: Path) -> None:
    done = run_cli("check", "-", "/private/a", stdin=ROBOTS)
    assert done.returncode == 1
    assert "robots.txt <stdin>:" in done.stdout and "line 2 (Disallow: /private/) of the '*' group" in done.stdout


def test_each_user_agent_is_checked_and_a_comma_list_is_one_crawler(tmp_path: Path) -> None:
    """SPEC 6.2: examplebot has its own group; SPEC 6.3: 'examplebot-news,examplebot' falls back to examplebot."""
    done = run_cli(
        "check", write(tmp_path, ROBOTS), "/members/a", "-u", "examplebot", "-u", "otherbot",
        "--user-agent", "examplebot-news,examplebot", "--json",
    )
    results = json.loads(done.stdout)["results"]
    verdicts = {tuple(r["user_agent"]): r["allowed"] for r in results}
    assert verdicts == {("examplebot",): False, ("otherbot",): True, ("examplebot-news", "examplebot"): False}


def test_json_document(tmp_path: Path) -> None:
    done = run_cli("check", write(tmp_path, ROBOTS), "/private/a", "/x", "--json", "-u", "bot")
    document = json.loads(done.stdout)
    assert document["exit_code"] == done.returncode == 1
    assert document["robots_txt"]["outcome"] == "rules"
    assert document["results"][0] == {
        "url": "/private/a", "user_agent": ["bot"], "allowed": False,
        "rule": {"type": "disallow", "pattern": "/private/", "line": 2, "group_line": 1},
        "group": {"user_agent": "*", "lines": [1]}, "usage": {}, "answer": {}, "refused": {},
    }
    assert document["uses"] == []
    assert document["results"][1]["rule"] is None and document["results"][1]["allowed"] is True


def test_default_token_is_scrapys(tmp_path: Path) -> None:
    """SPEC 6.4: a fresh Scrapy project's USER_AGENT has the product token 'Scrapy'."""
    done = run_cli("check", write(tmp_path, "User-agent: scrapy\nDisallow: /\n"), "/a", "--json")
    assert json.loads(done.stdout)["results"][0]["user_agent"] == ["Scrapy"]
    assert done.returncode == 1


def test_inside_a_project_the_default_is_the_crawls_token(tmp_path: Path) -> None:
    """Inside a Scrapy project, ``check`` decides as the project's crawl (its USER_AGENT's product token here, as the
    middleware reads it) and says so in the notes; ``-u`` overrides (issue 25)."""
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = proj.settings\n")
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "__init__.py").write_text("")
    (tmp_path / "proj" / "settings.py").write_text('USER_AGENT = "examplebot/2.0 (+https://example.com/bot)"\n')
    robots = write(tmp_path, ROBOTS)
    done = run_cli("check", robots, "/members/a", "/private/a", "--json", cwd=tmp_path)
    document = json.loads(done.stdout)
    assert [result["user_agent"] for result in document["results"]] == [["examplebot"]] * 2
    assert [result["allowed"] for result in document["results"]] == [False, True]
    assert document["notes"] == ["the Scrapy project here: obeying robots.txt as ['examplebot'] (the product token of "
                                 "USER_AGENT 'examplebot/2.0 (+https://example.com/bot)'); -u TOKEN decides as another "
                                 "crawler"]
    text = run_cli("check", robots, "/members/a", cwd=tmp_path)
    assert text.stdout.splitlines()[0].startswith("the Scrapy project here: obeying robots.txt as ['examplebot']")
    other = run_cli("check", robots, "/members/a", "-u", "Scrapy", "--json", cwd=tmp_path)
    assert json.loads(other.stdout)["notes"] == [] and other.returncode == 0


def test_url_200_is_obeyed(demo_site: dict[str, str]) -> None:
    base = demo_site["rules"]
    done = run_cli("check", f"{base}/robots.txt", f"{base}/private/accounts", f"{base}/files/report.pdf?download=1")
    assert done.returncode == 1
    assert "HTTP 200" in done.stdout.splitlines()[0]
    assert "DISALLOWED  " + base + "/private/accounts" in done.stdout
    assert "ALLOWED     " + base + "/files/report.pdf?download=1" in done.stdout


def test_url_404_allows_everything(demo_site: dict[str, str]) -> None:
    base = demo_site["missing"]
    done = run_cli("check", f"{base}/robots.txt", f"{base}/private/notes", "--json")
    document = json.loads(done.stdout)
    assert done.returncode == 0
    assert document["robots_txt"]["outcome"] == "allow-all" and document["robots_txt"]["status"] == 404
    assert document["results"][0]["allowed"] is True


def test_url_503_is_a_temporary_full_disallow_with_exit_3(demo_site: dict[str, str]) -> None:
    base = demo_site["down"]
    done = run_cli("check", f"{base}/robots.txt", f"{base}/", f"{base}/catalogue")
    assert done.returncode == 3
    assert "HTTP 503: temporarily unavailable" in done.stdout
    assert done.stdout.count("DISALLOWED") == 2


def test_url_503_then_recovery(demo_site: dict[str, str]) -> None:
    """The flaky origin answers 503 three times, then serves its rules (SPEC 2.2)."""
    base = demo_site["flaky"]
    codes = [run_cli("check", f"{base}/robots.txt", f"{base}/checkout/cart").returncode for _ in range(4)]
    assert codes == [3, 3, 3, 1]


def test_url_redirects_are_followed_across_origins(demo_site: dict[str, str]) -> None:
    """SPEC 2.2: three hops, the last to another origin, whose body is obeyed for the original origin."""
    base = demo_site["redirect"]
    done = run_cli("check", f"{base}/robots.txt", f"{base}/drafts/1", f"{base}/posts/1", "--json")
    document = json.loads(done.stdout)
    assert document["robots_txt"]["redirects"] == 3 and document["robots_txt"]["status"] == 200
    assert [r["allowed"] for r in document["results"]] == [False, True]


def test_url_more_than_five_redirects_is_a_404(demo_site: dict[str, str]) -> None:
    base = demo_site["redirect"]
    done = run_cli("check", f"{base}/robots-loop.txt", f"{base}/drafts/1")
    assert done.returncode == 0
    assert "more than 5 redirects: no valid robots.txt (SPEC 2.2: like a 404), everything allowed" in done.stdout


def test_url_redirect_to_another_scheme_is_not_followed(demo_site: dict[str, str]) -> None:
    """A server's redirect to file: must not make the tester read a local file: a dead-end redirect, like a 404."""
    base = demo_site["redirect"]
    done = run_cli("check", f"{base}/robots-to-file.txt", "/x", "--json")
    document = json.loads(done.stdout)
    assert done.returncode == 0
    assert document["robots_txt"]["outcome"] == "allow-all"
    assert "redirect to file:///etc/hostname" in document["robots_txt"]["detail"]


def test_url_past_the_size_cap(demo_site: dict[str, str]) -> None:
    """SPEC 4.4: the rule past 512,000 bytes is not read."""
    base = demo_site["oversized"]
    done = run_cli("check", f"{base}/robots.txt", f"{base}/admin/users", f"{base}/beyond-the-cap/page", "--json")
    document = json.loads(done.stdout)
    assert "only the first 512000 are used" in document["robots_txt"]["detail"]
    assert [r["allowed"] for r in document["results"]] == [False, True]


def test_connection_refused_is_temporary_with_exit_3() -> None:
    with socket.socket() as sock:  # a port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    done = run_cli("check", f"http://127.0.0.1:{port}/robots.txt", "/")
    assert done.returncode == 3
    assert "network error" in done.stdout and "temporarily unavailable" in done.stdout


def test_errors_are_one_line_without_traceback(tmp_path: Path, demo_site: dict[str, str]) -> None:
    cases = [
        ("check", str(tmp_path / "absent.txt"), "/"),
        ("check", write(tmp_path, ROBOTS)),
        ("check", write(tmp_path, ROBOTS), "not-a-url"),
        ("check", write(tmp_path, ROBOTS), "http://[::1/x"),
        ("check", "http://[::1/robots.txt", "/"),
        ("check", "https://127.0.0.1:99999/robots.txt", "/"),
        ("check", str(tmp_path), "/"),
        ("check", write(tmp_path, ROBOTS), "/", "-u", ","),
        ("demo", "--serve", "--compare"),
        ("check", f"{demo_site['rules']}/robots.txt", "https://other.example/x"),
        ("frobnicate",),
        (),
        ("cache", "purge", "--yes"),
        ("cache", "show", "not an origin"),
    ]
    for args in cases:
        done = run_cli(*args)
        assert done.returncode == 2, args
        assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, (args, done.stderr)
        assert done.stderr.startswith(ERROR_PREFIX), (args, done.stderr)  # one prefix, whichever subcommand
    assert run_cli("check", write(tmp_path, ROBOTS)).stderr.startswith(
        "scrapy-rep: error: the following arguments are required: URL (try scrapy-rep check --help)")


def test_an_internal_error_is_one_line_with_the_same_prefix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*_: object) -> NoReturn:
        raise RuntimeError("boom")

    monkeypatch.setattr(check_command, "check", broken)
    assert main(["check", write(tmp_path, ROBOTS), "/"]) == EXIT_INTERNAL
    assert capsys.readouterr().err == f"{ERROR_PREFIX}internal error (please report): RuntimeError: boom\n"


def test_a_full_user_agent_obeys_its_crawlers_product_token(tmp_path: Path) -> None:
    """SPEC 6.4: a full User-Agent obeys as its crawler's product token (not 'Mozilla'); a browser's has none and
    obeys the * group."""
    robots = "User-agent: *\nDisallow: /\n\nUser-agent: newbiebot\nDisallow: /members/\n"
    bot = "Mozilla/5.0 (compatible; newbiebot/1.0; +https://example.com/bot)"
    browser = "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0"
    done = run_cli("check", write(tmp_path, robots), "/news", "-u", bot, "-u", browser)
    lines = done.stdout.splitlines()
    assert lines[0] == f"obeying as 'newbiebot' (the product token of {bot!r})"
    assert lines[1] == f"{browser!r} has no product token of its own: obeying the '*' group"
    assert lines[3] == "ALLOWED     /news  [newbiebot]  no rule of the 'newbiebot' group (line 4) matches"
    assert lines[4] == "DISALLOWED  /news  [*]  line 2 (Disallow: /) of the '*' group (line 1)"
    assert done.returncode == 1


USAGE = """\
User-agent: *
Allow: /
Disallow: /never/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y
Content-Signal: search=yes, ai-input=no
"""


def test_usage_preferences_in_text_and_json(tmp_path: Path) -> None:
    """An allowed URL's usage preferences (Robots.usage): a second text line, a "usage" object in --json."""
    path = write(tmp_path, USAGE)
    done = run_cli("check", path, "/ai-ok/x", "/never/x", "-u", "bot")
    assert done.stdout.splitlines()[1:] == [
        "ALLOWED     /ai-ok/x  [bot]  line 2 (Allow: /) of the '*' group (line 1)",
        "            usage: train-ai=y by line 5 (Content-Usage: /ai-ok/ train-ai=y) of the '*' group (line 1), "
        "search=y by line 6 (Content-Signal: search=yes, ai-input=no) of the '*' group (line 1), "
        "ai-input=n by line 6 (Content-Signal: search=yes, ai-input=no) of the '*' group (line 1)",
        "DISALLOWED  /never/x  [bot]  line 3 (Disallow: /never/) of the '*' group (line 1)",
    ]
    results = json.loads(run_cli("check", path, "/x", "/never/x", "--json", "-u", "bot").stdout)["results"]
    assert results[0]["usage"]["train-ai"] == {
        "allowed": False, "line": 4, "source": "Content-Usage", "written": "train-ai=n"}
    assert sorted(results[0]["usage"]) == ["ai-input", "search", "train-ai"]
    assert results[1]["usage"] == {}


def test_a_url_is_checked_as_the_crawl_would_send_it(tmp_path: Path) -> None:
    """A non-ASCII or lower-case-escaped URL is decided percent-encoded, escapes upper-cased, as the middleware
    decides it (SPEC 7.2); it is shown as given."""
    robots = write(tmp_path, "User-agent: *\nDisallow: /wiki/Käyttäjä:\n")
    done = run_cli("check", robots, "https://site.example/wiki/Käyttäjä:Foo", "/wiki/K%c3%a4ytt%c3%a4j%c3%a4:Bar",
                   "/wiki/Main")
    assert done.returncode == 1
    assert [line.split()[0:2] for line in done.stdout.splitlines()[1:4]] == [
        ["DISALLOWED", "https://site.example/wiki/Käyttäjä:Foo"], ["DISALLOWED", "/wiki/K%c3%a4ytt%c3%a4j%c3%a4:Bar"],
        ["ALLOWED", "/wiki/Main"]]
