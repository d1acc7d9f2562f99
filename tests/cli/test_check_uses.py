"""``scrapy-rep check`` and the content uses a crawl declares (REP_CONTENT_USES, ``--use``): a URL robots.txt allows
but whose usage preferences refuse a declared use is REFUSED, and exits 1, as the crawl refuses the request."""

from __future__ import annotations

import json
from pathlib import Path

from scrapy_rep.cli._common import ERROR_PREFIX, EXIT_FINDINGS, EXIT_OK, EXIT_USAGE

from .conftest import run_cli

ROBOTS = """\
User-agent: *
Allow: /
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y
Content-Usage: /old/ train-genai=n
Disallow: /never/
Content-Signal: search=no
"""
ALLOWS = "robots.txt allows it: line 2 (Allow: /) of the '*' group (line 1)"


def project(tmp_path: Path, settings: str) -> Path:
    """A Scrapy project in ``tmp_path`` (scrapy.cfg and a settings module) with ``ROBOTS`` beside it."""
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = proj.settings\n")
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "__init__.py").write_text("")
    (tmp_path / "proj" / "settings.py").write_text(settings)
    (tmp_path / "robots.txt").write_text(ROBOTS)
    return tmp_path


def test_a_projects_declared_use_refused_by_robots_txt_is_refused(tmp_path: Path) -> None:
    """The fix: inside a project declaring REP_CONTENT_USES = ['train-ai'], check said ALLOWED (exit 0) for a URL
    whose Content-Usage refuses train-ai, which the crawl refuses; now REFUSED, naming the use and the line, exit 1."""
    where = project(tmp_path, "REP_CONTENT_USES = ['train-ai']\n")
    done = run_cli("check", "robots.txt", "/x", "/ai-ok/y", "-u", "bot", cwd=where)
    assert done.returncode == EXIT_FINDINGS, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == ("the Scrapy project here declares REP_CONTENT_USES ['train-ai']: a URL whose opt-outs refuse "
                        "one is REFUSED, as its crawl refuses it; --use USE decides for other uses")
    assert lines[2] == ("REFUSED     /x  [bot]  for train-ai by line 3 (Content-Usage: train-ai=n) of the '*' group "
                        f"(line 1); {ALLOWS}")
    assert lines[4] == "ALLOWED     /ai-ok/y  [bot]  line 2 (Allow: /) of the '*' group (line 1)"
    document = json.loads(run_cli("check", "robots.txt", "/x", "/ai-ok/y", "-u", "bot", "--json", cwd=where).stdout)
    assert document["uses"] == ["train-ai"] and document["exit_code"] == EXIT_FINDINGS
    refused, allowed = document["results"]
    assert refused["allowed"] is True  # robots.txt's verdict; the refusal is its own field
    assert refused["refused"] == {"train-ai": {
        "use": "train-ai", "value": "n", "source": "robots.txt",
        "where": "line 3 (Content-Usage: train-ai=n) of the '*' group (line 1)"}}
    assert allowed["refused"] == {} and allowed["answer"]["train-ai"]["value"] == "y"
    assert allowed["answer"]["search"]["where"] == "line 7 (Content-Signal: search=no) of the '*' group (line 1)"


def test_use_overrides_the_projects_uses(tmp_path: Path) -> None:
    """``--use`` replaces the project's uses (as ``-u`` replaces its token): the project's note is not said."""
    where = project(tmp_path, "REP_CONTENT_USES = ['train-ai']\n")
    done = run_cli("check", "robots.txt", "/ai-ok/y", "--use", "search", "-u", "bot", cwd=where)
    assert done.returncode == EXIT_FINDINGS
    assert done.stdout.splitlines()[1] == ("REFUSED     /ai-ok/y  [bot]  for search by line 7 (Content-Signal: "
                                           f"search=no) of the '*' group (line 1); {ALLOWS}")
    assert "declares REP_CONTENT_USES" not in done.stdout
    tdm = run_cli("check", "robots.txt", "/x", "--use", "tdm", cwd=where)  # robots.txt states nothing of tdm
    assert tdm.returncode == EXIT_OK and tdm.stdout.splitlines()[2].startswith("ALLOWED     /x")


