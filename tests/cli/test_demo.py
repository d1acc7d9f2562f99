"""``scrapy-rep demo``: the README's first command, end to end (a real site, real crawls, the real middleware)."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO, run_cli

pytestmark = pytest.mark.slow


def _refuses(url: str) -> bool:
    host, port = url.removeprefix("http://").split(":")
    with socket.socket() as sock:
        return sock.connect_ex((host, int(port))) != 0


def test_demo_reports_every_origin_as_robots_txt_says_and_leaves_nothing_running() -> None:
    done = run_cli("demo")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    blocks = {m.group(1): m.group(0) for m in re.finditer(r"^(\w+) +(http://\S+).*?(?=^\w|\Z)", out, re.M | re.S)}
    assert "forbidden 2: /private/accounts (line 3 (Disallow: /private/) of the '*' group (line 2))" in blocks["rules"]
    assert f"sitemaps (robots_parsed signal): {blocks['rules'].split()[1]}/sitemap.xml" in blocks["rules"]
    assert "robots.txt: 404" in blocks["missing"] and "crawled 3/3" in blocks["missing"]
    assert "robots.txt: 503 x3, 200" in blocks["flaky"]
    assert "held 4 while robots.txt failed: released 4, dropped 0" in blocks["flaky"]
    assert "dropped 3: /, /catalogue, /basket" in blocks["down"] and "crawled 0/3" in blocks["down"]
    assert "robots.txt: 301 -> 302 -> 307 -> 200" in blocks["redirect"]
    assert "crawled 2/3: /, /beyond-the-cap/page" in blocks["oversized"]
    # the crawler's own group decides, not '*' (SPEC 6.2), and the report says which (issue 25)
    assert ("forbidden 1: /members/profile (line 6 (Disallow: /members/) of the 'examplebot' group (line 5))"
            in " ".join(blocks["agents"].split()))
    assert "follows the examplebot-news group: crawled 3/3" in out
    assert "rep/requests/checked" in out
    assert out.rstrip().endswith("result: every page went as robots.txt says (SPEC 2, 4.4, 6, 7).")
    urls = re.findall(r"^\w+ +(http://127\.0\.0\.1:\d+) ", out, re.M)
    assert len(urls) == 7 and all(_refuses(url) for url in urls)


def test_demo_compare_shows_what_the_builtin_lets_through() -> None:
    done = run_cli("demo", "--compare")
    assert done.returncode == 0, done.stdout + done.stderr
    table = done.stdout.split("--compare:", 1)[1]
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^(\w+)  .*?(?=^\w|^$)", table, re.M | re.S)}
    assert rows["down"].count("LET THROUGH") == 3  # it parsed the 503 page as robots.txt: everything allowed
    assert "LET THROUGH /checkout/cart" in rows["flaky"]
    ours = {name: row.split(None, 1)[1] for name, row in rows.items() if name != "origin"}
    assert len(ours) == 7 and all(cell.startswith("as robots.txt says (") for cell in ours.values()), ours
    assert "let through against robots.txt: scrapy-rep 0 page(s)" in table


def test_demo_runs_from_the_package_alone_in_any_directory(tmp_path: Path) -> None:
    """As from an installed wheel: a copy of the package with no ``example_project/`` beside it, run elsewhere."""
    crawl_source = (REPO / "scrapy_rep" / "demo" / "crawl.py").read_text()
    assert "example_project" not in crawl_source and "sys.path" not in crawl_source
    site_packages = tmp_path / "site-packages"
    shutil.copytree(REPO / "scrapy_rep", site_packages / "scrapy_rep", ignore=shutil.ignore_patterns("__pycache__"))
    workdir = tmp_path / "elsewhere"
    workdir.mkdir()
    code = (
        "import sys, scrapy_rep.cli; assert scrapy_rep.__file__.startswith(sys.argv[1]), scrapy_rep.__file__; "
        "sys.exit(scrapy_rep.cli.main(['demo']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(site_packages)], cwd=workdir, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(site_packages)}, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "follows the examplebot-news group: crawled 3/3" in done.stdout
    assert done.stdout.rstrip().endswith("result: every page went as robots.txt says (SPEC 2, 4.4, 6, 7).")
    assert list(workdir.iterdir()) == []  # nothing written where it ran