def test_use_outside_a_project_and_every_refused_use_named(tmp_path: Path) -> None:
    (tmp_path / "robots.txt").write_text(ROBOTS)
    plain = run_cli("check", "robots.txt", "/x", cwd=tmp_path)
    assert plain.returncode == EXIT_OK and plain.stdout.splitlines()[1].startswith("ALLOWED     /x")  # no use declared
    done = run_cli("check", "robots.txt", "/x", "/never/x", "--use", "search", "--use", "ai-train", cwd=tmp_path)
    assert done.returncode == EXIT_FINDINGS
    assert done.stdout.splitlines()[1:] == [
        "REFUSED     /x  [Scrapy]  for search by line 7 (Content-Signal: search=no) of the '*' group (line 1); for "
        f"train-ai by line 3 (Content-Usage: train-ai=n) of the '*' group (line 1); {ALLOWS}",
        "            usage: train-ai=n by line 3 (Content-Usage: train-ai=n) of the '*' group (line 1), search=n by "
        "line 7 (Content-Signal: search=no) of the '*' group (line 1)",
        "DISALLOWED  /never/x  [Scrapy]  line 6 (Disallow: /never/) of the '*' group (line 1)",
    ]
    results = json.loads(run_cli("check", "robots.txt", "/never/x", "--use", "train-ai", "--json",
                                 cwd=tmp_path).stdout)["results"]
    assert results[0]["refused"] == {} and results[0]["answer"] == {}  # no preference applies to a disallowed URL


def test_legacy_labels_follow_the_projects_setting(tmp_path: Path) -> None:
    """REP_USAGE_LEGACY_LABELS (default True): an n of train-genai, an earlier draft's label, refuses train-ai."""
    where = project(tmp_path, "REP_CONTENT_USES = ['train-ai']\n")
    done = run_cli("check", "robots.txt", "/old/x", "-u", "bot", cwd=where)
    assert done.returncode == EXIT_FINDINGS
    assert done.stdout.splitlines()[2] == (
        "REFUSED     /old/x  [bot]  for train-ai by line 5 (Content-Usage: /old/ train-genai=n) of the '*' group "
        f"(line 1) (the legacy label 'train-genai', REP_USAGE_LEGACY_LABELS); {ALLOWS}")
    refused = json.loads(run_cli("check", "robots.txt", "/old/x", "--json", cwd=where).stdout)["results"][0]
    assert refused["refused"]["train-ai"]["legacy"] == "train-genai"
    (where / "proj" / "settings.py").write_text("REP_CONTENT_USES = ['train-ai']\nREP_USAGE_LEGACY_LABELS = False\n")
    off = run_cli("check", "robots.txt", "/old/x", "--json", cwd=where)
    assert off.returncode == EXIT_OK
    assert list(json.loads(off.stdout)["results"][0]["answer"]) == ["search"]  # train-genai=n not read


def test_bad_uses_are_usage_errors(tmp_path: Path) -> None:
    (tmp_path / "robots.txt").write_text(ROBOTS)
    for args, said in [(("--use", "genai"), "--use: 'genai' was dropped from the AIPREF vocabulary"),
                       (("--use", "scraping"), "--use: 'scraping' is not a use any opt-out states")]:
        done = run_cli("check", "http://127.0.0.1:9/robots.txt", "/x", *args, cwd=tmp_path)  # refused before a fetch
        assert done.returncode == EXIT_USAGE and done.stdout == ""
        assert done.stderr.startswith(ERROR_PREFIX + said) and len(done.stderr.splitlines()) == 1, done.stderr
    (tmp_path / "p").mkdir()
    where = project(tmp_path / "p", "REP_CONTENT_USES = ['train-genai']\n")
    bad = run_cli("check", "robots.txt", "/x", cwd=where)
    assert bad.returncode == EXIT_USAGE
    assert bad.stderr.startswith(f"{ERROR_PREFIX}the Scrapy project here has REP_CONTENT_USES=['train-genai']: ")
    assert bad.stderr.rstrip().endswith("pass --use USE")
    assert run_cli("check", "robots.txt", "/x", "--use", "tdm", cwd=where).returncode == EXIT_OK  # not read
